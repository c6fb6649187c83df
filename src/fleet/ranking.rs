//! Several runs against one of them (`--baseline RUN`): each benchmark row of the baseline
//! ranked over every run that measured it (median with its 95% CI; a run ties with the
//! best of its tie group only when their CIs overlap, `fleet::ranks`), each run judged and
//! explained against the baseline; with many runs only the top and bottom N are kept, and
//! runs may be grouped by one of their tags (`--by tag:KEY`).

use super::ranks::{tie_ranks, Figure};
use crate::compare::matching::{label, MatchIndex};
use crate::compare::stats::verdict::{History, Verdict};
use crate::compare::{compare_with, Comparison, Row, SCHEMA};
use crate::result::RunDocument;
use serde::Serialize;

/// One run's figure in a ranked row.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub rank: usize,
    pub run: String,
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// This run over the baseline.
    pub ratio: f64,
    /// Against the baseline (the baseline's own entry says `baseline`).
    pub verdict: String,
    /// explained / partly explained / unexplained, against the baseline.
    pub status: String,
}

/// A group of runs sharing a tag value, in one ranked row.
#[derive(Debug, Clone, Serialize)]
pub struct GroupEntry {
    pub group: String,
    pub runs: usize,
    /// The median of the runs' medians, and their range.
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Ranked {
    pub benchmark: String,
    /// The row in a few words (`bench::label`).
    pub label: String,
    pub params: String,
    pub placement: String,
    pub unit: String,
    pub lower_is_better: bool,
    /// Best first.
    pub entries: Vec<Entry>,
    /// Entries left out between the top and the bottom N.
    pub omitted: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupEntry>,
}

/// A row of one run's comparison with the baseline, naming both runs.
#[derive(Debug, Clone, Serialize)]
pub struct FleetRow {
    pub a: String,
    pub b: String,
    #[serde(flatten)]
    pub row: Row,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub schema: &'static str,
    pub baseline: String,
    pub runs: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    pub ranking: Vec<Ranked>,
    /// Every run's rows against the baseline.
    pub rows: Vec<FleetRow>,
    /// Every run's comparison with the baseline (summary, differences, candidates); its rows
    /// are in `rows` (each written once).
    #[serde(serialize_with = "heads")]
    pub comparisons: Vec<Comparison>,
}

/// A comparison without its rows (they are in the fleet's `rows`).
#[derive(Serialize)]
struct Head<'a> {
    schema: &'a str,
    runs: &'a [String; 2],
    a: &'a str,
    b: &'a str,
    tags: &'a [std::collections::BTreeMap<String, String>; 2],
    summary: &'a [String],
    only_in_a: &'a [String],
    only_in_b: &'a [String],
    env_differences: &'a [crate::compare::EnvDiff],
    topology_differences: &'a [String],
    candidates: &'a [crate::compare::causes::candidates::Candidate],
    indexes: &'a [crate::compare::index::IndexShares],
}

fn heads<S: serde::Serializer>(c: &[Comparison], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(c.iter().map(|c| Head {
        schema: c.schema,
        runs: &c.runs,
        a: &c.a,
        b: &c.b,
        tags: &c.tags,
        summary: &c.summary,
        only_in_a: &c.only_in_a,
        only_in_b: &c.only_in_b,
        env_differences: &c.env_differences,
        topology_differences: &c.topology_differences,
        candidates: &c.candidates,
        indexes: &c.indexes,
    }))
}

/// How runs are grouped: by the value of one of their tags.
pub fn group_of(doc: &RunDocument, tag: Option<&str>) -> Option<String> {
    let key = tag?;
    Some(
        doc.tags
            .get(key)
            .cloned()
            .unwrap_or_else(|| format!("(no {key} tag)")),
    )
}

