//! A `truebench record` recording: the command it followed and how it ended, its span and
//! the recorder's own cost, the cost per unit of work and the correlations with the work
//! rate, what could not be read; charted as CPU use and rates over time.

use super::View;
use crate::report::svg::{Chart, LineChart};
use crate::report::units::num;
use crate::result::{Recording, RunDocument};

pub struct Record;

/// The recording in a few lines (the first names its span and the recorder's cost).
pub fn lines(rec: &Recording) -> Vec<String> {
    let mut s = vec![format!(
        "Recording: {} intervals of {} s over {:.1} s; {}",
        rec.rows.len(),
        rec.interval_s,
        rec.duration_s,
        match rec.recorder_cpu_share {
            Some(s) => format!("the recorder used {:.2}% of one CPU", s * 100.0),
            None => "too short to state the recorder's CPU share".into(),
        }
    )];
    if let Some(t) = &rec.target {
        s.push(match &t.command {
            Some(c) => format!(
                "  command: {c} (pid {}), {}",
                t.pid,
                match (t.exit_status, t.exit_signal, t.stopped_by_truebench) {
                    (_, _, Some(true)) => "stopped by truebench when the recording ended".into(),
                    (Some(code), _, _) => format!("exit status {code}"),
                    (None, Some(sig), _) => format!("killed by signal {sig}"),
                    _ => "still running when the recording ended (no exit status)".into(),
                }
            ),
            None => format!("  process: pid {} (attached with --pid)", t.pid),
        });
    }
    let sum = &rec.summary;
    if let Some(units) = sum.units {
        s.push(format!("  work done: {units:.0} units"));
        for (k, v) in &sum.per_unit {
            s.push(format!("  per unit of work: {k} {}", num(*v)));
        }
        for (k, v) in &sum.correlation_with_metric {
            s.push(format!("  correlation with the work rate: {k} {v:+.2}"));
        }
    }
    if let Some(last) = rec.rows.last() {
        let busy = |r: &crate::observe::recorder::Row| {
            100.0 - r.cpus.iter().map(|c| c.idle).sum::<f64>() / r.cpus.len().max(1) as f64
        };
        let mean = rec.rows.iter().map(busy).sum::<f64>() / rec.rows.len() as f64;
        s.push(format!(
            "  CPUs busy {mean:.1}% on average; {} context switches/s in the last interval",
            num(last.ctxt_per_s)
        ));
    }
    for (k, v) in &rec.unavailable {
        s.push(format!("  not available: {k}: {v}"));
    }
    s
}

impl View for Record {
    fn title(&self) -> &'static str {
        "Recording"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        doc.recording.is_some()
    }

    fn summary(&self, doc: &RunDocument) -> String {
        self.headline(doc).iter().map(|l| super::wrap(l)).collect()
    }

    fn headline(&self, doc: &RunDocument) -> Vec<String> {
        doc.recording.as_ref().map(lines).unwrap_or_default()
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let Some(rec) = &doc.recording else {
            return vec![];
        };
        let rows = &rec.rows;
        let busy = rows
            .iter()
            .map(|r| {
                let idle = r.cpus.iter().map(|c| c.idle).sum::<f64>() / r.cpus.len().max(1) as f64;
                (r.t_s, 100.0 - idle)
            })
            .collect();
        let target = rows
            .iter()
            .filter_map(|r| Some((r.t_s, r.target.as_ref()?.cpu_pct)))
            .collect();
        let cpu = LineChart::new("Recording: CPU use", "seconds", "%")
            .series("all CPUs busy %", busy)
            .series_if_any("target CPU % of one CPU", target);
        let switches = rows.iter().map(|r| (r.t_s, r.ctxt_per_s)).collect();
        let syscalls = rows
            .iter()
            .filter_map(|r| {
                Some((
                    r.t_s,
                    *r.target
                        .as_ref()?
                        .events_per_s
                        .get(crate::result::figures::SYSCALLS)?,
                ))
            })
            .collect();
        let work = rows
            .iter()
            .filter_map(|r| Some((r.t_s, r.metric_per_s?)))
            .collect();
        let rates = LineChart::new(
            "Recording: switches, system calls and work rate",
            "seconds",
            "per second",
        )
        .series("context switches/s", switches)
        .series_if_any("target system calls/s", syscalls)
        .series_if_any("work units/s", work);
        vec![Chart::Lines(cpu), Chart::Lines(rates)]
    }
}
