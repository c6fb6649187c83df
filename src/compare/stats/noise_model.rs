//! The noise of a row, one model for every verdict: how much the median of one
//! measurement (one benchmark, params and placement) moves between runs, as the standard
//! error of its log median per run. It comes, in order:
//!
//! - from each run's own rounds (`result::rounds`): the spread between the rounds a run drew
//!   its samples in, robust to the odd disturbed round (kept out), with its degrees of
//!   freedom; raised to the host's calibration or stored history where that is larger (a
//!   run's rounds do not sample what moves only between runs);
//! - for a side without a spread of rounds (a document of an earlier version, measured in
//!   one piece; a run of one round): from the host's calibration runs (`truebench
//!   calibrate`, tagged `calibration=<id>`), failing that from the stored history of the
//!   same measurement on that host; failing both, the row has no noise to be judged by and
//!   is not tested ("cannot tell", with why: [`no_rounds_why`]). Nothing is assumed.
//!
//! Each row says which. With the two sides' standard errors a row's log ratio d = ln(B/A)
//! gets a standard error, a two-sided p-value (t with Welch-Satterthwaite degrees of
//! freedom) and a minimum detectable effect MDE = exp((t₀.₉₇₅ + t₀.₈₀)·SE) − 1
//! (`measure::mde`).

use crate::result::{BenchResult, RunDocument};
use serde::Serialize;
use std::collections::BTreeMap;

/// The tag a calibration run carries; its value names the calibration (all K runs share it).
pub const CALIBRATION_TAG: &str = "calibration";
/// The smallest σ a calibration or history gives: a few runs close together on one boot do
/// not see boot- and day-level variance (they are not sampled), so no row is trusted below
/// 1% per run.
pub const MIN_SIGMA: f64 = 0.01;
/// The widest MDE a row is called equivalent within: past it, "the same within ±40%"
/// tells a reader nothing, and the row is "cannot tell".
pub const MAX_EQUIVALENCE_MDE: f64 = 0.25;
/// Runs a calibration or history needs before its σ is used.
pub const MIN_RUNS: usize = 3;
pub use crate::measure::mde::{ALPHA, POWER};

/// Where a row's σ came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// Each run's own rounds.
    Rounds,
    /// The baseline host's calibration runs.
    Calibration,
    /// Earlier stored runs of the same measurement on the baseline host.
    History,
    /// The paired rounds of an `ab` run (`paired`): each B round against the A round
    /// measured next to it.
    Paired,
    /// None of them: a side without a spread of rounds and nothing measured of the host;
    /// the row is not tested.
    None,
}

impl Basis {
    pub fn text(self) -> &'static str {
        match self {
            Basis::Rounds => "rounds",
            Basis::Calibration => "calibration",
            Basis::History => "history",
            Basis::Paired => "paired rounds",
            Basis::None => "none",
        }
    }
}

/// One row's run-to-run noise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowNoise {
    pub basis: Basis,
    /// Standard deviation of ln(median) between runs (at least MIN_SIGMA); null where
    /// nothing measured it (basis `none`).
    pub sigma: Option<f64>,
    /// Runs σ was estimated from (0 for none).
    pub runs: usize,
    /// Where it comes from, in words ("calibration 20261125T… : 5 runs of host h").
    pub source: String,
    /// What only separate runs sample for this row where its two runs set it
    /// ([`run_sigma`] of each side in its run: a latency row past a run's LLC); None: its
    /// benchmark's level.
    #[serde(rename = "run_sigma", skip_serializing_if = "Option::is_none")]
    pub run: Option<f64>,
}

impl RowNoise {
    /// Nothing measured of the host for this row (`source` says what is missing): each side
    /// has its own rounds, or the row is not tested.
    pub fn unmeasured(source: String) -> RowNoise {
        RowNoise {
            basis: Basis::None,
            sigma: None,
            runs: 0,
            source,
            run: None,
        }
    }

