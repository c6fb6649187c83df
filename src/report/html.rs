//! The self-contained HTML report (`truebench report`): the environment and topology,
//! every result with its CI, charts per suite (ctx placement bars, c2c heatmap, memory
//! latency curve with the measured levels, bandwidth by threads, the recorder's series),
//! findings with evidence, and a comparison when several runs are given. No scripts and no
//! external resources; the template auto-escapes every string from the machine or the user.

use super::svg;
use super::units::{num, pct};
use crate::compare::compare;
use crate::measure::plateaus;
use crate::result::{BenchResult, RunDocument};
use minijinja::value::Serde;
use minijinja::{context, Environment, Value};
use serde_json::json;

const TEMPLATE: &str = include_str!("templates/report.html");

fn by<'a>(doc: &'a RunDocument, base: &str) -> Vec<&'a BenchResult> {
    doc.results.iter().filter(|r| r.base_id() == base).collect()
}

fn p(r: &BenchResult, k: &str) -> String {
    r.params
        .get(k)
        .map(|v| v.as_str().map(String::from).unwrap_or(v.to_string()))
        .unwrap_or_default()
}

fn bar(label: String, r: &BenchResult) -> (String, f64, f64, f64) {
    (label, r.stats.median, r.stats.ci95_low, r.stats.ci95_high)
}

/// A load-step experiment's charts: per variant the latency percentiles and the cost per
/// message against load, and the USL curve with the measured points.
fn loadstep_charts(ls: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for v in ls["variants"].as_array().into_iter().flatten() {
        let name = format!(
            "{} x{}{}",
            v["policy"].as_str().unwrap_or("?"),
            v["workers"],
            v["capacity"]
                .as_object()
                .map(|c| format!(" quota {} width {}", c["quota"], c["width"]))
                .unwrap_or_default()
        );
        let steps = v["steps"].as_array().cloned().unwrap_or_default();
        let series = |f: &dyn Fn(&serde_json::Value) -> Option<f64>| -> Vec<(f64, f64)> {
            steps
                .iter()
                .filter_map(|s| Some((s["planned_rate"].as_f64()?, f(s)?)))
                .collect()
        };
        let mut lat = Vec::new();
        for (label, key, q) in [
            ("p50", "latency", "p50"),
            ("p99", "latency", "p99"),
            ("p99.9", "latency", "p999"),
            ("p99 uncorrected", "latency_uncorrected", "p99"),
        ] {
            lat.push((label.to_string(), series(&|s| s[key][q].as_f64())));
        }
        out.push(svg::lines(
            &format!("Latency against load: {name}"),
            "planned messages/s",
            "µs (log)",
            &lat,
            false,
            true,
            &[],
            svg::XAxis::Number,
        ));
        out.push(svg::lines(
            &format!("Cost per message against load: {name}"),
            "planned messages/s",
            "CPU-µs per message",
            &[(
                "CPU-µs/message".to_string(),
                series(&|s| s["per_tx"]["cpu_us"].as_f64()),
            )],
            false,
            false,
            &[],
            svg::XAxis::Number,
        ));
        // The points the fit used: the intervals of the valid, steady steps.
        let measured: Vec<(f64, f64)> = steps
            .iter()
            .filter(|s| s["valid"] == true)
            .filter(|s| {
                s["completed_rate"].as_f64().unwrap_or(0.0)
                    >= crate::loadstep::experiment::STEADY_SHARE
                        * s["sent_rate"].as_f64().unwrap_or(f64::INFINITY)
            })
            .flat_map(|s| s["interval_points"].as_array().cloned().unwrap_or_default())
            .filter_map(|p| Some((p[0].as_f64()?, p[1].as_f64()?)))
            .collect();
        if let (Some(u), false) = (v["usl"].as_object(), measured.is_empty()) {
            let (sg, kp, gm) = (
                u["sigma"].as_f64().unwrap_or(0.0),
                u["kappa"].as_f64().unwrap_or(0.0),
                u["gamma"].as_f64().unwrap_or(0.0),
            );
            let top = measured.iter().map(|p| p.0).fold(0.0, f64::max) * 1.5;
            let curve: Vec<(f64, f64)> = (1..=60)
                .map(|i| {
                    let n = top * i as f64 / 60.0;
                    (n, crate::loadstep::model::usl(n, sg, kp, gm))
                })
                .collect();
            out.push(svg::lines(
                &format!("USL fit on Little's-law concurrency: {name}"),
                "N = X·R (messages in flight)",
                "completed messages/s",
                &[
                    (
                        "measured (100 ms intervals of steady steps)".to_string(),
                        measured,
                    ),
                    (format!("USL σ {} κ {}", num(sg), num(kp)), curve),
                ],
                false,
                false,
                &[],
                svg::XAxis::Number,
            ));
        }
    }
    out
}

