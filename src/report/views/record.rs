//! A `truebench record` recording: the command it followed and how it ended, its span and
//! the recorder's own cost, the cost per unit of work and the correlations with the work
//! rate, the NUMA view (each thread's home node and spread, memory per node by kind,
//! balancing counters), what could not be read; charted as CPU use and rates over time.

use super::View;
use crate::observe::numa::{CrossBasis, NumaView, RunShare};
use crate::observe::vmstat;
use crate::report::svg::{Chart, LineChart};
use crate::result::{Recording, RunDocument};
use crate::units::{bytes, num};
use std::collections::BTreeMap;

pub struct Record;

/// The recording in a few lines (the first names its span and the recorder's cost), with
/// up to `threads` threads of the NUMA view.
pub fn lines(rec: &Recording, threads: usize) -> Vec<String> {
    let mut s = vec![format!(
        "Recording: {} of {} s over {:.1} s; {}",
        crate::units::count(rec.rows.len(), "interval"),
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
                "  command: {} (pid {}), {}",
                crate::stdout::field(c),
                t.pid,
                match (t.exit_status, t.exit_signal, t.stopped_by_truebench) {
                    (_, _, Some(true)) => "stopped by truebench when the recording ended".into(),
                    (Some(code), _, _) => format!("exit status {code}"),
                    (None, Some(sig), _) => crate::policy::launch::killed_by(sig),
                    _ => "still running when the recording ended (no exit status)".into(),
                } + &t
                    .oom_kills
                    .as_ref()
                    .map(|k| format!(": {}", k.words()))
                    .unwrap_or_default()
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
    if let Some(v) = &rec.numa {
        s.extend(numa_lines(v, threads));
    }
    let mut events: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &rec.rows {
        for (k, n) in &r.numa_events {
            *events.entry(k).or_default() += n;
        }
    }
    let shown: Vec<String> = events
        .iter()
        .filter(|(k, n)| **n > 0 || vmstat::EXPECTED.iter().any(|(e, _)| e == *k))
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if !shown.is_empty() {
        s.push(format!(
            "  NUMA counters over the recording (events, /proc/vmstat): {}",
            shown.join(", ")
        ));
    }
    for (k, v) in &rec.unavailable {
        s.push(format!("  not available: {k}: {v}"));
    }
    s
}

/// A name any process may set (prctl PR_SET_NAME) with its control characters shown
/// escaped (`crate::stdout::field`), which would otherwise reach the terminal.
fn printable(name: &str) -> String {
    crate::stdout::field(name).into_owned()
}

/// Threads a summary lists by name; the rest are counted (the full view lists all).
const LISTED_THREADS: usize = 8;

/// The NUMA view: nodes and balancing, memory per node by kind, up to `listed` threads' homes.
fn numa_lines(v: &NumaView, listed: usize) -> Vec<String> {
    let mut s = vec![format!(
        "  NUMA: {}, {}; automatic balancing {}",
        crate::units::count(v.nodes, "node"),
        crate::units::count(v.llc_groups, "LLC group"),
        match v.balancing {
            Some(0) => "off (kernel.numa_balancing 0)".to_string(),
            Some(n) => format!("on (kernel.numa_balancing {n})"),
            None => "not in this kernel".to_string(),
        }
    )];
    if let Some(m) = &v.memory {
        s.push(format!(
            "  memory of pid {} per node (numa_maps at {:.1} s, {}{}):",
            m.pid,
            m.read_at_s,
            crate::units::count(m.mappings, "mapping"),
            match m.skipped_lines {
                0 => String::new(),
                n => format!(", {} left out", crate::units::count(n, "unreadable line")),
            }
        ));
        for n in &m.nodes {
            let huge = match n.hugetlb_bytes {
                0 => String::new(),
                b => format!(" (of which hugetlb {})", bytes(b)),
            };
            s.push(format!(
                "    node {}: {} = heap {}, stack {}, anonymous {}, file {}{huge}",
                n.node,
                bytes(n.total_bytes()),
                bytes(n.heap_bytes),
                bytes(n.stack_bytes),
                bytes(n.anon_bytes),
                bytes(n.file_bytes),
            ));
        }
    }
    let share = |v: &[RunShare], what: &str| {
        v.iter()
            .map(|r| match what {
                "node" => format!("node {} {:.0}%", r.id, r.share * 100.0),
                _ => format!("CPUs {} {:.0}%", r.cpus, r.share * 100.0),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let basis = |b: CrossBasis| match b {
        CrossBasis::Counted => "exact",
        CrossBasis::Sampled => "at least, sampled",
    };
    for t in v.threads.iter().take(listed) {
        let home = match t.home_node {
            Some(h) => format!("home node {h}"),
            None => "did not run".to_string(),
        };
        s.push(format!(
            "  thread {} ({}): {home}, {:.0} ms run; run time on [{}]; LLC groups [{}]; migrations {}, cross-node {} ({}), cross-LLC {} ({})",
            t.tid,
            printable(&t.name),
            t.run_ms,
            share(&t.nodes, "node"),
            share(&t.llc_groups, "llc"),
            t.migrations.map_or_else(|| "not counted".to_string(), |m| m.to_string()),
            t.cross_node_migrations,
            basis(t.cross_node_basis),
            t.cross_llc_migrations,
            basis(t.cross_llc_basis),
        ));
    }
    if v.threads.len() > listed {
        s.push(format!(
            "  and {} more {} (`show --all` and the document list them all)",
            v.threads.len() - listed,
            crate::units::noun(v.threads.len() - listed, "thread")
        ));
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
        doc.recording
            .as_ref()
            .map(|r| lines(r, LISTED_THREADS))
            .unwrap_or_default()
    }

    /// The same lines with every thread of the NUMA view.
    fn full(&self, doc: &RunDocument) -> String {
        let Some(rec) = &doc.recording else {
            return String::new();
        };
        let body: String = lines(rec, usize::MAX)
            .iter()
            .map(|l| super::wrap(l))
            .collect();
        format!("\n{body}")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::numa::ThreadPlacement;

    #[test]
    fn a_thread_named_with_escape_sequences_prints_without_them() {
        let v = NumaView {
            nodes: 1,
            llc_groups: 1,
            balancing: None,
            threads: vec![ThreadPlacement {
                tid: 9,
                name: "evil\x1b[2J\n".into(),
                samples: 2,
                run_ms: 0.0,
                home_node: None,
                nodes: vec![],
                llc_groups: vec![],
                migrations: None,
                cross_node_migrations: 0,
                cross_node_basis: CrossBasis::Counted,
                cross_llc_migrations: 0,
                cross_llc_basis: CrossBasis::Sampled,
            }],
            memory: None,
        };
        let lines = numa_lines(&v, LISTED_THREADS);
        assert!(
            lines.iter().all(|l| !l.chars().any(char::is_control)),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("thread 9 (evil\\u001b[2J\\u000a): did not run"),
            "{lines:?}"
        );
        assert!(lines[1].contains("migrations not counted"), "{lines:?}");
        assert!(lines[0].contains("not in this kernel"), "{lines:?}");
    }
}
