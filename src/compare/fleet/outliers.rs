//! Which hosts differ beyond both the fleet's own spread and their own noise. For each host
//! and row two tests of its log ratio to the fleet median: against the fleet (the deviation
//! over the row's robust spread) and against the host's own noise on that row (the deviation
//! over the standard error of its median: from the rounds of its run when the document has
//! them, else from its calibration or stored history through [`RowNoise`]). The row is off
//! only when it is beyond both (an intersection-union test: its p is the larger of the two),
//! and the Benjamini-Hochberg procedure runs over every host x row p together
//! (`measure::fdr`). A host with neither run noise nor a model is tested against the fleet's
//! spread alone, and the view counts such host x rows. A test called real counts only when
//! the host is at least the practical floor away from the fleet median (5%, the drift floor
//! of a two-run compare, or the row's floor from the noise model when larger): with 500
//! hosts a 2% difference can be significant and still not worth a person's time. A host is
//! an outlier when some row of it counts.
//!
//! Why both: the fleet's spread is robust (a MAD), so on a row whose noise is bursty (most
//! runs within 1%, a few disturbed by 5-10%) a disturbed run of an ordinary host lies many
//! robust spreads out; its own rounds disagreeing say it is a fluke of that run, not of the
//! host. And a host's rounds may agree tightly while the host is as far from the fleet as
//! ordinary hosts are from one another: that is the fleet's spread, not an outlier.
//!
//! The fleet's spread is a MAD of n hosts, itself uncertain: its z is referred to Student's t
//! with 0.37·(n − 1) degrees of freedom (0.37 is the MAD's asymptotic efficiency at the
//! normal, Rousseeuw and Croux 1993: a MAD of n values is worth a standard deviation of about
//! 0.37·n), not to the normal, which called a false outlier in 12% (100 hosts) to 39% (3
//! hosts) of simulated fleets with nothing to find. The host's own z is referred to t with
//! the degrees of freedom of its noise (kept rounds − 1, or calibration runs − 1). And below
//! [`MIN_FLEET`] hosts on a row no outlier is called at all (see there).

use super::baseline::Baseline;
use super::table::{Cell, RowDef};
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

/// A per-host, per-row noise model (from calibration runs or stored history), used where a
/// document carries no run noise of its own.
pub trait RowNoise {
    /// The standard deviation of `run`'s median on `row`, in log units.
    fn sigma(&self, run: &RunDocument, row: &RowDef) -> Option<f64>;
    /// The degrees of freedom of `sigma`; None: referred to the normal.
    fn df(&self, run: &RunDocument, row: &RowDef) -> Option<f64> {
        let _ = (run, row);
        None
    }
    /// The smallest difference (a fraction) this host can resolve on `row`.
    fn floor(&self, run: &RunDocument, row: &RowDef) -> Option<f64> {
        let _ = (run, row);
        None
    }
}

/// Where a host's own noise on a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseSource {
    /// The rounds of its run (`BenchResult::run_noise`).
    Rounds,
    /// Its calibration or stored history (`RowNoise`).
    Model,
    /// Neither: the fleet's spread alone.
    None,
}

/// One host x row test.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Test {
    /// ln(host median / fleet median).
    #[serde(skip)]
    pub dev: f64,
    /// Robust z against the fleet's spread.
    pub z: f64,
    /// z against the host's own noise (None without any).
    pub z_own: Option<f64>,
    pub own: NoiseSource,
    /// The larger of the two tests' p (the fleet's alone without own noise).
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
    cells: &[Vec<Option<Cell>>],
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
                    let z = dev / b.scale[r];
                    let p_fleet = two_sided_p(z, hosts[r]);
                    let (own, sigma, df) = match cells[h][r].and_then(|c| c.run_noise) {
                        Some(n) => (NoiseSource::Rounds, Some(n.se), Some(n.df)),
                        None => match noise.and_then(|n| n.sigma(&docs[h], &rows[r])) {
                            Some(s) => (
                                NoiseSource::Model,
                                Some(s),
                                noise.and_then(|n| n.df(&docs[h], &rows[r])),
                            ),
                            None => (NoiseSource::None, None, None),
                        },
                    };
                    let z_own = sigma.filter(|s| *s > 0.0).map(|s| dev / s);
                    let p_own = z_own.map_or(0.0, |z| t_p(z, df.unwrap_or(f64::INFINITY)));
                    let floor = noise
                        .and_then(|n| n.floor(&docs[h], &rows[r]))
                        .map_or(FLOOR, |f| f.max(FLOOR));
                    Some(Test {
                        dev,
                        z,
                        z_own,
                        own,
                        p: p_fleet.max(p_own),
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
    t_p(z, (MAD_EFFICIENCY * n.saturating_sub(1) as f64).max(0.5))
}

/// Two-sided p of `z` under Student's t with `df` degrees of freedom (the normal when
/// infinite).
fn t_p(z: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
    let upper = if df.is_finite() {
        StudentsT::new(0.0, 1.0, df.max(0.5))
            .ok()
            .map(|t| t.sf(z.abs()))
    } else {
        Normal::new(0.0, 1.0).ok().map(|n| n.sf(z.abs()))
    };
    upper.map_or(1.0, |u| (2.0 * u).clamp(0.0, 1.0))
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
        table::one_row(
            factors
                .iter()
                .map(|f| table::Cell {
                    median: 100.0 * f,
                    ci95_low: 99.0 * f,
                    ci95_high: 101.0 * f,
                    run_noise: None,
                })
                .collect(),
        )
    }

    fn outliers(factors: &[f64], noise: Option<&dyn RowNoise>) -> Vec<usize> {
        let t = fleet(factors);
        let b = baseline::of(&t);
        let docs: Vec<RunDocument> = (0..factors.len())
            .map(|i| crate::compare::testing::timers_run(&format!("r{i}"), 1.0, None))
            .collect();
        test(&docs, &t.rows, &t.cells, &b, noise)
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
    fn a_host_whose_rounds_disagree_is_not_an_outlier_and_its_rounds_come_before_a_model() {
        let mut rng = SmallRng::seed_from_u64(10);
        let mut f: Vec<f64> = (0..50).map(|_| rng.gen_range(0.98..1.02)).collect();
        f[10] = 1.08;
        f[20] = 1.08;
        let mut t = fleet(&f);
        // Host 10's rounds spread widely (se 6%): 8% off is within its own noise. Host 20's
        // agree (se 1%). A model calling every host quiet does not override the rounds.
        for (h, se) in [(10, 0.06), (20, 0.01)] {
            t.cells[h][0].as_mut().unwrap().run_noise = Some(table::RunNoise { se, df: 5.0 });
        }
        struct Quiet;
        impl RowNoise for Quiet {
            fn sigma(&self, _: &RunDocument, _: &RowDef) -> Option<f64> {
                Some(0.001)
            }
        }
        let b = baseline::of(&t);
        let docs: Vec<RunDocument> = (0..f.len())
            .map(|i| crate::compare::testing::timers_run(&format!("r{i}"), 1.0, None))
            .collect();
        let tests = test(&docs, &t.rows, &t.cells, &b, Some(&Quiet));
        let called: Vec<usize> = (0..f.len())
            .filter(|h| tests[*h][0].is_some_and(|t| t.real))
            .collect();
        assert_eq!(called, vec![20]);
        assert_eq!(tests[10][0].unwrap().own, NoiseSource::Rounds);
        assert_eq!(tests[11][0].unwrap().own, NoiseSource::Model);
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
