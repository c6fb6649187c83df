//! A row's name in a few words, as a person reads it ("vdso clock_gettime(MONOTONIC)",
//! "latency 4 KiB 4k pages", "bandwidth triad 2T non-temporal 128 MiB spread"), for the
//! tables that list rows of several benchmarks (`compare`'s). Each benchmark names its
//! rows from the params and placement that tell them apart (`Benchmark::label`); a result
//! of a benchmark this version does not know, or whose params do not read as its own, is
//! named by its benchmark and params as written (`name k=v,k=v [placement]`). `-v` and
//! `--json` keep the full params.

use crate::result::{BenchResult, Params};

/// The name of a result of `benchmark` (`family.name@version`, any version) with these
/// params, at this placement.
pub fn label(benchmark: &str, params: &Params, placement: &str) -> String {
    let base = benchmark.split('@').next().unwrap_or(benchmark);
    super::REGISTRY
        .iter()
        .find(|b| b.id().split('@').next() == Some(base))
        .and_then(|b| b.label(params, placement))
        .unwrap_or_else(|| as_written(base, params, placement))
}

/// The name of a result.
pub fn of(r: &BenchResult) -> String {
    label(&r.benchmark, &r.params, &r.placement.name)
}

/// `name k=v,k=v [placement]`: the family left out, the params as written, the placement
/// unless the scheduler placed it.
fn as_written(base: &str, params: &Params, placement: &str) -> String {
    let name = base.split_once('.').map(|(_, n)| n).unwrap_or(base);
    let mut s = name.to_string();
    if !params.0.is_empty() {
        s.push(' ');
        s.push_str(&params.text());
    }
    if placement != "os" {
        s.push_str(&format!(" [{placement}]"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn named(benchmark: &str, params: serde_json::Value, placement: &str) -> String {
        label(
            benchmark,
            &serde_json::from_value(params).unwrap(),
            placement,
        )
    }

    #[test]
    fn each_suite_names_its_rows_in_a_few_words() {
        let cases = [
            (
                named(
                    "timers.clock-read@1",
                    json!({"clock": "monotonic", "path": "vdso"}),
                    "os",
                ),
                "vdso clock_gettime(MONOTONIC)",
            ),
            (
                named(
                    "timers.clock-read@1",
                    json!({"clock": "monotonic_raw", "path": "syscall", "clocksource": "hpet"}),
                    "os",
                ),
                "syscall clock_gettime(MONOTONIC_RAW) on hpet",
            ),
            (
                named(
                    "timers.clock-read@1",
                    json!({"clock": "rdtsc", "path": "instruction"}),
                    "os",
                ),
                "rdtsc instruction",
            ),
            (
                named(
                    "ctx.pipe@1",
                    json!({"mode": "process", "footprint_kb": 0}),
                    "same-cpu",
                ),
                "pipe round trip processes same-cpu",
            ),
            (
                named(
                    "ctx.pipe@1",
                    json!({"mode": "thread", "footprint_kb": 64}),
                    "os",
                ),
                "pipe round trip threads os, 64 KiB touched",
            ),
            (
                named(
                    "c2c.cacheline@1",
                    json!({"cpu_a": 0, "cpu_b": 1, "pairs": "all"}),
                    "same-llc",
                ),
                "cache line CPU 0 to 1 same-llc",
            ),
            (
                named(
                    "memory.latency@1",
                    json!({"pages": "4k", "size_bytes": 4096}),
                    "cpus",
                ),
                "latency 4 KiB 4k pages",
            ),
            (
                named(
                    "memory.latency@1",
                    json!({"pages": "thp", "size_bytes": 1_572_864}),
                    "cpus",
                ),
                "latency 1.5 MiB huge pages",
            ),
            (
                named(
                    "memory.bandwidth@1",
                    json!({"array_bytes": 134217728, "kernel": "triad", "stores": "non-temporal", "threads": 2}),
                    "spread",
                ),
                "bandwidth triad 2T non-temporal 128 MiB spread",
            ),
            (
                named(
                    "memory.bandwidth@1",
                    json!({"array_bytes": 134217728, "kernel": "copy", "stores": "regular", "threads": 1}),
                    "compact",
                ),
                "bandwidth copy 1T 128 MiB",
            ),
            (
                named(
                    "memory.numa@1",
                    json!({"cpu_node": 0, "mem_node": 1, "metric": "latency", "size_bytes": 134217728, "distance": 21}),
                    "node0",
                ),
                "numa latency CPU node 0 memory node 1",
            ),
            (
                named(
                    "memory.per-event@1",
                    json!({"timing": "per-event", "block_bytes": 1024}),
                    "os",
                ),
                "1 KiB writes timed per event",
            ),
            (
                named(
                    "memory.per-event@1",
                    json!({"timing": "batch", "block_bytes": 1024}),
                    "os",
                ),
                "1 KiB writes timed as a batch",
            ),
            (
                named(
                    "classic.syscall@1",
                    json!({"copies": 1, "copies_basis": "1 copy", "copies_per_cpu": 0.5, "passes": 5, "plan": "quick", "window_s": 0.5}),
                    "os",
                ),
                "syscall 1 copy",
            ),
            (
                named(
                    "classic.context-switch@1",
                    json!({"copies": 2, "pair": "same-cpu", "passes": 5}),
                    "same-cpu",
                ),
                "context-switch 2 copies same-cpu",
            ),
            (
                named(
                    "classic.file-copy-256@1",
                    json!({"copies": 1, "fsync": true}),
                    "os",
                ),
                "file-copy-256 1 copy fsync",
            ),
            (
                named(
                    "classic.whetstone@3",
                    json!({"copies": 1, "work": "all-modules"}),
                    "os",
                ),
                "whetstone 1 copy all-modules work",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn rows_of_an_unknown_benchmark_or_params_are_named_as_written() {
        assert_eq!(
            named("future.thing@2", json!({"a": 1, "b": "x"}), "same-llc"),
            "thing a=1,b=x [same-llc]"
        );
        // Params that do not read as the benchmark's own.
        assert_eq!(
            named("memory.latency@1", json!({"size": "big"}), "os"),
            "latency size=big"
        );
    }
}