    /// The MDE (relative) of a compare of one run each with this noise and tight samples:
    /// SE = √2·σ; None where no σ was measured.
    pub fn mde_one_run_each(&self) -> Option<f64> {
        Some(mde_log(std::f64::consts::SQRT_2 * self.sigma?, self.df()).exp_m1())
    }

    /// Degrees of freedom of σ: runs − 1; None where no σ was measured.
    pub fn df(&self) -> Option<f64> {
        self.sigma.map(|_| (self.runs.max(2) - 1) as f64)
    }
}

/// What a result without rounds comes from: a document of an earlier version, measured in
/// one piece (every row of a current one is measured in rounds).
pub const NO_ROUNDS: &str = "no rounds (an earlier version's document)";

/// Why a row's result has no noise of its own (None when it has: a spread of at least two
/// kept rounds): [`NO_ROUNDS`] for a result measured in one piece, else how few rounds it
/// kept.
pub fn no_rounds_why(r: &BenchResult) -> Option<String> {
    if r.run_noise().is_some() {
        return None;
    }
    Some(match r.rounds.as_ref().map(|x| x.rounds.len()) {
        None | Some(0) => NO_ROUNDS.to_string(),
        Some(1) => "one round (no spread to read)".to_string(),
        Some(n) => format!("{n} rounds, fewer than two undisturbed (no spread to read)"),
    })
}

/// The between-run σ of one measurement over `medians` (one per run): the sample standard
/// deviation of their logarithms, None with fewer than MIN_RUNS usable medians.
pub fn log_sd(medians: &[f64]) -> Option<f64> {
    crate::measure::stats::log_sd(medians, MIN_RUNS)
}

/// The between-run σ of the measurement `r` stands for, over `runs` (each run's result with
/// the same `matching::label`), and how many runs had it; None with fewer than MIN_RUNS.
/// Public for views of many runs (the fleet) that want a row's run-to-run noise.
pub fn row_sigma(runs: &[RunDocument], r: &BenchResult) -> Option<(f64, usize)> {
    let key = crate::compare::matching::label(r);
    let medians: Vec<f64> = runs
        .iter()
        .filter_map(|d| {
            d.results
                .iter()
                .find(|x| crate::compare::matching::label(x) == key)
        })
        .map(|x| x.stats.median)
        .collect();
    log_sd(&medians).map(|s| (s, medians.len()))
}

/// σ and the number of runs it came from, per row label.
pub type Sigmas = BTreeMap<String, (f64, usize)>;

/// σ per row label from a set of runs.
fn sigmas(runs: &[RunDocument]) -> Sigmas {
    let mut medians: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for d in runs {
        for r in &d.results {
            medians
                .entry(crate::compare::matching::label(r))
                .or_default()
                .push(r.stats.median);
        }
    }
    medians
        .into_iter()
        .filter_map(|(k, v)| log_sd(&v).map(|s| (k, (s, v.len()))))
        .collect()
}

/// A host's noise model: σ per row from its calibration and from its history.
#[derive(Debug, Clone, Default)]
pub struct NoiseModel {
    /// The host the model describes (the baseline's).
    pub host: Option<String>,
    /// The calibration's id and σ (with run count) per row label.
    pub calibration: Option<(String, Sigmas)>,
    /// σ per row label from earlier stored runs.
    pub history: Sigmas,
}

impl NoiseModel {
    /// The model of `host` from its calibration runs (tagged with calibration id `id`) and
    /// its other stored runs.
    pub fn new(
        host: &str,
        calibration: Option<(&str, &[RunDocument])>,
        history: &[RunDocument],
    ) -> NoiseModel {
        NoiseModel {
            host: Some(host.to_string()),
            calibration: calibration
                .map(|(id, runs)| (id.to_string(), sigmas(runs)))
                .filter(|(_, m)| !m.is_empty()),
            history: sigmas(history),
        }
    }

    /// The model from stored history only (as the drift history was built before).
    pub fn of_runs(runs: &[RunDocument], host: &str) -> NoiseModel {
        NoiseModel::new(host, None, runs)
    }

