//! Where a run's budget goes after its first stage (`spend`): every row whose minimum
//! detectable effect (against an identical run, two-sided α 0.05, power 0.8) is above its
//! target (its family's, `Benchmark::mde_target`, or `run --precision P` for all) gets
//! rounds, as `session::allocate` plans them, until it reaches it or the budget ends; the
//! rows left short are returned with why (the `budget-short` finding names the hypervisor
//! when it took the time).
//!
//! Stopping when a row "looks precise enough" would choose the number of rounds from the
//! data, and the rows that stop early would be those whose spread happened to look small:
//! their MDE and p-values would lie. So the rule is Stein's two-stage one: the spread σ₁
//! and its degrees of freedom come from the first stage (the run's rounds), which alone
//! decide how many rounds n the row needs, n = ⌈(q·√2·σ₁ / ln(1+P))²⌉ with q the t
//! quantiles at σ₁'s degrees of freedom; the added rounds then only narrow the standard
//! error σ₁/√n, and the test keeps its error rate (`result::rounds::RoundNoise::stage1`).
//! Each side's statistic is then exactly t with σ₁'s degrees of freedom; a difference of two
//! such sides is tested with the smaller of the two (Welch-Satterthwaite's pooled degrees
//! of freedom assume spreads drawn independently of the round counts, which they are not
//! here, and called 6.3% of A/A rows at α 5% in simulation).

use super::allocate::{self, Row, Unit};
use super::progress::Progress;
use super::round_runner::Runner;
use super::Measuring;
use crate::bench::RunContext;
use crate::compare::stats::noise_model::{row_mde, run_sigma};
use crate::findings::run::{Short, STEAL_NAMED};
use crate::result::rounds::RoundNoise;
use crate::result::BenchResult;
use rand::seq::SliceRandom;

/// Rounds a benchmark may be given in all, whatever a row would need.
pub const MAX_ROUNDS: usize = 60;
/// Budget `--precision` spends when `--budget` is not given, s.
pub const DEFAULT_BUDGET_S: f64 = 60.0;

/// Rounds a row needs in all for an MDE of `target`, from its first stage's σ and df
/// (`allocate::rounds_for`), at least what it has; `usize::MAX` when no number of rounds
/// reaches it (the run level σ alone leaves no room for the target).
pub fn rounds_needed(sigma1: f64, df1: f64, target: f64, have: usize, run: f64) -> usize {
    /// Far past any cap: only asks whether the target can be reached at all.
    const UNBOUNDED: usize = 1 << 20;
    super::allocate::rounds_for(sigma1, df1, target, UNBOUNDED, run)
        .map_or(usize::MAX, |n| n.max(have))
}

/// One row's outcome, for the report on stderr (`run --precision`, `compare --precision`).
#[derive(Debug, Clone, PartialEq)]
pub struct Reached {
    pub row: String,
    pub mde: Option<f64>,
    /// Its rounds in all ("12", or per side "A 5+7, B 5").
    pub rounds: String,
    /// Seconds its added rounds took, when known per row.
    pub took_s: Option<f64>,
    /// Why it did not reach the target; None when it did.
    pub short: Option<String>,
}

impl Reached {
    /// "  row: MDE 4.1% in 12 rounds (3.2 s)", or "..., short of 5.0%: why", wrapped to
    /// the 100 columns of the text output (`report::views::wrap`: no word or number cut),
    /// without its last newline.
    pub fn line(&self, target: f64) -> String {
        let mde = self
            .mde
            .map(crate::measure::mde::mde_text_fine)
            .unwrap_or_else(|| "unknown".into());
        let took = self
            .took_s
            .map(|s| format!(" ({s:.1} s)"))
            .unwrap_or_default();
        // A count ("1") takes the singular; per side ("A 5+7, B 5") the plural.
        let rounds = crate::units::noun(self.rounds.parse().unwrap_or(2), "round");
        let head = format!(
            "  {}: MDE {mde} in {} {rounds}{took}",
            self.row, self.rounds
        );
        let line = match &self.short {
            None => head,
            Some(why) => format!("{head}, short of {:.1}%: {why}", target * 100.0),
        };
        crate::report::views::wrap(&line).trim_end().to_string()
    }
}

