//! The c2c results as a CPU x CPU matrix of one-way latencies (lower triangle, ns) and a
//! per-relation summary (SMT sibling, same LLC, cross LLC, cross package/node).

use super::units::num;
use crate::measure::stats::Stats;
use crate::result::{BenchResult, RunDocument};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Matrices wider than this many CPUs are summarised only.
const MAX_MATRIX_CPUS: usize = 32;

fn cpu(r: &BenchResult, key: &str) -> Option<u32> {
    r.params.get(key)?.as_u64().map(|v| v as u32)
}

pub fn render(doc: &RunDocument) -> Option<String> {
    let rs: Vec<&BenchResult> = doc
        .results
        .iter()
        .filter(|r| r.base_id() == "c2c.cacheline")
        .collect();
    if rs.is_empty() {
        return None;
    }
    let mut cells: BTreeMap<(u32, u32), f64> = BTreeMap::new();
    let mut cpus = BTreeSet::new();
    for r in &rs {
        if let (Some(a), Some(b)) = (cpu(r, "cpu_a"), cpu(r, "cpu_b")) {
            cells.insert((a.min(b), a.max(b)), r.stats.median);
            cpus.insert(a);
            cpus.insert(b);
        }
    }
    let mut s = String::new();
    let sampled = rs
        .iter()
        .any(|r| r.params.get("pairs").and_then(|p| p.as_str()) != Some("all"));
    let _ = writeln!(
        s,
        "Cache-line one-way latency, ns (median of each pair){}:",
        if sampled {
            "; pairs sampled per relation, not every pair"
        } else {
            ""
        }
    );
    if cpus.len() <= MAX_MATRIX_CPUS && !sampled {
        let cpus: Vec<u32> = cpus.into_iter().collect();
        let w = cells
            .values()
            .map(|v| num(*v).len())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = write!(s, "{:>5}", "CPU");
        for c in &cpus[..cpus.len() - 1] {
            let _ = write!(s, " {c:>w$}");
        }
        let _ = writeln!(s);
        for (i, row) in cpus.iter().enumerate().skip(1) {
            let _ = write!(s, "{row:>5}");
            for col in &cpus[..i] {
                let v = cells
                    .get(&(*col, *row))
                    .map(|v| num(*v))
                    .unwrap_or_else(|| "-".into());
                let _ = write!(s, " {v:>w$}");
            }
            let _ = writeln!(s);
        }
    }
    let mut by_rel: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in &rs {
        by_rel
            .entry(r.placement.name.as_str())
            .or_default()
            .push(r.stats.median);
    }
    let mut t = super::table(&["relation", "pairs", "median ns", "min ns", "max ns"]);
    for (rel, v) in by_rel {
        let Some(st) = Stats::of(&v) else { continue };
        t.add_row(vec![
            rel.to_string(),
            v.len().to_string(),
            num(st.median),
            num(st.min),
            num(st.max),
        ]);
    }
    let _ = writeln!(s, "{t}");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::{result, run};
    use serde_json::json;

    fn pair(a: u32, b: u32, rel: &str, ns: f64, pairs: &str) -> BenchResult {
        result(
            "c2c.cacheline@1",
            rel,
            Some(vec![a, b]),
            json!({"cpu_a": a, "cpu_b": b, "pairs": pairs}),
            ns,
        )
    }

    #[test]
    fn lower_triangle_and_relation_summary() {
        let doc = run(
            "r",
            vec![
                pair(0, 1, "smt-sibling", 20.0, "all"),
                pair(0, 2, "same-llc", 50.0, "all"),
                pair(1, 2, "same-llc", 60.0, "all"),
            ],
            json!({}),
        );
        let text = render(&doc).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            vec!["CPU", "0", "1"]
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            vec!["1", "20.00"]
        );
        assert_eq!(
            lines[3].split_whitespace().collect::<Vec<_>>(),
            vec!["2", "50.00", "60.00"]
        );
        let same_llc = lines.iter().find(|l| l.contains("same-llc")).unwrap();
        let cells: Vec<&str> = same_llc
            .split(['│', '┆'])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(cells, vec!["same-llc", "2", "55.00", "50.00", "60.00"]);
    }

    #[test]
    fn sampled_pairs_are_summarised_and_said_to_be_sampled() {
        let doc = run(
            "r",
            vec![pair(0, 128, "smt-sibling", 20.0, "sampled per relation")],
            json!({}),
        );
        let text = render(&doc).unwrap();
        assert!(text.contains("pairs sampled per relation"));
        assert!(!text.contains("CPU "), "{text}");
        assert!(render(&run("r", vec![], json!({}))).is_none());
    }
}
