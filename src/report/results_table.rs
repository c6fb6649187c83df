//! A run's results as a table (per result: median, 95% CI, CV, n, unit, timer share,
//! placement; for placement matrices the ratio to same-cpu and what was observed),
//! followed by the cases not run here and the findings; and the run history as a table.

use super::units::{num, pct};
use crate::result::{BenchResult, RunDocument};
use crate::store::RunSummary;
use serde_json::Value;

/// The same-cpu result with the same benchmark and params, when the run has one.
fn same_cpu_of<'a>(doc: &'a RunDocument, r: &BenchResult) -> Option<&'a BenchResult> {
    doc.results.iter().find(|o| {
        o.placement.name == "same-cpu" && o.benchmark == r.benchmark && o.params == r.params
    })
}

fn list(v: &Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_else(|| "?".into())
}

/// "A[0] B[0,1] together 90%, migrations 0/3": what `placement.observed` says, briefly.
pub fn observed_summary(obs: &Value) -> String {
    let t = &obs["tasks"];
    let mut s = format!(
        "A[{}] B[{}]",
        list(&t["a"]["cpus_seen"]),
        list(&t["b"]["cpus_seen"])
    );
    if let Some(f) = obs["colocated_fraction"].as_f64() {
        s.push_str(&format!(" together {:.0}%", f * 100.0));
    }
    let m = |side: &str| {
        t[side]["migrations"]
            .as_u64()
            .map(|x| x.to_string())
            .unwrap_or_else(|| "n/a".into())
    };
    s.push_str(&format!(", migrations {}/{}", m("a"), m("b")));
    s
}

pub fn render(doc: &RunDocument) -> String {
    let matrix = doc.results.iter().any(|r| r.placement.name == "same-cpu");
    let observed = doc
        .results
        .iter()
        .any(|r| r.placement.observed.is_some() && !super::classic_table::is_classic(r));
    let mut header = vec![
        "benchmark",
        "params",
        "placement",
        "median",
        "95% CI",
        "CV",
        "n",
        "unit",
    ];
    if matrix {
        header.push("vs same-cpu");
    }
    header.push("timer share");
    if observed {
        header.push("observed");
    }
    let mut t = super::table(&header);
    let others: Vec<&BenchResult> = doc
        .results
        .iter()
        .filter(|r| !super::classic_table::is_classic(r))
        .collect();
    for r in others.iter().copied() {
        let s = &r.stats;
        let mut row = vec![
            r.benchmark.clone(),
            r.params_text(),
            match &r.placement.cpus {
                Some(c) => format!("{} {:?}", r.placement.name, c),
                None => r.placement.name.clone(),
            },
            num(s.median),
            format!("{} – {}", num(s.ci95_low), num(s.ci95_high)),
            pct(s.cv),
            s.n.to_string(),
            r.unit.clone(),
        ];
        if matrix {
            row.push(
                same_cpu_of(doc, r)
                    .map(|b| format!("{:.2}x", s.median / b.stats.median))
                    .unwrap_or_default(),
            );
        }
        row.push(pct(r.quality.timer_share));
        if observed {
            row.push(
                r.placement
                    .observed
                    .as_ref()
                    .map(observed_summary)
                    .unwrap_or_default(),
            );
        }
        t.add_row(row);
    }
    let mut out = format!(
        "Run {} on {} at {}{}\n",
        doc.run_id,
        doc.host.as_deref().unwrap_or("unknown host"),
        doc.started_at,
        if doc.interrupted {
            " (INTERRUPTED: partial results)"
        } else {
            ""
        }
    );
    let other_content = doc.recording.is_some() || doc.loadstep.is_some();
    if !others.is_empty() || (doc.results.is_empty() && !other_content) {
        out.push_str(&format!("{t}\n"));
    }
    if let Some(ls) = &doc.loadstep {
        out.push_str(&super::loadstep_table::render(ls));
    }
    for section in [
        super::classic_table::render(doc),
        super::c2c_matrix::render(doc),
        super::numa_matrix::render(doc),
    ]
    .into_iter()
    .flatten()
    {
        out.push_str(&section);
    }
    if let Some(rec) = &doc.recording {
        out.push_str(&recording_summary(rec));
    }
    if !doc.skipped.is_empty() {
        out.push_str("Not run here:\n");
        for s in &doc.skipped {
            out.push_str(&format!("  {} {}: {}\n", s.benchmark, s.case, s.reason));
        }
    }
    let mut findings = doc.findings.clone();
    for r in &doc.results {
        for f in &r.findings {
            let mut f = f.clone();
            f.message = format!(
                "{} {} [{}]: {}",
                r.benchmark,
                r.params_text(),
                r.placement.name,
                f.message
            );
            findings.push(f);
        }
    }
    if !findings.is_empty() {
        out.push_str("Findings:\n");
        out.push_str(&super::findings_text(&findings));
    }
    out
}

/// A recording in a few lines: its span, target, cost per unit of work, correlations and
/// what could not be read.
fn recording_summary(rec: &Value) -> String {
    let rows = rec["rows"].as_array().map(Vec::len).unwrap_or(0);
    let cpu = match rec["recorder_cpu_share"].as_f64() {
        Some(s) => format!("the recorder used {:.2}% of one CPU", s * 100.0),
        None => "too short to state the recorder's CPU share".into(),
    };
    let mut s = format!(
        "Recording: {rows} intervals of {} s over {:.1} s; {cpu}\n",
        rec["interval_s"],
        rec["duration_s"].as_f64().unwrap_or(0.0),
    );
    if let Some(t) = rec["target"].as_object() {
        s.push_str(&format!(
            "  target: pid {} {} (exit status {})\n",
            t["pid"],
            t["command"].as_str().unwrap_or(""),
            t["exit_status"]
        ));
    }
    let sum = &rec["summary"];
    if let Some(units) = sum["units"].as_f64() {
        s.push_str(&format!("  work done: {units:.0} units\n"));
        for (k, v) in sum["per_unit"].as_object().into_iter().flatten() {
            s.push_str(&format!(
                "  per unit of work: {k} {}\n",
                num(v.as_f64().unwrap_or(0.0))
            ));
        }
        for (k, v) in sum["correlation_with_metric"]
            .as_object()
            .into_iter()
            .flatten()
        {
            s.push_str(&format!(
                "  correlation with the work rate: {k} {:+.2}\n",
                v.as_f64().unwrap_or(0.0)
            ));
        }
    }
    for (k, v) in rec["unavailable"].as_object().into_iter().flatten() {
        s.push_str(&format!(
            "  not available: {k}: {}\n",
            v.as_str().unwrap_or("")
        ));
    }
    s
}

pub fn render_history(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "No runs stored yet: `truebench run` makes one.\n".into();
    }
    let mut t = super::table(&[
        "run",
        "started (UTC)",
        "host",
        "suites",
        "results",
        "headline",
    ]);
    for r in runs {
        t.add_row(vec![
            r.run_id.clone(),
            r.started_at.clone(),
            r.host.clone().unwrap_or_default(),
            r.suites.join(","),
            format!(
                "{}{}",
                r.results,
                if r.interrupted { " (interrupted)" } else { "" }
            ),
            r.headline.clone(),
        ]);
    }
    format!("{t}\n")
}
