//! The classic suite as UnixBench users read it: per test and copy count the rate in its
//! UnixBench unit with CI and CV, the index (our median) beside UnixBench's own combination,
//! the scaling efficiency and where the copies ran; then the suite indexes for 1 and N copies.

use super::units::{num, pct};
use crate::bench::classic::score::copies_label;
use crate::result::{BenchResult, RunDocument};
use std::collections::BTreeSet;

pub fn is_classic(r: &BenchResult) -> bool {
    r.benchmark.starts_with("classic.")
}

fn cpus_seen(r: &BenchResult) -> String {
    let Some(obs) = &r.placement.observed else {
        return String::new();
    };
    let mut all: BTreeSet<u64> = BTreeSet::new();
    for c in obs["copies"].as_array().into_iter().flatten() {
        all.extend(
            c["cpus_seen"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_u64()),
        );
    }
    let mut s = format!("{:?}", all.into_iter().collect::<Vec<_>>());
    if let Some(f) = obs["colocated_fraction"].as_f64() {
        s.push_str(&format!(", pair together {:.0}%", f * 100.0));
    }
    if r.placement.cpus.is_some() {
        s.push_str(" (pinned)");
    }
    s
}

pub fn render(doc: &RunDocument) -> Option<String> {
    let rows: Vec<&BenchResult> = doc.results.iter().filter(|r| is_classic(r)).collect();
    if rows.is_empty() {
        return None;
    }
    let mut t = super::table(&[
        "test",
        "copies",
        "rate (median)",
        "unit",
        "95% CI",
        "CV",
        "index",
        "UnixBench-style index",
        "scaling",
        "ran on CPUs",
    ]);
    for r in rows {
        let name = r
            .benchmark
            .trim_start_matches("classic.")
            .split('@')
            .next()
            .unwrap_or("")
            .to_string();
        let fsync = r.params.get("fsync").and_then(|v| v.as_bool()) == Some(true);
        let pair = r.params.get("pair").and_then(|v| v.as_str());
        let d = |k: &str| r.derived.get(k).map(|v| num(*v)).unwrap_or_default();
        t.add_row(vec![
            match (fsync, pair) {
                (true, _) => format!("{name} (fsync)"),
                (_, Some(p)) => format!("{name} (pinned {p})"),
                _ => name,
            },
            r.params
                .get("copies")
                .and_then(|v| v.as_u64())
                .map(|c| {
                    copies_label(
                        c,
                        doc.indexes
                            .as_ref()
                            .and_then(|ix| ix["n"].as_u64())
                            .unwrap_or(0),
                    )
                })
                .unwrap_or_default(),
            num(r.stats.median),
            r.unit.clone(),
            format!("{} – {}", num(r.stats.ci95_low), num(r.stats.ci95_high)),
            pct(r.stats.cv),
            d("index"),
            d("unixbench_index"),
            r.derived
                .get("scaling_efficiency")
                .map(|e| format!("{:.0}%", e * 100.0))
                .unwrap_or_default(),
            cpus_seen(r),
        ]);
    }
    let mut out = format!("Classic suite (UnixBench-equivalent; George = 10)\n{t}\n");
    if let Some(ix) = &doc.indexes {
        let mut keys: Vec<&String> = ix
            .as_object()
            .map(|o| {
                o.keys()
                    .filter(|k| k.parse::<u64>().is_ok() || *k == "N")
                    .collect()
            })
            .unwrap_or_default();
        keys.sort_by_key(|k| k.parse::<u64>().unwrap_or(u64::MAX));
        for k in keys {
            let v = |x: &serde_json::Value| x.as_f64().map(num).unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "Index, {}: {} (median of passes); UnixBench-style {} (lowest third dropped); {} tests\n",
                match k.parse::<u64>() {
                    Ok(c) => copies_label(c, ix["n"].as_u64().unwrap_or(0)),
                    Err(_) => format!("{k} copies"),
                },
                v(&ix[k.as_str()]),
                v(&ix["unixbench_style"][k.as_str()]),
                ix["tests"][k.as_str()],
            ));
            if let Some(r) = ix.get("placement_range").and_then(|p| p.get(k.as_str())) {
                let v = |x: &serde_json::Value| x.as_f64().map(num).unwrap_or_else(|| "-".into());
                out.push_str(&format!(
                    "  its 95% CI {} – {}; with the context-switch pair pinned to one CPU {}, split over two CPUs {}\n",
                    v(&r["ci95_low"]),
                    v(&r["ci95_high"]),
                    v(&r["same_cpu"]),
                    v(&r["cross_cpu"]),
                ));
            }
        }
        out.push_str(&format!(
            "N = {}{}\n",
            ix["n_basis"].as_str().unwrap_or("?"),
            if ix["partial"] == true {
                "; PARTIAL index: not every test ran"
            } else {
                ""
            }
        ));
        out.push_str("Per-placement context-switch figures: truebench run ctx\n\n");
    }
    Some(out)
}