    /// The noise of the row `r` stands for: calibration, else history, else none measured.
    pub fn row(&self, r: &BenchResult) -> RowNoise {
        self.measured(&crate::compare::matching::label(r))
            .unwrap_or_else(|| self.unmeasured())
    }

    /// No calibration or stored history of the row: said with the host's name.
    pub fn unmeasured(&self) -> RowNoise {
        RowNoise::unmeasured(match &self.host {
            Some(h) => format!("no calibration or stored history of this row on host {h}"),
            None => "no calibration or stored history of this row".to_string(),
        })
    }

    /// The noise of the row labelled `key` (`matching::label`) from the calibration, else
    /// the history; None when neither covers it.
    pub fn measured(&self, key: &str) -> Option<RowNoise> {
        let host = self.host.as_deref().unwrap_or("?");
        if let Some((id, m)) = &self.calibration {
            if let Some((s, n)) = m.get(key) {
                return Some(RowNoise {
                    basis: Basis::Calibration,
                    sigma: Some(s.max(MIN_SIGMA)),
                    runs: *n,
                    source: format!(
                        "calibration {id}: {:.1}% between {n} runs of host {host}",
                        s * 100.0
                    ),
                    run: None,
                });
            }
        }
        self.history.get(key).map(|(s, n)| RowNoise {
            basis: Basis::History,
            sigma: Some(s.max(MIN_SIGMA)),
            runs: *n,
            source: format!(
                "history: {:.1}% between {n} stored runs of host {host}",
                s * 100.0
            ),
            run: None,
        })
    }
}

/// Standard error of ln(median) from a result's own samples (`Stats::log_se`).
pub fn within_se(r: &BenchResult) -> f64 {
    r.stats.log_se()
}

/// The quantiles (two-sided α, power) for `df` degrees of freedom (None: normal).
#[cfg(test)]
fn quantiles(df: Option<f64>) -> (f64, f64) {
    crate::measure::mde::quantiles(df)
}

/// The MDE of a row whose log ratio has standard error `se` with σ's `df`.
pub fn mde_log(se: f64, df: Option<f64>) -> f64 {
    crate::measure::mde::mde_log(se, df)
}

/// What moves a row between runs that the rounds of one run do not sample, as a σ of its
/// log median per run, added to the rounds' own standard error: in A/A tests of five runs
/// on one host (2026-11-27) the run medians of the clock reads spread 0.4-1.4% with their
/// rounds' error at 0.3-0.6% (in fresh processes per round), the cache-line transfer 1-2.5%
/// at 0.4%, and the 11:59 runs' latency, context-switch and per-event rows 1.8-2.7 times
/// what their rounds gave. A calibration or history of the host, where present, measures
/// it instead.
pub const RUN_SIGMA: f64 = 0.006;

/// Memory bandwidth's run level: in the A/A tests of 2026-11-28 23:56 (steal 0-1.7%) and
/// 2026-11-29 03:07 (steal 0%), five runs each, the run medians of its rows spread beyond
/// their rounds' error by a median 2.8-2.9% (non-temporal stores) and 1.2-2.1% (regular):
/// the host's memory, shared with other guests, moves between runs, and one run's rounds
/// see one state of it. 2.5% lies between the two; with it the family's median MDE in the
/// quiet A/As of 03:07 and 03:37 was 13.5% and 15.4% (its target 15%; with 3%, 16.2% at
/// 03:07).
pub const BANDWIDTH_RUN_SIGMA: f64 = 0.025;

