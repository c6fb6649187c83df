//! Which hosts differ beyond both the fleet's own spread and their own noise. For each host
//! and row two tests of its log ratio to the fleet median: against the fleet (the deviation
//! over the row's robust spread) and against the host's own noise on that row (the deviation
//! over the standard error of its median: from the rounds of its run when the document has
//! them, else from its calibration or stored history through [`RowNoise`]). The row is off
//! only when it is beyond both (an intersection-union test: its p is the larger of the two,
//! so its own noise can only make a call harder). A host with neither run noise nor a model
//! is tested against the fleet's spread alone, and the view counts such host x rows.
//!
//! Two families, each under the Benjamini-Hochberg procedure at [`FDR_Q`] (`measure::fdr`):
//! the hosts' shifts (below), and the host x rows of every host whose shift is not called.
//! A row of a host whose shift is called counts when it lies beyond the floor in the
//! shift's direction; its other rows are tested within the host at the level the selection
//! leaves (q x hosts called / hosts tested, Benjamini and Bogomolov 2014). Why apart: the
//! procedure lets its threshold grow with the calls it makes, and a host off on every row
//! makes a call per row. One family of all tests let 400 planted hosts (about 3,600 host x
//! row calls among 120,000 tests) lower the bar for every other host to about 3.2 robust
//! spreads: 110 of 9,600 ordinary hosts (1.4% host and row scatter) were called on a row or
//! two 5-6% out, the tail of the fleet's own spread. Held apart, a host off on a row or two
//! is judged against the rows of the hosts that are not off as a whole: none was. A test called real counts only when
//! the host is at least the practical floor away from the fleet median (5%, the drift floor
//! of a two-run compare, or the row's floor from the noise model when larger): with 500
//! hosts a 2% difference can be significant and still not worth a person's time. A host is
//! an outlier when some row of it counts, or its shift.
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
//!
//! Beside the rows, each host's shift over all its rows is tested (`Shift`): the mean of
//! its direction-corrected log ratios (the log of its score), against the fleet's robust
//! spread of the hosts' shifts and against its own noise combined over its rows (the
//! standard error of a mean of rows, σ² summed over n², degrees of freedom by
//! Welch-Satterthwaite). A row's own noise rests on a few rounds: a run disturbed by other
//! work (round medians split between 1x and 1.8x, σ 40-70% per row, seen on this machine
//! with builds beside it) cannot resolve 30% on any row alone, yet a host 1.3x slower on
//! all 11 rows is 11 such rows one way, which the mean resolves (σ/√11). The own noise of
//! the mean takes the rows' errors as independent; the fleet's spread of the shifts is
//! measured over the hosts' actual means, so a run-wide disturbance common to many hosts
//! widens it and keeps the fleet side honest. A host whose shift is called is off on each
//! of its rows that lies beyond the floor in the shift's direction.

use super::baseline::Baseline;
use super::table::{Cell, RowDef};
use crate::result::RunDocument;
use serde::Serialize;

/// The false discovery rate over all host x row tests.
pub const FDR_Q: f64 = 0.05;
/// The practical floor: a host closer than this to the fleet median on a row is not an
/// outlier on it, however significant (the drift floor of a two-run compare).
pub const FLOOR: f64 = crate::compare::stats::verdict::DEFAULT_DRIFT;

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
    /// Called real: by its own test (FDR and beyond the floor), or as a row beyond the
    /// floor in the direction of the host's called shift.
    pub real: bool,
    /// The host's own noise on the row: the standard error of ln(median) and its degrees
    /// of freedom (infinite: referred to the normal).
    #[serde(skip)]
    pub own_se: Option<(f64, f64)>,
}

/// One host's shift over all its rows.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Shift {
    /// The mean direction-corrected ln(host / fleet) over its rows, less the fleet's median
    /// of that mean (< 0: slower than the fleet).
    pub dev: f64,
    /// Rows it is the mean of.
    pub rows: usize,
    /// Robust z against the fleet's spread of the hosts' shifts.
    pub z: f64,
    /// z against the host's own noise of the mean (None unless every row has own noise).
    pub z_own: Option<f64>,
    /// The larger of the two tests' p.
    pub p: f64,
    /// Called real by the FDR procedure and beyond the practical floor.
    pub real: bool,
}

