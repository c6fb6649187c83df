//! The classic suite as UnixBench users read it: per test the rate in its UnixBench unit
//! and the index per copy count, the scaling, and the suite indexes for 1 and N copies; in
//! full, each test's CI, CV, UnixBench-style index and the CPUs its copies ran on.

use super::{narrow_table, View};
use crate::report::svg::Chart;
use crate::result::indexes::copies_label;
use crate::result::{figures, BenchResult, RunDocument, SuiteIndexes};
use crate::units::{num, pct};
use serde::Deserialize;
use std::collections::BTreeSet;

pub struct Classic;

/// The params every classic test has.
#[derive(Deserialize)]
pub struct Copies {
    pub copies: u64,
    #[serde(default)]
    pub fsync: bool,
    /// The context-switch pair pinned (`same-cpu`, `cross-cpu`), outside the index.
    #[serde(default)]
    pub pair: Option<String>,
    /// Whetstone's work: `unixbench` (in the index) or `all-modules` (beside it).
    #[serde(default)]
    pub work: Option<String>,
}

pub fn is_classic(r: &BenchResult) -> bool {
    r.benchmark.starts_with("classic.")
}

fn tests(doc: &RunDocument) -> Vec<(&BenchResult, Copies)> {
    doc.results
        .iter()
        .filter(|r| is_classic(r))
        .filter_map(|r| Some((r, r.params.read::<Copies>()?)))
        .collect()
}

/// On a hybrid machine, each test's copies grouped by the kind of CPU they ran on.
fn per_kind(doc: &RunDocument) -> String {
    let named: Vec<(String, &BenchResult)> = tests(doc)
        .into_iter()
        .map(|(r, p)| (format!("{} x{}", name(r, &p), p.copies), r))
        .collect();
    super::kinds::classic_table(&doc.env.topology.cpu_kinds, &named)
}

fn name(r: &BenchResult, p: &Copies) -> String {
    let n = r.base_id().trim_start_matches("classic.");
    match (p.fsync, &p.pair, p.work.as_deref()) {
        (true, _, _) => format!("{n} (fsync)"),
        (_, Some(pair), _) => format!("{n} (pinned {pair})"),
        (_, _, Some("all-modules")) => format!("{n} (all modules)"),
        _ => n.to_string(),
    }
}

/// A test's index as the table prints it: one figure, or the 95% interval from its rounds
/// marked `*` when they disagree (`rounds-disagree`).
fn index_cell(r: &BenchResult) -> String {
    match crate::findings::classic::index_interval(r) {
        Some((lo, hi)) => format!("{}–{}*", num(lo), num(hi)),
        None => r
            .derived
            .get(figures::INDEX)
            .map(|v| num(*v))
            .unwrap_or_default(),
    }
}

/// The line under a table with a `*` index: what the mark means.
fn disagree_note(doc: &RunDocument) -> String {
    let names: Vec<String> = tests(doc)
        .into_iter()
        .filter(|(r, _)| crate::findings::classic::index_interval(r).is_some())
        .map(|(r, p)| format!("{} x{}", name(r, &p), p.copies))
        .collect();
    if names.is_empty() {
        return String::new();
    }
    crate::report::views::wrap(&format!(
        "* its rounds disagree (finding {}): the index is the 95% interval from its rounds, not one figure ({})\n",
        crate::findings::classic::ROUNDS_DISAGREE,
        names.join(", ")
    ))
}

fn cpus_seen(r: &BenchResult) -> String {
    let Some(obs) = &r.placement.observed else {
        return String::new();
    };
    let mut s = format!("{:?}", obs.all_cpus().into_iter().collect::<Vec<_>>());
    if let Some(f) = obs.colocated_fraction() {
        s.push_str(&format!(", pair together {:.0}%", f * 100.0));
    }
    if r.placement.cpus.is_some() {
        s.push_str(" (pinned)");
    }
    s
}

/// The suite index lines: per copy count, ours and UnixBench's; then N's basis.
fn index_lines(ix: &SuiteIndexes) -> String {
    let mut out = String::new();
    let v = |x: Option<&Option<f64>>| x.copied().flatten().map(num).unwrap_or_else(|| "-".into());
    for k in ix.keys() {
        let label = match k.parse::<u64>() {
            Ok(c) => copies_label(c, ix.n),
            Err(_) => format!("{k} copies"),
        };
        out.push_str(&format!(
            "Index, {label}: {} (median of passes); UnixBench-style {} (lowest third dropped); {}\n",
            v(ix.by_copies.get(k)),
            v(ix.unixbench_style.get(k)),
            crate::units::count(ix.tests.get(k).copied().unwrap_or(0), "test"),
        ));
        if let Some(r) = ix.placement_range.get(k) {
            let o = |x: Option<f64>| x.map(num).unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "  its 95% CI {} – {}; with the context-switch pair pinned to one CPU {}, split over two CPUs {}\n",
                num(r.ci95_low),
                num(r.ci95_high),
                o(r.same_cpu),
                o(r.cross_cpu),
            ));
        }
    }
    out.push_str(&format!(
        "N = {}{}\n",
        ix.n_basis,
        if ix.partial {
            "; PARTIAL index: not every test ran"
        } else {
            ""
        }
    ));
    out
}