/// The charts of one run, as SVG strings.
fn charts(doc: &RunDocument) -> Vec<String> {
    let mut out = Vec::new();
    let timers = by(doc, "timers.clock-read");
    if !timers.is_empty() {
        let b: Vec<_> = timers
            .iter()
            .map(|r| {
                bar(
                    format!("{} {} {}", p(r, "clock"), p(r, "path"), p(r, "clocksource")),
                    r,
                )
            })
            .collect();
        out.push(svg::bars("Clock read cost", "ns/read", &b));
    }
    let ctx = by(doc, "ctx.pipe");
    for mode in ["process", "thread"] {
        let b: Vec<_> = ctx
            .iter()
            .filter(|r| p(r, "mode") == mode)
            .map(|r| {
                bar(
                    format!(
                        "{} {}",
                        r.placement.name,
                        r.placement
                            .cpus
                            .as_ref()
                            .map(|c| format!("{c:?}"))
                            .unwrap_or_default()
                    ),
                    r,
                )
            })
            .collect();
        if !b.is_empty() {
            out.push(svg::bars(
                &format!("Pipe round trip per placement ({mode} mode)"),
                "ns/round-trip",
                &b,
            ));
        }
    }
    let c2c = by(doc, "c2c.cacheline");
    if !c2c.is_empty() {
        let mut cpus: Vec<String> = c2c
            .iter()
            .flat_map(|r| [p(r, "cpu_a"), p(r, "cpu_b")])
            .collect();
        cpus.sort_by_key(|c| c.parse::<u32>().unwrap_or(0));
        cpus.dedup();
        let lookup = |i: usize, j: usize| {
            c2c.iter()
                .find(|r| {
                    (p(r, "cpu_a") == cpus[i] && p(r, "cpu_b") == cpus[j])
                        || (p(r, "cpu_a") == cpus[j] && p(r, "cpu_b") == cpus[i])
                })
                .map(|r| r.stats.median)
        };
        out.push(svg::heatmap(
            "Cache-line one-way latency between CPUs",
            "ns",
            &cpus,
            &lookup,
        ));
    }
    let lat = by(doc, "memory.latency");
    if !lat.is_empty() {
        let mut series = Vec::new();
        let mut marks = Vec::new();
        for pages in ["4k", "thp"] {
            let curve: Vec<(f64, f64)> = lat
                .iter()
                .filter(|r| p(r, "pages") == pages)
                .map(|r| (p(r, "size_bytes").parse().unwrap_or(0.0), r.stats.median))
                .collect();
            if curve.is_empty() {
                continue;
            }
            if marks.is_empty() || pages == "thp" {
                let c: Vec<(u64, f64)> = curve.iter().map(|(s, v)| (*s as u64, *v)).collect();
                let found = plateaus::find(&c);
                marks = found
                    .iter()
                    .take(found.len().saturating_sub(1))
                    .map(|l| (l.up_to_bytes as f64, super::units::bytes(l.up_to_bytes)))
                    .collect();
            }
            series.push((format!("{pages} pages"), curve));
        }
        out.push(svg::lines(
            "Load latency by working set (levels marked)",
            "working set, bytes (log)",
            "ns per load (log)",
            &series,
            true,
            true,
            &marks,
            svg::XAxis::Bytes,
        ));
    }
    let bw = by(doc, "memory.bandwidth");
    if !bw.is_empty() {
        let b: Vec<_> = bw
            .iter()
            .map(|r| {
                bar(
                    format!(
                        "{} {} {}T {}",
                        p(r, "kernel"),
                        p(r, "stores"),
                        p(r, "threads"),
                        r.placement.name
                    ),
                    r,
                )
            })
            .collect();
        out.push(svg::bars(
            "Memory bandwidth by kernel, stores and threads",
            "MB/s",
            &b,
        ));
    }
    let rest: Vec<_> = doc
        .results
        .iter()
        .filter(|r| matches!(r.base_id(), "memory.numa" | "memory.per-event"))
        .map(|r| bar(format!("{} {}", r.base_id(), r.params_text()), r))
        .collect();
    if !rest.is_empty() {
        out.push(svg::bars(
            "NUMA cells and per-event timing",
            "as labelled",
            &rest,
        ));
    }
    let classic: Vec<_> = doc
        .results
        .iter()
        .filter(|r| super::classic_table::is_classic(r))
        .filter_map(|r| {
            let scale = r.derived.get("index")? / r.stats.median;
            Some((
                format!(
                    "{} x{}",
                    r.base_id().trim_start_matches("classic."),
                    p(r, "copies")
                ),
                r.stats.median * scale,
                r.stats.ci95_low * scale,
                r.stats.ci95_high * scale,
            ))
        })
        .collect();
    if !classic.is_empty() {
        out.push(svg::bars(
            "Classic index per test and copy count (George = 10)",
            "index",
            &classic,
        ));
    }
    if let Some(ix) = doc.indexes.as_ref().and_then(|v| v.as_object()) {
        let b: Vec<_> = ix
            .iter()
            .filter(|(k, _)| k.parse::<u64>().is_ok())
            .filter_map(|(k, v)| {
                let v = v.as_f64()?;
                Some((
                    format!("suite index, {k} cop{}", if k == "1" { "y" } else { "ies" }),
                    v,
                    v,
                    v,
                ))
            })
            .collect();
        out.push(svg::bars(
            "Classic suite index (geometric mean of the test indexes)",
            "index",
            &b,
        ));
    }
    if let Some(ls) = &doc.loadstep {
        out.extend(loadstep_charts(ls));
    }
    if let Some(rec) = &doc.recording {
        let rows = rec["rows"].as_array().cloned().unwrap_or_default();
        let t = |r: &serde_json::Value| r["t_s"].as_f64().unwrap_or(0.0);
        let busy: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| {
                let cpus = r["cpus"].as_array().cloned().unwrap_or_default();
                let idle: f64 = cpus.iter().filter_map(|c| c["idle"].as_f64()).sum::<f64>()
                    / cpus.len().max(1) as f64;
                (t(r), 100.0 - idle)
            })
            .collect();
        let target: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| Some((t(r), r["target"]["cpu_pct"].as_f64()?)))
            .collect();
        let mut series = vec![("all CPUs busy %".to_string(), busy)];
        if !target.is_empty() {
            series.push(("target CPU % of one CPU".to_string(), target));
        }
        out.push(svg::lines(
            "Recording: CPU use",
            "seconds",
            "%",
            &series,
            false,
            false,
            &[],
            svg::XAxis::Number,
        ));
        let cs: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (t(r), r["ctxt_per_s"].as_f64().unwrap_or(0.0)))
            .collect();
        let work: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| Some((t(r), r["metric_per_s"].as_f64()?)))
            .collect();
        let syscalls: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| Some((t(r), r["target"]["events_per_s"]["syscalls"].as_f64()?)))
            .collect();
        let mut series = vec![("context switches/s".to_string(), cs)];
        if !syscalls.is_empty() {
            series.push(("target system calls/s".to_string(), syscalls));
        }
        if !work.is_empty() {
            series.push(("work units/s".to_string(), work));
        }
        out.push(svg::lines(
            "Recording: switches, system calls and work rate",
            "seconds",
            "per second",
            &series,
            false,
            false,
            &[],
            svg::XAxis::Number,
        ));
    }
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

