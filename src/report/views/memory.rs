//! The memory suite: bandwidth per kernel and thread count, the measured levels (the
//! plateaus of the latency curves, labelled cache, TLB step or page walks, beside the cache
//! sizes the OS reports), the NUMA cells as node x node tables, and the per-event
//! timing artefact beside batch timing.

use super::{bar, narrow_table, with_params, wrap, View};
use crate::bench::memory::bandwidth::BandwidthParams as Bandwidth;
use crate::bench::memory::latency;
use crate::bench::memory::latency::LatencyParams as Latency;
use crate::bench::memory::numa::NumaParams as NumaCell;
use crate::bench::memory::per_event::PerEventParams as PerEvent;
use crate::measure::hierarchy::{Hierarchy, Kind};
use crate::report::svg::{Chart, LineChart};
use crate::result::{BenchResult, RunDocument};
use crate::units::{bytes, duration_ns, mb_per_s, num};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

pub struct Memory;

/// The latency curve of one page size: (working set, ns per load), by size.
fn curve(doc: &RunDocument, pages: &str) -> Vec<(u64, f64)> {
    let mut c: Vec<(u64, f64)> = with_params::<Latency>(doc, "memory.latency")
        .into_iter()
        .filter(|(_, p)| p.pages == pages)
        .map(|(r, p)| (p.size_bytes, r.stats.median))
        .collect();
    c.sort_by_key(|p| p.0);
    c
}

/// The measured hierarchy (levels labelled cache, TLB step, page walks, memory).
fn hierarchy(doc: &RunDocument) -> Option<Hierarchy> {
    latency::of_results(&doc.results)
}

fn bandwidth_table(doc: &RunDocument) -> Option<String> {
    let rs = with_params::<Bandwidth>(doc, "memory.bandwidth");
    if rs.is_empty() {
        return None;
    }
    let all: BTreeSet<u64> = rs.iter().map(|(_, p)| p.threads).collect();
    let all: Vec<u64> = all.into_iter().collect();
    // At most six thread counts fit: the first, the last and evenly between.
    let threads: Vec<u64> = if all.len() <= 6 {
        all
    } else {
        (0..6).map(|i| all[i * (all.len() - 1) / 5]).collect()
    };
    let mut best: BTreeMap<(String, String, u64), f64> = BTreeMap::new();
    let mut kernels: Vec<(String, String)> = Vec::new();
    let mut places: BTreeSet<&str> = BTreeSet::new();
    for (r, p) in &rs {
        places.insert(r.placement.name.as_str());
        let k = (p.kernel.clone(), p.stores.clone());
        if !kernels.contains(&k) {
            kernels.push(k);
        }
        let e = best
            .entry((p.kernel.clone(), p.stores.clone(), p.threads))
            .or_insert(0.0);
        *e = e.max(r.stats.median);
    }
    let mut header = vec!["kernel".to_string(), "stores".to_string()];
    header.extend(threads.iter().map(|t| crate::units::count(*t, "thread")));
    let mut t = narrow_table(&header.iter().map(String::as_str).collect::<Vec<_>>());
    for (k, s) in kernels {
        let mut row = vec![k.clone(), s.clone()];
        row.extend(threads.iter().map(|n| {
            best.get(&(k.clone(), s.clone(), *n))
                .map(|v| mb_per_s(*v))
                .unwrap_or_else(|| "-".into())
        }));
        t.add_row(row);
    }
    Some(format!(
        "Memory bandwidth (median, best of placements {}; 1 MB/s = 10^6 B/s, STREAM counting):\n{t}\n",
        places.into_iter().collect::<Vec<_>>().join(", ")
    ))
}

fn levels_text(doc: &RunDocument) -> Option<String> {
    let h = hierarchy(doc)?;
    let cpu = with_params::<Latency>(doc, "memory.latency")
        .first()
        .and_then(|(r, _)| r.placement.cpus.as_ref()?.first().copied())
        .unwrap_or(0);
    let (_, reported) = crate::bench::memory::latency::reported_caches(&doc.env, cpu);
    let mut s = format!(
        "Measured levels (plateaus of ns per dependent load)\n  the OS reports: {}\n",
        if reported.is_empty() {
            "nothing".to_string()
        } else {
            reported.join(", ")
        }
    );
    for c in &h.curves {
        let _ = writeln!(s, "  {} pages:", c.pages);
        for (i, l) in c.levels.iter().enumerate() {
            let p = &l.plateau;
            let what = if l.kind == Kind::Memory {
                "memory".to_string()
            } else {
                format!("level {}", i + 1)
            };
            let upto = match l.kind {
                Kind::Memory => format!("from {}", bytes(p.from_bytes)),
                _ => format!("up to {}", bytes(p.up_to_bytes)),
            };
            let _ = writeln!(
                s,
                "    {what:<8} {upto:<26} {} per load  {}",
                duration_ns(p.latency_ns),
                l.kind.short()
            );
        }
    }
    if let Some(l) = &h.llc {
        let _ = writeln!(
            s,
            "  The last cache ends between {} and {} ({} pages).",
            bytes(l.up_to_bytes),
            bytes(l.next_bytes),
            l.pages
        );
    }
    Some(s)
}

