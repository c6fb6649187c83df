//! Which hosts differ beyond the fleet's own spread. For each host and row: the robust z of
//! its log ratio to the fleet median (the deviation over the row's spread, widened by the
//! host's own noise on that row when a noise model gives it), a two-sided p from the normal
//! distribution, and the Benjamini-Hochberg procedure over every host x row test together
//! (`measure::fdr`). A test called real counts only when the host is at least the practical
//! floor away from the fleet median (5%, the drift floor of a two-run compare, or the
//! row's floor from the noise model when larger): with 500 hosts a 2% difference can be
//! significant and still not worth a person's time. A host is an outlier when some row of
//! it counts.
//!
//! The fleet's spread is a MAD of n hosts, itself uncertain: its z is referred to Student's t
//! with 0.37·(n − 1) degrees of freedom (0.37 is the MAD's asymptotic efficiency at the
//! normal, Rousseeuw and Croux 1993: a MAD of n values is worth a standard deviation of about
//! 0.37·n), not to the normal, which called a false outlier in 12% (100 hosts) to 39% (3
//! hosts) of simulated fleets with nothing to find. And below [`MIN_FLEET`] hosts on a row
//! no outlier is called at all (see there).
//!
//! The hook for a calibrated noise model: [`RowNoise`] (`fleet::noise` feeds it from each
//! host's calibration or stored history). Without one (`None`) only the
//! fleet's spread is used. With one, `sigma` is the standard deviation of this host's
//! median on this row in log units (0.02 = 2%), from its calibration runs, and `floor` the
//! smallest difference (a fraction) the row can resolve (its MDE); either may be None for
//! a row the calibration did not cover.

use super::baseline::Baseline;
use super::table::RowDef;
use crate::result::RunDocument;
use serde::Serialize;

/// The false discovery rate over all host x row tests.
pub const FDR_Q: f64 = 0.05;
/// The practical floor: a host closer than this to the fleet median on a row is not an
/// outlier on it, however significant (the drift floor of a two-run compare).
pub const FLOOR: f64 = crate::compare::verdict::DEFAULT_DRIFT;

/// The fewest hosts on a row for outlier calls. With t at 0.37·(n − 1) degrees of freedom a
/// fleet with nothing to find calls a false outlier in under 5% of fleets at any size, but
/// a real one is then found only when the fleet is large enough: in simulated fleets (normal
/// spread, one host 10 robust SDs out, BH at 5%) it was found in 17% of 5-host fleets, 47% at
/// 7, 62% at 8, 75% at 9 and 84% at 10. Below 10 hosts a verdict of "no outlier" would mean
/// little, so the view says outlier calls are refused and why, and still ranks.
pub const MIN_FLEET: usize = 10;
/// The MAD's asymptotic efficiency at the normal distribution.
pub const MAD_EFFICIENCY: f64 = 0.37;

/// A per-host, per-row noise model (from calibration runs).
pub trait RowNoise {
    /// The standard deviation of `run`'s median on `row`, in log units.
    fn sigma(&self, run: &RunDocument, row: &RowDef) -> Option<f64>;
    /// The smallest difference (a fraction) this host can resolve on `row`.
    fn floor(&self, run: &RunDocument, row: &RowDef) -> Option<f64> {
        let _ = (run, row);
        None
    }
}

/// One host x row test.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Test {
    /// ln(host median / fleet median).
    #[serde(skip)]
    pub dev: f64,
    pub z: f64,
    pub p: f64,
    /// The floor this test had to exceed (a fraction).
    pub floor: f64,
    /// Called real by the FDR procedure and beyond the floor.
    pub real: bool,
}

/// `tests[host][row]`.
pub fn test(
    docs: &[RunDocument],
    rows: &[RowDef],
    b: &Baseline,
    noise: Option<&dyn RowNoise>,
) -> Vec<Vec<Option<Test>>> {
    // Hosts measuring each row: the MAD's worth, and whether outliers may be called.
    let hosts: Vec<usize> = (0..rows.len())
        .map(|r| b.dev.iter().filter(|d| d[r].is_some()).count())
        .collect();
    let mut tests: Vec<Vec<Option<Test>>> = b
        .dev
        .iter()
        .enumerate()
        .map(|(h, devs)| {
            devs.iter()
                .enumerate()
                .map(|(r, d)| {
                    let dev = (*d)?;
                    let own = noise.and_then(|n| n.sigma(&docs[h], &rows[r]));
                    let sd = (b.scale[r].powi(2) + own.unwrap_or(0.0).powi(2)).sqrt();
                    let z = dev / sd;
                    let floor = noise
                        .and_then(|n| n.floor(&docs[h], &rows[r]))
                        .map_or(FLOOR, |f| f.max(FLOOR));
                    Some(Test {
                        dev,
                        z,
                        p: two_sided_p(z, hosts[r]),
                        floor,
                        real: false,
                    })
                })
                .collect()
        })
        .collect();
    let flat: Vec<Option<f64>> = tests.iter().flatten().map(|t| t.map(|t| t.p)).collect();
    let called = crate::measure::fdr::benjamini_hochberg(&flat, FDR_Q);
    for (h, row) in tests.iter_mut().enumerate() {
        for (r, t) in row.iter_mut().enumerate() {
            if let Some(t) = t {
                t.real = called[h * rows.len() + r]
                    && t.dev.abs() >= t.floor.ln_1p()
                    && hosts[r] >= MIN_FLEET;
            }
        }
    }
    tests
}