/// Why a row short of `target` stays there.
pub fn why_short(
    noise: Option<&RoundNoise>,
    rounds: usize,
    needed: usize,
    budget_out: bool,
    budget_s: f64,
    run: f64,
) -> String {
    match noise {
        None => "fewer than two undisturbed rounds: no spread to narrow".into(),
        Some(_) if needed == usize::MAX => format!(
            "what only separate runs sample ({:.1}% per run) leaves it at an MDE of at least {:.1}%",
            run * 100.0,
            super::allocate::run_floor(run) * 100.0
        ),
        Some(n) if needed > MAX_ROUNDS => format!(
            "rounds disagree ({:.1}% between rounds): it would need {needed} rounds, more than {MAX_ROUNDS}",
            n.sigma * 100.0
        ),
        Some(_) if budget_out => {
            format!(
                "the budget of {budget_s:.0} s ran out after {}",
                crate::units::count(rounds, "round")
            )
        }
        Some(_) => format!("disturbed rounds left it at {rounds} undisturbed"),
    }
}

/// Benchmark i repeated `extra[i]` times, shuffled: the order of added rounds.
pub fn shuffled(extra: &[usize], rng: &mut impl rand::Rng) -> Vec<usize> {
    let mut slots: Vec<usize> = extra
        .iter()
        .enumerate()
        .flat_map(|(b, k)| std::iter::repeat_n(b, *k))
        .collect();
    slots.shuffle(rng);
    slots
}