/// The run level of a memory.latency row past its run's LLC (`latency::past_the_llc`), where
/// the loads go to memory. In the A/As of 2026-11-29 06:07 and 06:35 (five runs each, steal
/// 0%) the run medians of the rows at 45-128 MiB spread beyond their rounds' error by
/// 3.0-5.2% and 2.3-5.8% with 4 KiB pages, 3.9-11% and 0-1.7% with huge pages, where the
/// rows on the caches' plateaus spread 0-2.5%: which host memory, and which of the host's page-table
/// caches, a run's chains land on is drawn once per run, as for bandwidth. A 45 MiB row's
/// rounds ran at 109-128 ns in one run and 143 ns in another, with the runs' loads from
/// 128 MiB 3% apart.
pub const MEMORY_LATENCY_RUN_SIGMA: f64 = 0.05;

/// What only separate runs sample for the row `r` of a run whose results are `run` (its run
/// level, a σ of the log median per run). A memory row whose loads go to memory (memory
/// bandwidth, a latency row past that run's LLC) whose rounds drew their pages afresh
/// (`Quality::pages_per_round`) has what its pages cost in the spread between its rounds,
/// which its run's median averages: its level is estimated from those rounds, and only
/// [`RUN_SIGMA`] is added. Without that (a document of an earlier version, a round left no
/// room for a spacer) the stated defaults: [`BANDWIDTH_RUN_SIGMA`] for memory bandwidth,
/// [`MEMORY_LATENCY_RUN_SIGMA`] for a latency row past the LLC; else [`RUN_SIGMA`]. With
/// `run` empty (the run not at hand) a latency row takes [`RUN_SIGMA`].
pub fn run_sigma(r: &BenchResult, run: &[BenchResult]) -> f64 {
    use crate::bench::nature::RunLevel;
    let default = match crate::bench::nature::of(r).run_level {
        RunLevel::HostMemory => BANDWIDTH_RUN_SIGMA,
        RunLevel::HostMemoryPastTheLlc if crate::bench::memory::latency::past_the_llc(r, run) => {
            MEMORY_LATENCY_RUN_SIGMA
        }
        _ => return RUN_SIGMA,
    };
    if r.quality.pages_per_round {
        RUN_SIGMA
    } else {
        default
    }
}

/// The run level of a row compared between runs A and B: the larger of its sides'
/// ([`run_sigma`] of each in its own run).
pub fn row_run_sigma(a: (&BenchResult, &RunDocument), b: (&BenchResult, &RunDocument)) -> f64 {
    run_sigma(a.0, &a.1.results).max(run_sigma(b.0, &b.1.results))
}

/// The variance of a run's log median from its rounds' standard error `se`, with what only
/// separate runs sample (`run`, [`run_sigma`]).
pub fn rounds_var(se: f64, run: f64) -> f64 {
    se.powi(2) + run.powi(2)
}

/// The MDE (relative, `measure::mde::relative_mde`) of a row with this noise against an
/// identical run, as `compare` tests it (with what only separate runs sample, `run`:
/// [`run_sigma`]): what `run --precision` and its allocation aim each row at.
pub fn row_mde(n: &crate::result::rounds::RoundNoise, run: f64) -> f64 {
    crate::measure::mde::relative_mde(n.se.powi(2), Some(n.df), run)
}

/// One side of a row: the variance of its log median, its degrees of freedom (None:
/// normal) and the basis it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    pub var: f64,
    pub df: Option<f64>,
    pub basis: Basis,
    /// The rounds were chosen by `run --precision`'s two-stage rule.
    pub two_stage: bool,
    /// The side's level from its rounds (`Rounds::level`: the mean log round median), which
    /// the test compares when both sides have one; None without rounds.
    pub level: Option<f64>,
}

/// The variance of one result's log median: from its own rounds (raised to the model's
/// calibration or history σ where that is larger), else from the model: the larger of σ²
/// and its own sampling variance (σ already holds a run's own noise). None for a result
/// without a spread of rounds when the model measured nothing ([`no_rounds_why`]).
pub fn side(r: &BenchResult, model: &RowNoise) -> Option<Side> {
    let s2 = model.sigma.map(|s| s.powi(2));
    if let Some((level, n)) = r.rounds.as_ref().and_then(|rs| rs.level()) {
        let own = Side {
            var: rounds_var(n.se, model.run.unwrap_or_else(|| run_sigma(r, &[]))),
            df: Some(n.df),
            basis: Basis::Rounds,
            two_stage: n.stage1.is_some(),
            level: Some(level),
        };
        return Some(match s2 {
            Some(s2) if s2 > own.var => Side {
                var: s2,
                df: model.df(),
                basis: model.basis,
                two_stage: false,
                level: Some(level),
            },
            _ => own,
        });
    }
    Some(Side {
        var: s2?.max(within_se(r).powi(2)),
        df: model.df(),
        basis: model.basis,
        two_stage: false,
        level: None,
    })
}