/// Two-sided p of a robust z whose scale is the MAD of `n` hosts.
pub fn two_sided_p(z: f64, n: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let df = (MAD_EFFICIENCY * n.saturating_sub(1) as f64).max(0.5);
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => (2.0 * (1.0 - t.cdf(z.abs()))).clamp(0.0, 1.0),
        Err(_) => 1.0,
    }
}

/// Why outlier calls are refused for a fleet whose rows have at most `most` hosts; None
/// when they are not.
pub fn refusal(most: usize) -> Option<String> {
    (most < MIN_FLEET).then(|| {
        format!(
            "refused: {most} hosts, fewer than {MIN_FLEET}; a spread (MAD) of so few hosts cannot tell an outlier from the fleet (ranks only)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::{baseline, table};
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn fleet(factors: &[f64]) -> table::Table {
        table::Table {
            rows: vec![RowDef {
                key: "r".into(),
                benchmark: "b@1".into(),
                placement: "os".into(),
                params: String::new(),
                role: None,
                unit: "ns".into(),
                lower_is_better: true,
            }],
            cells: factors
                .iter()
                .map(|f| {
                    vec![Some(table::Cell {
                        median: 100.0 * f,
                        ci95_low: 99.0 * f,
                        ci95_high: 101.0 * f,
                    })]
                })
                .collect(),
            left_out: vec![],
        }
    }

    fn outliers(factors: &[f64], noise: Option<&dyn RowNoise>) -> Vec<usize> {
        let t = fleet(factors);
        let b = baseline::of(&t);
        let docs: Vec<RunDocument> = (0..factors.len())
            .map(|i| crate::compare::testing::timers_run(&format!("r{i}"), 1.0, None))
            .collect();
        test(&docs, &t.rows, &b, noise)
            .iter()
            .enumerate()
            .filter(|(_, t)| t[0].is_some_and(|t| t.real))
            .map(|(h, _)| h)
            .collect()
    }

    #[test]
    fn planted_hosts_are_found_and_a_fleet_within_a_few_percent_has_none() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut f: Vec<f64> = (0..500).map(|_| rng.gen_range(0.97..1.03)).collect();
        assert!(outliers(&f, None).is_empty(), "A/A at fleet scale");
        f[10] = 1.3;
        f[20] = 0.8;
        f[30] = 1.04; // far in z, below the practical floor
        assert_eq!(outliers(&f, None), vec![10, 20]);
    }

    struct Noisy;
    impl RowNoise for Noisy {
        fn sigma(&self, run: &RunDocument, _: &RowDef) -> Option<f64> {
            (run.run_id == "r10").then_some(0.5)
        }
    }

    #[test]
    fn a_host_whose_own_noise_covers_its_deviation_is_not_an_outlier() {
        let mut rng = SmallRng::seed_from_u64(8);
        let mut f: Vec<f64> = (0..50).map(|_| rng.gen_range(0.98..1.02)).collect();
        f[10] = 1.3;
        f[20] = 1.3;
        assert_eq!(outliers(&f, Some(&Noisy)), vec![20]);
    }

    #[test]
    fn fleets_with_nothing_to_find_rarely_call_an_outlier_at_any_size_from_the_minimum() {
        // A spread far above the practical floor, so only the test decides.
        let mut rng = SmallRng::seed_from_u64(9);
        for n in [MIN_FLEET, 12, 20, 50] {
            let fleets = 300;
            let false_calls = (0..fleets)
                .filter(|_| {
                    let f: Vec<f64> = (0..n)
                        .map(|_| {
                            // Box-Muller: a normal log ratio with sd 0.3.
                            let (u, v): (f64, f64) = (rng.gen_range(1e-9..1.0), rng.gen());
                            (0.3 * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()).exp()
                        })
                        .collect();
                    !outliers(&f, None).is_empty()
                })
                .count();
            assert!(
                false_calls as f64 <= FDR_Q * fleets as f64,
                "{n} hosts: {false_calls} of {fleets} fleets called an outlier"
            );
        }
    }

    #[test]
    fn below_the_minimum_fleet_no_outlier_is_called_and_at_it_a_clear_one_is() {
        let near = |n: usize| -> Vec<f64> { (0..n).map(|i| 0.98 + 0.005 * i as f64).collect() };
        let mut small = near(MIN_FLEET - 2);
        small.push(5.0);
        assert_eq!(small.len(), MIN_FLEET - 1);
        assert!(outliers(&small, None).is_empty());
        assert!(refusal(MIN_FLEET - 1).unwrap().contains("fewer than 10"));
        let mut enough = near(MIN_FLEET - 1);
        enough.push(5.0);
        assert_eq!(outliers(&enough, None), vec![MIN_FLEET - 1]);
        assert!(refusal(MIN_FLEET).is_none());
    }
}
