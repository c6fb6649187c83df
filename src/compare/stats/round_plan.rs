//! `compare --precision P`: how many rounds each side of a row whose MDE is above P needs
//! added, decided from the first stage only (Stein's two-stage rule, as `run --precision`:
//! `session::precision`). A side whose rounds can be added gives its first stage's σ₁ and
//! degrees of freedom; a side that cannot (another host, another setting, noise set by the
//! host's calibration) keeps the variance it has. The test after adding uses the smaller
//! side's degrees of freedom (a two-stage side's t), so the target standard error is
//! SE* = ln(1+P) / (t₀.₉₇₅ + t₀.₈₀) at that df, and the sides that can grow share what the
//! fixed ones leave, R = SE*² − Σ fixed variances: one side alone needs n = ⌈σ₁²/R⌉ kept
//! rounds; two need nᵢ = ⌈σᵢ(σ_A + σ_B)/R⌉ (the fewest rounds in all for that SE*; with
//! equal σ the n of `run --precision`, each side as precise as against an identical run).
//! A side's variance does not go below the host's calibration or history σ² for the row
//! (the test raises a side to it): a row whose floors alone exceed SE*² gets no rounds.
//! Nothing here reads the added rounds, so the number of rounds does not depend on them
//! and the test keeps its error rate.

use crate::measure::mde::mde_log;

/// A side's first stage, when rounds can be added to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct First {
    /// σ of ln(round median) over the first stage's kept rounds.
    pub sigma: f64,
    /// Its degrees of freedom.
    pub df: f64,
    /// Kept rounds so far.
    pub kept: usize,
    /// Rounds so far, kept or not.
    pub rounds: usize,
}

/// One side of a row as it is tested now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SideNow {
    /// Variance of its log median in the test.
    pub var: f64,
    /// Its degrees of freedom (None: normal, the floor's).
    pub df: Option<f64>,
    /// Present when rounds can be added to this side.
    pub first: Option<First>,
    /// The variance added rounds cannot take it below: the host's calibration or history
    /// σ² for the row (the test raises a side's rounds noise to it), else 0.
    pub floor: f64,
    /// The variance only separate runs sample, added to its rounds' in the test
    /// (`noise_model::RUN_SIGMA`²; 0 where none is added).
    pub run: f64,
}

/// What a row short of the target gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Rounds to add to A and to B.
    Add([usize; 2]),
    /// The sides that cannot grow alone leave the row at this MDE (relative), above P.
    Fixed { mde: f64 },
    /// The host's calibration or history σ, which rounds do not narrow, leaves the row at
    /// this MDE, above P.
    Floor { mde: f64 },
    /// Side `side` (0 A, 1 B) would need this many rounds in all, more than the cap.
    TooMany { side: usize, needed: usize },
}

/// The degrees of freedom of the test once a side is two-staged: the smaller side's.
fn df_after(sides: [&SideNow; 2]) -> Option<f64> {
    let df = |s: &SideNow| s.first.map(|f| f.df).or(s.df);
    match (df(sides[0]), df(sides[1])) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => None,
    }
}

