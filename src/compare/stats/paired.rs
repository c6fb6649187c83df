//! Paired rounds: the test of a row of `truebench ab`, whose two documents (A and B,
//! tagged with one ab run, `TAG`) measured each round of a row on both sides one right
//! after the other, in a random order, on one timeline (one `seq` across both). Each B
//! round is paired with the A round measured next to it in time (walking the row's rounds
//! of both sides in the order they ran, each adjacent A/B couple not yet taken); a pair
//! either of whose rounds was disturbed is kept out. Per row: d = the mean of the pairs'
//! ln(B/A), its standard error from their spread (σ/√n, n − 1 degrees of freedom), its
//! p-value and MDE; the verdicts and FDR control are compare's (`verdict`, `compare_at`).
//!
//! The host's drift between rounds falls on both rounds of a pair alike and leaves d, so
//! the spread is that of the pairs' differences, not of the rounds about their runs' levels
//! and of the runs' levels apart: the design of randomized multiple interleaved trials
//! (Abedi and Brecht, ICPE 2017) applied round by round (duet benchmarking, Bulej et al.,
//! ICPE 2020, runs the two at once; here they alternate).

use super::noise_model::{mde_log, Basis, RowNoise, RowTest};
use crate::result::rounds::Round;
use crate::result::{BenchResult, RunDocument};

/// The tag naming the ab run (A's run id) on both documents.
pub const TAG: &str = "ab";
/// The tag naming the side (`a`, `b`).
pub const SIDE_TAG: &str = "ab-side";
/// The tag holding the side's settings as given (`as found` for a side without any).
pub const SETTINGS_TAG: &str = "ab-settings";

/// Whether `a` and `b` are the two sides of one ab run, A first.
pub fn is_pair(a: &RunDocument, b: &RunDocument) -> bool {
    let (ta, tb) = (a.tags.get(TAG), b.tags.get(TAG));
    let side = |d: &RunDocument, want: &str| d.tags.get(SIDE_TAG).is_some_and(|s| s == want);
    ta.is_some() && ta == tb && side(a, "a") && side(b, "b")
}