/// A row tested against its noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowTest {
    /// ln(B/A): of the rounds' levels where both sides have rounds, else of the medians.
    pub d: f64,
    /// Its standard error.
    pub se: f64,
    /// Degrees of freedom of `se` (None: normal).
    pub df: Option<f64>,
    /// Two-sided p of d against 0.
    pub p: f64,
    /// Minimum detectable |d| at ALPHA and POWER.
    pub mde_log: f64,
    /// The basis the larger side rests on.
    pub basis: Basis,
}

impl RowTest {
    /// The MDE as a relative difference (0.38 = 38%).
    pub fn mde(&self) -> f64 {
        self.mde_log.exp_m1()
    }

    pub fn detectable(&self) -> bool {
        self.d.abs() >= self.mde_log
    }

    /// The 95% interval of d.
    pub fn ci(&self) -> (f64, f64) {
        let h = crate::measure::mde::two_sided(self.df) * self.se;
        (self.d - h, self.d + h)
    }

    /// Whether the interval lies inside ± the MDE, and the MDE is at most
    /// MAX_EQUIVALENCE_MDE: the two are the same within it (a wider "same" tells nothing).
    pub fn equivalent(&self) -> bool {
        let (lo, hi) = self.ci();
        lo > -self.mde_log && hi < self.mde_log && self.mde() <= MAX_EQUIVALENCE_MDE
    }
}

impl RowTest {
    /// The same test with what the clock alone predicts held out: ln(B/A) less
    /// `expected_log`, its standard error `se` added (`per_cycle::held_clock`).
    pub fn per_cycle(self, expected_log: f64, se: f64) -> RowTest {
        let d = self.d - expected_log;
        let se = (self.se.powi(2) + se.powi(2)).sqrt();
        RowTest {
            d,
            se,
            p: crate::measure::mde::p_value(d, se, self.df),
            mde_log: mde_log(se, self.df),
            ..self
        }
    }
}

pub use crate::measure::mde::{mde_text, mde_text_fine};

