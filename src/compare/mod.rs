//! Comparing runs. Rows pair the results of two runs that measured the same thing
//! (`matching`); a row whose definition, params or sample count differ is said to be not
//! comparable first (`comparability`); the others get a verdict, with differences below the
//! host's run-to-run drift called drift (`verdict`). Every real difference is then
//! explained, cause by cause, with evidence from both documents: placement, topology,
//! timer, capacity, noise, CPU speed, and candidates nothing quantifies; each row ends
//! explained, partly explained (what remains) or unexplained, and a summary gives each
//! suite's sentence (`summary`). `ranking` compares several runs against a baseline;
//! `fleet` judges many hosts against the fleet itself (outliers, causes, ranks).

pub mod candidates;
pub mod capacity;
pub mod comparability;
pub mod explain;
pub mod fleet;
pub mod index;
pub mod matching;
pub mod noise;
pub mod placement;
pub mod ranking;
pub mod speed;
pub mod summary;
pub mod timer;
pub mod topology;
pub mod verdict;

#[cfg(test)]
pub mod testing;

use crate::probe::ProbeDoc;
use crate::result::RunDocument;
use explain::{Explanation, RowCtx, Status};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use verdict::{History, Verdict};

pub const SCHEMA: &str = "truebench.compare/1";

/// Both medians of a row.
#[derive(Debug, Clone, Serialize)]
pub struct Medians {
    pub a: f64,
    pub b: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// A's benchmark id (B's differs only when the definitions differ: see `comparability`).
    pub benchmark: String,
    pub placement: String,
    pub params: String,
    /// For parallel copies: the role both results play (`1 copy`, `all usable CPUs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub unit: String,
    /// B's unit, when it is not A's (such a row is not comparable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit_b: Option<String>,
    pub lower_is_better: bool,
    pub medians: Medians,
    pub ratio: f64,
    pub ci_overlap: bool,
    /// Two-sided Mann-Whitney p-value; null with fewer than 3 samples a side.
    pub p: Option<f64>,
    /// `B better`, `B worse`, `drift`, `no real difference`, or `not comparable`.
    pub verdict: Verdict,
    /// The drift a real difference must exceed, and where it comes from.
    pub drift: verdict::Drift,
    /// Why the row gets no verdict (different version, params or sample count).
    pub comparability: Vec<String>,
    pub explanations: Vec<Explanation>,
    /// explained, partly explained, unexplained, or nothing to explain.
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remains: Option<String>,
    /// Earlier keys, kept for scripts written against them.
    pub a_median: f64,
    pub b_median: f64,
    pub p_value: Option<f64>,
    pub warning: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvDiff {
    pub what: String,
    pub a: Value,
    pub b: Value,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub runs: [String; 2],
    pub a: String,
    pub b: String,
    /// Each run's tags (`--tag KEY=VALUE`), A's then B's.
    pub tags: [BTreeMap<String, String>; 2],
    /// Per suite, the sentences a performance engineer would write.
    pub summary: Vec<String>,
    pub rows: Vec<Row>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    pub env_differences: Vec<EnvDiff>,
    pub topology_differences: Vec<String>,
    pub candidates: Vec<candidates::Candidate>,
    pub indexes: Vec<index::IndexShares>,
}

/// Environment facts that change results, as (label, the fact read from the probe).
type Fact = fn(&ProbeDoc) -> Value;

fn fact<T: Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

const ENV_FACTS: &[(&str, Fact)] = &[
    ("host", |e| fact(&e.hostname)),
    ("CPU model", |e| fact(&e.kernel.cpu_model)),
    ("packages", |e| fact(e.topology.packages)),
    ("cores", |e| fact(e.topology.cores)),
    ("logical CPUs", |e| fact(e.topology.threads)),
    ("threads per core", |e| fact(e.topology.threads_per_core)),
    ("LLC groups", |e| fact(&e.topology.llc_groups)),
    // NUMA nodes by their CPUs, not by memory that moves at run time.
    ("NUMA nodes", |e| {
        fact(e.numa.nodes.iter().map(|n| &n.cpus).collect::<Vec<_>>())
    }),
    ("usable CPUs", |e| fact(&e.cpus.usable)),
    ("CPU quota", |e| fact(e.cpus.cgroup_quota)),
    ("VM", |e| fact(&e.virtualization.vm)),
    ("container", |e| fact(&e.virtualization.container)),
    ("clocksource", |e| fact(&e.clock.clocksource)),
    ("kernel", |e| fact(&e.kernel.release)),
    ("cpufreq governor", |e| fact(&e.kernel.cpufreq_governor)),
    ("THP", |e| fact(&e.kernel.thp)),
];

/// The causes, in the order a row lists them.
const CAUSES: &[fn(&RowCtx) -> Option<Explanation>] = &[
    placement::explain,
    topology::explain,
    timer::explain,
    capacity::explain,
    noise::explain,
    speed::explain,
];

/// Results without a partner, each with the other run's reason when it skipped the case.
fn unmatched(
    results: &[&crate::result::BenchResult],
    other: &RunDocument,
    side: &str,
) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            let why = matching::skipped_reason(other, r)
                .map(|w| format!(" ({side} did not run it: {w})"))
                .unwrap_or_default();
            format!("{}{why}", r.key())
        })
        .collect()
}