impl View for Classic {
    fn title(&self) -> &'static str {
        "Classic suite"
    }

    fn applies(&self, doc: &RunDocument) -> bool {
        !tests(doc).is_empty()
    }

    fn summary(&self, doc: &RunDocument) -> String {
        let ts = tests(doc);
        let counts: BTreeSet<u64> = ts.iter().map(|(_, p)| p.copies).collect();
        let mut header = vec!["test".to_string(), "unit".to_string()];
        for c in &counts {
            header.push(format!("x{c} rate"));
            header.push(format!("x{c} index"));
        }
        header.push("scaling".into());
        let mut t = narrow_table(&header.iter().map(String::as_str).collect::<Vec<_>>());
        let mut names: Vec<String> = Vec::new();
        for (r, p) in &ts {
            let n = name(r, p);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        for n in names {
            let of = |c: u64| ts.iter().find(|(r, p)| name(r, p) == n && p.copies == c);
            let unit = ts
                .iter()
                .find(|(r, p)| name(r, p) == n)
                .map(|(r, _)| r.unit.clone())
                .unwrap_or_default();
            let mut row = vec![n.clone(), unit];
            let mut scaling = String::new();
            for c in &counts {
                match of(*c) {
                    Some((r, _)) => {
                        row.push(num(r.stats.median));
                        row.push(index_cell(r));
                        if let Some(e) = r.derived.get(figures::SCALING_EFFICIENCY) {
                            scaling = format!("{:.0}% at x{c}", e * 100.0);
                        }
                    }
                    None => row.extend(["-".to_string(), "-".to_string()]),
                }
            }
            row.push(scaling);
            t.add_row(row);
        }
        let mut out = format!("Classic suite (UnixBench-equivalent; George = 10):\n{t}\n");
        out.push_str(&disagree_note(doc));
        if let Some(ix) = &doc.indexes {
            out.push_str(&index_lines(ix));
        }
        out.push_str(&per_kind(doc));
        out
    }

    fn full(&self, doc: &RunDocument) -> String {
        let mut t = crate::report::table(&[
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
        for (r, p) in tests(doc) {
            let d = |k: &str| r.derived.get(k).map(|v| num(*v)).unwrap_or_default();
            t.add_row(vec![
                name(r, &p),
                copies_label(p.copies, doc.indexes.as_ref().map(|ix| ix.n).unwrap_or(0)),
                num(r.stats.median),
                r.unit.clone(),
                format!("{} – {}", num(r.stats.ci95_low), num(r.stats.ci95_high)),
                pct(r.stats.cv),
                index_cell(r),
                d(figures::UNIXBENCH_INDEX),
                r.derived
                    .get(figures::SCALING_EFFICIENCY)
                    .map(|e| format!("{:.0}%", e * 100.0))
                    .unwrap_or_default(),
                cpus_seen(r),
            ]);
        }
        let mut out = format!("Classic suite (UnixBench-equivalent; George = 10)\n{t}\n");
        out.push_str(&disagree_note(doc));
        if let Some(ix) = &doc.indexes {
            out.push_str(&index_lines(ix));
            out.push_str("Per-placement context-switch figures: truebench run ctx\n");
        }
        out.push_str(&per_kind(doc));
        out.push('\n');
        out
    }

    fn headline(&self, doc: &RunDocument) -> Vec<String> {
        doc.indexes
            .as_ref()
            .map(|ix| index_lines(ix).lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    fn charts(&self, doc: &RunDocument) -> Vec<Chart> {
        let per_test = tests(doc)
            .into_iter()
            .filter_map(|(r, p)| {
                let scale = r.derived.get(figures::INDEX)? / r.stats.median;
                Some((
                    format!(
                        "{} x{}",
                        r.base_id().trim_start_matches("classic."),
                        p.copies
                    ),
                    r.stats.median * scale,
                    r.stats.ci95_low * scale,
                    r.stats.ci95_high * scale,
                ))
            })
            .collect();
        let mut out = vec![Chart::bars(
            "Classic index per test and copy count (George = 10)",
            "index",
            per_test,
        )];
        if let Some(ix) = &doc.indexes {
            let suite = ix
                .numbered()
                .into_iter()
                .filter_map(|(k, v)| {
                    let v = v?;
                    Some((
                        format!("suite index, {}", crate::units::count(k, "copy")),
                        v,
                        v,
                        v,
                    ))
                })
                .collect();
            out.push(Chart::bars(
                "Classic suite index (geometric mean of the test indexes)",
                "index",
                suite,
            ));
        }
        out
    }
}
