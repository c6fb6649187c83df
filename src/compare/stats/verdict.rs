//! Whether two results really differ. A row of `compare` is tested against its noise
//! (`noise_model`: each run's rounds, else calibration, history or floor) and ends in one of
//! three outcomes: called (B better or worse: among the rows Benjamini-Hochberg keeps at the
//! comparison's false discovery rate), equivalent (the 95% interval of B/A lies inside ± the
//! row's minimum detectable effect: the same within it), or cannot tell (neither: the noise
//! is too large for this difference, or the rounds were disturbed). Within one run's
//! samples, the rank test and the confidence intervals (`judge`) still decide whether the
//! siblings a cause holds equal differ.

use crate::measure::stats::mann_whitney_p;
use crate::result::BenchResult;
use serde::Serialize;

/// The drift assumed without a history: quiet repeated runs on one machine move by a few
/// percent (frequency, cache and page placement, other tenants), so a real difference
/// below this is not called better or worse.
pub const DEFAULT_DRIFT: f64 = 0.05;
/// The false discovery rate `compare` controls across its rows by default.
pub const DEFAULT_FDR: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    #[serde(rename = "B better")]
    Better,
    #[serde(rename = "B worse")]
    Worse,
    /// Real within the runs' samples but below the drift fraction `judge` was given (the
    /// siblings a cause holds equal).
    #[serde(rename = "drift")]
    Drift,
    /// Not called, and the 95% interval of B/A lies inside ± the row's MDE: the same
    /// within it (a row of `compare`).
    #[serde(rename = "equivalent")]
    Equivalent,
    /// Not called, and not equivalent either: the noise is too large for this difference,
    /// or too many rounds were disturbed (a row of `compare`; its `why` says which).
    #[serde(rename = "cannot tell")]
    CannotTell,
    /// The samples overlap (`judge`, for the siblings a cause holds equal).
    #[serde(rename = "no real difference")]
    Same,
    /// Different definition, params or sample count: no verdict.
    #[serde(rename = "not comparable")]
    NotComparable,
    /// The CIs do not overlap, but with so few samples the rank test cannot reach p < 0.05
    /// even for fully separated samples: not called either way.
    #[serde(rename = "too few samples")]
    TooFew,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "B better",
            Verdict::Worse => "B worse",
            Verdict::Drift => "drift",
            Verdict::Equivalent => "equivalent",
            Verdict::CannotTell => "cannot tell",
            Verdict::Same => "no real difference",
            Verdict::NotComparable => "not comparable",
            Verdict::TooFew => "too few samples",
        }
    }

    /// A difference that asks for an explanation.
    pub fn is_real(self) -> bool {
        matches!(self, Verdict::Better | Verdict::Worse)
    }
}

/// The drift of one measurement on a host and where the figure comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// The relative difference a row must exceed to be called (its MDE in `compare`); null
    /// for a row not tested.
    pub fraction: Option<f64>,
    pub basis: String,
}

/// The noise model of a host; the name the drift history had before it.
pub use crate::compare::stats::noise_model::NoiseModel as History;

/// Two results judged: ratio B/A, CI overlap, rank-test p, and the verdict.
#[derive(Debug, Clone, Copy)]
pub struct Judged {
    pub ratio: f64,
    pub ci_overlap: bool,
    pub p: Option<f64>,
    pub verdict: Verdict,
}