/// Every test of a fleet: `rows[host][row]` and `shifts[host]`.
#[derive(Debug, Clone)]
pub struct Tests {
    pub rows: Vec<Vec<Option<Test>>>,
    pub shifts: Vec<Option<Shift>>,
    /// Per row, the factor the hosts' own noise was taken at (`own_scale`).
    pub own_scale: Vec<f64>,
    /// How many tests each false discovery rate was held over.
    pub families: Families,
}

/// The two families of tests, each under the false discovery rate [`FDR_Q`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Families {
    /// The hosts' shifts tested.
    pub hosts: usize,
    /// The host x rows tested of the hosts whose shift is not called.
    pub host_rows: usize,
}

/// A host x row's own noise: where it came from, σ (log units), degrees of freedom.
type OwnNoise = (NoiseSource, Option<f64>, Option<f64>);
/// A host's mean corrected deviation, its rows, and its own standard error with degrees
/// of freedom (None unless every row has own noise).
type HostMean = (f64, usize, Option<(f64, f64)>);

/// Every host x row test and every host's shift test, called together.
pub fn test(
    docs: &[RunDocument],
    rows: &[RowDef],
    cells: &[Vec<Option<Cell>>],
    b: &Baseline,
    noise: Option<&dyn RowNoise>,
) -> Tests {
    // Hosts measuring each row: the MAD's worth, and whether outliers may be called.
    let hosts: Vec<usize> = (0..rows.len())
        .map(|r| b.dev.iter().filter(|d| d[r].is_some()).count())
        .collect();
    // Each host x row's own noise: its source, σ (log units) and degrees of freedom.
    let own: Vec<Vec<OwnNoise>> = (0..b.dev.len())
        .map(|h| {
            (0..rows.len())
                .map(|r| match cells[h][r].and_then(|c| c.run_noise) {
                    Some(n) => (NoiseSource::Rounds, Some(n.se), Some(n.df)),
                    None => match noise.and_then(|n| n.sigma(&docs[h], &rows[r])) {
                        Some(s) => (
                            NoiseSource::Model,
                            Some(s),
                            noise.and_then(|n| n.df(&docs[h], &rows[r])),
                        ),
                        None => (NoiseSource::None, None, None),
                    },
                })
                .collect()
        })
        .collect();
    let own_scale = own_scale(&own, &b.scale);
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
                    let (own, sigma, df) = own[h][r];
                    let sigma = sigma.filter(|s| *s > 0.0).map(|s| s * own_scale[r]);
                    let z_own = sigma.map(|s| dev / s);
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
                        own_se: sigma.map(|s| (s, df.unwrap_or(f64::INFINITY))),
                    })
                })
                .collect()
        })
        .collect();
    let mut shifts = shifts(&tests, rows, hosts.iter().copied().max().unwrap_or(0));
    let fdr = crate::measure::fdr::benjamini_hochberg;
    // The hosts' shifts: one family.
    let shift_p: Vec<Option<f64>> = shifts.iter().map(|s| s.map(|s| s.p)).collect();
    let called = fdr(&shift_p, FDR_Q);
    let mut shifted = vec![false; tests.len()];
    for (h, s) in shifts.iter_mut().enumerate() {
        if let Some(s) = s.as_mut().filter(|_| called[h]) {
            let floor = tests[h]
                .iter()
                .flatten()
                .map(|t| t.floor)
                .fold(FLOOR, f64::max);
            s.real = s.dev.abs() >= floor.ln_1p();
            shifted[h] = s.real;
        }
    }
    let families = Families {
        hosts: shift_p.iter().flatten().count(),
        host_rows: tests
            .iter()
            .zip(&shifted)
            .filter(|(_, s)| !**s)
            .map(|(row, _)| row.iter().flatten().count())
            .sum(),
    };
    // The rows of the hosts not shifted: one family.
    let row_p: Vec<Option<f64>> = tests
        .iter()
        .zip(&shifted)
        .flat_map(|(row, s)| row.iter().map(move |t| t.filter(|_| !*s).map(|t| t.p)))
        .collect();
    let row_called = fdr(&row_p, FDR_Q);
    // Within a shifted host, its rows not along the shift, at the level the selection of
    // hosts leaves (Benjamini and Bogomolov 2014: q x hosts called / hosts tested).
    let within_q =
        FDR_Q * shifted.iter().filter(|s| **s).count() as f64 / families.hosts.max(1) as f64;
    for (h, row) in tests.iter_mut().enumerate() {
        let way = shifts[h].map_or(0.0, |s| s.dev.signum());
        let along: Vec<bool> = row
            .iter()
            .zip(rows)
            .map(|(t, d)| shifted[h] && t.is_some_and(|t| corrected(t.dev, d).signum() == way))
            .collect();
        let within = if shifted[h] {
            let p: Vec<Option<f64>> = row
                .iter()
                .zip(&along)
                .map(|(t, a)| t.filter(|_| !a).map(|t| t.p))
                .collect();
            fdr(&p, within_q)
        } else {
            vec![false; row.len()]
        };
        for (r, t) in row.iter_mut().enumerate() {
            if let Some(t) = t {
                let beyond = t.dev.abs() >= t.floor.ln_1p() && hosts[r] >= MIN_FLEET;
                let own = if shifted[h] {
                    within[r]
                } else {
                    row_called[h * rows.len() + r]
                };
                t.real = beyond && (along[r] || own);
            }
        }
    }
    Tests {
        rows: tests,
        shifts,
        own_scale,
        families,
    }
}

