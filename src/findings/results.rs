//! Rules over a single result: a timer that eats the measurement, samples too spread to
//! trust.

use super::{Finding, Severity};
use crate::result::BenchResult;

/// A result whose timer share exceeds this is timer-bound.
pub const TIMER_BOUND_SHARE: f64 = 0.01;
/// A result whose CV exceeds this is flagged as noisy.
pub const NOISY_CV: f64 = 0.10;

/// The ids `annotate` judges from the samples: a result whose samples change (rounds
/// pooled) has them judged again.
pub const SAMPLE_FINDINGS: &[&str] = &["timer-bound", "high-variation"];

/// `disturbed-rounds`: which rounds of `r` were disturbed and by what; None when none was.
/// A warning when fewer than two rounds are left (the result then has no round noise).
pub fn disturbed_rounds(r: &BenchResult) -> Option<Finding> {
    let rounds = r.rounds.as_ref()?;
    let n = rounds.disturbed();
    if n == 0 {
        return None;
    }
    let kept = rounds.kept();
    let causes: Vec<String> = rounds
        .causes()
        .iter()
        .map(|(c, k)| format!("{k} {}", c.text()))
        .collect();
    let severity = if kept >= 2 {
        Severity::Info
    } else {
        Severity::Warning
    };
    let left = if kept == 0 {
        "every round was disturbed, so the figures rest on all of them, disturbance included"
            .to_string()
    } else if kept == 1 {
        "one round was undisturbed, too few to read a spread, so the figures rest on every round, disturbance included".to_string()
    } else {
        format!("kept out of the figures, which rest on the other {kept}")
    };
    Some(Finding::new(
        "disturbed-rounds",
        severity,
        format!(
            "{n} of {} {} disturbed ({}): {left}.",
            crate::units::count(rounds.rounds.len(), "round"),
            if n == 1 { "was" } else { "were" },
            causes.join(", ")
        ),
        crate::result::rounds::disturbed_evidence(&rounds.rounds),
    ))
}

/// Attach the result rules' findings to `r`.
pub fn annotate(r: &mut BenchResult) {
    if r.quality.timer_share > TIMER_BOUND_SHARE {
        r.findings.push(Finding::new(
            "timer-bound",
            Severity::Warning,
            format!(
                "Reading the clock is {:.2}% of the measured time: the result measures the timer as much as the work.",
                r.quality.timer_share * 100.0
            ),
            vec![format!(
                "clock read {:.1} ns, batch {:.0} ns of {} iterations",
                r.quality.clock_cost_ns, r.quality.batch_ns, r.quality.batch_iterations
            )],
        ));
    }
    if r.stats.cv > NOISY_CV {
        r.findings.push(Finding::new(
            "high-variation",
            Severity::Info,
            format!(
                "Samples vary by {:.0}% (CV): compare medians with their confidence intervals, not single figures.",
                r.stats.cv * 100.0
            ),
            vec![format!(
                "n={}, min {:.3}, median {:.3}, max {:.3} {}",
                r.stats.n, r.stats.min, r.stats.median, r.stats.max, r.unit
            )],
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::result;
    use serde_json::json;

    fn ids(r: &BenchResult) -> Vec<&str> {
        r.findings.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn timer_bound_above_one_percent_only() {
        let mut r = result("x.y@1", "os", None, json!({}), 1000.0);
        r.quality.timer_share = 0.009;
        annotate(&mut r);
        assert!(!ids(&r).contains(&"timer-bound"));
        let mut r = result("x.y@1", "os", None, json!({}), 1000.0);
        r.quality.timer_share = 0.55;
        annotate(&mut r);
        let f = r.findings.iter().find(|f| f.id == "timer-bound").unwrap();
        assert!(f.message.contains("55.00%"), "{}", f.message);
    }

    #[test]
    fn high_variation_cites_the_spread() {
        let mut r = result("x.y@1", "os", None, json!({}), 10.0); // samples 5.5..14.5
        annotate(&mut r);
        let f = r
            .findings
            .iter()
            .find(|f| f.id == "high-variation")
            .unwrap();
        assert!(f.evidence[0].contains("min 5.500"), "{:?}", f.evidence);
    }
}
