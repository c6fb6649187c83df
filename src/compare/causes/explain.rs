//! An explanation of one row's difference: the cause, the evidence from both documents,
//! and where it was computed the ratio the cause predicts and what remains (measured over
//! predicted); and how a row's explanations combine into its verdict: explained, partly
//! explained (with what remains), or unexplained.

use crate::compare::stats::verdict::{Judged, Verdict};
use crate::result::{BenchResult, RunDocument};
use serde::Serialize;

/// A measured ratio matches a predicted one within this factor (either way): the
/// predictions rest on medians of short runs and are not finer than that.
pub const MATCH: f64 = 1.25;

/// What a cause claims about a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Claim {
    /// It accounts for the difference (its prediction matches, or what it holds equal shows
    /// no real difference).
    Explains,
    /// It accounts for part of it: the direction is right, something remains.
    Partly,
    /// It changed between the runs and acts in this direction, with no figure.
    Contributes,
    /// It was measured in both and did not change, or it acts against the measured
    /// difference: it does not explain this row.
    RuledOut,
    /// It differs, or may differ, and nothing in the documents quantifies it.
    NotMeasured,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub cause: String,
    pub claim: Claim,
    /// The cause in one clause, for the row's and the suite's sentence ("its tasks shared
    /// one CPU in 100% of observations and A's in 0%").
    pub because: String,
    pub evidence: Vec<String>,
    /// The B/A ratio this cause alone predicts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted: Option<f64>,
    /// Measured B/A over predicted: what remains with this cause held equal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub residual: Option<f64>,
    /// What remains, in words, when it explains part of the difference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remains: Option<String>,
    /// The difference with this cause held equal, in words ("pinned, the two are within
    /// 3% (no real difference)").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_equal: Option<String>,
}

impl Explanation {
    pub fn new(cause: &str, claim: Claim, because: impl Into<String>) -> Explanation {
        Explanation {
            cause: cause.into(),
            claim,
            because: because.into(),
            evidence: vec![],
            predicted: None,
            residual: None,
            remains: None,
            held_equal: None,
        }
    }

    pub fn evidence(mut self, e: impl Into<String>) -> Explanation {
        self.evidence.push(e.into());
        self
    }

    /// Set the predicted ratio and the residual against the measured one; the claim becomes
    /// Explains when they match (within MATCH), Partly when the prediction points the same
    /// way but something remains, and stays as given otherwise.
    pub fn predict(mut self, predicted: f64, measured: f64) -> Explanation {
        if !(predicted.is_finite() && predicted > 0.0) {
            return self;
        }
        let residual = measured / predicted;
        self.predicted = Some(predicted);
        self.residual = Some(residual);
        if matches_within(residual) {
            self.claim = Claim::Explains;
        } else if predicted.ln().signum() == measured.ln().signum() && predicted.ln().abs() > 0.01 {
            self.claim = Claim::Partly;
            self.remains = Some(format!(
                "{residual:.2}x remains after it (measured {measured:.3}, predicted {predicted:.3})"
            ));
        } else if predicted.ln().abs() > 0.01 && measured.ln().abs() > 0.01 {
            // It acts the other way: it cannot be why.
            self.claim = Claim::RuledOut;
            self.evidence.push(format!(
                "it predicts B/A {predicted:.3}, the opposite of the measured {measured:.3}"
            ));
        }
        self
    }
}

impl Explanation {
    /// A cause that accounts for only part of a row, with a predicted change smaller than the
    /// drift a real difference must exceed there, cannot be told from drift: it is ruled out
    /// for the row, its figure kept in the evidence. (A hog that slowed a ping-pong 1.9x
    /// while the measured clock moved 3% is not "partly" a clock change.)
    pub fn unless_below_drift(mut self, drift: f64) -> Explanation {
        let Some(p) = self.predicted else {
            return self;
        };
        if matches!(self.claim, Claim::Partly | Claim::Contributes) && p.ln().abs() < drift.ln_1p()
        {
            self.claim = Claim::RuledOut;
            self.remains = None;
            self.evidence.push(format!(
                "it predicts B/A {p:.3}, a change smaller than the {:.0}% drift a real difference must exceed here",
                drift * 100.0
            ));
        }
        self
    }
}

/// Whether a measured cause claims the row: it explains all or part of it, or contributes.
pub fn claimed(explanations: &[Explanation]) -> bool {
    explanations.iter().any(|e| {
        matches!(
            e.claim,
            Claim::Explains | Claim::Partly | Claim::Contributes
        )
    })
}

/// Whether a residual is within MATCH of 1.
pub fn matches_within(residual: f64) -> bool {
    residual.ln().abs() <= MATCH.ln()
}

/// Standard errors within which what a cause holds equal leaves the two runs alike.
pub const ALIKE_Z: f64 = 1.96;

/// The mean of some log figures.
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The variance of the mean of some log figures (their spread over √n, squared).
pub fn var_of_mean(v: &[f64]) -> f64 {
    let m = mean(v);
    let n = v.len() as f64;
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0) / n
}

