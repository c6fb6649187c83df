//! A comparison as it is written: its rows (both medians, the verdict and its words, the
//! explanations), the rounds each side's verdict rests on, the rows tested at one false
//! discovery rate, and which noise the verdicts rest on. `compare_at` (the pipeline, in
//! `compare/mod.rs`) fills them.

use super::{causes, conditions, index, per_cycle, stats, EnvDiff};
use causes::explain::{Explanation, Status};
use serde::Serialize;
use stats::verdict::Verdict;
use std::collections::BTreeMap;

/// Both medians of a row.
#[derive(Debug, Clone, Serialize)]
pub struct Medians {
    pub a: f64,
    pub b: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// A's benchmark id (B's differs only when the definitions differ: see `comparability`).
    pub benchmark: String,
    /// The row in a few words (`bench::label`): "vdso clock_gettime(MONOTONIC)".
    pub label: String,
    pub placement: String,
    pub params: String,
    /// For parallel copies: the role both results play (`1 copy`, `all usable CPUs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub unit: String,
    /// B's unit, when it is not A's (such a row is not comparable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_b: Option<String>,
    pub lower_is_better: bool,
    pub medians: Medians,
    pub ratio: f64,
    pub ci_overlap: bool,
    /// Two-sided Mann-Whitney p-value of the two runs' samples; null with fewer than 3
    /// samples a side.
    pub p: Option<f64>,
    /// Two-sided p of ln(B/A) against the host's run-to-run noise (`noise`): the p-value
    /// Benjamini-Hochberg is applied to across the rows; null when not comparable.
    pub p_noise: Option<f64>,
    /// The smallest relative B/A difference this host's noise lets the row detect
    /// (two-sided α 0.05, power 0.8): 0.38 = 38%; null for a row not tested (no noise to
    /// judge it by).
    pub mde: Option<f64>,
    /// The row's run-to-run noise and where it comes from (rounds, calibration, history,
    /// none).
    pub noise: stats::noise_model::RowNoise,
    /// `B better`, `B worse` (called at the FDR), `equivalent` (the 95% interval of B/A
    /// inside ± the MDE), `cannot tell`, or `not comparable`.
    pub verdict: Verdict,
    /// The verdict in words: "B 27% slower", "same within ±4%", "cannot tell: B between 2.7%
    /// faster and 0.3% slower (95% interval), MDE 2% (rounds disagree)", "cannot tell: 3 of
    /// 5 rounds of B disturbed (other-tasks)".
    pub why: String,
    /// The verdict in a few words, for the narrow table: "B 27% slower", "same ±4%",
    /// "cannot tell (MDE 9%)", "cannot tell (B disturbed)" (most of its rounds), "cannot
    /// tell (L2 edge)"; `why` says each in full.
    #[serde(skip)]
    pub brief: String,
    /// The 95% interval of B/A against the row's noise; null when not comparable.
    pub ci: Option<[f64; 2]>,
    /// Each side's rounds (null for a result measured in one piece).
    pub rounds: [Option<SideRounds>; 2],
    /// The difference a real one must exceed (the MDE) and where it comes from; an earlier
    /// key, kept for scripts written against it.
    pub drift: stats::verdict::Drift,
    /// Why the row gets no verdict (different version, params or sample count).
    pub comparability: Vec<String>,
    pub explanations: Vec<Explanation>,
    /// explained, partly explained, unexplained, or nothing to explain.
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remains: Option<String>,
    /// Earlier keys, kept for scripts written against them.
    pub a_median: f64,
    pub b_median: f64,
    pub p_value: Option<f64>,
    pub warning: Option<String>,
    /// The row was tested per cycle: a clock-bound row (`per_cycle::clock_bound`) of two runs of one host in one
    /// setting, the clock's move between them held out (`noise.clock`); `ratio` stays
    /// the raw B/A, `ci` is the interval of B/A per cycle.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub per_cycle: bool,
}

/// One side's rounds of a row: how many, how many disturbed and by what.
#[derive(Debug, Clone, Serialize)]
pub struct SideRounds {
    pub rounds: usize,
    pub disturbed: usize,
    /// Per cause the rounds it disturbed ("2 other-tasks").
    pub causes: Vec<String>,
    /// The figures include disturbed rounds (fewer than two were undisturbed).
    pub includes_disturbed: bool,
    /// Conditions present throughout the rounds, kept in the figures as what the run
    /// measured ("other tasks took 41% of CPU 0-1 throughout": `conditions::throughout`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub throughout: Vec<String>,
}

impl SideRounds {
    pub(super) fn of(r: &crate::result::BenchResult) -> Option<SideRounds> {
        let rs = r.rounds.as_ref()?;
        Some(SideRounds {
            rounds: rs.rounds.len(),
            disturbed: rs.disturbed(),
            causes: rs
                .causes()
                .iter()
                .map(|(c, n)| format!("{n} {}", c.text()))
                .collect(),
            includes_disturbed: r.run_noise().is_some_and(|n| n.includes_disturbed),
            throughout: conditions::throughout(r),
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub runs: [String; 2],
    pub a: String,
    pub b: String,
    /// Each run's tags (`--tag KEY=VALUE`), A's then B's.
    pub tags: [BTreeMap<String, String>; 2],
    /// Per suite, the sentences a performance engineer would write.
    pub summary: Vec<String>,
    pub rows: Vec<Row>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    pub env_differences: Vec<EnvDiff>,
    pub topology_differences: Vec<String>,
    pub candidates: Vec<causes::candidates::Candidate>,
    pub indexes: Vec<index::IndexShares>,
    /// The false discovery rate the rows were tested at, and what it called real.
    pub fdr: Fdr,
    /// How many rows rest on each noise basis, and the calibration used.
    pub noise: NoiseSummary,
}

/// Many rows, one error rate.
#[derive(Debug, Clone, Serialize)]
pub struct Fdr {
    /// The false discovery rate controlled (0.05 = 5%).
    pub q: f64,
    /// Rows with a p-value (comparable rows, less those at the edge of the L2).
    pub tested: usize,
    /// Rows called better or worse.
    pub real: usize,
    /// Comparable rows not tested: latency points at the edge of the L2 resting on the
    /// runs' own rounds (`per_cycle::cache_edge`), kept out of the family.
    pub edge: usize,
    /// Rows not comparable (no test).
    pub not_comparable: usize,
    /// Comparable rows not tested for want of noise to judge them by: a side without a
    /// spread of rounds (an earlier version's document, a run of one round) and no
    /// calibration or stored history of the host. `tested + edge + not_comparable +
    /// no_noise` is every row.
    pub no_noise: usize,
}

/// Which noise the rows' verdicts rest on.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseSummary {
    /// The baseline host's calibration used, when any row used it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
    pub calibration_rows: usize,
    pub history_rows: usize,
    /// Rows with no noise to be judged by (`Fdr::no_noise`, and those of them not
    /// comparable).
    pub none_rows: usize,
    /// Rows whose noise came from the runs' own rounds.
    pub rounds_rows: usize,
    /// Rows of an `ab` run tested on their paired rounds (`stats::paired`).
    pub paired_rows: usize,
    /// Rows that move with the core clock tested per cycle: with `clock`, B's run clock
    /// over A's, held out.
    pub per_cycle_rows: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<per_cycle::RunClock>,
}