/// The hypervisor's mean share (%) of the CPU time over a row's rounds; None when no round
/// read it.
pub fn steal_of(r: &BenchResult) -> Option<f64> {
    let v: Vec<f64> = r
        .rounds
        .as_ref()?
        .rounds
        .iter()
        .filter_map(|x| x.steal)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Why a row stays short, with the hypervisor named when it took `STEAL_NAMED`% or more of
/// the CPU during the row's rounds.
fn why_with_steal(why: String, steal: Option<f64>) -> String {
    match steal {
        Some(s) if s >= STEAL_NAMED => {
            format!("{why}; the hypervisor took {s:.0}% of the CPU during its rounds")
        }
        _ => why,
    }
}

/// What `spend` may spend, and on what.
#[derive(Debug, Clone, Copy)]
pub struct Spending {
    /// `--precision`: every row's target; None for each row's family's.
    pub precision: Option<f64>,
    /// The run's budget, s (for the reasons it gives).
    pub budget_s: f64,
    /// Seconds left for these rounds.
    pub allowance_s: f64,
}

/// Spend what is left of the run's budget (`allowance_s`, bounded by the run's deadline)
/// on rounds for the rows furthest from their target MDE (`precision`, else each row's
/// `Benchmark::mde_target`), as `session::allocate` plans them from the rounds measured so
/// far (the first stage, Stein's rule); with `precision` given, prints per row what it
/// reached on stderr. Returns the rows left short of their target, with why.
pub fn spend(
    state: &mut Runner,
    m: &mut Measuring,
    ctx: &RunContext,
    what: Spending,
    rng: &mut impl rand::Rng,
    progress: &mut Progress,
) -> (anyhow::Result<()>, Vec<Short>) {
    let Spending {
        precision,
        budget_s,
        allowance_s,
    } = what;
    let n = state.benches().len();
    let mut units: Vec<Unit> = vec![];
    let mut rows: Vec<Row> = vec![];
    let mut round_s = vec![0.0; n];
    let mut cases_of = vec![1usize; n];
    for b in 0..n {
        let bench = state.benches()[b];
        let have = state.of(b).len();
        if !bench.in_rounds() || have == 0 {
            continue;
        }
        state.stage1[b] = Some(have);
        round_s[b] = state.spent_s[b] / have as f64;
        let pooled = state.pooled(b);
        let cases: Vec<Option<String>> = pooled.iter().map(|r| bench.case_of(r)).collect();
        let distinct = {
            let mut c: Vec<&String> = cases.iter().flatten().collect();
            c.sort();
            c.dedup();
            c.len().max(1)
        };
        cases_of[b] = distinct;
        for (r, case) in pooled.iter().zip(cases) {
            let unit = match units.iter().position(|u| u.bench == b && u.case == case) {
                Some(u) => u,
                None => {
                    let cost_s = match case {
                        Some(_) => round_s[b] / distinct as f64,
                        None => round_s[b],
                    };
                    units.push(Unit {
                        bench: b,
                        case,
                        cost_s,
                    });
                    units.len() - 1
                }
            };
            let noise = r.run_noise();
            rows.push(Row {
                unit,
                stage1: noise.map(|x| (x.sigma, x.df)),
                kept: noise.map(|x| x.kept).unwrap_or(0),
                rounds: r.rounds.as_ref().map(|x| x.rounds.len()).unwrap_or(0),
                target: precision.unwrap_or_else(|| bench.mde_target(r)),
                run: run_sigma(r, &pooled),
                weight: 1.0,
            });
        }
    }
    // A family: a benchmark's rows of one target (as `mde-reach` groups them).
    let families: Vec<(usize, u64)> = rows
        .iter()
        .map(|r| (units[r.unit].bench, r.target.to_bits()))
        .collect();
    for (r, w) in rows.iter_mut().zip(allocate::family_weights(&families)) {
        r.weight = w;
    }
    let overhead: Vec<f64> = round_s
        .iter()
        .map(|s| (s * ROUND_OVERHEAD).min(0.05))
        .collect();
    let allowance_s =
        crate::deadline::remaining_s().map_or(allowance_s, |left| left.min(allowance_s));
    let plan = allocate::plan(&rows, &units, &overhead, allowance_s.max(0.0), MAX_ROUNDS);
    let order = allocate::rounds_of_plan(&plan, &units, n, rng);
    progress.add(
        order
            .iter()
            .map(|(b, cases)| {
                let all = state.benches()[*b].planned(ctx);
                match cases {
                    None => all as u64,
                    Some(c) => (all * c.len()).div_ceil(cases_of[*b]) as u64,
                }
            })
            .sum(),
    );
    let t0 = std::time::Instant::now();
    // The plan stopped for want of time (not because every row reached its target).
    let dearest = units.iter().map(|u| u.cost_s).fold(0.0, f64::max);
    let mut budget_out = allowance_s - plan.cost_s < dearest;
    let mut outcome = Ok(());
    for (b, cases) in &order {
        let expected = match cases {
            None => round_s[*b],
            Some(c) => units
                .iter()
                .filter(|u| u.bench == *b && u.case.as_ref().is_some_and(|x| c.contains(x)))
                .map(|u| u.cost_s)
                .sum::<f64>(),
        };
        if crate::deadline::would_overrun(expected)
            || t0.elapsed().as_secs_f64() + expected > allowance_s
        {
            budget_out = true;
            break;
        }
        let only = RunContext {
            only: cases.as_deref(),
            ..*ctx
        };
        outcome = state.round(m, *b, &only, progress);
        if outcome.is_err() {
            break;
        }
    }
    budget_out |= crate::deadline::expired();
    let spent = t0.elapsed().as_secs_f64();
    let mut lines = vec![];
    if let Some(target) = precision {
        lines.push(format!(
            "truebench: --precision {:.1}%: {spent:.1} s spent on added rounds, {allowance_s:.1} s were left of the budget",
            target * 100.0
        ));
    }
    let mut short = vec![];
    for b in 0..n {
        let bench = state.benches()[b];
        if !bench.in_rounds() || state.of(b).is_empty() {
            continue;
        }
        let pooled = state.pooled(b);
        for r in &pooled {
            let target = precision.unwrap_or_else(|| bench.mde_target(r));
            let rounds = r.rounds.as_ref().map(|x| x.rounds.len()).unwrap_or(0);
            let noise = r.run_noise();
            let run = run_sigma(r, &pooled);
            let mde = noise.map(|n| row_mde(n, run));
            let why = match mde {
                Some(x) if x <= target => None,
                _ => {
                    let needed = noise
                        .map(|n| rounds_needed(n.sigma, n.df, target, n.kept, run))
                        .unwrap_or(0);
                    Some(why_short(noise, rounds, needed, budget_out, budget_s, run))
                }
            };
            if precision.is_some() {
                let reached = Reached {
                    row: r.label(),
                    mde,
                    rounds: rounds.to_string(),
                    took_s: None,
                    short: why.clone(),
                };
                lines.push(reached.line(target));
            }
            if let Some(why) = why {
                let steal = steal_of(r);
                short.push(Short {
                    row: r.label(),
                    mde,
                    target,
                    rounds,
                    steal,
                    why: why_with_steal(why, steal),
                });
            }
        }
    }
    if !lines.is_empty() {
        eprintln!("{}", lines.join("\n"));
    }
    (outcome, short)
}

/// What a round costs beyond its cases' own time (canaries, readings), as a share of a
/// whole round's time, at most 50 ms.
const ROUND_OVERHEAD: f64 = 0.1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::stats::noise_model::RUN_SIGMA;
    use crate::result::rounds::noise_of;
    use rand::{Rng, SeedableRng};
    use statrs::distribution::{ContinuousCDF, StudentsT};

    use crate::measure::stats::standard_normal as normal;

    use crate::result::rounds::quiet_rounds as rounds_of;

    /// One run of a row under the two-stage rule: k rounds, then as many more as its first
    /// stage says a 5% MDE needs (at most MAX_ROUNDS); returns (mean log, noise).
    fn one_run(rng: &mut impl Rng, sigma: f64, k: usize, target: f64) -> (f64, RoundNoise) {
        let mut logs: Vec<f64> = (0..k).map(|_| sigma * normal(rng)).collect();
        let first = noise_of(&rounds_of(&logs), None, None).unwrap();
        if row_mde(&first, RUN_SIGMA) > target {
            let need = rounds_needed(first.sigma, first.df, target, k, RUN_SIGMA).min(MAX_ROUNDS);
            logs.extend((k..need).map(|_| sigma * normal(rng)));
        }
        let n = noise_of(&rounds_of(&logs), None, Some(k)).unwrap();
        (logs.iter().sum::<f64>() / logs.len() as f64, n)
    }

    #[test]
    fn the_two_stage_rule_keeps_the_a_a_error_rate() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(35);
        let trials = 4000;
        let mut called = 0;
        let mut reached = 0;
        for i in 0..trials {
            // Rows from quiet (0.5% between rounds) to loud (8%).
            let sigma = [0.005, 0.01, 0.02, 0.04, 0.08][i % 5];
            let (ma, na) = one_run(&mut rng, sigma, 5, 0.05);
            let (mb, nb) = one_run(&mut rng, sigma, 5, 0.05);
            reached += usize::from(row_mde(&na, RUN_SIGMA) <= 0.05);
            let se = (na.se.powi(2) + nb.se.powi(2)).sqrt();
            // The smaller side's degrees of freedom, as compare uses for two-stage rows.
            let df = na.df.min(nb.df);
            let t = StudentsT::new(0.0, 1.0, df).unwrap();
            let p = 2.0 * (1.0 - t.cdf((mb - ma).abs() / se));
            called += usize::from(p < 0.05);
        }
        let rate = called as f64 / trials as f64;
        // 0.05 and three Monte Carlo standard errors (0.0034 each).
        assert!(rate <= 0.06, "A/A rate {rate}");
        assert!(rate >= 0.02, "not needlessly conservative either: {rate}");
        // Every row but the loudest reaches 5% within MAX_ROUNDS.
        assert!(reached as f64 >= trials as f64 * 0.75, "{reached}");
    }

    #[test]
    fn a_short_row_names_the_hypervisor_from_5_percent_of_its_rounds() {
        let why = || "the budget of 40 s ran out after 5 rounds".to_string();
        assert_eq!(
            why_with_steal(why(), Some(27.4)),
            "the budget of 40 s ran out after 5 rounds; the hypervisor took 27% of the CPU during its rounds"
        );
        assert_eq!(why_with_steal(why(), Some(4.9)), why());
        assert_eq!(why_with_steal(why(), None), why());
        let mut r = crate::result::testing::result("t.x@1", "os", None, serde_json::json!({}), 1.0);
        assert_eq!(steal_of(&r), None);
        r.rounds = Some(crate::result::rounds::Rounds {
            rounds: crate::result::rounds::quiet_rounds(&[0.0, 0.0, 0.0])
                .into_iter()
                .zip([Some(10.0), None, Some(30.0)])
                .map(|(mut x, s)| {
                    x.steal = s;
                    x
                })
                .collect(),
            noise: None,
        });
        assert_eq!(steal_of(&r), Some(20.0));
    }

    #[test]
    fn needed_rounds_follow_sigma_and_the_target() {
        // σ₁ 1% over 5 rounds (df 4): q = 2.776 + 0.941; n = (3.717·1.414·0.01/ln 1.05)².
        let n = rounds_needed(0.01, 4.0, 0.05, 5, RUN_SIGMA);
        let want = (3.717 * std::f64::consts::SQRT_2 * 0.01 / 1.05f64.ln()).powi(2);
        assert_eq!(n, (want.ceil() as usize).max(5));
        assert!(rounds_needed(0.04, 4.0, 0.05, 5, RUN_SIGMA) > 15);
        assert!(
            rounds_needed(0.04, 4.0, 0.10, 5, RUN_SIGMA)
                < rounds_needed(0.04, 4.0, 0.05, 5, RUN_SIGMA)
        );
    }

    #[test]
    fn a_row_reads_what_it_reached_or_why_not() {
        let mut r = Reached {
            row: "timers.clock@1 [os] clock=m".into(),
            mde: Some(0.041),
            rounds: "A 5+7, B 5".into(),
            took_s: Some(3.24),
            short: None,
        };
        assert_eq!(
            r.line(0.05),
            "  timers.clock@1 [os] clock=m: MDE 4.1% in A 5+7, B 5 rounds (3.2 s)"
        );
        r.short = Some("why".into());
        r.mde = None;
        r.took_s = None;
        assert!(r
            .line(0.05)
            .ends_with("MDE unknown in A 5+7, B 5 rounds, short of 5.0%: why"));
    }

    #[test]
    fn a_long_row_wraps_to_100_columns_and_keeps_every_word_and_number() {
        let r = Reached {
            row: "memory.latency@1 [cpus cpu=0] size_bytes=1468006,pages=4k,stride=random,chain=pointer-chase-with-a-long-name".into(),
            mde: Some(0.123),
            rounds: "A 5+55, B 5".into(),
            took_s: Some(123.45),
            short: Some(why_short(None, 5, 0, false, 60.0, RUN_SIGMA) + "; B cannot be given rounds (measured on host db1, this is vm)"),
        };
        let text = r.line(0.05);
        assert!(text.lines().count() > 1, "{text}");
        assert!(text.lines().all(|l| l.len() <= 100), "{text}");
        assert!(!text.ends_with('\n'));
        // Only the spaces between words changed: no word, name or number was cut.
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let r1 = Reached {
            short: None,
            ..r.clone()
        };
        let head = format!("  {}: MDE 12.3% in A 5+55, B 5 rounds (123.5 s)", r1.row);
        assert_eq!(words(&r1.line(0.05)), words(&head));
        assert!(words(&text).contains(
            &"size_bytes=1468006,pages=4k,stride=random,chain=pointer-chase-with-a-long-name:"
                .to_string()
        ));
    }

    #[test]
    fn a_short_row_says_why() {
        let n = RoundNoise {
            kept: 5,
            sigma: 0.2,
            se: 0.2 / 5f64.sqrt(),
            df: 4.0,
            stage1: None,
            includes_disturbed: false,
        };
        assert!(why_short(Some(&n), 5, 500, false, 60.0, RUN_SIGMA)
            .starts_with("rounds disagree (20.0%"));
        assert!(why_short(None, 5, 0, false, 60.0, RUN_SIGMA).starts_with("fewer than two"));
        let ok = RoundNoise {
            sigma: 0.01,
            se: 0.01 / 5f64.sqrt(),
            ..n.clone()
        };
        assert!(why_short(Some(&ok), 12, 20, true, 60.0, RUN_SIGMA)
            .contains("budget of 60 s ran out after 12"));
        // Within the budget and the 60-round cap, only disturbed rounds can have stopped it.
        assert!(why_short(Some(&ok), 12, 20, false, 60.0, RUN_SIGMA)
            .contains("disturbed rounds left it at 12"));
    }
}
