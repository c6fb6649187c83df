//! Rules over a single result: a timer that eats the measurement, samples too spread to
//! trust.

use super::{Finding, Severity};
use crate::result::BenchResult;

/// A result whose timer share exceeds this is timer-bound.
pub const TIMER_BOUND_SHARE: f64 = 0.01;
/// A result whose CV exceeds this is flagged as noisy.
pub const NOISY_CV: f64 = 0.10;

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