/// Test B against A, by their rounds' levels where both have rounds, else their medians:
/// each side's variance from `side` (B's host is assumed to
/// have A's model), degrees of freedom by Welch-Satterthwaite (the smaller side's when a
/// side's rounds were chosen by the two-stage rule: `session::precision`). None when a side
/// has no noise to be judged by (`side`).
pub fn test(a: &BenchResult, b: &BenchResult, noise: &RowNoise) -> Option<RowTest> {
    let (sa, sb) = (side(a, noise)?, side(b, noise)?);
    let se = (sa.var + sb.var).sqrt();
    let df = match (sa.df, sb.df) {
        (Some(x), Some(y)) if sa.two_stage || sb.two_stage => Some(x.min(y)),
        (Some(_), Some(_)) => crate::measure::mde::welch_df(&[(sa.var, sa.df), (sb.var, sb.df)]),
        _ => None,
    };
    // Both sides in rounds: their levels (the rounds are what is drawn afresh, and a
    // pooled median can jump between two modes of them); else the medians.
    let d = match (sa.level, sb.level) {
        (Some(x), Some(y)) => y - x,
        _ => (b.stats.median / a.stats.median).ln(),
    };
    let basis = if sa.var >= sb.var { sa.basis } else { sb.basis };
    Some(RowTest {
        d,
        se,
        df,
        p: crate::measure::mde::p_value(d, se, df),
        mde_log: mde_log(se, df),
        basis,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    fn lat(median: f64) -> BenchResult {
        testing::result(
            "memory.latency@1",
            "cpus",
            Some(vec![0]),
            json!({"size_bytes": 1468006, "pages": "4k"}),
            median,
        )
    }

    fn run(id: &str, median: f64) -> RunDocument {
        testing::run(id, vec![lat(median)], testing::env())
    }

    /// Runs `id` of the latency row, one per median.
    fn runs(id: &str, medians: &[f64]) -> Vec<RunDocument> {
        medians.iter().map(|m| run(id, *m)).collect()
    }

    /// A latency row in rounds of these medians (ns), one sample each, its median the
    /// pooled rounds' median and its noise as `run` stores it (about that median).
    fn in_rounds(medians: &[f64]) -> BenchResult {
        let logs: Vec<f64> = medians.iter().map(|m| m.ln()).collect();
        let rounds = crate::result::rounds::quiet_rounds(&logs);
        let median = crate::result::rounds::median(medians);
        let noise = crate::result::rounds::noise_of(&rounds, Some(median.ln()), None);
        let mut r = lat(median);
        r.stats.median = median;
        r.rounds = Some(crate::result::rounds::Rounds { rounds, noise });
        r
    }

    #[test]
    fn rounds_in_two_modes_are_tested_by_their_level_not_by_a_median_that_jumps() {
        // 20 rounds a run at 250 or 300 ns: a quarter slow in A, eleven of twenty in B.
        // The pooled median jumps from 250 to 300 (20%); the mean level moves 5%, within
        // what the shares of the modes vary by between runs.
        let mode = |slow: usize| -> Vec<f64> {
            (0..20)
                .map(|i| {
                    if i < slow {
                        300.0
                    } else {
                        250.0 + i as f64 * 0.1
                    }
                })
                .collect()
        };
        let (a, b) = (in_rounds(&mode(5)), in_rounds(&mode(11)));
        assert!(b.stats.median / a.stats.median > 1.19);
        let t = test(&a, &b, &NoiseModel::default().row(&a)).unwrap();
        assert!((t.d - (1.2f64.ln() * 6.0 / 20.0)).abs() < 0.002, "{t:?}");
        assert!(t.p > 0.05, "{t:?}");
        // A real move of both modes by 20% is called.
        let moved: Vec<f64> = mode(11).iter().map(|m| m * 1.2).collect();
        let t = test(&a, &in_rounds(&moved), &NoiseModel::default().row(&a)).unwrap();
        assert!(t.p < 0.001 && t.d > 0.2, "{t:?}");
        // A side without rounds is tested by the medians.
        let t = test(&lat(250.0), &b, &NoiseModel::default().row(&a));
        assert!(t.is_none(), "no noise for the side without rounds: {t:?}");
    }

    #[test]
    fn the_mde_of_five_runs_uses_t_quantiles_and_one_run_uses_z() {
        // The textbook factor 1.96 + 0.84 = 2.80 for the normal.
        let (a, b) = quantiles(None);
        assert!((a + b - 2.80).abs() < 0.01, "{a} {b}");
        // t with 4 df: 2.776 + 0.941.
        let (a, b) = quantiles(Some(4.0));
        assert!(
            (a - 2.776).abs() < 0.01 && (b - 0.941).abs() < 0.01,
            "{a} {b}"
        );
        // SE 0.1 -> MDE exp(0.28) - 1 = 32%.
        assert!((mde_log(0.1, None).exp_m1() - 0.323).abs() < 0.005);
    }

    #[test]
    fn calibration_wins_over_history_and_history_over_nothing() {
        let cal: Vec<RunDocument> = runs("c", &[100.0, 130.0, 90.0, 120.0, 100.0]);
        let hist: Vec<RunDocument> = runs("h", &[100.0, 101.0, 99.0]);
        let r = lat(100.0);
        let both = NoiseModel::new("h", Some(("cal1", &cal)), &hist);
        let n = both.row(&r);
        assert_eq!((n.basis, n.runs), (Basis::Calibration, 5));
        assert!(n.sigma.unwrap() > 0.1 && n.source.contains("cal1"), "{n:?}");
        let only_hist = NoiseModel::new("h", None, &hist);
        let n = only_hist.row(&r);
        assert_eq!((n.basis, n.runs), (Basis::History, 3));
        // A history of quiet runs still gets the 1% minimum.
        assert_eq!(
            n.sigma,
            Some(MIN_SIGMA.max(log_sd(&[100.0, 101.0, 99.0]).unwrap()))
        );
        // Two stored runs are not a history; another row is not covered: nothing measured,
        // said with the host, and no σ made up for it.
        let short = NoiseModel::new("h", Some(("cal1", &cal[..2])), &hist[..2]);
        let none = short.row(&r);
        assert_eq!((none.basis, none.sigma, none.runs), (Basis::None, None, 0));
        assert!(none.source.contains("on host h"), "{}", none.source);
        assert_eq!(none.mde_one_run_each(), None);
        let mut other = lat(100.0);
        other.params.insert("size_bytes", 4096u64);
        assert_eq!(both.row(&other).basis, Basis::None);
        assert_eq!(NoiseModel::default().row(&r).basis, Basis::None);
    }

    #[test]
    fn a_swing_within_the_calibrated_noise_is_not_detectable_and_a_larger_one_is() {
        let cal: Vec<RunDocument> = runs("c", &[100.0, 130.0, 90.0, 120.0, 100.0]);
        let model = NoiseModel::new("h", Some(("c", &cal)), &[]);
        let noise = model.row(&lat(100.0));
        // The 37% swing of the A/A memory.latency rows: below this host's MDE.
        let t = test(&lat(100.0), &lat(137.0), &noise).unwrap();
        assert!(!t.detectable(), "{t:?} mde {}", t.mde());
        assert!(t.mde() > 0.37);
        let t = test(&lat(100.0), &lat(400.0), &noise).unwrap();
        assert!(t.detectable() && t.p < 0.05, "{t:?}");
        // Quiet calibration: 10% is detectable.
        let quiet: Vec<RunDocument> = runs("c", &[100.0, 100.5, 99.6, 100.2, 99.9]);
        let noise = NoiseModel::new("h", Some(("c", &quiet)), &[]).row(&lat(100.0));
        let t = test(&lat(100.0), &lat(110.0), &noise).unwrap();
        assert!(t.detectable() && t.mde() < 0.1, "{t:?} {}", t.mde());
    }

    #[test]
    fn a_side_without_rounds_or_a_measured_host_is_not_tested_and_says_why() {
        use crate::result::rounds::{quiet_rounds, Rounds};
        let rounded = |m: f64| {
            let mut d = run("r", m);
            d = crate::compare::testing::in_rounds(d);
            d.results.remove(0)
        };
        // An earlier version's result (measured in one piece) and nothing of the host: no
        // test, whatever the difference.
        let none = NoiseModel::default().row(&lat(100.0));
        assert!(test(&lat(100.0), &lat(400.0), &none).is_none());
        assert_eq!(no_rounds_why(&lat(100.0)).as_deref(), Some(NO_ROUNDS));
        // A result with a spread of rounds on both sides is tested from them alone.
        let t = test(&rounded(100.0), &rounded(130.0), &none).unwrap();
        assert_eq!(t.basis, Basis::Rounds);
        assert!(t.detectable(), "{t:?}");
        assert_eq!(no_rounds_why(&rounded(100.0)), None);
        // One side without rounds: not tested either.
        assert!(test(&rounded(100.0), &lat(130.0), &none).is_none());
        assert!(test(&lat(100.0), &rounded(130.0), &none).is_none());
        // One round: no spread to read.
        let mut one = lat(100.0);
        one.rounds = Some(Rounds {
            rounds: quiet_rounds(&[100f64.ln()]),
            noise: None,
        });
        assert_eq!(
            no_rounds_why(&one).as_deref(),
            Some("one round (no spread to read)")
        );
    }

    #[test]
    fn a_calibration_judges_a_side_without_rounds_by_its_runs() {
        let cal: Vec<RunDocument> = runs("c", &[100.0, 101.0, 99.0, 100.5, 99.5]);
        let noise = NoiseModel::new("h", Some(("c", &cal)), &[]).row(&lat(100.0));
        let t = test(&lat(100.0), &lat(130.0), &noise).unwrap();
        // Each side's variance max(σ², its own sampling variance), t quantiles (each side on
        // the calibration's 5 runs).
        let var = |m: f64| noise.sigma.unwrap().powi(2).max(within_se(&lat(m)).powi(2));
        assert!(
            (t.se - (var(100.0) + var(130.0)).sqrt()).abs() < 1e-12,
            "{t:?}"
        );
        assert!(t.df.is_some() && t.basis == Basis::Calibration, "{t:?}");
        assert!(t.detectable() && t.p < 0.05, "{t:?}");
    }

    /// A latency row past its run's LLC is tested with the memory path's run level, a row on
    /// the LLC plateau or in its cliff with the nominal one, a bandwidth row with its own;
    /// without its run at hand a latency row takes the nominal level. The same 12% move of
    /// every size in quiet rounds is then called on the plateau and not past the LLC (runs
    /// of one host move that much there), and 40% is called there too.
    #[test]
    fn a_latency_row_past_its_runs_llc_is_tested_with_the_memory_run_level() {
        use crate::compare::testing::{in_rounds, latency_curves_run, result};
        use crate::measure::hierarchy::tests::{aa_curve, AA_4K};
        // Effective LLC between 11.3 and 16 MiB: sizes from 22.6 MiB (index 6) are past
        // its cliff, 16 MiB (index 5) is in it, 2.8 MiB (index 0) on the plateau.
        let run = |id: &str, scale: f64| {
            let mut c = aa_curve(&AA_4K[0]);
            for p in c.iter_mut() {
                p.1 *= scale;
            }
            in_rounds(latency_curves_run(id, &[("4k", &c)]))
        };
        let a = run("a", 1.0);
        for i in 0..=5 {
            assert_eq!(run_sigma(&a.results[i], &a.results), RUN_SIGMA, "size {i}");
        }
        for i in 6..12 {
            let r = &a.results[i];
            assert_eq!(
                run_sigma(r, &a.results),
                MEMORY_LATENCY_RUN_SIGMA,
                "size {i}"
            );
            assert_eq!(run_sigma(r, &[]), RUN_SIGMA);
        }
        let bw = result(
            "memory.bandwidth@1",
            "all",
            Some(vec![0]),
            json!({"kernel": "copy", "stores": "regular", "threads": 1, "array_bytes": 128u64 << 20}),
            20000.0,
            false,
        );
        assert_eq!(run_sigma(&bw, &a.results), BANDWIDTH_RUN_SIGMA);
        // Rounds that drew their pages afresh hold what the pages cost: the nominal level.
        for mut r in [a.results[11].clone(), bw.clone()] {
            r.quality.pages_per_round = true;
            assert_eq!(run_sigma(&r, &a.results), RUN_SIGMA, "{}", r.label());
        }
        let p = |b: &RunDocument, i: usize| {
            let (ra, rb) = (&a.results[i], &b.results[i]);
            let noise = RowNoise {
                run: Some(row_run_sigma((ra, &a), (rb, b))),
                ..NoiseModel::default().row(ra)
            };
            test(ra, rb, &noise).unwrap().p
        };
        let moved = run("b", 1.12);
        assert!(p(&moved, 0) < ALPHA, "{}", p(&moved, 0));
        assert!(p(&moved, 11) > ALPHA, "{}", p(&moved, 11));
        assert!(p(&run("b", 1.4), 11) < ALPHA);
    }
}
