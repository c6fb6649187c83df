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
//! The hook for a calibrated noise model: [`RowNoise`]. Without one (`None`) only the
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
                        p: statrs::function::erf::erfc(z.abs() / std::f64::consts::SQRT_2),
                        floor,
                        real: false,
                    })
                })
                .collect()
        })
        .collect();
    let flat: Vec<Option<f64>> = tests.iter().flatten().map(|t| t.map(|t| t.p)).collect();
    let called = crate::measure::fdr::benjamini_hochberg(&flat, FDR_Q);
    for (t, c) in tests.iter_mut().flatten().zip(called) {
        if let Some(t) = t {
            t.real = c && t.dev.abs() >= t.floor.ln_1p();
        }
    }
    tests
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
}