/// Per row, the factor the hosts' own noise is taken at: at most 1, and less where the
/// hosts' medians agree more tightly than their own noise says they could. The fleet's
/// spread is the scatter of the hosts' medians, which holds every host's run-to-run noise
/// once; a typical host (the median own σ over the hosts, with [`MIN_FLEET`] of them) whose
/// own noise is wider than that scatter claims more than its median shows, so every host's
/// own σ on the row is scaled by spread / typical σ. A host noisier than the typical one
/// keeps its excess in proportion (twice the typical σ stays twice the fleet's spread): the
/// own test still protects a host whose run was a fluke. Where the own noise is within the
/// fleet's spread (independent runs, as a real fleet's), the factor is 1 and nothing changes.
fn own_scale(own: &[Vec<OwnNoise>], spread: &[f64]) -> Vec<f64> {
    (0..spread.len())
        .map(|r| {
            let mut sigmas: Vec<f64> = own
                .iter()
                .filter_map(|h| h[r].1.filter(|s| *s > 0.0))
                .collect();
            if sigmas.len() < MIN_FLEET {
                return 1.0;
            }
            let typical = super::baseline::median(&mut sigmas).unwrap_or(0.0);
            if typical > spread[r] {
                spread[r] / typical
            } else {
                1.0
            }
        })
        .collect()
}

/// A log ratio direction-corrected: > 0 is better than the fleet.
fn corrected(dev: f64, row: &RowDef) -> f64 {
    if row.lower_is_better {
        -dev
    } else {
        dev
    }
}