/// The pairs of a row's rounds: each B round with the A round next to it in time.
pub fn pairs<'r>(a: &'r [Round], b: &'r [Round]) -> Vec<(&'r Round, &'r Round)> {
    let mut all: Vec<(usize, bool, &Round)> = a
        .iter()
        .map(|r| (r.seq, false, r))
        .chain(b.iter().map(|r| (r.seq, true, r)))
        .collect();
    all.sort_by_key(|(seq, is_b, _)| (*seq, *is_b));
    let mut out = vec![];
    let mut i = 0;
    while i + 1 < all.len() {
        let (x, y) = (all[i], all[i + 1]);
        if x.1 != y.1 {
            out.push(if x.1 { (y.2, x.2) } else { (x.2, y.2) });
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

/// ln(B/A) of each pair both of whose rounds were kept (of every pair when fewer than two
/// were, as a row's figures rest on every round then: `includes_disturbed`), how many
/// pairs there were, and whether the disturbed ones are included.
pub fn kept_logs(a: &[Round], b: &[Round]) -> (Vec<f64>, usize, bool) {
    let p = pairs(a, b);
    let logs = |all: bool| -> Vec<f64> {
        p.iter()
            .filter(|(x, y)| all || (x.kept() && y.kept()))
            .filter(|(x, y)| x.median > 0.0 && y.median > 0.0)
            .map(|(x, y)| (y.median / x.median).ln())
            .filter(|d| d.is_finite())
            .collect()
    };
    let kept = logs(false);
    if kept.len() >= 2 {
        (kept, p.len(), false)
    } else {
        (logs(true), p.len(), true)
    }
}

/// The test of ln(B/A) on the pairs' differences `logs`; None with fewer than two.
pub fn test_logs(logs: &[f64]) -> Option<RowTest> {
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let d = logs.iter().sum::<f64>() / n as f64;
    let var = logs.iter().map(|x| (x - d).powi(2)).sum::<f64>() / (n - 1) as f64;
    // A floor of a part in 10^6: identical pairs would give a test of no spread at all.
    let se = (var / n as f64).sqrt().max(1e-6);
    let df = Some((n - 1) as f64);
    Some(RowTest {
        d,
        se,
        df,
        p: crate::measure::mde::p_value(d, se, df),
        mde_log: mde_log(se, df),
        basis: Basis::Paired,
    })
}

/// A row of an ab pair tested on its paired rounds: the noise it rests on and the test;
/// the test is None (the noise says why) with fewer than two undisturbed pairs.
pub fn test(a: &BenchResult, b: &BenchResult) -> (RowNoise, Option<RowTest>) {
    let (ra, rb) = match (&a.rounds, &b.rounds) {
        (Some(x), Some(y)) => (&x.rounds[..], &y.rounds[..]),
        _ => {
            return (
                RowNoise::unmeasured("a side without rounds: nothing to pair".into()),
                None,
            )
        }
    };
    let (logs, total, every) = kept_logs(ra, rb);
    let Some(t) = test_logs(&logs) else {
        return (
            RowNoise::unmeasured(format!(
                "{} of {}: too few to pair",
                logs.len(),
                crate::units::count(total, "pair of rounds")
            )),
            None,
        );
    };
    let sigma = t.se * (logs.len() as f64).sqrt();
    let noise = RowNoise {
        basis: Basis::Paired,
        sigma: Some(sigma),
        runs: logs.len(),
        source: format!(
            "paired rounds: {} of {}{}, ln(B/A) spread {:.1}% between them",
            logs.len(),
            crate::units::count(total, "pair"),
            if every {
                " (fewer than two undisturbed: every pair counts)"
            } else {
                " undisturbed"
            },
            sigma * 100.0
        ),
        run: None,
    };
    (noise, Some(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A normal draw of standard deviation `sd` (Box-Muller).
    fn gauss(rng: &mut impl Rng, sd: f64) -> f64 {
        let (u, v): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
        sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn round(seq: usize, median: f64) -> Round {
        Round {
            seq,
            at_s: seq as f64,
            median,
            samples: 2,
            ..Default::default()
        }
    }

    /// `k` rounds per side of a row on a host drifting by `drift` (a random walk of ln level
    /// per round, σ `drift`) with round-to-round noise `noise`, B `effect` (ln) above A, each
    /// round of the ab schedule in a random side order. Returns the rounds of A and B.
    fn simulated(
        rng: &mut impl Rng,
        k: usize,
        drift: f64,
        noise: f64,
        effect: f64,
    ) -> (Vec<Round>, Vec<Round>) {
        let (mut a, mut b) = (vec![], vec![]);
        let mut level = 0.0;
        let mut seq = 0;
        for _ in 0..k {
            level += gauss(rng, drift);
            let b_first = rng.gen_bool(0.5);
            for is_b in [b_first, !b_first] {
                let m = (3.0 + level + gauss(rng, noise) + if is_b { effect } else { 0.0 }).exp();
                let r = round(seq, m);
                seq += 1;
                if is_b {
                    b.push(r)
                } else {
                    a.push(r)
                }
            }
        }
        (a, b)
    }

    #[test]
    fn each_b_round_pairs_with_the_a_round_next_to_it() {
        let a = [round(0, 10.0), round(3, 11.0), round(4, 12.0)];
        let b = [round(1, 20.0), round(2, 22.0), round(5, 24.0)];
        let p: Vec<(usize, usize)> = pairs(&a, &b).iter().map(|(x, y)| (x.seq, y.seq)).collect();
        assert_eq!(p, [(0, 1), (3, 2), (4, 5)]);
        // A disturbed round drops its pair, not the others.
        let mut a2 = a.to_vec();
        a2[1].disturbed.push(crate::result::rounds::Disturbance {
            cause: crate::result::rounds::Cause::Steal,
            value: 10.0,
            limit: 2.0,
            persistent: false,
        });
        let (logs, total, every) = kept_logs(&a2, &b);
        assert_eq!((logs.len(), total, every), (2, 3, false));
        assert!((logs[0] - 2f64.ln()).abs() < 1e-12);
        assert!(test_logs(&logs[..1]).is_none());
        // Fewer than two undisturbed pairs: every pair counts, and says so.
        let mut b2 = b.to_vec();
        b2[0].disturbed = a2[1].disturbed.clone();
        let (logs, _, every) = kept_logs(&a2, &b2);
        assert_eq!((logs.len(), every), (3, true));
    }

    /// The A/A: on a host whose level drifts between rounds by more than the rounds' own
    /// noise, the paired test calls at most its error rate, while the runs' own levels
    /// (what two runs and compare test) move with the drift.
    #[test]
    fn an_a_a_on_a_drifting_host_is_called_at_most_at_its_error_rate() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(59);
        let trials = 2000;
        let mut called = 0;
        let mut mdes = vec![];
        for _ in 0..trials {
            let (a, b) = simulated(&mut rng, 10, 0.03, 0.01, 0.0);
            let (logs, _, _) = kept_logs(&a, &b);
            let t = test_logs(&logs).unwrap();
            called += usize::from(t.p < 0.05);
            mdes.push(t.mde());
        }
        let rate = called as f64 / trials as f64;
        assert!(rate <= 0.065, "A/A false-call rate {rate}");
        assert!(
            rate >= 0.035,
            "a test that never calls proves nothing: {rate}"
        );
        mdes.sort_by(f64::total_cmp);
        let mde = mdes[trials / 2];
        // The drift (3% a round, a random walk) is held out: the MDE is the pairs' noise
        // (1% a round, √2 of it a pair, over √10 pairs, × about 3.2), not the drift's.
        assert!(mde < 0.025, "median MDE {mde}");
    }

    /// Power: an induced difference of the MDE the A/A gives (about 1.4%: the pairs' noise
    /// of 1.4% over √10 pairs, × 3.1 at 9 degrees of freedom) on the same drifting host is
    /// called in about 80% of runs of 10 rounds, as the MDE promises, and its estimate is
    /// unbiased.
    #[test]
    fn an_induced_difference_is_called_with_the_power_the_mde_promises() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(60);
        let trials = 1000;
        let mut called = 0;
        let mut sum = 0.0;
        for _ in 0..trials {
            let (a, b) = simulated(&mut rng, 10, 0.03, 0.01, 0.014f64.ln_1p());
            let (logs, _, _) = kept_logs(&a, &b);
            let t = test_logs(&logs).unwrap();
            called += usize::from(t.p < 0.05 && t.d > 0.0);
            sum += t.d;
        }
        let power = called as f64 / trials as f64;
        assert!((0.72..=0.95).contains(&power), "power {power}");
        let mean = (sum / trials as f64).exp_m1();
        assert!((mean - 0.014).abs() < 0.002, "mean estimate {mean}");
    }

    #[test]
    fn only_the_two_sides_of_one_ab_run_pair_up() {
        let doc = |id: &str, ab: Option<&str>, side: &str| {
            let mut d = crate::result::testing::run(id, vec![], crate::result::testing::env());
            if let Some(ab) = ab {
                d.tags.insert(TAG.into(), ab.into());
                d.tags.insert(SIDE_TAG.into(), side.into());
            }
            d
        };
        assert!(is_pair(
            &doc("x", Some("x"), "a"),
            &doc("y", Some("x"), "b")
        ));
        assert!(!is_pair(
            &doc("y", Some("x"), "b"),
            &doc("x", Some("x"), "a")
        ));
        assert!(!is_pair(
            &doc("x", Some("x"), "a"),
            &doc("z", Some("q"), "b")
        ));
        assert!(!is_pair(&doc("x", None, "a"), &doc("y", None, "b")));
    }
}
