//! How a run spends its budget (`run --budget`, `session::suites`): a first stage of rounds
//! for every row, then the rest of the budget on the rows whose verdict is shortest.
//!
//! - **First stage** (`first_stage`): every benchmark draws its rounds (`--rounds` times its
//!   weight); where their cost, measured on each benchmark's first round, would take more
//!   than the first stage's share of the budget, the most expensive ones draw fewer (never
//!   fewer than `FIRST_STAGE_MIN`), so the rest of the budget can still go where it is
//!   needed.
//! - **Allocation** (`plan`): from the first stage alone, each row's spread σ₁ (and its
//!   degrees of freedom) gives the MDE it would reach with n kept rounds, as `compare`
//!   computes it (`noise_model::row_mde`: σ₁/√n, with what only separate runs sample).
//!   Rounds go one at a time where a second lowers the rows' MDEs most against their goals
//!   (`shortfall`: the sum of ln(MDE / goal) over the rows, per second of the round): cheap
//!   rows first, a row that cannot reach its target within `precision::MAX_ROUNDS` still
//!   narrowing as its worth per second ranks it, until no round that fits the allowance
//!   lowers it. A row its run level keeps from its target aims at what that level allows
//!   (`goal`). A round is of the row's case where its benchmark can measure some cases
//!   only (`Benchmark::case_of`), else of its whole benchmark (every row of it gains one).
//! - **Error rate**: the number of rounds a row gets is decided from the first stage only,
//!   and its test then takes σ and its degrees of freedom from one stage alone
//!   (`result::rounds::sigma_stage`: the first, Stein's two-stage rule, or the added
//!   rounds once they outnumber it), so the A/A error rate holds (`simulated`'s tests).
//!   The plan projects each row's MDE with the degrees of freedom its test will have.
//!   The plan is run in a shuffled, interleaved order
//!   (`interleave`): when the budget ends it early the rounds it cuts are the last of every
//!   benchmark's, not chosen by any row's values.

use crate::measure::mde::relative_mde;
use rand::seq::SliceRandom;

/// The share of the budget (after what the run started with) the first stage may take;
/// the rest goes to re-measured disturbed rounds and the allocation.
pub const FIRST_STAGE_SHARE: f64 = 0.65;
/// The most the re-measured disturbed rounds may take, as a share of the budget, beyond
/// the first stage's.
pub const REMEASURE_SHARE: f64 = 0.10;
/// Fewest first-stage rounds a benchmark draws when the budget cuts its first stage: three
/// kept rounds give σ two degrees of freedom (t quantiles 4.30 + 1.06 against 2.78 + 0.94
/// at four), below which the allocation would pay for the rule more than the rounds buy.
pub const FIRST_STAGE_MIN: usize = 3;

/// A thing a round can be of: a benchmark's whole round, or one case of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// The benchmark (index into the run's list).
    pub bench: usize,
    /// The case (`Benchmark::case_of`); None for the whole benchmark.
    pub case: Option<String>,
    /// Seconds a round of it costs (a case: its rows' time, without the round's overhead).
    pub cost_s: f64,
}

/// One row after the first stage, as the allocation sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The unit its rounds come from (index into the units).
    pub unit: usize,
    /// σ of ln(round median) over its first stage's kept rounds, and its degrees of
    /// freedom; None without two of them (nothing to plan from).
    pub stage1: Option<(f64, f64)>,
    /// Its kept rounds so far.
    pub kept: usize,
    /// Its rounds so far, kept or not (`precision::MAX_ROUNDS` caps these).
    pub rounds: usize,
    /// The MDE it should reach (0.05 = 5%).
    pub target: f64,
    /// What only separate runs sample for it (`noise_model::run_sigma`).
    pub run: f64,
    /// Its share of its family's worth (`family_weights`: 1 / the rows of its benchmark
    /// with its target), so each family counts once however many rows it has.
    pub weight: f64,
}

/// Each row's weight (`Row::weight`) from its family key (its benchmark and target, or
/// whatever groups the rows whose MDEs are judged together): 1 / the rows sharing its
/// key. The plan then lowers the sum over families of their rows' mean shortfall: a
/// family of 62 latency rows counts as much as the two same-cpu ping-pong rows (on
/// 2026-12-07, counted row by row, the 62 took the budget's rest and the ping-pong rows
/// stayed at 3 rounds and an MDE of 32%, their target 10%).
pub fn family_weights<K: PartialEq>(keys: &[K]) -> Vec<f64> {
    keys.iter()
        .map(|k| 1.0 / keys.iter().filter(|o| *o == k).count() as f64)
        .collect()
}

/// The MDE (relative) a row of first-stage spread `sigma1` (with `df1` degrees of freedom)
/// is expected to reach with `n` kept rounds in all: as `noise_model::row_mde` computes it,
/// σ/√n against an identical run, with the degrees of freedom the test will take
/// (`result::rounds::two_stage_df`: the added rounds' once they outnumber the first
/// stage's) and σ₁ for σ (the added rounds' σ is not known before they are measured).
pub fn projected_mde(sigma1: f64, df1: f64, n: usize, run: f64) -> f64 {
    let df = crate::result::rounds::two_stage_df(df1 as usize + 1, n);
    relative_mde(sigma1 * sigma1 / n.max(1) as f64, Some(df), run)
}

