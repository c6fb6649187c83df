//! Steal as a cause: the hypervisor giving a row's virtual CPUs to something else while its
//! rounds ran, as each round recorded it (`Round::steal`: the share of the round's CPUs'
//! time, below the disturbance limit as past it; a round of an earlier document only by its
//! `steal` disturbance).
//!
//! What steal does to a figure: a batch is timed on the monotonic clock, which runs on while
//! the virtual CPU is descheduled, so time stolen within a batch is in its time. Were the
//! steal spread over every batch, each would read 1/(1 - s) of its time (s the share
//! stolen), and a row whose tasks run at once on k CPUs waits for the slowest of them:
//! 1/(1 - s)^k. Steal comes in bursts (the host runs another guest for a few milliseconds),
//! which hit some batches and not others, and the median of a round resists those: it moves
//! anywhere from not at all up to that bound. A round that passed the disturbance limit is
//! kept out of the row's figures (unless fewer than two were not), so the steal that can be
//! in a figure is that of the rounds the figure rests on.
//!
//! So the cause predicts the bound, from the rounds the figures rest on: the side the
//! hypervisor took more from is slower by at most
//! exp(mean over its rounds of -k·ln(1 - s)) over the other's. A row that moved that way by
//! no more than the bound (within `MATCH`) is **explained**; further, **partly** (what
//! remains is beyond what the stolen time itself takes); the other way, **ruled out**. Steal
//! alike in both (a notable share in either) is **ruled out** with its figures; steal that
//! differed only in rounds kept out of the figures is **not measured** (it did not enter the
//! figures, and what else a host that loud did to the rounds kept is not recorded).

use crate::compare::causes::explain::{Claim, Explanation, RowCtx, MATCH};
use crate::result::rounds::{Cause, Round};
use crate::result::BenchResult;

/// This cause, as the JSON names it.
pub const STEAL: &str = "steal";

/// Bounds whose logs differ by less than this (2%) are alike: no effect to claim.
pub const MIN_EFFECT: f64 = 0.02;
/// A share (%) of the CPUs' time at least this large in either run is worth naming when
/// ruled out, or when it differed only in rounds kept out of the figures: 2%, what a quiet
/// host's rounds stay below (0-1% over whole quiet runs of 2026-11-28).
pub const NOTABLE_PERCENT: f64 = 2.0;
/// Shares are capped below 100% so that a round the hypervisor took almost whole does not
/// predict an infinite time.
const MAX_SHARE: f64 = 0.95;

/// Who took a row's CPU time, and how a comparison says so: the hypervisor (`Stolen`), or
/// this machine's own scheduler when the row's cgroup got little of a busy CPU (`Waited`,
/// the `cpu-share` cause). The time taken acts the same on a figure either way.
pub trait Taker {
    /// The cause's name in the JSON.
    fn cause(&self) -> &'static str;
    /// The share (%) of a round's time taken, where the round recorded it.
    fn figure(&self, r: &Round) -> Option<f64>;
    /// "the hypervisor took 27% of B's CPU time" for `share` 27 and `side` B.
    fn took(&self, share: f64, side: &str) -> String;
    /// "the hypervisor took 1.0% of CPU 0-1's time on average" (`on`: the CPUs).
    fn average(&self, share: f64, on: &str) -> String;
    /// The time taken as a batch holds it, for the bound's evidence: "stolen".
    fn held(&self) -> &'static str;
    /// "the side the hypervisor took more from".
    fn more(&self) -> &'static str;
    /// Evidence of each side's setting behind the share, where recorded.
    fn setting(&self, _c: &RowCtx) -> Vec<String> {
        vec![]
    }
}

/// The hypervisor's steal (`Round::steal`).
pub struct Stolen;

impl Taker for Stolen {
    fn cause(&self) -> &'static str {
        STEAL
    }
    /// Its recorded figure, else its `steal` disturbance (documents before `steal` was
    /// recorded kept only rounds past the limit).
    fn figure(&self, r: &Round) -> Option<f64> {
        r.figure_or_disturbance(r.steal, Cause::Steal)
    }
    fn took(&self, share: f64, side: &str) -> String {
        format!("the hypervisor took {share:.0}% of {side}'s CPU time")
    }
    fn average(&self, share: f64, on: &str) -> String {
        format!("the hypervisor took {share:.1}% of {on} on average")
    }
    fn held(&self) -> &'static str {
        "stolen"
    }
    fn more(&self) -> &'static str {
        "the side the hypervisor took more from"
    }
}

