//! The memory.numa cells as node x node tables (latency, read bandwidth) beside the firmware
//! distances, with each row's remote/local ratio.

use super::units::num;
use crate::result::{BenchResult, RunDocument};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

fn node(r: &BenchResult, key: &str) -> Option<u64> {
    r.params.get(key)?.as_u64()
}

pub fn render(doc: &RunDocument) -> Option<String> {
    let rs: Vec<&BenchResult> = doc
        .results
        .iter()
        .filter(|r| r.base_id() == "memory.numa")
        .collect();
    let mems: BTreeSet<u64> = rs.iter().filter_map(|r| node(r, "mem_node")).collect();
    if mems.len() < 2 {
        return None;
    }
    let mut s = String::new();
    for (metric, unit) in [("latency", "ns/load"), ("read-bandwidth", "MB/s")] {
        let cells: BTreeMap<(u64, u64), (&BenchResult, Option<u64>)> = rs
            .iter()
            .filter(|r| r.params.get("metric").and_then(|m| m.as_str()) == Some(metric))
            .filter_map(|r| {
                Some((
                    (node(r, "cpu_node")?, node(r, "mem_node")?),
                    (*r, node(r, "distance")),
                ))
            })
            .collect();
        let rows: BTreeSet<u64> = cells.keys().map(|k| k.0).collect();
        let mut header = vec!["CPUs on \\ memory on".to_string()];
        header.extend(mems.iter().map(|m| format!("node {m}")));
        header.push("remote / local".into());
        let mut t = super::table(&header.iter().map(String::as_str).collect::<Vec<_>>());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::{result, run};
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
            json!({}),
        );
        let text = render(&doc).unwrap();
        assert!(text.contains("NUMA latency (ns/load)"), "{text}");
        assert!(text.contains("150.0 (distance 21)"), "{text}");
        assert!(text.contains("1.50x") && text.contains("1.60x"), "{text}");
        assert!(text.contains("0.50x"), "bandwidth remote/local: {text}");
        assert!(render(&run("r", vec![cell(0, 0, "latency", 100.0)], json!({}))).is_none());
    }
}