fn env_text(doc: &RunDocument) -> String {
    let e = &doc.env;
    let s = |v: &serde_json::Value| {
        v.as_str()
            .map(String::from)
            .unwrap_or_else(|| v.to_string())
    };
    format!(
        "host {} · {} · kernel {} · cmdline {}\nVM {} · container {} · clocksource {} · CPUs usable {} (capacity {}) · packages {}, cores {}, threads {} · LLC groups {} · NUMA nodes {}",
        s(&e["hostname"]),
        s(&e["kernel"]["cpu_model"]),
        s(&e["kernel"]["release"]),
        s(&e["kernel"]["cmdline"]),
        s(&e["virtualization"]["vm"]),
        s(&e["virtualization"]["container"]),
        s(&e["clock"]["clocksource"]),
        e["cpus"]["usable"],
        e["cpus"]["capacity"],
        e["topology"]["packages"],
        e["topology"]["cores"],
        e["topology"]["threads"],
        e["topology"]["llc_groups"],
        e["numa"]["nodes"].as_array().map(Vec::len).unwrap_or(0),
    )
}

fn run_value(doc: &RunDocument) -> serde_json::Value {
    let results: Vec<_> = doc
        .results
        .iter()
        .map(|r| {
            json!({
                "benchmark": r.benchmark, "params": r.params_text(),
                "placement": match &r.placement.cpus { Some(c) => format!("{} {c:?}", r.placement.name), None => r.placement.name.clone() },
                "median": num(r.stats.median), "ci": format!("{} – {}", num(r.stats.ci95_low), num(r.stats.ci95_high)),
                "cv": pct(r.stats.cv), "n": r.stats.n, "unit": r.unit, "timer_share": pct(r.quality.timer_share),
            })
        })
        .collect();
    let mut findings: Vec<serde_json::Value> = doc.findings.iter().map(|f| json!({"id": f.id, "severity": f.severity, "message": f.message, "evidence": f.evidence, "about": null})).collect();
    for r in &doc.results {
        for f in &r.findings {
            findings.push(json!({"id": f.id, "severity": f.severity, "message": f.message, "evidence": f.evidence, "about": format!("{} {} {}", r.benchmark, r.params_text(), r.placement.name)}));
        }
    }
    json!({
        "run_id": doc.run_id, "host": doc.host, "started_at": doc.started_at, "suites": doc.suites,
        "interrupted": doc.interrupted, "env_text": env_text(doc), "results": results,
        "skipped": doc.skipped, "findings": findings,
    })
}

/// Render the report of `docs` (the first is the baseline of the comparisons).
pub fn render(docs: &[RunDocument]) -> anyhow::Result<String> {
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)?;
    let runs: Vec<serde_json::Value> = docs
        .iter()
        .map(|d| {
            let mut v = run_value(d);
            // Our SVG, its labels escaped by svg.rs; the template marks these two safe.
            v["charts"] = json!(charts(d));
            v["topology_svg"] = json!(svg::topology(&d.env));
            v
        })
        .collect();
    let comparisons: Vec<_> = docs.iter().skip(1).map(|b| compare(&docs[0], b)).collect();
    let html = env.get_template("report.html")?.render(context! {
        runs => Value::from(Serde(&runs)),
        compare => Value::from(Serde(&comparisons)),
        tool => crate::result::Tool::current().version,
    })?;
    Ok(html)
}
