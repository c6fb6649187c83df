//! What differs between the settings of two runs: the environment facts that change
//! results (host, CPU, quota, clocksource, kernel...), whether two runs share one setting
//! (what holding the run clock and adding rounds need), the topology facts that differ, and
//! the runs' memory limits where they sized the arrays.

use crate::probe::memory_limit::{limit_words, Limit};
use crate::probe::ProbeDoc;
use crate::result::RunDocument;
use crate::units::bytes;
use serde::Serialize;
use serde_json::Value;

/// One environment fact that differs between two runs, with both values.
#[derive(Debug, Clone, Serialize)]
pub struct EnvDiff {
    pub what: String,
    pub a: Value,
    pub b: Value,
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

/// Whether two runs were measured in the same setting: every fact compare lists as an
/// environment difference is equal.
pub fn same_setting(a: &ProbeDoc, b: &ProbeDoc) -> bool {
    setting_differences(a, b).is_empty()
}

/// The environment facts that differ between two probes (host, CPU, quota, clocksource,
/// kernel...), each with both values.
pub fn setting_differences(a: &ProbeDoc, b: &ProbeDoc) -> Vec<EnvDiff> {
    ENV_FACTS
        .iter()
        .filter_map(|(label, read)| {
            let (va, vb) = (read(a), read(b));
            (va != vb).then(|| EnvDiff {
                what: label.to_string(),
                a: va,
                b: vb,
            })
        })
        .collect()
}

/// Whether the probe found the LLC not shared between cores (`llc-not-shared`).
pub fn llc_not_shared(env: &ProbeDoc) -> bool {
    env.findings.iter().any(|f| f.id == "llc-not-shared")
}

/// The last-level cache size the probe reports (the largest instance at the LLC level).
pub fn llc_bytes(env: &ProbeDoc) -> Option<u64> {
    let level = env.topology.llc_level?;
    env.topology
        .caches
        .iter()
        .filter(|c| c.level == level && c.kind != "Instruction")
        .filter_map(|c| c.size_bytes)
        .max()
}

/// One topology fact of both runs, as text, when it differs.
fn differs(what: &str, a: String, b: String) -> Option<String> {
    (a != b).then(|| format!("{what}: A {a}, B {b}"))
}

/// The topology facts that differ between the runs.
pub fn topology_differences(a: &ProbeDoc, b: &ProbeDoc) -> Vec<String> {
    fn t(e: &ProbeDoc) -> &crate::probe::topology::Topology {
        &e.topology
    }
    let yes = |x: bool| if x { "yes" } else { "no" }.to_string();
    [
        differs(
            "LLC not shared between cores (llc-not-shared)",
            yes(llc_not_shared(a)),
            yes(llc_not_shared(b)),
        ),
        differs(
            "threads per core (SMT)",
            t(a).threads_per_core.to_string(),
            t(b).threads_per_core.to_string(),
        ),
        differs(
            "packages / cores / logical CPUs",
            format!("{}/{}/{}", t(a).packages, t(a).cores, t(a).threads),
            format!("{}/{}/{}", t(b).packages, t(b).cores, t(b).threads),
        ),
        differs(
            "CPU kinds",
            t(a).cpu_kinds.len().max(1).to_string(),
            t(b).cpu_kinds.len().max(1).to_string(),
        ),
        differs(
            "NUMA nodes",
            a.numa.nodes.len().to_string(),
            b.numa.nodes.len().to_string(),
        ),
        differs(
            "reported LLC size",
            llc_bytes(a).map(bytes).unwrap_or_else(|| "unknown".into()),
            llc_bytes(b).map(bytes).unwrap_or_else(|| "unknown".into()),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The limit a run sized its buffers within, in words ("memory limit 256 MiB (file)",
/// "none").
fn said(l: Option<&Limit>) -> String {
    l.map(|l| format!("{} {}", limit_words(l), l.words()))
        .unwrap_or_else(|| "no memory limit".into())
}

/// The memory limit a run sized its buffers within (its cgroup's, the tighter of
/// `memory.max` and `memory.high`), if any.
pub fn binding(doc: &RunDocument) -> Option<&Limit> {
    doc.env.memory.binding()
}

/// The runs' limits, when they differ: "A: no memory limit; B: memory limit 256 MiB (...)".
pub fn memory_limits_differ(a: &RunDocument, b: &RunDocument) -> Option<String> {
    let (la, lb) = (binding(a), binding(b));
    (la.map(|l| l.bytes) != lb.map(|l| l.bytes))
        .then(|| format!("A: {}; B: {}", said(la), said(lb)))
}

/// Comparability's problems, with the runs' memory limits after an array size that
/// differs where the limits differ too: the limit is why the sizes differ.
pub fn with_limits(mut problems: Vec<String>, a: &RunDocument, b: &RunDocument) -> Vec<String> {
    if let Some(limits) = memory_limits_differ(a, b) {
        if problems.iter().any(|p| p.contains("array_bytes")) {
            problems.push(format!(
                "the runs' memory limits differ ({limits}): a limit sizes the arrays"
            ));
        }
    }
    problems
}