/// The rounds each side of a row needs added for an MDE of `target` (relative), a side
/// having at most `max_rounds` in all.
pub fn plan(sides: [&SideNow; 2], target: f64, max_rounds: usize) -> Plan {
    let df = df_after(sides);
    let se_t = target.ln_1p() / mde_log(1.0, df);
    let fixed: f64 = sides
        .iter()
        .filter(|s| s.first.is_none())
        .map(|s| s.var)
        .sum();
    let room = se_t * se_t - fixed;
    if room <= 0.0 || sides.iter().all(|s| s.first.is_none()) {
        return Plan::Fixed {
            mde: mde_log(fixed.sqrt(), df).exp_m1(),
        };
    }
    let floors: f64 = sides
        .iter()
        .filter(|s| s.first.is_some())
        .map(|s| s.floor)
        .sum();
    if floors >= room {
        return Plan::Floor {
            mde: mde_log((fixed + floors).sqrt(), df).exp_m1(),
        };
    }
    // What the growable sides' run level takes of the room, which no round narrows.
    let run: f64 = sides
        .iter()
        .filter(|s| s.first.is_some())
        .map(|s| s.run)
        .sum();
    if run >= room {
        return Plan::Floor {
            mde: mde_log((fixed + run).sqrt(), df).exp_m1(),
        };
    }
    let room = room - run;
    let sum_sigma: f64 = sides.iter().filter_map(|s| s.first).map(|f| f.sigma).sum();
    let mut add = [0usize; 2];
    for (i, s) in sides.iter().enumerate() {
        let Some(f) = s.first else { continue };
        let n = (f.sigma * sum_sigma / room).ceil().max(f.kept as f64) as usize;
        let extra = n - f.kept;
        if f.rounds + extra > max_rounds {
            return Plan::TooMany {
                side: i,
                needed: f.rounds + extra,
            };
        }
        add[i] = extra;
    }
    Plan::Add(add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::precision::{rounds_needed, MAX_ROUNDS};

    fn side(sigma: f64, kept: usize) -> SideNow {
        SideNow {
            var: sigma * sigma / kept as f64,
            df: Some(kept as f64 - 1.0),
            first: Some(First {
                sigma,
                df: kept as f64 - 1.0,
                kept,
                rounds: kept,
            }),
            floor: 0.0,
            run: crate::compare::stats::noise_model::RUN_SIGMA.powi(2),
        }
    }

    #[test]
    fn two_equal_sides_need_what_run_precision_gives_each() {
        let a = side(0.02, 5);
        let Plan::Add([x, y]) = plan([&a, &a], 0.05, MAX_ROUNDS) else {
            panic!()
        };
        assert_eq!(x, y);
        assert!(x > 0);
        assert_eq!(
            5 + x,
            rounds_needed(
                0.02,
                4.0,
                0.05,
                5,
                crate::compare::stats::noise_model::RUN_SIGMA
            )
        );
        // 3% at 4 degrees of freedom is below what the run level alone (0.6% a run) allows.
        assert!(matches!(plan([&a, &a], 0.03, MAX_ROUNDS), Plan::Floor { mde } if mde > 0.03));
        // The run's own allocation gets there: its test takes the added rounds' degrees of
        // freedom once they outnumber the first stage's (`result::rounds::sigma_stage`),
        // which this plan, decided before any is added, does not count on.
        let run = rounds_needed(
            0.02,
            4.0,
            0.03,
            5,
            crate::compare::stats::noise_model::RUN_SIGMA,
        );
        assert!(
            run > rounds_needed(
                0.02,
                4.0,
                0.05,
                5,
                crate::compare::stats::noise_model::RUN_SIGMA
            ) && run < 100,
            "{run}"
        );
        // A quiet row needs nothing more than it has.
        let q = side(0.001, 5);
        assert_eq!(plan([&q, &q], 0.05, MAX_ROUNDS), Plan::Add([0, 0]));
    }

    #[test]
    fn the_louder_side_gets_more_rounds() {
        let (a, b) = (side(0.04, 5), side(0.01, 5));
        let Plan::Add([x, y]) = plan([&a, &b], 0.04, MAX_ROUNDS) else {
            panic!()
        };
        assert!(x > y, "{x} {y}");
    }

    #[test]
    fn a_fixed_side_leaves_less_room_or_none() {
        let a = side(0.02, 5);
        let mut fixed = side(0.02, 5);
        fixed.first = None;
        let Plan::Add([x, y]) = plan([&a, &fixed], 0.045, MAX_ROUNDS) else {
            panic!()
        };
        assert_eq!(y, 0);
        let Plan::Add([both, _]) = plan([&a, &a], 0.045, MAX_ROUNDS) else {
            panic!()
        };
        assert!(
            x > both,
            "one side must do the narrowing of two: {x} vs {both}"
        );
        // B's own variance alone (σ 2% over 5 rounds) is above a 3% target's.
        let Plan::Fixed { mde } = plan([&a, &fixed], 0.03, MAX_ROUNDS) else {
            panic!()
        };
        assert!(mde > 0.03, "{mde}");
        // Neither side can grow: the row stays where it is.
        assert!(matches!(
            plan([&fixed, &fixed], 0.5, MAX_ROUNDS),
            Plan::Fixed { .. }
        ));
        // A calibration σ of 2% per run: no number of rounds brings two runs to 3%.
        let floored = SideNow { floor: 0.0004, ..a };
        assert!(
            matches!(plan([&floored, &floored], 0.03, MAX_ROUNDS), Plan::Floor { mde } if mde > 0.03)
        );
    }

    use crate::measure::stats::standard_normal as normal;

    #[test]
    fn rounds_added_by_the_plan_keep_the_a_a_error_rate() {
        use crate::result::rounds::noise_of;
        use rand::SeedableRng;
        use statrs::distribution::{ContinuousCDF, StudentsT};
        let rounds = crate::result::rounds::quiet_rounds;
        let mut rng = rand::rngs::SmallRng::seed_from_u64(35);
        let (trials, k) = (4000, 5);
        let mut called = 0;
        for i in 0..trials {
            let sigma = [0.005, 0.01, 0.02, 0.04][i % 4];
            // Half the pairs with B fixed (another host's run), half with both growable.
            let b_grows = i % 8 >= 4;
            let mut logs: [Vec<f64>; 2] =
                [0, 1].map(|_| (0..k).map(|_| sigma * normal(&mut rng)).collect());
            let first = logs
                .clone()
                .map(|l| noise_of(&rounds(&l), None, None).unwrap());
            let sides = [0, 1].map(|s| SideNow {
                var: first[s].se.powi(2),
                df: Some(first[s].df),
                first: (s == 0 || b_grows).then_some(First {
                    sigma: first[s].sigma,
                    df: first[s].df,
                    kept: k,
                    rounds: k,
                }),
                floor: 0.0,
                // The simulated runs have no run level: the rounds' noise is all there is.
                run: 0.0,
            });
            if let Plan::Add(add) = plan([&sides[0], &sides[1]], 0.05, MAX_ROUNDS) {
                for s in 0..2 {
                    logs[s].extend((0..add[s]).map(|_| sigma * normal(&mut rng)));
                }
            }
            // Each side: its first stage's σ over all its rounds; the smaller df.
            let mean = |l: &[f64]| l.iter().sum::<f64>() / l.len() as f64;
            let se2 = |s: usize| first[s].sigma.powi(2) / logs[s].len() as f64;
            let d = mean(&logs[1]) - mean(&logs[0]);
            let se = (se2(0) + se2(1)).sqrt();
            let t = StudentsT::new(0.0, 1.0, first[0].df.min(first[1].df)).unwrap();
            let p = 2.0 * (1.0 - t.cdf(d.abs() / se));
            called += usize::from(p < 0.05);
        }
        // 0.026 with this seed: the smaller df makes it a little conservative.
        let rate = called as f64 / trials as f64;
        // 0.05 and three Monte Carlo standard errors (0.0034 each).
        assert!(rate <= 0.06, "A/A rate {rate}");
        assert!(rate >= 0.02, "not needlessly conservative either: {rate}");
    }

    #[test]
    fn rounds_that_disagree_would_need_more_than_the_cap() {
        let a = side(0.3, 5);
        assert!(matches!(
            plan([&a, &a], 0.05, MAX_ROUNDS),
            Plan::TooMany { side: 0, needed } if needed > MAX_ROUNDS
        ));
    }
}
