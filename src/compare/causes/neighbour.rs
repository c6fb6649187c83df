//! A neighbour as a cause: other tasks using the CPUs a row ran on during one run's rounds
//! and not the other's, as each round recorded it (`Round::others`, below the disturbance
//! limit as past it; a round of an earlier document only by its `other-tasks`
//! disturbance). A neighbour present for a whole run may disturb every round or none past
//! the limit, so the disturbed-round logic alone cannot name it, and it moves rows either
//! way: it takes CPU time and memory bandwidth from a row (slower), and it keeps its CPU
//! out of idle states, so a task woken on that CPU runs sooner (a ping-pong pinned across
//! CPUs gets faster). The side with the neighbour being slower explains any row; being
//! faster explains only a row whose tasks sleep and are woken across CPUs (ctx pinned to
//! two CPUs), beside a neighbour busy enough to keep its CPU out of idle most of the time. No figure is predicted: a neighbour is never held equal.

use crate::bench::nature::{Kernel, Tasks};
use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::result::rounds::{Cause, Round};
use crate::result::BenchResult;

/// This cause, as the JSON names it.
pub const NEIGHBOUR: &str = "neighbour";

/// The side with the neighbour: other tasks used at least this share (%) of the row's
/// CPUs over the rounds its figures rest on ...
pub const BUSY_PERCENT: f64 = 5.0;
/// ... and at least this many times the other side's share.
pub const TIMES_QUIETER: f64 = 3.0;
/// A faster ping-pong needs the neighbour's CPU busy when the wake-up arrives: other tasks
/// used at least this share (%) of the row's CPUs (of two CPUs, 40% of one).
pub const WAKE_BUSY_PERCENT: f64 = 20.0;

/// Other tasks' share of a round's CPUs (%): its recorded figure, else its `other-tasks`
/// disturbance (documents before `others` was recorded kept only rounds past the limit).
fn figure(r: &Round) -> Option<f64> {
    r.figure_or_disturbance(r.others.as_ref().map(|o| o.percent), Cause::OtherTasks)
}

/// Other tasks over the rounds a row's figures rest on.
struct Seen {
    /// Mean share of the row's CPUs, %.
    percent: f64,
    /// Per round, %.
    per_round: Vec<f64>,
    cpus: Option<String>,
}

/// None when the row has no rounds or a round it rests on has no figure.
fn seen(r: &BenchResult) -> Option<Seen> {
    let rs = r.rounds.as_ref()?;
    let pooled = rs.pooled();
    let per_round: Vec<f64> = pooled.iter().map(|x| figure(x)).collect::<Option<_>>()?;
    if per_round.is_empty() {
        return None;
    }
    Some(Seen {
        percent: per_round.iter().sum::<f64>() / per_round.len() as f64,
        cpus: pooled
            .iter()
            .find_map(|x| x.others.as_ref())
            .map(|o| crate::probe::cpulist::format_list(&o.cpus)),
        per_round,
    })
}

impl Seen {
    fn on(&self) -> String {
        match &self.cpus {
            Some(c) => format!("CPU {c}"),
            None => "its CPUs".into(),
        }
    }

    fn evidence(&self, side: &str) -> String {
        let each: Vec<String> = self.per_round.iter().map(|p| format!("{p:.0}%")).collect();
        format!(
            "{side}: other tasks used {:.1}% of {} on average over the {} round(s) its figures rest on ({})",
            self.percent,
            self.on(),
            self.per_round.len(),
            each.join(", ")
        )
    }
}