fn per_event_text(doc: &RunDocument) -> Option<String> {
    let rs = with_params::<PerEvent>(doc, "memory.per-event");
    let mut s = String::new();
    let mut sources: Vec<Option<String>> = rs.iter().map(|(_, p)| p.clocksource.clone()).collect();
    sources.dedup();
    for cs in sources {
        let find = |t: &str| {
            rs.iter()
                .find(|(_, p)| p.timing == t && p.clocksource == cs)
                .map(|(r, _)| r.stats.median)
        };
        if let (Some(pe), Some(b)) = (find("per-event"), find("batch")) {
            s.push_str(&wrap(&format!(
                "1 KiB writes timed per event (sysbench method){}: {} vs timed as a batch: {} ({:.0}% of it)",
                cs.map(|c| format!(" under {c}")).unwrap_or_default(),
                mb_per_s(pe),
                mb_per_s(b),
                pe / b * 100.0
            )));
        }
    }
    (!s.is_empty()).then_some(s)
}

/// The memory.numa cells as node x node tables beside the firmware distances, with each
/// row's remote/local ratio; None with fewer than two memory nodes.
fn numa_tables(doc: &RunDocument, narrow: bool) -> Option<String> {
    let rs = with_params::<NumaCell>(doc, "memory.numa");
    let mems: BTreeSet<u64> = rs.iter().map(|(_, p)| p.mem_node).collect();
    if mems.len() < 2 {
        return None;
    }
    let mut s = String::new();
    for (metric, unit) in [("latency", "ns/load"), ("read-bandwidth", "MB/s")] {
        let cells: BTreeMap<(u64, u64), (&BenchResult, Option<u64>)> = rs
            .iter()
            .filter(|(_, p)| p.metric == metric)
            .map(|(r, p)| ((p.cpu_node, p.mem_node), (*r, p.distance)))
            .collect();
        let rows: BTreeSet<u64> = cells.keys().map(|k| k.0).collect();
        let mut header = vec!["CPUs on \\ memory on".to_string()];
        header.extend(mems.iter().map(|m| format!("node {m}")));
        header.push("remote / local".into());
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = if narrow {
            narrow_table(&header)
        } else {
            crate::report::table(&header)
        };
        for row in rows {
            let local = cells.get(&(row, row)).map(|c| c.0.stats.median);
            let mut line = vec![format!("node {row}")];
            let mut remote = Vec::new();
            for m in &mems {
                line.push(match cells.get(&(row, *m)) {
                    Some((r, d)) => {
                        if *m != row {
                            remote.push(r.stats.median);
                        }
                        format!(
                            "{} (distance {})",
                            num(r.stats.median),
                            d.map(|d| d.to_string()).unwrap_or_else(|| "?".into())
                        )
                    }
                    None => "-".into(),
                });
            }
            let worst = if metric == "latency" {
                remote.iter().cloned().fold(f64::MIN, f64::max)
            } else {
                remote.iter().cloned().fold(f64::MAX, f64::min)
            };
            line.push(match local {
                Some(l) if !remote.is_empty() => format!("{:.2}x", worst / l),
                _ => String::new(),
            });
            t.add_row(line);
        }
        let _ = writeln!(s, "NUMA {metric} ({unit}), median per cell:\n{t}");
    }
    Some(s)
}

