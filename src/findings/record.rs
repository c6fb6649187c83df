//! Rules over a `truebench record` recording: the recorder's own cost
//! (`recorder-overhead`).

use super::{Finding, Severity};

/// The recorder used more than 1% of one CPU over the recording.
pub fn recorder_overhead(own_cpu_s: f64, wall_s: f64, share: Option<f64>) -> Option<Finding> {
    // No share when the recording was too short to resolve it in clock ticks.
    let share = share?;
    (share > 0.01).then(|| {
        Finding::new(
            "recorder-overhead",
            Severity::Warning,
            format!(
                "The recorder itself used {:.2}% of one CPU: lengthen --interval.",
                share * 100.0
            ),
            vec![format!("{own_cpu_s:.3} CPU-s over {wall_s:.1} s")],
        )
    })
}