/// A cause that holds part of the rounds equal (`round-modes`, `run-shift`): `measured`
/// and `held` are B's log level less A's with all rounds and with the held-equal ones,
/// `se` the held difference's standard error, `words` it in words ("within the modes,
/// B/A is 0.985"). Within [`ALIKE_Z`] standard errors the cause **explains** the call; the
/// same direction and smaller, **partly**; otherwise it is **ruled out**.
pub fn holding_equal(
    cause: &str,
    because: String,
    measured: f64,
    held: f64,
    se: f64,
    words: String,
) -> Explanation {
    let claim = if held.abs() <= ALIKE_Z * se {
        Claim::Explains
    } else if held.signum() == measured.signum() && held.abs() < measured.abs() {
        Claim::Partly
    } else {
        Claim::RuledOut
    };
    let mut e = Explanation::new(cause, claim, because);
    e.predicted = Some((measured - held).exp());
    e.residual = Some(held.exp());
    match claim {
        Claim::Explains => {
            e.held_equal = Some(format!(
                "{words}, within their rounds' noise ({:.1}%)",
                (ALIKE_Z * se).exp_m1() * 100.0
            ))
        }
        Claim::Partly => e.remains = Some(format!("{words}: more than their rounds' noise")),
        _ => e.held_equal = Some(words),
    }
    e
}

/// Everything a cause may look at for one row: both runs, both results, the judged
/// difference, and the drift used.
pub struct RowCtx<'a> {
    pub a: &'a RunDocument,
    pub b: &'a RunDocument,
    pub ra: &'a BenchResult,
    pub rb: &'a BenchResult,
    pub judged: Judged,
    /// The drift fraction used for this row (also for its siblings).
    pub drift: f64,
    /// What causes work out once per comparison rather than once per row.
    pub shared: &'a Shared,
}

/// What causes work out once per comparison, not once per row (a comparison may hold
/// thousands of rows, and a search of every row for each is quadratic).
#[derive(Debug, Default)]
pub struct Shared {
    /// The timer's control rows (`timer::controls`) per `path_changed` (false, true): A's
    /// and B's results of each, by index, with the B/A ratio of their medians.
    pub clock_controls: [std::cell::OnceCell<Vec<(usize, usize, f64)>>; 2],
}

impl RowCtx<'_> {
    /// The row's B/A ratio.
    pub fn ratio(&self) -> f64 {
        self.judged.ratio
    }

    /// The host both runs were measured on, when both documents name one and it is the same
    /// (the run's `host`, else its probe's hostname: documents of earlier versions). Causes
    /// that rest on what one host did between two runs (its share of the L3, where it put the
    /// virtual CPUs) speak only then: between two hosts the machines themselves differ.
    pub fn one_host(&self) -> Option<&str> {
        let a = host_of(self.a)?;
        (host_of(self.b) == Some(a)).then_some(a)
    }

    /// Which side did worse, as "A" or "B".
    pub fn worse_side(&self) -> &'static str {
        if crate::compare::stats::verdict::speedup(self.ratio(), self.ra.lower_is_better) < 1.0 {
            "B"
        } else {
            "A"
        }
    }
}

/// The host a run names: its `host`, else its probe's hostname.
fn host_of(d: &RunDocument) -> Option<&str> {
    d.host.as_deref().or(d.env.hostname.as_deref())
}

/// A row's verdict on its explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Explained,
    #[serde(rename = "partly explained")]
    Partly,
    Unexplained,
    /// No real difference (or drift, or not comparable): nothing to explain.
    #[serde(rename = "nothing to explain")]
    Nothing,
    /// The row cannot be told, and a setting or condition that differs between the runs
    /// would account for its figures: the causes are offered, not a verdict.
    #[serde(rename = "offered")]
    Offered,
}

impl Status {
    pub fn text(self) -> &'static str {
        match self {
            Status::Explained => "explained",
            Status::Partly => "partly explained",
            Status::Unexplained => "unexplained",
            Status::Nothing => "nothing to explain",
            Status::Offered => "cannot tell; what differs would explain it",
        }
    }
}

/// The row's status from its explanations, and what remains when partly explained.
pub fn status(verdict: Verdict, explanations: &[Explanation]) -> (Status, Option<String>) {
    if !verdict.is_real() {
        return (Status::Nothing, None);
    }
    if explanations.iter().any(|e| e.claim == Claim::Explains) {
        return (Status::Explained, None);
    }
    if let Some(e) = explanations.iter().find(|e| e.claim == Claim::Partly) {
        return (
            Status::Partly,
            e.remains
                .clone()
                .or_else(|| Some(format!("beyond {}", e.cause))),
        );
    }
    (Status::Unexplained, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up cause: the drift rule is the same for every cause.
    const CAUSE: &str = "test-cause";

    #[test]
    fn a_partial_cause_smaller_than_the_drift_is_ruled_out_and_a_larger_one_kept() {
        let small = Explanation::new(CAUSE, Claim::Contributes, "clock").predict(1.033, 1.911);
        assert_eq!(small.claim, Claim::Partly);
        let small = small.unless_below_drift(0.05);
        assert_eq!(small.claim, Claim::RuledOut, "{small:?}");
        assert!(small.remains.is_none());
        assert!(small.evidence[0].contains("1.033"), "{small:?}");
        // Above the drift it stays partly; one that explains stays, however small.
        let big = Explanation::new(CAUSE, Claim::Contributes, "clock").predict(1.2, 1.911);
        assert_eq!(big.unless_below_drift(0.05).claim, Claim::Partly);
        let whole = Explanation::new(CAUSE, Claim::Contributes, "clock").predict(1.04, 1.06);
        assert_eq!(whole.unless_below_drift(0.05).claim, Claim::Explains);
    }
}