/// Compare B with A, with the default drift floor for every row.
pub fn compare(a: &RunDocument, b: &RunDocument) -> Comparison {
    compare_with(a, b, &History::default())
}

/// Compare B with A, with the drift of the host's stored history.
pub fn compare_with(a: &RunDocument, b: &RunDocument, history: &History) -> Comparison {
    let pairing = matching::pair_up(a, b);
    let cands = candidates::list(&a.env, &b.env);
    let mut rows = vec![];
    for m in &pairing.matched {
        let drift = history.drift(m.a);
        let judged = verdict::judge(m.a, m.b, drift.fraction);
        let comparability = comparability::problems(m.a, m.b);
        let verdict = if comparability.is_empty() {
            judged.verdict
        } else {
            Verdict::NotComparable
        };
        let mut explanations = vec![];
        if verdict.is_real() {
            let c = RowCtx {
                a,
                b,
                ra: m.a,
                rb: m.b,
                judged,
                drift: drift.fraction,
            };
            explanations.extend(
                CAUSES
                    .iter()
                    .filter_map(|cause| cause(&c))
                    .map(|e| e.unless_below_drift(c.drift)),
            );
            let explained = explanations
                .iter()
                .any(|e| e.claim == explain::Claim::Explains);
            if !explained {
                explanations.extend(candidates::explain(&cands));
            }
        }
        let (status, remains) = explain::status(verdict, &explanations);
        rows.push(Row {
            benchmark: m.a.benchmark.clone(),
            placement: m.a.placement.name.clone(),
            params: m.a.params_text(),
            role: m.role.map(|r| r.to_string()),
            unit: m.a.unit.clone(),
            unit_b: (m.b.unit != m.a.unit).then(|| m.b.unit.clone()),
            lower_is_better: m.a.lower_is_better,
            medians: Medians {
                a: m.a.stats.median,
                b: m.b.stats.median,
            },
            ratio: judged.ratio,
            ci_overlap: judged.ci_overlap,
            p: judged.p,
            verdict,
            drift,
            warning: (!comparability.is_empty()).then(|| comparability.join("; ")),
            comparability,
            explanations,
            status,
            remains,
            a_median: m.a.stats.median,
            b_median: m.b.stats.median,
            p_value: judged.p,
        });
    }
    let only_in_a = unmatched(&pairing.only_a, b, "B");
    let only_in_b = unmatched(&pairing.only_b, a, "A");
    let env_differences = ENV_FACTS
        .iter()
        .filter_map(|(label, read)| {
            let (va, vb) = (read(&a.env), read(&b.env));
            (va != vb).then(|| EnvDiff {
                what: label.to_string(),
                a: va,
                b: vb,
            })
        })
        .collect();
    let indexes = index::shares(a, b);
    let mut c = Comparison {
        schema: SCHEMA,
        runs: [a.run_id.clone(), b.run_id.clone()],
        a: a.run_id.clone(),
        b: b.run_id.clone(),
        tags: [a.tags.clone(), b.tags.clone()],
        summary: vec![],
        rows,
        only_in_a,
        only_in_b,
        env_differences,
        topology_differences: topology::differences(&a.env, &b.env),
        candidates: cands,
        indexes,
    };
    c.summary = summary::sentences(&c);
    c
}