/// Judge B against A with the drift `drift` (a fraction).
pub fn judge(a: &BenchResult, b: &BenchResult, drift: f64) -> Judged {
    let ci_overlap = a.stats.ci95_low <= b.stats.ci95_high && b.stats.ci95_low <= a.stats.ci95_high;
    let p = mann_whitney_p(&a.samples, &b.samples);
    let ratio = b.stats.median / a.stats.median;
    let real = match p {
        Some(p) => p < 0.05 && !ci_overlap,
        None => !ci_overlap,
    };
    // The smallest p the rank test can give with these sample counts.
    let reachable = || {
        let (n1, n2) = (a.samples.len(), b.samples.len());
        let x: Vec<f64> = (0..n1).map(|i| i as f64).collect();
        let y: Vec<f64> = (n1..n1 + n2).map(|i| i as f64).collect();
        mann_whitney_p(&x, &y).is_none_or(|p| p < 0.05)
    };
    let verdict = if !real && !ci_overlap && !reachable() {
        Verdict::TooFew
    } else if !real {
        Verdict::Same
    } else if ratio.ln().abs() < drift.ln_1p() {
        Verdict::Drift
    } else if (b.stats.median > a.stats.median) != a.lower_is_better {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    Judged {
        ratio,
        ci_overlap,
        p,
        verdict,
    }
}

/// How much faster (factor > 1) B is than A, counting lower-is-better units right.
pub fn speedup(ratio: f64, lower_is_better: bool) -> f64 {
    if lower_is_better {
        1.0 / ratio
    } else {
        ratio
    }
}

/// "28x faster", "12% slower": B against A in words.
pub fn in_words(ratio: f64, lower_is_better: bool) -> String {
    let s = speedup(ratio, lower_is_better);
    if s >= 1.995 {
        format!("{s:.1}x faster")
    } else if s >= 1.0 {
        format!("{:.0}% faster", (s - 1.0) * 100.0)
    } else if s > 0.5 {
        // A share of A's speed lost: 0.88 is "12% slower".
        format!("{:.0}% slower", (1.0 - s) * 100.0)
    } else {
        format!("{:.1}x slower", 1.0 / s)
    }
}

/// An interval bound in words, finer than `in_words` near 1: "2.7% faster", "0.3% slower",
/// "the same" at 1.000, factors beyond 2x.
pub fn in_words_fine(ratio: f64, lower_is_better: bool) -> String {
    let s = speedup(ratio, lower_is_better);
    if (s - 1.0).abs() < 0.0005 {
        "the same".into()
    } else if s >= 1.995 {
        format!("{s:.1}x faster")
    } else if s >= 1.0 {
        format!("{:.1}% faster", (s - 1.0) * 100.0)
    } else if s > 0.5 {
        format!("{:.1}% slower", (1.0 - s) * 100.0)
    } else {
        format!("{:.1}x slower", 1.0 / s)
    }
}

/// A side's rounds were disturbed beside the other's when at least this share of them were
/// disturbed by something recorded (steal, other tasks, CPU pressure, a slow canary, the
/// host's placement; an outlier, which nothing recorded, does not count) ...
pub const LOPSIDED_SHARE: f64 = 0.2;
/// ... and at least this many times the other side's share.
pub const LOPSIDED_TIMES: f64 = 3.0;

/// A side's rounds disturbed by something recorded, all its rounds, and the recorded causes
/// with the rounds each disturbed. None for a result measured in one piece.
fn recorded_disturbance(r: &BenchResult) -> Option<(usize, usize, Vec<String>)> {
    use crate::result::rounds::Cause;
    let rs = r.rounds.as_ref()?;
    let recorded = |d: &crate::result::rounds::Disturbance| d.cause != Cause::Outlier;
    let n = rs
        .rounds
        .iter()
        .filter(|x| x.disturbed.iter().any(recorded))
        .count();
    let causes = rs
        .causes()
        .into_iter()
        .filter(|(c, _)| *c != Cause::Outlier)
        .map(|(c, k)| format!("{k} {}", c.text()))
        .collect();
    Some((n, rs.rounds.len(), causes))
}

/// When one side's rounds were disturbed and the other's were not (`LOPSIDED_SHARE`,
/// `LOPSIDED_TIMES`), in words: "3 of 5 rounds of B disturbed (3 steal), 0 of 5 of A's".
/// A disturbed round is kept out of the figures, but what disturbed it (a host busy enough
/// to take the CPU, a neighbour) may have moved the rounds kept too, below the limits: a
/// difference between such runs that no measured cause claims cannot be told from it.
/// None when both sides were alike or either was measured in one piece.
pub fn lopsided_disturbance(a: &BenchResult, b: &BenchResult) -> Option<String> {
    let sides = [
        ("A", recorded_disturbance(a)?),
        ("B", recorded_disturbance(b)?),
    ];
    let share = |(n, t, _): &(usize, usize, Vec<String>)| *n as f64 / (*t).max(1) as f64;
    let (hi, lo) = if share(&sides[1].1) >= share(&sides[0].1) {
        (&sides[1], &sides[0])
    } else {
        (&sides[0], &sides[1])
    };
    let (s_hi, s_lo) = (share(&hi.1), share(&lo.1));
    (s_hi >= LOPSIDED_SHARE && s_hi >= LOPSIDED_TIMES * s_lo).then(|| {
        format!(
            "{} of {} of {} disturbed ({}), {} of {} of {}'s",
            hi.1 .0,
            crate::units::count(hi.1 .1, "round"),
            hi.0,
            hi.1 .2.join(", "),
            lo.1 .0,
            lo.1 .1,
            lo.0
        )
    })
}

/// "within 3%": how far apart two figures are, as the larger over the smaller.
pub fn apart(ratio: f64) -> String {
    let f = ratio.max(1.0 / ratio);
    if f >= 1.995 {
        format!("{f:.1}x apart")
    } else {
        format!("within {:.0}%", ((f - 1.0) * 100.0).ceil().max(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    fn r(median: f64, spread: f64) -> BenchResult {
        let mut x = testing::result("timers.clock-read@1", "os", None, json!({}), median);
        x.samples = (0..10)
            .map(|i| median * (1.0 + spread * (i as f64 - 4.5) / 4.5))
            .collect();
        x.stats = crate::measure::stats::Stats::of(&x.samples).unwrap();
        x
    }

    #[test]
    fn a_real_three_percent_is_drift_and_thirty_is_worse() {
        let a = r(170.0, 0.005);
        let b = r(175.1, 0.005);
        let j = judge(&a, &b, DEFAULT_DRIFT);
        assert_eq!(j.verdict, Verdict::Drift, "{j:?}");
        assert_eq!(
            judge(&a, &r(221.0, 0.005), DEFAULT_DRIFT).verdict,
            Verdict::Worse
        );
        // Given a 40% drift, 30% is drift.
        assert_eq!(judge(&a, &r(221.0, 0.005), 0.4).verdict, Verdict::Drift);
    }

    #[test]
    fn interval_bounds_read_finely_near_one() {
        assert_eq!(in_words_fine(0.973, true), "2.8% faster");
        assert_eq!(in_words_fine(1.003, true), "0.3% slower");
        assert_eq!(in_words_fine(1.003, false), "0.3% faster");
        assert_eq!(in_words_fine(1.0, true), "the same");
        assert_eq!(in_words_fine(0.2, true), "5.0x faster");
        assert_eq!(in_words_fine(3.0, true), "3.0x slower");
    }

    #[test]
    fn three_samples_a_side_cannot_call_a_difference() {
        let mut a = r(100.0, 0.01);
        let mut b = r(1000.0, 0.01);
        for x in [&mut a, &mut b] {
            x.samples.truncate(3);
            x.stats = crate::measure::stats::Stats::of(&x.samples).unwrap();
        }
        assert_eq!(judge(&a, &b, 0.05).verdict, Verdict::TooFew);
    }

    #[test]
    fn overlapping_results_are_no_real_difference() {
        assert_eq!(
            judge(&r(100.0, 0.2), &r(102.0, 0.2), 0.05).verdict,
            Verdict::Same
        );
    }

    /// `r` measured in `n` rounds, the first `disturbed` of them disturbed by `cause`.
    fn in_rounds(
        mut x: BenchResult,
        n: usize,
        disturbed: usize,
        cause: crate::result::rounds::Cause,
    ) -> BenchResult {
        use crate::result::rounds::{quiet_rounds, Disturbance, Rounds};
        let mut rounds = quiet_rounds(&vec![x.stats.median.ln(); n]);
        for r in &mut rounds[..disturbed] {
            r.disturbed.push(Disturbance {
                cause,
                value: 30.0,
                limit: 2.0,
                persistent: false,
            });
        }
        x.rounds = Some(Rounds {
            rounds,
            noise: None,
        });
        x
    }

    #[test]
    fn rounds_disturbed_on_one_side_only_are_lopsided_and_alike_or_outliers_are_not() {
        use crate::result::rounds::Cause;
        let quiet = in_rounds(r(100.0, 0.01), 5, 0, Cause::Steal);
        let stolen = in_rounds(r(136.0, 0.01), 5, 3, Cause::Steal);
        assert_eq!(
            lopsided_disturbance(&quiet, &stolen).as_deref(),
            Some("3 of 5 rounds of B disturbed (3 steal), 0 of 5 of A's")
        );
        assert!(lopsided_disturbance(&stolen, &quiet)
            .unwrap()
            .starts_with("3 of 5 rounds of A disturbed"));
        // One round of 25 is below the share; alike shares on both sides are not lopsided.
        let one = in_rounds(r(136.0, 0.01), 25, 1, Cause::OtherTasks);
        assert!(
            lopsided_disturbance(&in_rounds(r(100.0, 0.01), 25, 0, Cause::Steal), &one).is_none()
        );
        let some = in_rounds(r(100.0, 0.01), 5, 2, Cause::Steal);
        assert!(lopsided_disturbance(&some, &stolen).is_none());
        // A round far off with nothing recorded is not a disturbance of the host.
        let far = in_rounds(r(136.0, 0.01), 5, 3, Cause::Outlier);
        assert!(lopsided_disturbance(&quiet, &far).is_none());
        // A side measured in one piece: nothing to hold the other's rounds against.
        assert!(lopsided_disturbance(&r(100.0, 0.01), &stolen).is_none());
    }

    #[test]
    fn words() {
        assert_eq!(in_words(1.0 / 28.0, true), "28.0x faster");
        assert_eq!(in_words(0.88, false), "12% slower");
        assert_eq!(apart(1.027), "within 3%");
    }
}