/// The fewest kept rounds in all, at most `most`, with which a row of first-stage spread
/// `sigma1` (`df1` degrees of freedom) is expected to reach an MDE of `target`
/// (`projected_mde`, which only falls as n grows); None when `most` do not.
pub fn rounds_for(sigma1: f64, df1: f64, target: f64, most: usize, run: f64) -> Option<usize> {
    let met = |n: usize| projected_mde(sigma1, df1, n, run) <= target;
    if most == 0 || !met(most) {
        return None;
    }
    // The first n that meets it, by bisection: (lo, hi] holds it.
    let (mut lo, mut hi) = (0, most);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if met(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// How far above the MDE its run level allows (`run_floor`) a row aims when that keeps it
/// from its target: rounds past that buy little.
pub const GOAL_OVER_FLOOR: f64 = 1.25;

/// The MDE a row would reach with any number of rounds: what only separate runs sample
/// (`run`, a σ per run) tested between two runs.
pub fn run_floor(run: f64) -> f64 {
    relative_mde(0.0, None, run)
}

/// The MDE a row's rounds aim at: its target, or [`GOAL_OVER_FLOOR`] × its [`run_floor`]
/// when that is above the target (what only separate runs sample keeps the row from its
/// target however many rounds it gets: a latency row past the LLC,
/// `noise_model::MEMORY_LATENCY_RUN_SIGMA`). Such a row gets the rounds that narrow it
/// towards what it can reach, as one that can reach its target does; a row kept from its
/// target by its own rounds' spread still aims at the target (it narrows with every round).
pub fn goal(r: &Row) -> f64 {
    r.target.max(GOAL_OVER_FLOOR * run_floor(r.run))
}

/// The extra rounds planned per unit, and their expected cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub extra: Vec<usize>,
    pub cost_s: f64,
}

/// How far a row of first-stage spread `sigma1` (`df1` degrees of freedom) would stand
/// from its goal with `n` kept rounds: ln(projected MDE / goal), 0 once it reaches it. The
/// plan lowers the sum of these over the rows, each weighted by its share of its family
/// (`Row::weight`), so a round's worth is the same relative narrowing wherever it falls,
/// each family counts once, and a row at its goal is worth nothing more.
pub fn shortfall(sigma1: f64, df1: f64, n: usize, run: f64, goal: f64) -> f64 {
    (projected_mde(sigma1, df1, n, run) / goal).ln().max(0.0)
}

/// Plan the rounds after the first stage within `allowance_s` seconds: `overhead_s[b]` is
/// what a round of benchmark b costs beyond its units' (canaries, readings, a process
/// started); a row gets at most `max_rounds` rounds in all. Pure: the caller measured the
/// costs and the first stage.
///
/// Rounds by value per second: each next round is of the unit whose round lowers the rows'
/// weighted [`shortfall`] most per second it costs (the sum over the unit's rows: a whole
/// round of a benchmark narrows every row of it), until no round that fits the allowance
/// lowers it. Cheap rows come first (a c2c round of 20 ms buys as much as a memory round
/// of 0.5 s buys in 25 rows of a family of that many); a row that cannot reach its target within the cap still gets
/// the rounds that bring it nearest, as their worth per second ranks them (on 2026-12-07
/// the c2c row stopped at 10 rounds because it "would need 74 rounds, more than 60", and
/// ended at an MDE of 64-100%). The counts depend on the first stage and the costs only.
pub fn plan(
    rows: &[Row],
    units: &[Unit],
    overhead_s: &[f64],
    allowance_s: f64,
    max_rounds: usize,
) -> Plan {
    let mut extra = vec![0usize; units.len()];
    // Rounds planned per benchmark: a unit's round past them adds a round's overhead.
    let mut per_bench = vec![0usize; overhead_s.len()];
    let mut kept: Vec<usize> = rows.iter().map(|r| r.kept).collect();
    let mut all: Vec<usize> = rows.iter().map(|r| r.rounds).collect();
    let goals: Vec<f64> = rows.iter().map(goal).collect();
    let by_unit: Vec<Vec<usize>> = (0..units.len())
        .map(|u| (0..rows.len()).filter(|r| rows[*r].unit == u).collect())
        .collect();
    // Each row's shortfall at every count of kept rounds it can have (kept rounds never pass
    // its rounds, which the cap bounds), worked out once.
    let table: Vec<Vec<f64>> = rows
        .iter()
        .zip(&goals)
        .map(|(r, g)| {
            (0..=max_rounds.max(r.kept))
                .map(|n| {
                    r.stage1
                        .map_or(0.0, |(s, df)| shortfall(s, df, n, r.run, *g))
                })
                .collect()
        })
        .collect();
    let short = |i: usize, n: usize| table[i][n.min(table[i].len() - 1)];
    let mut spent = 0.0;
    loop {
        // The best (worth per second, unit, rounds, cost) over every unit and every number
        // of its next rounds: the degrees of freedom a row's test will have jump once its
        // added rounds outnumber its first stage, so a round's worth can lie in the rounds
        // after it, which one round at a time would not see.
        let mut best: Option<(f64, usize, usize, f64)> = None;
        for (u, mine) in by_unit.iter().enumerate() {
            let Some(most) = mine.iter().map(|r| all[*r]).max() else {
                continue;
            };
            let b = units[u].bench;
            let mut cost = 0.0;
            for k in 1..=max_rounds.saturating_sub(most) {
                // A round past the benchmark's planned ones adds a round's overhead.
                cost += units[u].cost_s
                    + if extra[u] + k > per_bench[b] {
                        overhead_s[b]
                    } else {
                        0.0
                    };
                if spent + cost > allowance_s {
                    break;
                }
                let gain: f64 = mine
                    .iter()
                    .map(|&r| rows[r].weight * (short(r, kept[r]) - short(r, kept[r] + k)))
                    .sum();
                let worth = gain / cost.max(1e-9);
                if gain > 1e-12 && best.is_none_or(|(w, ..)| worth > w) {
                    best = Some((worth, u, k, cost));
                }
            }
        }
        let Some((_, u, k, cost)) = best else {
            break;
        };
        let b = units[u].bench;
        extra[u] += k;
        per_bench[b] = per_bench[b].max(extra[u]);
        spent += cost;
        for &r in &by_unit[u] {
            kept[r] += k;
            all[r] += k;
        }
    }
    Plan {
        extra,
        cost_s: spent,
    }
}

/// The first stage's rounds per benchmark: `desired[b]` (0 for a benchmark not measured in
/// rounds), fewer for the most expensive ones when their cost (`cost_s[b]` a round, None
/// when unknown: counted as nothing) would take more than `allowance_s`: each benchmark's
/// first stage takes at most T seconds (at least `FIRST_STAGE_MIN` rounds, or its desired
/// count when smaller), T the most that fits.
pub fn first_stage(desired: &[usize], cost_s: &[Option<f64>], allowance_s: f64) -> Vec<usize> {
    let at = |t: f64| -> Vec<usize> {
        desired
            .iter()
            .zip(cost_s)
            .map(|(&d, c)| match c {
                Some(c) if *c > 0.0 => {
                    let fit = (t / c).floor().min(d as f64) as usize;
                    fit.max(FIRST_STAGE_MIN.min(d))
                }
                _ => d,
            })
            .collect()
    };
    let total = |n: &[usize]| -> f64 {
        n.iter()
            .zip(cost_s)
            .map(|(n, c)| *n as f64 * c.unwrap_or(0.0))
            .sum()
    };
    let full = desired.to_vec();
    if total(&full) <= allowance_s {
        return full;
    }
    // The largest per-benchmark time T that fits, by bisection (the total grows with T).
    let (mut lo, mut hi) = (0.0, allowance_s.max(0.0));
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if total(&at(mid)) <= allowance_s {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    at(lo)
}

/// The order of `counts[b]` rounds of each benchmark b: as many positions as the most
/// rounds any benchmark has, a benchmark's rounds spread evenly over them (round j of one
/// of n rounds at position j·positions/n), the rounds at a position shuffled. Returns
/// (benchmark, its round's index among these).
pub fn interleave(counts: &[usize], rng: &mut impl rand::Rng) -> Vec<(usize, usize)> {
    let positions = counts.iter().copied().max().unwrap_or(0);
    let mut out = Vec::with_capacity(counts.iter().sum());
    for at in 0..positions {
        let mut here: Vec<(usize, usize)> = counts
            .iter()
            .enumerate()
            .filter_map(|(b, &n)| (0..n).find(|j| j * positions / n == at).map(|j| (b, j)))
            .collect();
        here.shuffle(rng);
        out.extend(here);
    }
    out
}

/// The rounds of each benchmark a plan gives, in `interleave`'s order: per round the
/// benchmark and the cases it measures (None: every case, a whole round; round j of a
/// benchmark measures the units given more than j rounds).
pub fn rounds_of_plan(
    plan: &Plan,
    units: &[Unit],
    benches: usize,
    rng: &mut impl rand::Rng,
) -> Vec<(usize, Option<Vec<String>>)> {
    let mut counts = vec![0usize; benches];
    for (u, n) in units.iter().zip(&plan.extra) {
        counts[u.bench] = counts[u.bench].max(*n);
    }
    interleave(&counts, rng)
        .into_iter()
        .map(|(b, j)| {
            let mine: Vec<(usize, &Unit)> = units
                .iter()
                .enumerate()
                .filter(|(_, u)| u.bench == b)
                .collect();
            let cases: Vec<String> = mine
                .iter()
                .filter(|(i, _)| plan.extra[*i] > j)
                .filter_map(|(_, u)| u.case.clone())
                .collect();
            // Every case of it, or a benchmark that cannot measure some only: a whole round.
            let whole = cases.is_empty()
                || mine
                    .iter()
                    .all(|(i, u)| u.case.is_some() && plan.extra[*i] > j);
            (b, (!whole).then_some(cases))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::stats::noise_model::RUN_SIGMA;
    use rand::SeedableRng;

    fn row(unit: usize, sigma: f64, kept: usize, target: f64) -> Row {
        Row {
            unit,
            stage1: Some((sigma, (kept - 1) as f64)),
            kept,
            rounds: kept,
            target,
            run: RUN_SIGMA,
            weight: 1.0,
        }
    }

    /// Thirty latency-like rows, each a case of its own (0.05 s a round), beside two
    /// ping-pong rows in one unit (1 s a round), all short of their targets: counted row by
    /// row the thirty take most of the allowance; weighted by family the two get the rounds
    /// that narrow their family as much, and the families' mean shortfall is lower.
    #[test]
    fn a_family_of_two_rows_weighs_as_much_as_a_family_of_thirty() {
        let mut units: Vec<Unit> = (0..30)
            .map(|i| unit(0, Some(&format!("{i}")), 0.05))
            .collect();
        units.push(unit(1, None, 1.0));
        let mut rows: Vec<Row> = (0..30).map(|i| row(i, 0.06, 3, 0.08)).collect();
        rows.extend([row(30, 0.06, 3, 0.10), row(30, 0.06, 3, 0.10)]);
        let by_row = plan(&rows, &units, &[0.0, 0.0], 12.0, 60);
        let keys: Vec<usize> = rows.iter().map(|r| units[r.unit].bench).collect();
        assert_eq!(family_weights(&keys)[0], 1.0 / 30.0);
        assert_eq!(family_weights(&keys)[31], 0.5);
        for (r, w) in rows.iter_mut().zip(family_weights(&keys)) {
            r.weight = w;
        }
        let by_family = plan(&rows, &units, &[0.0, 0.0], 12.0, 60);
        assert!(
            by_family.extra[30] > by_row.extra[30],
            "{by_row:?} {by_family:?}"
        );
        // The mean shortfall of each family, summed: what the weights lower.
        let families = |p: &Plan| -> f64 {
            let mean = |range: std::ops::Range<usize>| {
                let n = range.len() as f64;
                range
                    .map(|i| {
                        let r = &rows[i];
                        shortfall(0.06, 2.0, r.kept + p.extra[r.unit], r.run, goal(r))
                    })
                    .sum::<f64>()
                    / n
            };
            mean(0..30) + mean(30..32)
        };
        assert!(families(&by_family) < families(&by_row));
    }

    fn unit(bench: usize, case: Option<&str>, cost_s: f64) -> Unit {
        Unit {
            bench,
            case: case.map(String::from),
            cost_s,
        }
    }

    #[test]
    fn the_projected_mde_is_the_one_precision_reports() {
        // A row's own noise after n kept rounds of a first stage of 5: σ/√n, with df 4
        // while the added rounds are at most as many, then theirs (6 of 12, 7 added).
        for (kept, df) in [(8, 4.0), (10, 4.0), (12, 6.0)] {
            let n = crate::result::rounds::RoundNoise {
                kept,
                sigma: 0.04,
                se: 0.04 / (kept as f64).sqrt(),
                df,
                stage1: Some(5),
                includes_disturbed: false,
            };
            let want = crate::compare::stats::noise_model::row_mde(&n, RUN_SIGMA);
            assert!(
                (projected_mde(0.04, 4.0, kept, RUN_SIGMA) - want).abs() < 1e-12,
                "{kept}"
            );
        }
        // The first n that reaches a target, and a bound that does not allow it.
        let n = rounds_for(0.04, 4.0, 0.08, 60, RUN_SIGMA).unwrap();
        assert!(
            projected_mde(0.04, 4.0, n, RUN_SIGMA) <= 0.08
                && projected_mde(0.04, 4.0, n - 1, RUN_SIGMA) > 0.08
        );
        assert_eq!(rounds_for(0.04, 4.0, 0.08, n - 1, RUN_SIGMA), None);
    }

    /// A row its run level keeps from its target (a latency row past the LLC: 5% a run,
    /// target 8%) aims at 1.25 × what its run level allows, and gets the rounds towards it
    /// beside a row that can reach its own, which does not take them all; without the goal
    /// it waited for every reachable row and got none here.
    #[test]
    fn a_row_its_run_level_keeps_from_its_target_still_gets_rounds_towards_its_floor() {
        use crate::compare::stats::noise_model::MEMORY_LATENCY_RUN_SIGMA;
        let units = vec![unit(0, Some("plateau"), 0.1), unit(0, Some("memory"), 0.1)];
        let far = Row {
            run: MEMORY_LATENCY_RUN_SIGMA,
            ..row(1, 0.05, 3, 0.08)
        };
        let floor = run_floor(MEMORY_LATENCY_RUN_SIGMA);
        assert!(
            floor > 0.08 && projected_mde(0.05, 2.0, 60, far.run) > floor,
            "{floor}"
        );
        assert_eq!(goal(&far), GOAL_OVER_FLOOR * floor);
        // A row whose run level allows its target keeps it as its goal.
        let near = row(0, 0.12, 3, 0.08);
        assert_eq!(goal(&near), 0.08);
        assert!(rounds_for(0.12, 2.0, 0.08, 60, RUN_SIGMA).unwrap() > 23);
        // 20 rounds of allowance; the plateau row alone would take them all and more. The
        // far row gets rounds towards its goal, never past it, and the plateau row the rest.
        let need_far = rounds_for(0.05, 2.0, goal(&far), 60, far.run).unwrap();
        let p = plan(&[near, far.clone()], &units, &[0.0], 2.05, 60);
        assert!(p.extra[1] > 0 && p.extra[1] <= need_far - 3, "{p:?}");
        assert_eq!(p.extra[0] + p.extra[1], 20, "{p:?}");
        // With the allowance to spare it stops at its goal, not at the cap.
        let p = plan(std::slice::from_ref(&far), &units, &[0.0], 100.0, 60);
        assert_eq!(p.extra[1], need_far - 3, "{p:?}");
        assert!(need_far < 20, "{need_far}");
    }

    #[test]
    fn rounds_go_to_the_rows_furthest_from_their_target_until_they_reach_it() {
        // One benchmark of two cases: a tight row (met) and a loose one (far).
        let units = vec![unit(0, Some("tight"), 0.1), unit(0, Some("loose"), 0.1)];
        let rows = vec![row(0, 0.005, 5, 0.08), row(1, 0.05, 5, 0.08)];
        let p = plan(&rows, &units, &[0.01], 100.0, 60);
        assert_eq!(p.extra[0], 0, "a row at its target gets nothing");
        let n = 5 + p.extra[1];
        assert!(projected_mde(0.05, 4.0, n, RUN_SIGMA) <= 0.08, "{p:?}");
        assert!(
            projected_mde(0.05, 4.0, n - 1, RUN_SIGMA) > 0.08,
            "no more than it needs: {p:?}"
        );
        // The cost: its rounds and one overhead per round of the benchmark.
        assert!((p.cost_s - p.extra[1] as f64 * 0.11).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn the_plan_never_costs_more_than_its_allowance() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        use rand::Rng;
        for _ in 0..300 {
            let benches = rng.gen_range(1..5);
            let overhead: Vec<f64> = (0..benches).map(|_| rng.gen_range(0.0..0.2)).collect();
            let units: Vec<Unit> = (0..rng.gen_range(1..12))
                .map(|i| {
                    unit(
                        i % benches,
                        (i % 3 != 0).then_some("c"),
                        rng.gen_range(0.01..3.0),
                    )
                })
                .collect();
            let rows: Vec<Row> = (0..rng.gen_range(1..30))
                .map(|_| {
                    row(
                        rng.gen_range(0..units.len()),
                        rng.gen_range(0.001..0.4),
                        rng.gen_range(2..8),
                        rng.gen_range(0.02..0.3),
                    )
                })
                .collect();
            let allowance = rng.gen_range(0.0..30.0);
            let p = plan(&rows, &units, &overhead, allowance, 60);
            assert!(p.cost_s <= allowance + 1e-9, "{p:?} over {allowance}");
            // The cost as the rounds of the plan will run: each benchmark's rounds' overhead
            // and each unit's rounds.
            let mut per = vec![0usize; benches];
            for (u, n) in units.iter().zip(&p.extra) {
                per[u.bench] = per[u.bench].max(*n);
            }
            let cost: f64 = per
                .iter()
                .zip(&overhead)
                .map(|(n, o)| *n as f64 * o)
                .sum::<f64>()
                + units
                    .iter()
                    .zip(&p.extra)
                    .map(|(u, n)| u.cost_s * *n as f64)
                    .sum::<f64>();
            assert!((cost - p.cost_s).abs() < 1e-6, "{cost} against {p:?}");
            // No row past the cap.
            for r in &rows {
                assert!(r.rounds + p.extra[r.unit] <= 60, "{r:?} {p:?}");
            }
        }
    }

    /// The run of 2026-12-07 16:55 in small: a c2c row whose rounds cost 20 ms and need 74
    /// kept rounds for 20% (more than the cap), beside memory rows whose rounds cost 0.5 s
    /// and can reach their 15%. The c2c row got none of its rounds then; by value per second
    /// it gets them first, up to the cap, and the memory rows the rest.
    #[test]
    fn a_cheap_row_gets_its_rounds_first_and_one_out_of_reach_still_narrows() {
        let units = vec![
            unit(0, None, 0.02),
            unit(1, Some("a"), 0.5),
            unit(1, Some("b"), 0.5),
        ];
        let c2c = row(0, 0.40, 10, 0.20);
        assert!(rounds_for(0.40, 9.0, 0.20, 60, RUN_SIGMA).is_none());
        let rows = vec![c2c, row(1, 0.12, 5, 0.15), row(2, 0.12, 5, 0.15)];
        let p = plan(&rows, &units, &[0.0, 0.0], 5.0, 60);
        assert_eq!(p.extra[0], 50, "to the cap of 60 rounds: {p:?}");
        assert!(p.extra[1] > 0 && p.extra[2] > 0, "{p:?}");
        // A small allowance goes to the cheap row first: its rounds narrow it most per
        // second.
        let p = plan(&rows, &units, &[0.0, 0.0], 0.41, 60);
        assert_eq!(p.extra, vec![20, 0, 0], "{p:?}");
        // A row out of reach still narrows when nothing else wants the time.
        let far = vec![row(0, 0.30, 5, 0.03)];
        let p = plan(&far, &units[..1], &[0.0], 1000.0, 60);
        assert_eq!(p.extra[0], 55, "{p:?}");
    }

    /// The plan's MDEs against the best split of the same allowance, found by trying every
    /// split, on random rows (σ 1-40% between rounds, run levels 0-10%, round costs 10 ms to
    /// 2 s, whole rounds and cases): the geometric mean of each row's MDE over its goal
    /// within 10% of the best's.
    #[test]
    fn the_plan_is_within_ten_percent_of_the_best_split_for_its_allowance() {
        use rand::Rng;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(58);
        let mut worst: f64 = 1.0;
        for _ in 0..300 {
            let k = rng.gen_range(1..=3);
            let units: Vec<Unit> = (0..k)
                .map(|b| unit(b, None, 10f64.powf(rng.gen_range(-2.0..0.3))))
                .collect();
            let rows: Vec<Row> = (0..rng.gen_range(k..=2 * k + 1))
                .map(|i| {
                    let first = rng.gen_range(3..8);
                    Row {
                        run: rng.gen_range(0.0..0.10),
                        ..row(
                            i % k,
                            rng.gen_range(0.01..0.40),
                            first,
                            rng.gen_range(0.03..0.25),
                        )
                    }
                })
                .collect();
            let overhead: Vec<f64> = (0..k).map(|_| rng.gen_range(0.0..0.05)).collect();
            let allowance = rng.gen_range(0.0..20.0);
            let cap = 30;
            let score = |extra: &[usize]| -> f64 {
                let total: f64 = rows
                    .iter()
                    .map(|r| {
                        let (s, df) = r.stage1.unwrap();
                        shortfall(s, df, r.kept + extra[r.unit], r.run, goal(r))
                    })
                    .sum();
                (total / rows.len() as f64).exp()
            };
            let p = plan(&rows, &units, &overhead, allowance, cap);
            // Every split that fits: each unit is its own benchmark, so each of its rounds
            // costs its round and its overhead.
            let per: Vec<f64> = units
                .iter()
                .zip(&overhead)
                .map(|(u, o)| u.cost_s + o)
                .collect();
            let most: Vec<usize> = (0..k)
                .map(|u| {
                    let have = rows
                        .iter()
                        .filter(|r| r.unit == u)
                        .map(|r| r.rounds)
                        .max()
                        .unwrap_or(0);
                    cap.saturating_sub(have).min((allowance / per[u]) as usize)
                })
                .collect();
            let mut best = f64::INFINITY;
            let mut split = vec![0usize; k];
            loop {
                let cost: f64 = split.iter().zip(&per).map(|(n, c)| *n as f64 * c).sum();
                if cost <= allowance + 1e-9 {
                    best = best.min(score(&split));
                }
                // The next split, odometer-wise.
                let mut i = 0;
                while i < k && split[i] == most[i] {
                    split[i] = 0;
                    i += 1;
                }
                if i == k {
                    break;
                }
                split[i] += 1;
            }
            let got = score(&p.extra);
            worst = worst.max(got / best);
            assert!(
                got <= 1.10 * best,
                "{got} against the best {best}: {p:?} {rows:?} {units:?}"
            );
        }
        eprintln!("the plan's geometric MDE over goal at most {worst:.3}x the best split's");
    }

    #[test]
    fn a_row_without_a_first_stage_spread_is_not_planned() {
        let units = vec![unit(0, None, 1.0)];
        let mut r = row(0, 0.1, 5, 0.03);
        r.stage1 = None;
        assert_eq!(plan(&[r], &units, &[0.0], 100.0, 60).extra, vec![0]);
    }

    #[test]
    fn the_first_stage_cuts_the_expensive_benchmarks_first() {
        // Cheap timers (25 of 0.1 s), a 2.5 s sweep and a 1.7 s ping-pong (5 each).
        let desired = [25, 5, 5, 0];
        let cost = [Some(0.1), Some(2.5), Some(1.7), None];
        assert_eq!(first_stage(&desired, &cost, 100.0), desired.to_vec());
        let n = first_stage(&desired, &cost, 20.0);
        assert_eq!(n[0], 25, "{n:?}");
        assert_eq!(n[3], 0);
        assert!(n[1] < 5 && n[1] >= FIRST_STAGE_MIN, "{n:?}");
        let spent: f64 = n
            .iter()
            .zip(&cost)
            .map(|(n, c)| *n as f64 * c.unwrap_or(0.0))
            .sum();
        assert!(spent <= 20.0, "{n:?} {spent}");
        // Nothing fits: the fewest each.
        assert_eq!(first_stage(&desired, &cost, 1.0), vec![3, 3, 3, 0]);
        // A benchmark that draws fewer than the minimum keeps its count.
        assert_eq!(
            first_stage(&[2, 5], &[Some(5.0), Some(5.0)], 1.0),
            vec![2, 3]
        );
    }

    #[test]
    fn rounds_are_interleaved_evenly_and_every_one_runs_once() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(2);
        let s = interleave(&[4, 2, 0, 1], &mut rng);
        assert_eq!(s.len(), 7);
        for (b, n) in [(0usize, 4usize), (1, 2), (3, 1)] {
            let js: Vec<usize> = s.iter().filter(|x| x.0 == b).map(|x| x.1).collect();
            assert_eq!(js, (0..n).collect::<Vec<_>>());
        }
        // Benchmark 1's second round comes after half of benchmark 0's.
        let at = |b, j| s.iter().position(|x| *x == (b, j)).unwrap();
        assert!(at(1, 1) > at(0, 1));
    }

    #[test]
    fn a_plan_becomes_rounds_of_the_cases_that_need_them() {
        let units = vec![
            unit(0, Some("a"), 1.0),
            unit(0, Some("b"), 1.0),
            unit(1, None, 1.0),
        ];
        let p = Plan {
            extra: vec![2, 1, 1],
            cost_s: 0.0,
        };
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut r = rounds_of_plan(&p, &units, 2, &mut rng);
        r.sort_by_key(|x| x.0);
        assert_eq!(
            r,
            vec![(0, None), (0, Some(vec!["a".to_string()])), (1, None)],
            "round 0 of benchmark 0 has both cases: a whole round"
        );
    }
}

/// The allocation and stopping rules on simulated rows, tested as `compare` tests them.
#[cfg(test)]
mod simulated {
    use super::*;
    use crate::compare::stats::noise_model::RUN_SIGMA;
    use crate::compare::stats::noise_model::{test as compare_test, NoiseModel};
    use crate::measure::stats::standard_normal as normal;
    use crate::result::rounds::{flag_outliers, Cause, Disturbance, Round, Rounds};
    use rand::{Rng, SeedableRng};

    /// A benchmark's rows: their σ between rounds and their target; `cases` when a round
    /// can measure each row alone.
    struct Bench {
        sigma: Vec<f64>,
        target: f64,
        cases: bool,
        /// What only separate runs sample (a σ of each row's level per run), as the run's
        /// allocation and `compare` both take it.
        run: f64,
        /// What a row's pages cost (a σ of its log level), drawn afresh per round when
        /// `per_round` (a spacer held while each round maps), else once per run; not in
        /// `run`.
        pages: f64,
        per_round: bool,
    }

    const FIRST: usize = 5;
    /// Chance a round starts a burst of disturbed rounds (flagged, kept out), and the
    /// burst's shift of the log medians.
    const BURST: f64 = 0.08;
    const SHIFT: f64 = 0.4;

    /// The rounds of one row so far: log median and whether it was disturbed.
    type Drawn = Vec<(f64, bool)>;

    /// One run: a first stage of FIRST rounds of every row, the allocation within a random
    /// allowance, its rounds interleaved and cut short by a random deadline half the time;
    /// `shift` moves every row (an induced difference). Returns per row its Rounds and the
    /// log median it reports.
    fn one_run(rng: &mut rand::rngs::SmallRng, b: &Bench, shift: f64) -> Vec<(Rounds, f64)> {
        let rows = b.sigma.len();
        let once = if b.per_round { 0.0 } else { b.pages };
        let offset: Vec<f64> = (0..rows)
            .map(|_| b.run * normal(rng) + if once > 0.0 { once * normal(rng) } else { 0.0 })
            .collect();
        let each = if b.per_round { b.pages } else { 0.0 };
        let mut burst = 0usize;
        let mut draw = |rng: &mut rand::rngs::SmallRng, rs: &mut Vec<Drawn>, which: &[usize]| {
            if burst == 0 && rng.gen_bool(BURST) {
                burst = rng.gen_range(1..=3);
            }
            let hit = burst > 0;
            burst = burst.saturating_sub(1);
            for &i in which {
                let pages = if each > 0.0 { each * normal(rng) } else { 0.0 };
                let v = shift
                    + offset[i]
                    + pages
                    + b.sigma[i] * normal(rng)
                    + if hit { SHIFT } else { 0.0 };
                rs[i].push((v, hit));
            }
        };
        let mut drawn: Vec<Drawn> = vec![vec![]; rows];
        let all: Vec<usize> = (0..rows).collect();
        for _ in 0..FIRST {
            draw(rng, &mut drawn, &all);
        }
        // The first stage's noise per row, as merge computes it.
        let first: Vec<Rounds> = drawn.iter().map(|d| merged(d, None)).collect();
        let units: Vec<Unit> = if b.cases {
            (0..rows).map(|i| unit_of(Some(format!("{i}")))).collect()
        } else {
            vec![unit_of(None)]
        };
        let arows: Vec<Row> = first
            .iter()
            .enumerate()
            .map(|(i, r)| Row {
                unit: if b.cases { i } else { 0 },
                stage1: r.noise.as_ref().map(|n| (n.sigma, n.df)),
                kept: r.noise.as_ref().map(|n| n.kept).unwrap_or(0),
                rounds: FIRST,
                target: b.target,
                run: b.run,
                weight: 1.0,
            })
            .collect();
        let p = plan(&arows, &units, &[0.1], rng.gen_range(0.0..=40.0), 60);
        let mut order = rounds_of_plan(&p, &units, 1, rng);
        if rng.gen_bool(0.5) {
            let keep = (order.len() as f64 * rng.gen_range(0.0..1.0)) as usize;
            order.truncate(keep);
        }
        for (_, only) in order {
            let which: Vec<usize> = match only {
                None => all.clone(),
                Some(cases) => cases.iter().map(|c| c.parse().unwrap()).collect(),
            };
            draw(rng, &mut drawn, &which);
        }
        drawn
            .iter()
            .map(|d| {
                let r = merged(d, Some(FIRST));
                let m = pooled_center(&r);
                (r, m)
            })
            .collect()
    }

    fn unit_of(case: Option<String>) -> Unit {
        Unit {
            bench: 0,
            case,
            cost_s: 1.0,
        }
    }

    /// A row's rounds merged as `session::merge::merge` does: disturbed rounds flagged,
    /// outliers flagged, the noise about the pooled median, σ from the first stage's rounds
    /// when it has two kept ones.
    fn merged(d: &Drawn, stage1: Option<usize>) -> Rounds {
        let mut rs: Vec<Round> = d
            .iter()
            .enumerate()
            .map(|(i, (v, hit))| Round {
                seq: i,
                waited: None,
                at_s: i as f64,
                median: v.exp(),
                samples: 1,
                disturbed: if *hit {
                    vec![Disturbance {
                        cause: Cause::Steal,
                        value: 30.0,
                        limit: 2.0,
                        persistent: false,
                    }]
                } else {
                    vec![]
                },
                others: None,
                steal: None,
            })
            .collect();
        flag_outliers(&mut rs);
        let mut r = Rounds {
            rounds: rs,
            noise: None,
        };
        let center = pooled_center(&r);
        let stage1 = stage1.and_then(|n| {
            super::super::merge::row_stage1(
                n,
                r.rounds[..n.min(r.rounds.len())]
                    .iter()
                    .filter(|x| x.kept())
                    .count(),
            )
        });
        r.noise = super::super::merge::row_noise(&r.rounds, center, stage1);
        r
    }

    /// ln of the pooled rounds' median (one sample a round).
    fn pooled_center(r: &Rounds) -> f64 {
        let v: Vec<f64> = r.pooled().iter().map(|x| x.median.ln()).collect();
        crate::result::rounds::median(&v)
    }

    /// How often `compare` calls a row of each σ, over `pairs` pairs of runs of `b`, B's
    /// rows moved by `shift` (log): over all pairs, and over the pairs where both runs'
    /// row reached its target (NaN when none did), with the number of those pairs.
    fn call_rates(b: &Bench, pairs: usize, shift: f64, seed: u64) -> (Vec<f64>, Vec<(f64, usize)>) {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let rows = b.sigma.len();
        let (mut called, mut reached, mut called_reached) =
            (vec![0usize; rows], vec![0usize; rows], vec![0usize; rows]);
        for _ in 0..pairs {
            let a = one_run(&mut rng, b, 0.0);
            let bb = one_run(&mut rng, b, shift);
            for (i, ((ra, ma), (rb, mb))) in a.into_iter().zip(bb).enumerate() {
                let met = |r: &Rounds| {
                    r.noise.as_ref().is_some_and(|n| {
                        crate::compare::stats::noise_model::row_mde(n, b.run) <= b.target
                    })
                };
                let both = met(&ra) && met(&rb);
                let row = |r: Rounds, m: f64| {
                    let mut x = crate::result::testing::result(
                        "sim.row@1",
                        "os",
                        None,
                        serde_json::json!({}),
                        m.exp(),
                    );
                    x.stats.median = m.exp();
                    x.rounds = Some(r);
                    x
                };
                let (xa, xb) = (row(ra, ma), row(rb, mb));
                // Nothing measured of the host: the rows' rounds alone, as `compare` tests
                // a current document with no calibration (a row without a spread of rounds
                // is not tested, so not called).
                let mut noise = NoiseModel::default().row(&xa);
                noise.run = Some(b.run);
                let call = compare_test(&xa, &xb, &noise).is_some_and(|t| t.p < 0.05);
                called[i] += usize::from(call);
                reached[i] += usize::from(both);
                called_reached[i] += usize::from(both && call);
            }
        }
        (
            called.iter().map(|c| *c as f64 / pairs as f64).collect(),
            called_reached
                .iter()
                .zip(&reached)
                .map(|(c, n)| (*c as f64 / *n as f64, *n))
                .collect(),
        )
    }

    const SIGMAS: [f64; 6] = [0.01, 0.03, 0.08, 0.15, 0.30, 0.40];

    #[test]
    fn a_a_pairs_are_called_at_most_at_the_error_rate_per_row() {
        // 3000 pairs: a Monte Carlo standard error of 0.4% at 5%. Round spreads 1-40%, run
        // levels from none to 10% (a latency row past the LLC is 5%), bursts of disturbed
        // rounds, the allocation by value per second within random allowances.
        for (cases, target, run, seed) in [
            (true, 0.08, RUN_SIGMA, 11),
            (false, 0.03, RUN_SIGMA, 12),
            (true, 0.20, RUN_SIGMA, 13),
            (true, 0.08, 0.0, 14),
            (true, 0.15, 0.05, 15),
            (false, 0.10, 0.10, 16),
        ] {
            let b = Bench {
                sigma: SIGMAS.to_vec(),
                target,
                cases,
                run,
                pages: 0.0,
                per_round: false,
            };
            let (rates, _) = call_rates(&b, 3000, 0.0, seed);
            eprintln!("A/A cases {cases} target {target} run {run}: {rates:?}");
            for (s, r) in SIGMAS.iter().zip(&rates) {
                assert!(*r <= 0.05, "σ {s}: called {r} of A/A pairs");
            }
        }
    }

    #[test]
    fn an_induced_difference_of_the_target_is_called_where_the_target_was_reached() {
        let b = Bench {
            sigma: SIGMAS.to_vec(),
            target: 0.08,
            cases: true,
            run: RUN_SIGMA,
            pages: 0.0,
            per_round: false,
        };
        // Where both runs' row reached its target (in the first stage, or with the
        // rounds the allocation gave), a difference of the target is called most of the
        // time: the MDE is stated at power 0.8.
        let (all, reached) = call_rates(&b, 1500, 0.08f64.ln_1p(), 21);
        eprintln!("power at 8%: {all:?}, where reached {reached:?}");
        // Only rows that reached it often enough to estimate a rate (a row of σ 8% needs
        // about 34 rounds a run, which few random allowances buy: the handful of pairs
        // that reached it did so with the first stage's spread drawn low, a selection a
        // rate of 16 pairs cannot tell from 0.8).
        for (s, (p, n)) in SIGMAS.iter().zip(&reached) {
            assert!(
                *n < 200 || *p >= 0.75,
                "σ {s}: {p} of {n} where reached ({reached:?})"
            );
        }
        assert!(reached[..2].iter().all(|(_, n)| *n >= 200), "{reached:?}");
        // Over every pair, power falls with the spread; the quietest row is called most
        // of the time whatever the allowance.
        assert!(all.windows(2).all(|w| w[0] + 0.05 >= w[1]), "{all:?}");
        assert!(all[0] >= 0.8, "{all:?}");
    }

    /// The level rule (`noise_model::run_sigma`) on simulated rows whose pages cost 0-10%
    /// (a σ of the log level): where each round draws its pages afresh the rows take the
    /// nominal level and their own rounds' spread, and the A/A error rate holds for every
    /// round spread; where the pages are drawn once per run, that level calls far too often,
    /// so a row without the evidence keeps its stated default.
    #[test]
    fn rows_whose_rounds_draw_their_pages_take_their_level_from_their_rounds() {
        use crate::compare::stats::noise_model::{run_sigma, BANDWIDTH_RUN_SIGMA};
        let mut row = crate::result::testing::result(
            "memory.bandwidth@1",
            "compact",
            Some(vec![0]),
            serde_json::json!({"kernel": "copy", "stores": "regular", "threads": 1}),
            20000.0,
        );
        assert_eq!(run_sigma(&row, &[]), BANDWIDTH_RUN_SIGMA);
        row.quality.pages_per_round = true;
        let level = run_sigma(&row, &[]);
        assert_eq!(level, RUN_SIGMA);
        let bench = |pages: f64, per_round: bool| Bench {
            sigma: SIGMAS.to_vec(),
            target: 0.15,
            cases: true,
            run: level,
            pages,
            per_round,
        };
        for (pages, seed) in [(0.0, 31), (0.025, 32), (0.05, 33), (0.10, 34)] {
            let (rates, _) = call_rates(&bench(pages, true), 3000, 0.0, seed);
            eprintln!("A/A, pages {pages} drawn per round: {rates:?}");
            for (s, r) in SIGMAS.iter().zip(&rates) {
                assert!(*r <= 0.05, "pages {pages}, σ {s}: called {r} of A/A pairs");
            }
        }
        // Drawn once per run, the quiet rows are called in most pairs at that level.
        let (rates, _) = call_rates(&bench(0.05, false), 1000, 0.0, 35);
        eprintln!("A/A, pages 0.05 drawn once per run: {rates:?}");
        assert!(rates[0] > 0.3 && rates[1] > 0.2, "{rates:?}");
        // An induced difference of the target is still called where the rows reached it.
        let (_, reached) = call_rates(&bench(0.05, true), 1500, 0.15f64.ln_1p(), 36);
        eprintln!("power at 15%, pages 0.05 per round: {reached:?}");
        for (s, (p, n)) in SIGMAS.iter().zip(&reached) {
            assert!(*n < 200 || *p >= 0.75, "σ {s}: {p} of {n} where reached");
        }
        assert!(reached[0].1 >= 200, "{reached:?}");
    }
}
