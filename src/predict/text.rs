//! The text form of a prediction: what it rests on, one line per capacity setting (rate,
//! interval, what bounds it, the measured figure where a run measured that setting), the
//! setting needed for a target rate, and, when the runs cannot support a figure, why.

use super::{Estimate, Prediction};
use crate::units::num;

fn est(e: &Estimate, unit: &str) -> String {
    match e.interval {
        Some([a, b]) => format!(
            "{} {unit} (95% interval {}–{} {unit})",
            num(e.value),
            num(a),
            num(b)
        ),
        None => format!("{} {unit}", num(e.value)),
    }
}

fn rate(v: f64) -> String {
    format!("{}/s", num(v))
}

/// The prediction as text lines (each wrapped to the house width).
pub fn render(p: &Prediction) -> String {
    let mut out = String::new();
    let mut line = |s: String| out.push_str(&crate::report::views::wrap(&s));
    line(format!(
        "Prediction from {} {}{}: the highest rate held at a p99 of at most {} µs ({} ms)",
        crate::units::noun(p.runs.len(), "run"),
        p.runs.join(", "),
        match (&p.workload, p.service_us) {
            (Some(w), Some(s)) => format!(
                " ({w}, {} µs of service, {} {})",
                num(s),
                p.workers
                    .iter()
                    .map(|w| w.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                // One count of one worker reads "1 worker"; "2" or "1,2,4" the plural.
                crate::units::noun(if p.workers == [1] { 1 } else { 2 }, "worker")
            ),
            _ => String::new(),
        },
        num(p.p99_target_us),
        num(p.p99_target_us / 1e3)
    ));
    if !p.supported {
        line(format!(
            "No prediction: {}",
            p.why_not
                .as_deref()
                .unwrap_or("the runs cannot support one")
        ));
        return out;
    }
    if let Some(i) = &p.inputs {
        line(format!(
            "  CPU cost per message: {} over {}; utilisation-law efficiency {} ({}){}",
            est(&i.cost_us, "CPU-µs"),
            crate::units::count(i.cost_steps, "step"),
            est(&i.efficiency, ""),
            crate::units::count(i.saturated_steps, "saturated step"),
            if i.saturated_steps == 0 {
                " (no step saturated: assumed 1)"
            } else {
                ""
            }
        ));
        line(format!(
            "  Latency: M/M/c time × {} (fitted to the measured p99s, quota throttling included); load generator {} CPU per 1000 messages/s (+{} CPU); highest step at {:.0}% of its ceiling",
            est(&i.latency_factor, ""),
            num(i.generator_cpus_per_1000_per_s),
            num(i.generator_cpus_at_0),
            i.highest_step_share_of_ceiling * 100.0
        ));
        line(format!(
            "  Contention across CPUs: {}; machine {} usable CPUs; CFS period {} ms",
            i.contention_source,
            i.machine_cpus,
            num(i.period_ms)
        ));
    }
    for s in &p.settings {
        let measured = match (s.measured, s.measured_max_rate) {
            (true, Some(m)) => format!("; measured: {} held", rate(m)),
            (true, None) => "; measured: no step held the target".to_string(),
            _ => String::new(),
        };
        match (s.max_rate, &s.why_not) {
            (Some(r), _) => line(format!(
                "{}: {} messages/s{}; ceiling {}; bound by {}{measured}",
                s.capacity,
                num(r),
                s.interval
                    .map(|[a, b]| format!(" (95% interval {}–{})", rate(a), rate(b)))
                    .unwrap_or_else(|| " (no interval: too few steps to resample)".into()),
                s.ceiling.map(rate).unwrap_or_else(|| "-".into()),
                s.limited_by.map(|l| l.words()).unwrap_or("-"),
            )),
            (None, why) => line(format!(
                "{}: no prediction: {}{measured}",
                s.capacity,
                why.as_deref().unwrap_or("")
            )),
        }
        if s.max_rate.is_some() {
            line(format!("    model: {}", s.model));
        }
    }
    if let Some(n) = &p.needed {
        match (&n.capacity, &n.why_not) {
            (Some(c), _) => {
                line(format!(
                    "Needed for {} at a p99 of at most {} µs: {c} (quota CPUs / cpuset CPUs){}",
                    rate(n.rate),
                    num(p.p99_target_us),
                    n.interval
                        .map(|[a, b]| format!(
                            "; quota needed at width {}: 95% interval {}–{} CPUs",
                            n.width.unwrap_or(0),
                            num(a),
                            num(b)
                        ))
                        .unwrap_or_default()
                ));
                line(format!("    model: {}", n.model));
            }
            (None, why) => line(format!(
                "Needed for {}: no setting: {}",
                rate(n.rate),
                why.as_deref().unwrap_or("")
            )),
        }
    }
    out
}