/// Whether the row's tasks sleep and are woken on another CPU: a pair whose tasks the
/// kernel puts to sleep (a pipe ping-pong, `bench::nature`), pinned to two CPUs. (c2c
/// spins; an unpinned pair's placement is its own cause.)
fn wakes_across_cpus(r: &BenchResult) -> bool {
    let Some(cpus) = &r.placement.cpus else {
        return false;
    };
    let n = crate::bench::nature::of(r);
    n.tasks == Tasks::Pair && n.kernel == Kernel::Sleeps && cpus.iter().any(|c| *c != cpus[0])
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let (sa, sb) = (seen(c.ra)?, seen(c.rb)?);
    let (side, busy, quiet, quiet_side) = if sb.percent >= sa.percent {
        ("B", &sb, &sa, "A")
    } else {
        ("A", &sa, &sb, "B")
    };
    if busy.percent < BUSY_PERCENT || quiet.percent * TIMES_QUIETER > busy.percent {
        return None;
    }
    let used = format!(
        "other tasks used {:.0}% of {} during {side}'s rounds and {:.0}% during {quiet_side}'s",
        busy.percent,
        busy.on(),
        quiet.percent
    );
    let because = if c.worse_side() == side {
        let took = if crate::bench::nature::of(c.ra).memory.any() {
            "CPU time and memory bandwidth"
        } else {
            "CPU time"
        };
        format!("{used}: the neighbour took {took} from it")
    } else if busy.percent >= WAKE_BUSY_PERCENT
        && wakes_across_cpus(c.ra)
        && wakes_across_cpus(c.rb)
    {
        format!(
            "{used}: a CPU kept busy does not enter an idle state, so a task woken on it runs sooner"
        )
    } else {
        return None;
    };
    let mut e = Explanation::new(NEIGHBOUR, Claim::Explains, because);
    e.evidence.push(sa.evidence("A"));
    e.evidence.push(sb.evidence("B"));
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{beside, ctx_run, timers_run};

    /// (label, explanation) of the row whose label contains `placement`.
    fn row(
        a: &crate::result::RunDocument,
        b: &crate::result::RunDocument,
        placement: &str,
    ) -> Option<Explanation> {
        judged_rows(a, b, explain)
            .into_iter()
            .find(|(l, _)| l.contains(placement))
            .unwrap()
            .1
    }

    #[test]
    fn a_neighbour_during_b_explains_a_faster_ping_pong_across_cpus() {
        // Across CPUs 0-1 B is 16% faster beside a busy CPU 1 (48% of CPUs 0-1 in every
        // round, all past the limit); on one CPU it is 30% slower.
        let a = beside(
            ctx_run("a", 0.0, 50.0, Some(10.0), Some(20.0)),
            &[0.4, 0.6, 0.8],
        );
        let b = beside(
            ctx_run("b", 0.0, 50.0, Some(13.0), Some(16.8)),
            &[48.0, 47.0, 49.0],
        );
        let e = row(&a, &b, "same-llc").expect("the neighbour explains the faster row");
        assert_eq!(e.claim, Claim::Explains);
        assert!(
            e.because.starts_with("other tasks used 48% of CPU 0-1 during B's rounds and 1% during A's: a CPU kept busy does not enter an idle state"),
            "{}",
            e.because
        );
        assert!(
            e.evidence[0].starts_with("A: other tasks used 0.6% of CPU 0-1"),
            "{:?}",
            e.evidence
        );
        assert!(
            e.evidence[1].contains("(48%, 47%, 49%)"),
            "{:?}",
            e.evidence
        );
        let slower = row(&a, &b, "same-cpu").expect("and the slower one");
        assert!(
            slower
                .because
                .ends_with("the neighbour took CPU time from it"),
            "{}",
            slower.because
        );
        // The unpinned row's change is placement's to explain.
        assert!(row(&a, &b, "[os]").is_none());
        // A neighbour using 8% of the CPUs rarely holds one when a wake-up arrives.
        let b = beside(
            ctx_run("b", 0.0, 50.0, Some(13.0), Some(16.8)),
            &[8.0, 8.0, 8.0],
        );
        assert!(row(&a, &b, "same-llc").is_none());
        assert!(row(&a, &b, "same-cpu").is_some());
    }

    #[test]
    fn a_neighbour_below_the_flag_limit_still_counts_and_on_either_side() {
        // 8% in every round: no round disturbed, the figure recorded all the same.
        let a = beside(timers_run("a", 40.0, None), &[8.0, 8.0, 9.0]);
        let b = beside(timers_run("b", 20.0, None), &[1.0, 0.0, 1.0]);
        let e = row(&a, &b, "clock").expect("A's neighbour explains A being slower");
        assert!(e.because.contains("during A's rounds"), "{}", e.because);
        // A faster clock read beside a neighbour: nothing known makes it so.
        let b = beside(timers_run("b", 20.0, None), &[30.0, 30.0, 30.0]);
        let a = beside(timers_run("a", 40.0, None), &[0.0, 0.0, 0.0]);
        assert!(row(&a, &b, "clock").is_none());
    }

    #[test]
    fn no_neighbour_alike_neighbours_or_no_figure_explain_nothing() {
        let quiet = |id, m| beside(timers_run(id, m, None), &[0.5, 1.0, 0.0]);
        assert!(row(&quiet("a", 20.0), &quiet("b", 40.0), "clock").is_none());
        let busy = |id, m, p| beside(timers_run(id, m, None), &[p, p, p]);
        assert!(row(&busy("a", 20.0, 40.0), &busy("b", 40.0, 48.0), "clock").is_none());
        // A side without rounds (or with rounds recording no figure) tells nothing.
        let bare = timers_run("a", 20.0, None);
        assert!(row(&bare, &busy("b", 40.0, 48.0), "clock").is_none());
    }
}
