//! The c2c suite: one-way cache-line latency between CPUs, as a per-relation summary
//! (SMT sibling, same LLC, cross LLC/package/node), per CPU kind on hybrid machines, and,
//! when it fits, the CPU x CPU matrix.

use super::{narrow_table, with_params, View, WIDTH};
use crate::bench::c2c::PairParams as Pair;
use crate::measure::stats::Stats;
use crate::report::svg::{Chart, Heatmap};
use crate::result::RunDocument;
use crate::units::num;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

pub struct C2c;

const BENCH: &str = "c2c.cacheline";

/// The measured pairs: (lower, higher) CPU -> median ns, and whether pairs were sampled.
fn cells(doc: &RunDocument) -> (BTreeMap<(u32, u32), f64>, bool) {
    let rs = with_params::<Pair>(doc, BENCH);
    let sampled = rs.iter().any(|(_, p)| p.pairs != "all");
    let cells = rs
        .iter()
        .map(|(r, p)| ((p.cpu_a.min(p.cpu_b), p.cpu_a.max(p.cpu_b)), r.stats.median))
        .collect();
    (cells, sampled)
}

/// The CPUs of the measured pairs, in order.
fn cpus_of(cells: &BTreeMap<(u32, u32), f64>) -> Vec<u32> {
    cells
        .keys()
        .flat_map(|(a, b)| [*a, *b])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The lower triangle of the matrix, or None when it would be wider than `width`.
fn matrix(cells: &BTreeMap<(u32, u32), f64>, width: usize) -> Option<String> {
    let cpus = cpus_of(cells);
    if cpus.len() < 2 {
        return None;
    }
    let w = cells
        .values()
        .map(|v| num(*v).len())
        .max()
        .unwrap_or(4)
        .max(4);
    if 5 + (cpus.len() - 1) * (w + 1) > width {
        return None;
    }
    let mut s = String::new();
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
    Some(s)
}

fn relations(doc: &RunDocument) -> String {
    let mut by_rel: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (r, _) in with_params::<Pair>(doc, BENCH) {
        by_rel
            .entry(r.placement.name.as_str())
            .or_default()
            .push(r.stats.median);
    }
    let mut t = narrow_table(&["relation", "pairs", "median ns", "min ns", "max ns"]);
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
    format!("{t}\n")
}

/// The title line, the matrix when it fits in `width` (and every pair was measured), the
/// per-relation table.
fn render(doc: &RunDocument, width: usize) -> String {
    let (cells, sampled) = cells(doc);
    let mut s = format!(
        "Cache-line one-way latency, ns (median of each pair){}:\n",
        if sampled {
            "; pairs sampled per relation, not every pair"
        } else {
            ""
        }
    );
    if !sampled {
        s.push_str(&matrix(&cells, width).unwrap_or_default());
    }
    s.push_str(&relations(doc));
    let pairs: Vec<(u32, u32, f64)> = with_params::<Pair>(doc, BENCH)
        .iter()
        .map(|(r, p)| (p.cpu_a, p.cpu_b, r.stats.median))
        .collect();
    s.push_str(&super::kinds::c2c_table(
        &doc.env.topology.cpu_kinds,
        &pairs,
    ));
    s
}

impl View for C2c {
    fn title(&self) -> &'static str {
        "Cache-line latency between CPUs"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        !with_params::<Pair>(doc, BENCH).is_empty()
    }

    fn summary(&self, doc: &RunDocument) -> String {
        render(doc, WIDTH as usize)
    }

    fn full(&self, doc: &RunDocument) -> String {
        // Matrices up to 32 CPUs wide, whatever the terminal.
        render(doc, 5 + 31 * 9)
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let (cells, _) = cells(doc);
        let cpus = cpus_of(&cells);
        let value = |i: usize, j: usize| {
            let (a, b) = (cpus[i].min(cpus[j]), cpus[i].max(cpus[j]));
            cells.get(&(a, b)).copied()
        };
        vec![Chart::Heatmap(Heatmap {
            title: "Cache-line one-way latency between CPUs".into(),
            unit: "ns".into(),
            labels: cpus.iter().map(|c| c.to_string()).collect(),
            cells: (0..cpus.len())
                .map(|i| (0..cpus.len()).map(|j| value(i, j)).collect())
                .collect(),
        })]
    }
}

/// Used by tests: the results of a synthetic pair.
#[cfg(test)]
fn pair(a: u32, b: u32, rel: &str, ns: f64, pairs: &str) -> crate::result::BenchResult {
    crate::result::testing::result(
        "c2c.cacheline@1",
        rel,
        Some(vec![a, b]),
        serde_json::json!({"cpu_a": a, "cpu_b": b, "pairs": pairs}),
        ns,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::{env, run};

    #[test]
    fn lower_triangle_and_relation_summary() {
        let doc = run(
            "r",
            vec![
                pair(0, 1, "smt-sibling", 20.0, "all"),
                pair(0, 2, "same-llc", 50.0, "all"),
                pair(1, 2, "same-llc", 60.0, "all"),
            ],
            env(),
        );
        let text = C2c.summary(&doc);
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
            env(),
        );
        let text = C2c.summary(&doc);
        assert!(text.contains("pairs sampled per relation"));
        assert!(!text.contains("CPU "), "{text}");
        assert!(!C2c.applies(&run("r", vec![], env())));
    }

    #[test]
    fn a_matrix_too_wide_for_100_columns_is_left_to_the_full_view() {
        let mut rs = Vec::new();
        for a in 0..24u32 {
            for b in a + 1..24 {
                rs.push(pair(a, b, "same-llc", 50.0, "all"));
            }
        }
        let doc = run("r", rs, env());
        let short = C2c.summary(&doc);
        assert!(short.lines().all(|l| l.chars().count() <= 100), "{short}");
        assert!(!short.contains("   23 "), "{short}");
        assert!(C2c.full(&doc).contains("   23 "));
    }
}