/// Each host's shift test (None below two rows or without a fleet of [`MIN_FLEET`]).
fn shifts(tests: &[Vec<Option<Test>>], rows: &[RowDef], most: usize) -> Vec<Option<Shift>> {
    // The mean corrected deviation and, with own noise on every row, its variance and
    // Welch-Satterthwaite degrees of freedom.
    let means: Vec<Option<HostMean>> = tests
        .iter()
        .map(|row| {
            let ts: Vec<(&Test, &RowDef)> = row
                .iter()
                .zip(rows)
                .filter_map(|(t, d)| Some((t.as_ref()?, d)))
                .collect();
            if ts.len() < 2 {
                return None;
            }
            let n = ts.len() as f64;
            let mean = ts.iter().map(|(t, d)| corrected(t.dev, d)).sum::<f64>() / n;
            let own: Option<Vec<(f64, f64)>> = ts.iter().map(|(t, _)| t.own_se).collect();
            let own = own.map(|v| {
                let var: f64 = v.iter().map(|(se, _)| se * se).sum();
                let denom: f64 = v.iter().map(|(se, df)| se.powi(4) / df).sum();
                (
                    var.sqrt() / n,
                    if denom > 0.0 {
                        var * var / denom
                    } else {
                        f64::INFINITY
                    },
                )
            });
            Some((mean, ts.len(), own))
        })
        .collect();
    let mut all: Vec<f64> = means.iter().flatten().map(|m| m.0).collect();
    let centre = super::baseline::median(&mut all).unwrap_or(0.0);
    let mut abs: Vec<f64> = all.iter().map(|m| (m - centre).abs()).collect();
    let scale = (super::baseline::MAD_TO_SD * super::baseline::median(&mut abs).unwrap_or(0.0))
        .max(super::baseline::MIN_SCALE);
    let n = all.len();
    means
        .into_iter()
        .map(|m| {
            let (mean, rows, own) = m?;
            if most < MIN_FLEET {
                return None;
            }
            let dev = mean - centre;
            let z = dev / scale;
            let z_own = own.filter(|(se, _)| *se > 0.0).map(|(se, _)| dev / se);
            let p_own = z_own.map_or(0.0, |z| t_p(z, own.map_or(f64::INFINITY, |o| o.1)));
            Some(Shift {
                dev,
                rows,
                z,
                z_own,
                p: two_sided_p(z, n).max(p_own),
                real: false,
            })
        })
        .collect()
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
            "refused: {}, fewer than {MIN_FLEET}; a spread (MAD) of so few hosts cannot tell an outlier from the fleet (ranks only)",
            crate::units::count(most, "host")
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
            .rows
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
        let tests = test(&docs, &t.rows, &t.cells, &b, Some(&Quiet)).rows;
        let called: Vec<usize> = (0..f.len())
            .filter(|h| tests[*h][0].is_some_and(|t| t.real))
            .collect();
        assert_eq!(called, vec![20]);
        assert_eq!(tests[10][0].unwrap().own, NoiseSource::Rounds);
        assert_eq!(tests[11][0].unwrap().own, NoiseSource::Model);
    }

    fn normal(rng: &mut SmallRng) -> f64 {
        let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// A fleet of `factors.len()` hosts on 11 rows, each host x row drawn in `rounds`
    /// rounds whose log medians scatter by the row's σ (`sigma(row, rng)`) about the host's
    /// factor; the cell's median is the rounds' median (the host's factor itself with
    /// `at_level`: hosts that agree although their rounds do not, as copies of one run do)
    /// and its run noise their standard error (σ̂/√rounds, rounds − 1 degrees of freedom), as
    /// a run computes them. Returns the hosts called outliers, and whether a row's own test
    /// alone (FDR over the rows only) called any.
    fn rounds_fleet(
        factors: &[f64],
        rounds: usize,
        seed: u64,
        at_level: bool,
        sigma: impl Fn(usize, &mut SmallRng) -> f64,
    ) -> (Vec<usize>, bool) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let rows: Vec<RowDef> = (0..11)
            .map(|r| RowDef {
                key: format!("r{r}"),
                benchmark: "b@1".into(),
                placement: "os".into(),
                params: format!("row={r}"),
                role: None,
                unit: "ns".into(),
                lower_is_better: true,
            })
            .collect();
        let cells: Vec<Vec<Option<Cell>>> = factors
            .iter()
            .map(|f| {
                (0..rows.len())
                    .map(|r| {
                        let s = sigma(r, &mut rng);
                        let logs: Vec<f64> = (0..rounds)
                            .map(|_| (100.0 * (r + 1) as f64 * f).ln() + s * normal(&mut rng))
                            .collect();
                        let mean = logs.iter().sum::<f64>() / rounds as f64;
                        let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                            / (rounds - 1) as f64)
                            .sqrt();
                        let median = if at_level {
                            100.0 * (r + 1) as f64 * f
                        } else {
                            crate::result::rounds::median(&logs).exp()
                        };
                        Some(Cell {
                            median,
                            ci95_low: median,
                            ci95_high: median,
                            run_noise: Some(table::RunNoise {
                                se: sd / (rounds as f64).sqrt(),
                                df: (rounds - 1) as f64,
                            }),
                        })
                    })
                    .collect()
            })
            .collect();
        let t = table::Table {
            rows,
            cells,
            left_out: vec![],
        };
        let b = baseline::of(&t);
        let docs: Vec<RunDocument> = (0..factors.len())
            .map(|i| crate::compare::testing::timers_run(&format!("r{i}"), 1.0, None))
            .collect();
        let tests = test(&docs, &t.rows, &t.cells, &b, None);
        let called: Vec<usize> = (0..factors.len())
            .filter(|h| {
                tests.rows[*h].iter().any(|t| t.is_some_and(|t| t.real))
                    || tests.shifts[*h].is_some_and(|s| s.real)
            })
            .collect();
        // A row called by its own test: FDR over rows alone would have called it.
        let by_rows = (0..factors.len()).any(|h| {
            let own: Vec<Option<f64>> = tests
                .rows
                .iter()
                .flatten()
                .map(|t| t.map(|t| t.p))
                .collect();
            let c = crate::measure::fdr::benjamini_hochberg(&own, FDR_Q);
            (0..t.rows.len()).any(|r| c[h * t.rows.len() + r])
        });
        (called, by_rows)
    }

    fn fleet_factors(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..n).map(|_| rng.gen_range(0.97..1.03)).collect()
    }

    #[test]
    fn a_host_uniformly_slower_within_realistic_round_noise_is_called_and_an_a_a_fleet_is_not() {
        // σ 2-5% per row over 5 rounds: each row's own test has 4 degrees of freedom.
        let sigma = |_: usize, rng: &mut SmallRng| rng.gen_range(0.02..0.05);
        for seed in 0..3 {
            let aa = fleet_factors(500, 100 + seed);
            assert!(
                rounds_fleet(&aa, 5, seed, false, sigma).0.is_empty(),
                "A/A, seed {seed}"
            );
            let mut f = aa.clone();
            f[17] = 1.3;
            assert_eq!(
                rounds_fleet(&f, 5, seed, false, sigma).0,
                vec![17],
                "seed {seed}"
            );
        }
    }

    #[test]
    fn a_host_slower_on_every_row_is_called_where_no_row_alone_resolves_it() {
        // Independent runs with σ 25% per round over 8 rounds: each row's median is
        // uncertain by about 9%, the fleet scatters as much, and 30% on one row is within
        // it. 30% on all 11 rows one way is not.
        let sigma = |_: usize, _: &mut SmallRng| 0.25;
        let aa = fleet_factors(500, 300);
        assert!(rounds_fleet(&aa, 8, 2, false, sigma).0.is_empty());
        let mut f = aa.clone();
        f[17] = 1.3;
        let (called, by_rows) = rounds_fleet(&f, 8, 2, false, sigma);
        assert_eq!(called, vec![17]);
        assert!(!by_rows, "a row alone resolved 30% within σ 25%/√8");
    }

    #[test]
    fn own_noise_wider_than_the_fleets_scatter_is_taken_at_the_scatter() {
        // Rounds split between two modes as on this machine with builds beside the run
        // (σ 40-70% per row over 8 rounds) while the hosts' medians agree within ±3%, as
        // in bench/fleet_scale.sh (copies of one such run): the rounds claim ten times the
        // uncertainty the fleet shows. Taken at face value no host could ever be called.
        let sigma = |_: usize, rng: &mut SmallRng| rng.gen_range(0.4..0.7);
        let aa = fleet_factors(500, 200);
        assert!(rounds_fleet(&aa, 8, 1, true, sigma).0.is_empty());
        let mut f = aa.clone();
        f[17] = 1.3;
        assert_eq!(rounds_fleet(&f, 8, 1, true, sigma).0, vec![17]);
        // The scale: 1 where the own noise is within the fleet's spread, the ratio where
        // it is wider, and 1 with too few hosts to say what is typical.
        let own = |s: f64, n: usize| vec![vec![(NoiseSource::Rounds, Some(s), Some(7.0))]; n];
        assert_eq!(own_scale(&own(0.01, 50), &[0.02]), vec![1.0]);
        assert!((own_scale(&own(0.5, 50), &[0.02])[0] - 0.04).abs() < 1e-12);
        assert_eq!(own_scale(&own(0.5, MIN_FLEET - 1), &[0.02]), vec![1.0]);
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