impl View for Memory {
    fn title(&self) -> &'static str {
        "Memory"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        doc.results
            .iter()
            .any(|r| r.base_id().starts_with("memory."))
    }

    fn summary(&self, doc: &RunDocument) -> String {
        [
            bandwidth_table(doc),
            levels_text(doc),
            numa_tables(doc, true),
            per_event_text(doc),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("")
    }

    fn full(&self, doc: &RunDocument) -> String {
        [levels_text(doc), numa_tables(doc, false)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("")
    }

    fn headline(&self, doc: &RunDocument) -> Vec<String> {
        [levels_text(doc), per_event_text(doc)]
            .into_iter()
            .flatten()
            .flat_map(|s| s.lines().map(str::to_string).collect::<Vec<_>>())
            .collect()
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let mut out = Vec::new();
        let mut lat = LineChart::new(
            "Load latency by working set (levels marked)",
            "working set, bytes (log)",
            "ns per load (log)",
        )
        .log(true, true)
        .bytes_axis();
        for pages in ["4k", "thp"] {
            let c = curve(doc, pages);
            lat = lat.series_if_any(
                format!("{pages} pages"),
                c.iter().map(|(s, v)| (*s as f64, *v)).collect(),
            );
        }
        // The steps of the curve that judged the LLC (the huge-page one when measured).
        if let Some(c) = hierarchy(doc).and_then(|h| h.curves.last().cloned()) {
            lat = lat.marks(
                c.levels
                    .iter()
                    .filter(|l| l.kind != Kind::Memory)
                    .map(|l| {
                        let b = l.plateau.up_to_bytes;
                        let what = match l.kind {
                            Kind::Cache => String::new(),
                            _ => format!(" ({})", l.kind.short()),
                        };
                        (b as f64, format!("{}{what}", bytes(b)))
                    })
                    .collect(),
            );
        }
        out.push(Chart::Lines(lat));
        let bw = with_params::<Bandwidth>(doc, "memory.bandwidth")
            .into_iter()
            .map(|(r, p)| {
                let label = format!(
                    "{} {} {}T {}",
                    p.kernel, p.stores, p.threads, r.placement.name
                );
                bar(label, r)
            })
            .collect();
        out.push(Chart::bars(
            "Memory bandwidth by kernel, stores and threads",
            "MB/s",
            bw,
        ));
        let rest = doc
            .results
            .iter()
            .filter(|r| matches!(r.base_id(), "memory.numa" | "memory.per-event"))
            .map(|r| bar(format!("{} {}", r.base_id(), r.params_text()), r))
            .collect();
        out.push(Chart::bars(
            "NUMA cells and per-event timing",
            "as labelled",
            rest,
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::{env, result, run};
    use serde_json::json;

    fn cell(c: u64, m: u64, metric: &str, v: f64) -> BenchResult {
        let d = if c == m { 10 } else { 21 };
        result(
            "memory.numa@1",
            &format!("node{c}"),
            None,
            json!({"cpu_node": c, "mem_node": m, "metric": metric, "distance": d}),
            v,
        )
    }

    #[test]
    fn two_nodes_show_cells_distances_and_ratios() {
        let doc = run(
            "r",
            vec![
                cell(0, 0, "latency", 100.0),
                cell(0, 1, "latency", 150.0),
                cell(1, 0, "latency", 160.0),
                cell(1, 1, "latency", 100.0),
                cell(0, 0, "read-bandwidth", 20000.0),
                cell(0, 1, "read-bandwidth", 10000.0),
            ],
            env(),
        );
        let text = numa_tables(&doc, false).unwrap();
        assert!(text.contains("NUMA latency (ns/load)"), "{text}");
        assert!(text.contains("150.0 (distance 21)"), "{text}");
        assert!(text.contains("1.50x") && text.contains("1.60x"), "{text}");
        assert!(text.contains("0.50x"), "bandwidth remote/local: {text}");
        let one = run("r", vec![cell(0, 0, "latency", 100.0)], env());
        assert!(numa_tables(&one, false).is_none());
    }

    #[test]
    fn levels_are_the_plateaus_of_the_latency_curve_in_binary_units() {
        let mut rs = Vec::new();
        for (size, ns) in [
            (4096u64, 10.0),
            (16384, 10.0),
            (32768, 10.5),
            (262_144, 40.0),
            (524_288, 41.0),
            (67_108_864, 900.0),
            (134_217_728, 920.0),
        ] {
            rs.push(result(
                "memory.latency@1",
                "cpus",
                Some(vec![0]),
                json!({"size_bytes": size, "pages": "thp"}),
                ns,
            ));
        }
        let text = Memory.summary(&run("r", rs, env()));
        assert!(text.contains("level 1"), "{text}");
        assert!(text.contains("thp pages:"), "{text}");
        assert!(text.contains("up to 32 KiB "), "{text}");
        assert!(text.contains("memory   from 64 MiB"), "{text}");
        assert!(text.contains("910.0 ns per load"), "{text}");
    }
}