fn median_of(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Rank `docs` against `docs[baseline]`; keep the top and bottom `top` entries of each row
/// when given; group by tag `by` when given; `history(doc)` gives the drift of a run's host.
pub fn rank(
    docs: &[RunDocument],
    baseline: usize,
    top: Option<usize>,
    by: Option<&str>,
    history: &dyn Fn(&RunDocument) -> History,
) -> Fleet {
    let base = &docs[baseline];
    let others: Vec<&RunDocument> = docs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != baseline)
        .map(|(_, d)| d)
        .collect();
    let hist = history(base);
    let comparisons: Vec<Comparison> = others
        .iter()
        .map(|d| compare_with(base, d, &hist))
        .collect();
    // Built once per run: each lookup below is a hash probe, not a scan (linear in results).
    let indexes: Vec<MatchIndex> = others.iter().map(|d| MatchIndex::new(d)).collect();
    let rows_by_key: Vec<std::collections::HashMap<(&str, &str, &str), &Row>> = comparisons
        .iter()
        .map(|c| {
            let mut m = std::collections::HashMap::new();
            for r in &c.rows {
                m.entry((
                    r.benchmark.as_str(),
                    r.placement.as_str(),
                    r.params.as_str(),
                ))
                .or_insert(r);
            }
            m
        })
        .collect();
    let mut ranking = vec![];
    for ra in &base.results {
        let key = label(ra);
        let mut entries = vec![Entry {
            rank: 0,
            run: base.run_id.clone(),
            host: base.host.clone(),
            group: group_of(base, by),
            median: ra.stats.median,
            ci95_low: ra.stats.ci95_low,
            ci95_high: ra.stats.ci95_high,
            ratio: 1.0,
            verdict: "baseline".into(),
            status: String::new(),
        }];
        let params = ra.params_text();
        for ((d, index), rows) in others.iter().zip(&indexes).zip(&rows_by_key) {
            let Some((rb, _)) = index.find(base, ra) else {
                continue;
            };
            let row = rows
                .get(&(
                    ra.benchmark.as_str(),
                    ra.placement.name.as_str(),
                    params.as_str(),
                ))
                .copied();
            entries.push(Entry {
                rank: 0,
                run: d.run_id.clone(),
                host: d.host.clone(),
                group: group_of(d, by),
                median: rb.stats.median,
                ci95_low: rb.stats.ci95_low,
                ci95_high: rb.stats.ci95_high,
                ratio: rb.stats.median / ra.stats.median,
                verdict: row
                    .map(|r| r.verdict.text().to_string())
                    .unwrap_or_else(|| Verdict::NotComparable.text().into()),
                status: row.map(|r| r.status.text().to_string()).unwrap_or_default(),
            });
        }
        if entries.len() < 2 {
            continue;
        }
        let lib = ra.lower_is_better;
        entries.sort_by(|x, y| {
            if lib {
                x.median.total_cmp(&y.median)
            } else {
                y.median.total_cmp(&x.median)
            }
        });
        // Ranks: ties with the leader of a tie group only, never chained through neighbours.
        let figs: Vec<Figure> = entries
            .iter()
            .map(|e| match lib {
                true => Figure {
                    value: -e.median,
                    low: -e.ci95_high,
                    high: -e.ci95_low,
                },
                false => Figure {
                    value: e.median,
                    low: e.ci95_low,
                    high: e.ci95_high,
                },
            })
            .collect();
        for (e, r) in entries.iter_mut().zip(tie_ranks(&figs)) {
            e.rank = r;
        }
        let mut groups = vec![];
        if by.is_some() {
            let mut names: Vec<String> = entries.iter().filter_map(|e| e.group.clone()).collect();
            names.sort();
            names.dedup();
            for g in names {
                let mut v: Vec<f64> = entries
                    .iter()
                    .filter(|e| e.group.as_deref() == Some(g.as_str()))
                    .map(|e| e.median)
                    .collect();
                let (min, max) = v
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                        (a.min(*x), b.max(*x))
                    });
                groups.push(GroupEntry {
                    group: g,
                    runs: v.len(),
                    median: median_of(&mut v),
                    min,
                    max,
                });
            }
            groups.sort_by(|x, y| {
                if lib {
                    x.median.total_cmp(&y.median)
                } else {
                    y.median.total_cmp(&x.median)
                }
            });
        }
        let mut omitted = 0;
        if let Some(n) = top {
            if entries.len() > 2 * n {
                omitted = entries.len() - 2 * n;
                entries.drain(n..entries.len() - n);
            }
        }
        let _ = key;
        ranking.push(Ranked {
            benchmark: ra.benchmark.clone(),
            label: crate::bench::label::of(ra),
            params: ra.params_text(),
            placement: ra.placement.name.clone(),
            unit: ra.unit.clone(),
            lower_is_better: lib,
            entries,
            omitted,
            groups,
        });
    }
    let rows = comparisons
        .iter()
        .flat_map(|c| {
            c.rows.iter().map(|r| FleetRow {
                a: c.a.clone(),
                b: c.b.clone(),
                row: r.clone(),
            })
        })
        .collect();
    Fleet {
        schema: SCHEMA,
        baseline: base.run_id.clone(),
        runs: docs.iter().map(|d| d.run_id.clone()).collect(),
        by: by.map(|k| format!("tag:{k}")),
        ranking,
        rows,
        comparisons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::testing::{in_rounds, timers_run};

    fn tagged(id: &str, median: f64, rack: &str) -> RunDocument {
        let mut d = in_rounds(timers_run(id, median, None));
        d.tags.insert("rack".into(), rack.into());
        d
    }

    #[test]
    fn runs_rank_best_first_with_ties_by_ci_and_top_n_keeps_both_ends() {
        let docs = vec![
            tagged("base", 20.0, "r1"),
            tagged("slow", 40.0, "r2"),
            tagged("fast", 10.0, "r1"),
            tagged("tie", 20.1, "r2"),
            tagged("slowest", 80.0, "r2"),
        ];
        let f = rank(&docs, 0, None, Some("rack"), &|_| History::default());
        let r = &f.ranking[0];
        let order: Vec<&str> = r.entries.iter().map(|e| e.run.as_str()).collect();
        assert_eq!(order, vec!["fast", "base", "tie", "slow", "slowest"]);
        assert_eq!(
            r.entries[1].rank, r.entries[2].rank,
            "overlapping CIs share a rank"
        );
        assert_eq!(r.entries[3].verdict, "B worse");
        assert_eq!(r.groups[0].group, "r1");
        assert_eq!((r.groups[1].runs, r.groups[1].median), (3, 40.0));
        assert_eq!(f.comparisons.len(), 4);
        assert!(f.rows.iter().all(|x| x.a == "base"));
        let f = rank(&docs, 0, Some(1), None, &|_| History::default());
        let order: Vec<&str> = f.ranking[0]
            .entries
            .iter()
            .map(|e| e.run.as_str())
            .collect();
        assert_eq!(order, vec!["fast", "slowest"]);
        assert_eq!(f.ranking[0].omitted, 3);
    }
}
