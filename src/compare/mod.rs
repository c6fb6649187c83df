//! Comparing two runs: per benchmark and placement, both medians, their ratio, whether the
//! confidence intervals overlap and whether a rank test says the difference is real; and
//! the environment differences that could explain it.

use crate::measure::stats::mann_whitney_p;
use crate::probe::ProbeDoc;
use crate::result::{BenchResult, RunDocument};
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub benchmark: String,
    pub placement: String,
    pub params: String,
    pub unit: String,
    pub a_median: f64,
    pub b_median: f64,
    /// b / a.
    pub ratio: f64,
    pub ci_overlap: bool,
    /// Two-sided Mann-Whitney p-value; null with fewer than 3 samples a side.
    pub p_value: Option<f64>,
    /// `faster`, `slower` (for B relative to A) or `no real difference`.
    pub verdict: String,
    /// Set when the two results come from different definition versions.
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
    pub a: String,
    pub b: String,
    pub rows: Vec<Row>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    pub env_differences: Vec<EnvDiff>,
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

fn verdict(a: &BenchResult, b: &BenchResult, p: Option<f64>, overlap: bool) -> String {
    let real = match p {
        Some(p) => p < 0.05 && !overlap,
        None => !overlap,
    };
    if !real {
        return "no real difference".into();
    }
    let b_higher = b.stats.median > a.stats.median;
    if b_higher != a.lower_is_better {
        "B better".into()
    } else {
        "B worse".into()
    }
}

pub fn compare(a: &RunDocument, b: &RunDocument) -> Comparison {
    let mut rows = Vec::new();
    let mut only_in_a = Vec::new();
    for ra in &a.results {
        let same = b.results.iter().find(|rb| rb.key() == ra.key());
        let other_version = b.results.iter().find(|rb| {
            rb.base_id() == ra.base_id()
                && rb.benchmark != ra.benchmark
                && rb.placement.name == ra.placement.name
                && rb.params == ra.params
        });
        let Some(rb) = same.or(other_version) else {
            only_in_a.push(ra.key());
            continue;
        };
        let overlap =
            ra.stats.ci95_low <= rb.stats.ci95_high && rb.stats.ci95_low <= ra.stats.ci95_high;
        let p = mann_whitney_p(&ra.samples, &rb.samples);
        rows.push(Row {
            benchmark: ra.benchmark.clone(),
            placement: ra.placement.name.clone(),
            params: ra.params_text(),
            unit: ra.unit.clone(),
            a_median: ra.stats.median,
            b_median: rb.stats.median,
            ratio: rb.stats.median / ra.stats.median,
            ci_overlap: overlap,
            p_value: p,
            verdict: verdict(ra, rb, p, overlap),
            warning: (rb.benchmark != ra.benchmark).then(|| {
                format!(
                    "definitions differ ({} vs {}): not comparable",
                    ra.benchmark, rb.benchmark
                )
            }),
        });
    }
    let only_in_b = b
        .results
        .iter()
        .filter(|rb| {
            !a.results.iter().any(|ra| {
                ra.base_id() == rb.base_id()
                    && ra.placement.name == rb.placement.name
                    && ra.params == rb.params
            })
        })
        .map(BenchResult::key)
        .collect();
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
    Comparison {
        a: a.run_id.clone(),
        b: b.run_id.clone(),
        rows,
        only_in_a,
        only_in_b,
        env_differences,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    /// A result of 10 samples spread ±4.5 around `median`.
    fn result(bench: &str, median: f64, lower_is_better: bool) -> BenchResult {
        let mut r = testing::result(bench, "os", None, json!({"clock": "monotonic"}), median);
        r.lower_is_better = lower_is_better;
        r
    }

    fn run(id: &str, results: Vec<BenchResult>, clocksource: &str) -> RunDocument {
        let mut env = crate::probe::fixture("this-vm");
        env.clock.clocksource = Some(clocksource.into());
        testing::run(id, results, env)
    }

    #[test]
    fn a_real_slowdown_is_called_worse_and_noise_is_not() {
        let a = run("a", vec![result("timers.clock-read@1", 20.0, true)], "tsc");
        let slow = run(
            "b",
            vec![result("timers.clock-read@1", 40.0, true)],
            "kvm-clock",
        );
        let c = compare(&a, &slow);
        assert_eq!(c.rows[0].verdict, "B worse");
        assert_eq!(c.rows[0].ratio, 2.0);
        assert!(!c.rows[0].ci_overlap);
        assert_eq!(c.env_differences.len(), 1);
        assert_eq!(c.env_differences[0].what, "clocksource");

        let same = run("c", vec![result("timers.clock-read@1", 20.05, true)], "tsc");
        let c = compare(&a, &same);
        assert_eq!(c.rows[0].verdict, "no real difference");
        assert!(c.env_differences.is_empty());
    }

    #[test]
    fn higher_is_better_flips_the_verdict() {
        let a = run("a", vec![result("x.rate@1", 20.0, false)], "tsc");
        let b = run("b", vec![result("x.rate@1", 40.0, false)], "tsc");
        assert_eq!(compare(&a, &b).rows[0].verdict, "B better");
    }

    #[test]
    fn different_definition_versions_warn() {
        let a = run("a", vec![result("x.rate@1", 20.0, false)], "tsc");
        let b = run("b", vec![result("x.rate@2", 20.0, false)], "tsc");
        let c = compare(&a, &b);
        assert!(c.rows[0]
            .warning
            .as_deref()
            .unwrap()
            .contains("not comparable"));
        assert!(c.only_in_a.is_empty() && c.only_in_b.is_empty());
        let other = run("c", vec![result("y.rate@1", 20.0, false)], "tsc");
        let c = compare(&a, &other);
        assert_eq!(
            (c.only_in_a.len(), c.only_in_b.len(), c.rows.len()),
            (1, 1, 0)
        );
    }
}
