//! Rules over a `truebench loadstep` experiment: a capacity policy whose quota throttled
//! the service (`throttled`).

use crate::finding::{Finding, Severity};
use crate::loadstep::experiment::VariantResult;
use crate::units::num;

/// One `throttled` finding per capacity variant in which a step was throttled.
pub fn throttled(variants: &[VariantResult], step_duration_s: f64) -> Vec<Finding> {
    let mut out = Vec::new();
    for v in variants {
        let hit: Vec<String> = v
            .steps
            .iter()
            .filter(|s| s.throttled_periods.is_some_and(|n| n > 0))
            .map(|s| {
                format!(
                    "{}/s: {} quota periods throttled, {} ms throttled over {} s",
                    num(s.planned_rate),
                    s.throttled_periods.unwrap_or(0),
                    num(s.throttled_ms.unwrap_or(0.0)),
                    step_duration_s
                )
            })
            .collect();
        if let (Some(c), false) = (&v.capacity, hit.is_empty()) {
            out.push(Finding::new(
                "throttled",
                Severity::Warning,
                format!(
                    "Under a quota of {} CPUs on {}, the service was throttled: its latency includes waiting for the next quota period ({}), not only for a CPU.",
                    c.quota,
                    crate::units::count(c.width, "CPU"),
                    crate::loadstep::capacity::period_words(c.period_us)
                ),
                hit,
            ));
        }
    }
    out
}