/// Steal over one side's rounds of a row.
struct Seen {
    /// Mean share (%) over the rounds its figures rest on.
    pooled: f64,
    /// Per round it rests on, %.
    per_round: Vec<f64>,
    /// Mean share (%) over all its rounds (those kept out too); None when a round kept out
    /// has no figure.
    all: Option<f64>,
    rounds: usize,
    /// ln of the bound: the mean over the rounds it rests on of -k·ln(1 - share).
    log_bound: f64,
    cpus: Option<String>,
}

/// None when the row has no rounds or a round its figures rest on has no figure.
fn seen(t: &dyn Taker, r: &BenchResult, k: f64) -> Option<Seen> {
    let rs = r.rounds.as_ref()?;
    let pooled = rs.pooled();
    let per_round: Vec<f64> = pooled
        .iter()
        .map(|x| t.figure(x).map(|p| p.clamp(0.0, 100.0)))
        .collect::<Option<_>>()?;
    if per_round.is_empty() {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let all: Option<Vec<f64>> = rs
        .rounds
        .iter()
        .map(|x| t.figure(x).map(|p| p.clamp(0.0, 100.0)))
        .collect();
    let log_bound = mean(
        &per_round
            .iter()
            .map(|p| -k * (1.0 - (p / 100.0).min(MAX_SHARE)).ln())
            .collect::<Vec<_>>(),
    );
    Some(Seen {
        pooled: mean(&per_round),
        all: all.map(|v| mean(&v)),
        rounds: rs.rounds.len(),
        log_bound,
        cpus: rs
            .rounds
            .iter()
            .find_map(|x| x.others.as_ref())
            .map(|o| crate::probe::cpulist::format_list(&o.cpus)),
        per_round,
    })
}

impl Seen {
    fn evidence(&self, t: &dyn Taker, side: &str) -> String {
        let each: Vec<String> = self.per_round.iter().map(|p| format!("{p:.0}%")).collect();
        let on = match &self.cpus {
            Some(c) => format!("CPU {c}'s time"),
            None => "its CPUs' time".into(),
        };
        let all = match self.all {
            Some(a) if self.rounds > self.per_round.len() => {
                format!("; {a:.1}% over all {} rounds", self.rounds)
            }
            _ => String::new(),
        };
        format!(
            "{side}: {} over the {} its figures rest on ({}){all}",
            t.average(self.pooled, &on),
            crate::units::count(self.per_round.len(), "round"),
            each.join(", ")
        )
    }
}

/// How many CPUs the row's tasks run on at once, whose steal a batch waits for: its distinct
/// pinned CPUs, else its threads or copies, else one.
fn cpus_at_once(r: &BenchResult) -> f64 {
    let pinned = r.pinned_cpus().len();
    if pinned > 0 {
        return pinned as f64;
    }
    r.params
        .threads()
        .or_else(|| r.params.copies())
        .unwrap_or(1)
        .max(1) as f64
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    explain_by(&Stolen, c)
}

/// The time `t` took from a row's rounds as a cause of its difference.
pub fn explain_by(t: &dyn Taker, c: &RowCtx) -> Option<Explanation> {
    let k = cpus_at_once(c.ra);
    let (sa, sb) = (seen(t, c.ra, k)?, seen(t, c.rb, k)?);
    // ln of how much slower (in time) steal alone can make B than A, at most.
    let d = sb.log_bound - sa.log_bound;
    let mut e = if d.abs() < MIN_EFFECT.ln_1p() {
        alike(t, &sa, &sb)?
    } else {
        differs(t, c, &sa, &sb, d, k)
    };
    e.evidence.push(sa.evidence(t, "A"));
    e.evidence.push(sb.evidence(t, "B"));
    e.evidence.extend(t.setting(c));
    Some(e)
}

/// Steal alike in the rounds both figures rest on: ruled out when either took a notable
/// share, not measured when the rounds kept out of one side's figures carried more of it,
/// nothing otherwise.
fn alike(t: &dyn Taker, sa: &Seen, sb: &Seen) -> Option<Explanation> {
    if let (Some(aa), Some(ab)) = (sa.all, sb.all) {
        let (hi, lo, side, other) = if ab >= aa {
            (ab, aa, "B", "A")
        } else {
            (aa, ab, "A", "B")
        };
        if hi >= NOTABLE_PERCENT && hi - lo >= NOTABLE_PERCENT {
            return Some(Explanation::new(
                t.cause(),
                Claim::NotMeasured,
                format!(
                    "{} during this row and {lo:.0}% of {other}'s, in rounds kept out of the figures (those they rest on: {:.0}% and {:.0}%)",
                    t.took(hi, side),
                    if side == "B" { sb.pooled } else { sa.pooled },
                    if side == "B" { sa.pooled } else { sb.pooled },
                ),
            ));
        }
    }
    if sa.pooled.max(sb.pooled) < NOTABLE_PERCENT {
        return None;
    }
    Some(Explanation::new(
        t.cause(),
        Claim::RuledOut,
        format!(
            "{} during this row and {:.0}% of A's: alike",
            t.took(sb.pooled, "B"),
            sa.pooled
        ),
    ))
}

/// Steal differed in the rounds the figures rest on, by `d` (ln of the bound, B over A).
fn differs(t: &dyn Taker, c: &RowCtx, sa: &Seen, sb: &Seen, d: f64, k: f64) -> Explanation {
    let (side, other, hi, lo) = if d > 0.0 {
        ("B", "A", sb.pooled, sa.pooled)
    } else {
        ("A", "B", sa.pooled, sb.pooled)
    };
    let because = format!(
        "{} during this row and {lo:.0}% of {other}'s",
        t.took(hi, side)
    );
    // The bound as B/A of the row's own figure (a rate moves the other way).
    let predicted = if c.ra.lower_is_better {
        d.exp()
    } else {
        (-d).exp()
    };
    let measured = c.ratio();
    // How much slower the stolen side measured, in time (negative: it was faster).
    let slower = if c.ra.lower_is_better {
        measured.ln()
    } else {
        -measured.ln()
    } * d.signum();
    let mut e = Explanation::new(t.cause(), Claim::Explains, because);
    e.predicted = Some(predicted);
    e.residual = Some(measured / predicted);
    let tasks = if k > 1.0 {
        format!(" (its tasks run on {k:.0} CPUs at once and wait for the slowest)")
    } else {
        String::new()
    };
    e.evidence.push(format!(
        "a batch timed on the monotonic clock holds the time {held} within it: {held} from every batch, {side}'s times would be at most {:.3}x {other}'s{tasks}; {held} in bursts, some batches are hit and the median moves less",
        d.abs().exp(),
        held = t.held()
    ));
    if slower < -0.01 {
        e.claim = Claim::RuledOut;
        e.evidence.push(format!(
            "{side}, {}, was the faster (B/A {measured:.3})",
            t.more()
        ));
    } else if slower > d.abs() + MATCH.ln() {
        e.claim = Claim::Partly;
        e.remains = Some(format!(
            "{:.2}x remains beyond the time {held} (measured {measured:.3}, at most {predicted:.3} from it): neighbours that busy may also share the cores and caches",
            (slower - d.abs()).exp(),
            held = t.held()
        ));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{stolen, timers_run};

    fn only(a: &crate::result::RunDocument, b: &crate::result::RunDocument) -> Option<Explanation> {
        judged_rows(a, b, explain).remove(0).1
    }

    #[test]
    fn a_clock_read_slower_with_steal_in_every_round_of_b_is_explained() {
        // The loud hour of 2026-11-28: a vDSO read 36% slower, B's rounds all carrying steal.
        let a = stolen(timers_run("a", 40.0, None), &[1.0, 0.0, 1.0, 1.5, 1.5]);
        let b = stolen(timers_run("b", 54.4, None), &[27.0, 25.0, 30.0, 26.0, 27.0]);
        let e = only(&a, &b).expect("steal explains");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert_eq!(
            e.because,
            "the hypervisor took 27% of B's CPU time during this row and 1% of A's"
        );
        let p = e.predicted.unwrap();
        assert!((1.3..1.45).contains(&p), "{p}");
        assert!(
            e.evidence[1].starts_with("A: the hypervisor took 1.0% of CPU 0-1's time on average over the 5 rounds its figures rest on"),
            "{:?}",
            e.evidence
        );
        // Bursty steal moved the median less than the bound: still within what it can do.
        let b = stolen(timers_run("b", 44.0, None), &[27.0, 25.0, 30.0, 26.0, 27.0]);
        assert_eq!(only(&a, &b).unwrap().claim, Claim::Explains);
    }

    #[test]
    fn a_row_slower_than_steal_can_make_it_is_partly_and_one_faster_is_ruled_out() {
        let a = stolen(timers_run("a", 40.0, None), &[0.0, 0.0, 0.0]);
        // 10% stolen bounds B at 1.11x; it measured 1.9x.
        let b = stolen(timers_run("b", 76.0, None), &[10.0, 10.0, 10.0]);
        let e = only(&a, &b).unwrap();
        assert_eq!(e.claim, Claim::Partly, "{e:?}");
        assert!(
            e.remains.as_deref().unwrap().starts_with("1.71x remains"),
            "{e:?}"
        );
        // The side the hypervisor took more from was the faster: not steal's doing.
        let b = stolen(timers_run("b", 30.0, None), &[20.0, 20.0, 20.0]);
        assert_eq!(only(&a, &b).unwrap().claim, Claim::RuledOut);
        // A rate: lower on the stolen side is explained (bandwidth 2 threads on 2 CPUs,
        // 30% stolen: at most 1/0.49 of the time, a rate down to 0.49).
        let bw = |id: &str, gbs: f64, steal: f64| {
            let mut d = timers_run(id, gbs, None);
            let r = &mut d.results[0];
            r.benchmark = "memory.bandwidth@1".into();
            r.lower_is_better = false;
            r.placement.cpus = Some(vec![0, 1]);
            stolen(d, &[steal; 3])
        };
        let e = only(&bw("a", 30.0, 0.0), &bw("b", 16.0, 30.0)).unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!((e.predicted.unwrap() - 0.49).abs() < 0.01, "{e:?}");
        assert!(e.evidence[0].contains("2 CPUs at once"), "{e:?}");
        // On one CPU the same steal bounds the rate at 0.7: 0.53 is partly steal's.
        let mut one = bw("b", 16.0, 30.0);
        one.results[0].placement.cpus = Some(vec![0]);
        let mut a1 = bw("a", 30.0, 0.0);
        a1.results[0].placement.cpus = Some(vec![0]);
        assert_eq!(only(&a1, &one).unwrap().claim, Claim::Partly);
    }

    #[test]
    fn alike_or_no_steal_explains_nothing_and_says_so_when_it_was_notable() {
        let quiet = |id, m| stolen(timers_run(id, m, None), &[0.0, 1.0, 0.0]);
        assert!(only(&quiet("a", 40.0), &quiet("b", 54.0)).is_none());
        let loud = |id, m| stolen(timers_run(id, m, None), &[20.0, 22.0, 21.0]);
        let e = only(&loud("a", 40.0), &loud("b", 54.0)).unwrap();
        assert_eq!(e.claim, Claim::RuledOut);
        assert!(e.because.ends_with(": alike"), "{}", e.because);
        // A side without rounds, or rounds recording no figure, tells nothing.
        assert!(only(&timers_run("a", 40.0, None), &loud("b", 54.0)).is_none());
    }

    #[test]
    fn steal_only_in_rounds_kept_out_of_the_figures_is_not_measured() {
        let a = stolen(timers_run("a", 40.0, None), &[0.0, 0.0, 0.0, 0.0, 0.0]);
        // Three of B's five rounds disturbed by steal (kept out), the two kept quiet.
        let b = stolen(timers_run("b", 54.0, None), &[40.0, 0.0, 35.0, 1.0, 50.0]);
        let e = only(&a, &b).unwrap();
        assert_eq!(e.claim, Claim::NotMeasured, "{e:?}");
        assert!(
            e.because.starts_with("the hypervisor took 25% of B's CPU time during this row and 0% of A's, in rounds kept out"),
            "{}",
            e.because
        );
    }

    #[test]
    fn an_earlier_document_counts_steal_by_its_disturbances_only() {
        // Rounds without a steal figure and no steal disturbance: nothing known.
        let mut a = stolen(timers_run("a", 40.0, None), &[0.0, 0.0, 0.0]);
        let mut b = stolen(timers_run("b", 54.0, None), &[27.0, 27.0, 27.0]);
        for d in [&mut a, &mut b] {
            for r in &mut d.results[0].rounds.as_mut().unwrap().rounds {
                r.steal = None;
            }
        }
        assert!(only(&a, &b).is_none(), "A's kept rounds carry no figure");
        // Every round of both disturbed: the disturbances' figures are the shares.
        let mut a = stolen(timers_run("a", 40.0, None), &[3.0, 3.0, 3.0]);
        for r in &mut a.results[0].rounds.as_mut().unwrap().rounds {
            r.steal = None;
        }
        assert_eq!(only(&a, &b).unwrap().claim, Claim::Explains);
    }
}
