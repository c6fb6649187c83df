//! The conservative floor: the run-to-run noise `compare` assumes for a row when the
//! baseline's host has neither a calibration nor a stored history of it (the verdict then
//! rests on one run each).
//!
//! A single run's samples see only the levels its benchmark draws afresh per sample
//! (`Benchmark::levels`); what the other levels add between runs (where the hypervisor put
//! the vCPUs, which pages the process got, frequency, neighbours) no sample of it shows. The
//! floor therefore adds to each run's own sampling variance a run-level σ per benchmark,
//! the Kalibera-Jones decomposition of separate runs on a reference machine: for each row,
//! σ_run² = s²(ln medians between runs) − median(within-run variance of ln median), and the
//! benchmark's σ is the largest σ_run of any of its rows ([`REFERENCE`], measured by
//! [`measure`]; the unit test recomputes it from the reference documents, so the figures
//! cannot drift from their data). The largest row, not a typical one: a floor that covers
//! the noisiest point of a curve over-covers the quiet ones, which is what a verdict without
//! calibration must do. A benchmark the reference runs did not measure gets the largest σ
//! of the measured benchmarks whose samples cover the same levels below the run (fresh
//! processes and allocations per sample, or levels that do not apply), else the largest
//! measured at all. Nothing here is below the 1% every noise basis keeps (`MIN_SIGMA`).

use crate::measure::stats::log_sd as log_sd_min;

/// The smallest σ a calibration or history gives: a few runs close together on one boot
/// do not see boot- and day-level variance (they are not sampled), so no row is trusted
/// below 1% per run.
pub const MIN_SIGMA: f64 = 0.01;

fn log_sd(medians: &[f64]) -> Option<f64> {
    log_sd_min(medians, 3)
}

fn within_se(r: &BenchResult) -> f64 {
    r.stats.log_se()
}
use crate::bench::levels::{Coverage, Level, LevelUse};
use crate::result::params::{ParamValue, Params};
use crate::result::{BenchResult, RunDocument};
use std::collections::BTreeMap;

/// Where the reference figures come from.
pub const REFERENCE_RUNS: &str = "8 runs of the default suites and 6 of the classic suite on a 2-vCPU KVM guest of an AMD EPYC host with other tenants' builds beside them (load 6-7.5; 7-10 for classic), 2026-11-25 and 26";

/// The reference runs, as exported (tests/fixtures/aa/): `calibrate --runs 5`, then three
/// `run`s back to back; and six `run classic` back to back.
#[cfg(test)]
pub const REFERENCE_FILES: &[&str] = &[
    "calibration-1",
    "calibration-2",
    "calibration-3",
    "calibration-4",
    "calibration-5",
    "aa-1",
    "aa-2",
    "aa-3",
    "classic-1",
    "classic-2",
    "classic-3",
    "classic-4",
    "classic-5",
    "classic-6",
];

/// One kind of row's run-level σ on the reference machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// The kind ([`kind`]: `ctx.pipe [same-llc] mode=process`).
    pub kind: &'static str,
    /// The largest run-level σ (of ln median) of its rows, rounded up to 0.1%.
    pub sigma: f64,
    /// The row that gave it (its numeric params; empty when the kind has none).
    pub row: &'static str,
}

/// The reference figures ([`REFERENCE_RUNS`]).
// Measured figures: one of them (0.318) happens to be near 1/π.
#[allow(clippy::approx_constant)]
pub const REFERENCE: &[Reference] = &[
    Reference {
        kind: "c2c.cacheline [same-llc] pairs=all",
        sigma: 0.401,
        row: "cpu_a=0,cpu_b=1",
    },
    Reference {
        kind: "classic.context-switch [cross-cpu] pair=cross-cpu,plan=quick",
        sigma: 0.300,
        row: "copies=1,copies_per_cpu=0.5,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.context-switch [os] plan=quick",
        sigma: 1.148,
        row: "copies=1,copies_per_cpu=0.5,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.context-switch [same-cpu] pair=same-cpu,plan=quick",
        sigma: 0.311,
        row: "copies=1,copies_per_cpu=0.5,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.dhrystone [os] plan=quick",
        sigma: 0.351,
        row: "copies=1,copies_per_cpu=0.5,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.execl [os] exec_target=kernel-worker,plan=quick",
        sigma: 0.308,
        row: "copies=1,copies_per_cpu=0.5,exec_target_bytes=19192,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.file-copy-1024 [os] fsync=false,plan=quick",
        sigma: 0.364,
        row: "copies=2,copies_per_cpu=1.0,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.file-copy-256 [os] fsync=false,plan=quick",
        sigma: 0.318,
        row: "copies=2,copies_per_cpu=1.0,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.file-copy-4096 [os] fsync=false,plan=quick",
        sigma: 0.334,
        row: "copies=1,copies_per_cpu=0.5,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.pipe-throughput [os] plan=quick",
        sigma: 0.284,
        row: "copies=1,copies_per_cpu=0.5,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.process-creation [os] plan=quick",
        sigma: 0.489,
        row: "copies=1,copies_per_cpu=0.5,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.shell-1 [os] plan=quick",
        sigma: 0.177,
        row: "copies=2,copies_per_cpu=1.0,passes=5,window_s=1.0",
    },
    Reference {
        kind: "classic.shell-8 [os] plan=quick",
        sigma: 0.225,
        row: "copies=2,copies_per_cpu=1.0,passes=5,window_s=1.0",
    },
    Reference {
        kind: "classic.syscall [os] plan=quick",
        sigma: 0.356,
        row: "copies=2,copies_per_cpu=1.0,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.whetstone [os] plan=quick,work=all-modules",
        sigma: 0.383,
        row: "copies=2,copies_per_cpu=1.0,passes=5,window_s=0.5",
    },
    Reference {
        kind: "classic.whetstone [os] plan=quick,work=unixbench",
        sigma: 0.333,
        row: "copies=2,copies_per_cpu=1.0,passes=5,window_s=0.5",
    },
    Reference {
        kind: "ctx.pipe [os] mode=process",
        sigma: 0.678,
        row: "footprint_kb=0",
    },
    Reference {
        kind: "ctx.pipe [os] mode=thread",
        sigma: 0.838,
        row: "footprint_kb=0",
    },
    Reference {
        kind: "ctx.pipe [same-cpu] mode=process",
        sigma: 0.148,
        row: "footprint_kb=0",
    },
    Reference {
        kind: "ctx.pipe [same-cpu] mode=thread",
        sigma: 0.144,
        row: "footprint_kb=0",
    },
    Reference {
        kind: "ctx.pipe [same-llc] mode=process",
        sigma: 0.253,
        row: "footprint_kb=0",
    },
    Reference {
        kind: "ctx.pipe [same-llc] mode=thread",
        sigma: 0.240,
        row: "footprint_kb=0",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=add,stores=non-temporal",
        sigma: 0.229,
        row: "array_bytes=134217728,threads=1",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=add,stores=regular",
        sigma: 0.228,
        row: "array_bytes=134217728,threads=1",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=copy,stores=non-temporal",
        sigma: 0.261,
        row: "array_bytes=134217728,threads=2",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=copy,stores=regular",
        sigma: 0.222,
        row: "array_bytes=134217728,threads=1",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=fill,stores=non-temporal",
        sigma: 0.245,
        row: "array_bytes=134217728,threads=1",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=fill,stores=regular",
        sigma: 0.410,
        row: "array_bytes=134217728,threads=2",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=scale,stores=non-temporal",
        sigma: 0.334,
        row: "array_bytes=134217728,threads=2",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=scale,stores=regular",
        sigma: 0.246,
        row: "array_bytes=134217728,threads=1",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=sum,stores=regular",
        sigma: 0.346,
        row: "array_bytes=134217728,threads=2",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=triad,stores=non-temporal",
        sigma: 0.240,
        row: "array_bytes=134217728,threads=2",
    },
    Reference {
        kind: "memory.bandwidth [compact] kernel=triad,stores=regular",
        sigma: 0.246,
        row: "array_bytes=134217728,threads=1",
    },
    Reference {
        kind: "memory.latency [cpus] pages=4k",
        sigma: 1.059,
        row: "size_bytes=5931584",
    },
    Reference {
        kind: "memory.latency [cpus] pages=thp",
        sigma: 0.727,
        row: "size_bytes=8388608",
    },
    Reference {
        kind: "memory.numa [node0] metric=latency",
        sigma: 0.087,
        row: "cpu_node=0,distance=10,mem_node=0,size_bytes=134217728",
    },
    Reference {
        kind: "memory.numa [node0] metric=read-bandwidth",
        sigma: 0.000,
        row: "cpu_node=0,distance=10,mem_node=0,size_bytes=134217728",
    },
    Reference {
        kind: "memory.per-event [os] timing=batch",
        sigma: 0.332,
        row: "block_bytes=1024",
    },
    Reference {
        kind: "memory.per-event [os] timing=per-event",
        sigma: 0.025,
        row: "block_bytes=1024",
    },
    Reference {
        kind: "timers.clock-read [os] clock=boottime,path=syscall",
        sigma: 0.000,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=boottime,path=vdso",
        sigma: 0.000,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=monotonic,path=syscall",
        sigma: 0.084,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=monotonic,path=vdso",
        sigma: 0.000,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=monotonic_coarse,path=syscall",
        sigma: 0.000,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=monotonic_coarse,path=vdso",
        sigma: 0.000,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=monotonic_raw,path=syscall",
        sigma: 0.085,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=monotonic_raw,path=vdso",
        sigma: 0.181,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=rdtsc,path=instruction",
        sigma: 0.015,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=realtime,path=syscall",
        sigma: 0.007,
        row: "",
    },
    Reference {
        kind: "timers.clock-read [os] clock=realtime,path=vdso",
        sigma: 0.000,
        row: "",
    },
];

/// What a row falls back to: σ, and where it comes from in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Floor {
    pub sigma: f64,
    pub source: String,
}

fn family(benchmark: &str) -> &str {
    benchmark.split('@').next().unwrap_or(benchmark)
}

/// The kind of a row: its benchmark without version, its placement, and its params that
/// are not numbers (`pages=4k`, `mode=process`, `clock=monotonic,path=vdso`). Numbers (sizes,
/// thread counts, CPU ids) are points along one kind's sweep, and differ between hosts; so
/// does descriptive text (`copies_basis`: "2 copies: the usable CPUs..."), which row
/// matching ignores too ([`super::matching::DESCRIPTIVE`]).
pub fn kind(benchmark: &str, placement: &str, params: &Params) -> String {
    let words: Vec<String> = params
        .0
        .iter()
        .filter(|(k, _)| !super::matching::DESCRIPTIVE.contains(&k.as_str()))
        .filter(|(_, v)| matches!(v, ParamValue::Text(_) | ParamValue::Bool(_)))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!("{} [{placement}] {}", family(benchmark), words.join(","))
}

/// The numeric params of a row, in words (`size_bytes=4194304`).
fn numbers(params: &Params) -> String {
    params
        .0
        .iter()
        .filter(|(_, v)| !matches!(v, ParamValue::Text(_) | ParamValue::Bool(_)))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The declared levels of `benchmark` (any version), None for one this build does not know.
fn levels_of(benchmark: &str) -> Option<&'static [LevelUse]> {
    let f = family(benchmark);
    crate::bench::REGISTRY
        .iter()
        .find(|b| family(b.id()) == f)
        .map(|b| b.levels())
}

/// Whether a benchmark's samples cover every level below the run (allocation, process):
/// drawn afresh per sample or not applicable (a level drawn per round is not, in a result
/// measured in one piece, which is what the floor stands in for).
fn samples_below_run(levels: &[LevelUse]) -> bool {
    levels
        .iter()
        .filter(|l| matches!(l.level, Level::Allocation | Level::Process))
        .all(|l| matches!(l.coverage, Coverage::PerSample | Coverage::DoesNotApply))
}

fn largest<'a>(it: impl Iterator<Item = &'a Reference>) -> Option<&'a Reference> {
    it.max_by(|a, b| a.sigma.total_cmp(&b.sigma))
}

/// The floor of the row `r` stands for, from `table` (the reference figures in production):
/// its kind's σ; a kind the reference runs did not show gets the largest σ of its
/// benchmark; a benchmark they did not measure the largest of the benchmarks whose samples
/// cover the same levels below the run, else the largest of all.
pub fn of_in(r: &BenchResult, table: &[Reference]) -> Floor {
    let k = kind(&r.benchmark, &r.placement.name, &r.params);
    let f = family(&r.benchmark);
    let of_family = |x: &&Reference| family(x.kind.split(' ').next().unwrap_or("")) == f;
    let covers = levels_of(&r.benchmark).map(samples_below_run);
    let (found, why) = if let Some(x) = table.iter().find(|x| x.kind == k) {
        (
            Some(x),
            "the largest run-level spread of a row of its kind".to_string(),
        )
    } else if let Some(x) = largest(table.iter().filter(of_family)) {
        (
            Some(x),
            format!("its kind was not in the reference runs, so the largest run-level spread of a {f} row"),
        )
    } else if let Some(x) = largest(table.iter().filter(|x| {
        covers.is_some()
            && levels_of(x.kind.split(' ').next().unwrap_or("")).map(samples_below_run) == covers
    })) {
        (
            Some(x),
            format!("{f} was not in the reference runs, so the largest run-level spread of a benchmark whose samples cover the same levels below the run"),
        )
    } else {
        (
            largest(table.iter()),
            format!(
                "{f} was not in the reference runs, so the largest run-level spread of any row"
            ),
        )
    };
    let unsampled = levels_of(&r.benchmark)
        .map(crate::bench::levels::between_runs_text)
        .unwrap_or_else(|| "not declared (a benchmark this build does not know)".into());
    let tail = format!(
        "levels its samples do not cover: {unsampled}; no calibration or stored history of this measurement on this host, the verdict rests on one run each"
    );
    match found {
        Some(x) => Floor {
            sigma: x.sigma.max(MIN_SIGMA),
            source: format!(
                "conservative floor {:.1}% per run plus each run's own sampling error: {why} ({}{}{}) in {REFERENCE_RUNS}; {tail}",
                x.sigma.max(MIN_SIGMA) * 100.0,
                x.kind,
                if x.row.is_empty() { "" } else { " " },
                x.row
            ),
        },
        None => Floor {
            sigma: MIN_SIGMA,
            source: format!(
                "conservative floor {:.0}% per run plus each run's own sampling error: no reference figures; {tail}",
                MIN_SIGMA * 100.0
            ),
        },
    }
}

/// The floor of the row `r` stands for.
pub fn of(r: &BenchResult) -> Floor {
    of_in(r, REFERENCE)
}

/// The floor of an unpinned row whose two runs observed different placements (co-location
/// shares at least `placement::MIN_SHIFT` apart): the level that moved it was measured and
/// the placement cause names it, so the difference is judged against the noise that
/// remains with placement held equal: the largest σ of the benchmark's pinned kinds with
/// the same non-numeric params. None when the reference has no such kind.
pub fn placement_held_in(r: &BenchResult, fa: f64, fb: f64, table: &[Reference]) -> Option<Floor> {
    let k = kind(&r.benchmark, &r.placement.name, &r.params);
    let (head, words) = k.split_once("] ")?;
    let prefix = format!("{} [", head.split(' ').next()?);
    let x = largest(table.iter().filter(|x| {
        x.kind.starts_with(&prefix)
            && x.kind != k
            && !x.kind.contains("[os]")
            && x.kind.split_once("] ").map(|(_, w)| w) == Some(words)
    }))?;
    Some(Floor {
        sigma: x.sigma.max(MIN_SIGMA),
        source: format!(
            "conservative floor {:.1}% per run plus each run's own sampling error: the runs observed different placements (tasks on one CPU in {:.0}% and {:.0}% of observations; the placement cause weighs that), so the largest run-level spread of its pinned kinds ({}{}{}) in {REFERENCE_RUNS}; no calibration or stored history of this measurement on this host, the verdict rests on one run each",
            x.sigma.max(MIN_SIGMA) * 100.0,
            fa * 100.0,
            fb * 100.0,
            x.kind,
            if x.row.is_empty() { "" } else { " " },
            x.row
        ),
    })
}

/// [`placement_held_in`] with the reference figures.
pub fn placement_held(r: &BenchResult, fa: f64, fb: f64) -> Option<Floor> {
    placement_held_in(r, fa, fb, REFERENCE)
}

/// One measured kind: its largest run-level σ, the row, and the runs seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub sigma: f64,
    pub row: String,
    pub runs: usize,
}

/// The run-level σ of one row over separate runs' results of it: the between-run variance
/// of ln(median) less the median over runs of the within-run variance of ln(median), never
/// below 0; None with fewer than 3 runs. The median, not the mean: one run whose samples a
/// neighbour scattered would otherwise cancel the other runs' run-level variance.
pub fn run_level(results: &[&BenchResult]) -> Option<f64> {
    let medians: Vec<f64> = results.iter().map(|r| r.stats.median).collect();
    let between = log_sd(&medians)?;
    let mut w: Vec<f64> = results.iter().map(|r| within_se(r).powi(2)).collect();
    let within = super::fleet::baseline::median(&mut w).unwrap_or(0.0);
    Some((between.powi(2) - within).max(0.0).sqrt())
}

/// The reference figures from separate runs of one host: per kind, the largest run-level
/// σ of its rows.
pub fn measure(runs: &[RunDocument]) -> BTreeMap<String, Measured> {
    let mut rows: BTreeMap<String, Vec<&BenchResult>> = BTreeMap::new();
    for d in runs {
        for r in &d.results {
            rows.entry(super::matching::label(r)).or_default().push(r);
        }
    }
    let mut out: BTreeMap<String, Measured> = BTreeMap::new();
    for rs in rows.values() {
        let Some(s) = run_level(rs) else { continue };
        let r = rs[0];
        let e = out
            .entry(kind(&r.benchmark, &r.placement.name, &r.params))
            .or_insert(Measured {
                sigma: -1.0,
                row: String::new(),
                runs: 0,
            });
        if s > e.sigma {
            *e = Measured {
                sigma: s,
                row: numbers(&r.params),
                runs: rs.len(),
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    /// The reference runs, as exported (tests/fixtures/aa/calibration-N.json).
    pub fn reference_runs() -> Vec<RunDocument> {
        REFERENCE_FILES
            .iter()
            .map(|f| {
                let p = format!("{}/tests/fixtures/aa/{f}.json", env!("CARGO_MANIFEST_DIR"));
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
            })
            .collect()
    }

    #[test]
    fn the_reference_figures_are_what_the_reference_runs_measured() {
        let m = measure(&reference_runs());
        // Printed in the table's own syntax when they differ (the table is rebuilt from it).
        let table: Vec<String> = m
            .iter()
            .map(|(k, x)| {
                format!(
                    "    Reference {{ kind: {k:?}, sigma: {:.3}, row: {:?} }},",
                    (x.sigma * 1000.0).ceil() / 1000.0,
                    x.row
                )
            })
            .collect();
        let want = table.join("\n");
        assert_eq!(REFERENCE.len(), m.len(), "\n{want}");
        for r in REFERENCE {
            let x = m
                .get(r.kind)
                .unwrap_or_else(|| panic!("{}\n{want}", r.kind));
            // Every kind was seen in at least 6 of the runs (bandwidth arrays are sized from
            // the LLC each run measured: some runs' differ, so their rows have fewer runs).
            assert!(x.runs >= 6, "{}: {} runs", r.kind, x.runs);
            assert_eq!(r.row, x.row, "\n{want}");
            assert!(
                (r.sigma - (x.sigma * 1000.0).ceil() / 1000.0).abs() < 1e-9,
                "{}: {} measured {}\n{want}",
                r.kind,
                r.sigma,
                x.sigma
            );
        }
    }

    fn result(bench: &str, placement: &str, params: serde_json::Value) -> BenchResult {
        testing::result(bench, placement, None, params, 100.0)
    }

    const TABLE: &[Reference] = &[
        Reference {
            kind: "ctx.pipe [same-cpu] mode=process",
            sigma: 0.013,
            row: "",
        },
        Reference {
            kind: "ctx.pipe [same-llc] mode=process",
            sigma: 0.29,
            row: "footprint_kb=0",
        },
        Reference {
            kind: "ctx.pipe [os] mode=process",
            sigma: 0.92,
            row: "footprint_kb=0",
        },
        Reference {
            kind: "timers.clock-read [os] clock=monotonic,path=vdso",
            sigma: 0.004,
            row: "",
        },
        Reference {
            kind: "c2c.cacheline [same-llc] pairs=all",
            sigma: 0.4,
            row: "cpu_a=0,cpu_b=1",
        },
    ];

    #[test]
    fn a_row_gets_its_kinds_figure_else_its_benchmarks_else_its_levels_peers() {
        let same_llc = result(
            "ctx.pipe@1",
            "same-llc",
            json!({"mode": "process", "footprint_kb": 0}),
        );
        let f = of_in(&same_llc, TABLE);
        assert_eq!(f.sigma, 0.29);
        assert!(f.source.contains("of its kind") && f.source.contains("rests on one run each"));
        assert!(
            f.source
                .contains("levels its samples do not cover: run, boot, host"),
            "{}",
            f.source
        );
        // Another pinned placement of ctx: the largest ctx kind.
        let cross = result("ctx.pipe@1", "cross-llc", json!({"mode": "process"}));
        let f = of_in(&cross, TABLE);
        assert_eq!(f.sigma, 0.92);
        assert!(
            f.source
                .contains("largest run-level spread of a ctx.pipe row"),
            "{}",
            f.source
        );
        // A quiet kind is not taken below the 1% minimum.
        let vdso = result(
            "timers.clock-read@1",
            "os",
            json!({"clock": "monotonic", "path": "vdso"}),
        );
        assert_eq!(of_in(&vdso, TABLE).sigma, MIN_SIGMA);
        // classic samples every level below the run (fresh processes per pass), as ctx
        // does: its figure. c2c leaves the line's allocation to the run.
        let dhry = result("classic.dhrystone@1", "os", json!({"copies": 1}));
        let f = of_in(&dhry, TABLE);
        assert_eq!(f.sigma, 0.92);
        assert!(f.source.contains("cover the same levels"), "{}", f.source);
        // memory.numa leaves its bandwidth cells' allocation to the run, as c2c does.
        let numa = result("memory.numa@1", "node0", json!({"metric": "latency"}));
        assert_eq!(of_in(&numa, TABLE).sigma, 0.4);
        // Without c2c its peer is timers (a result of it measured in one piece left the
        // process to the run).
        assert_eq!(of_in(&numa, &TABLE[..4]).sigma, MIN_SIGMA);
        let without_ctx: Vec<Reference> = TABLE[3..].to_vec();
        // Without ctx no peer covers those levels in its samples (timers draw the process
        // per round, which a result measured in one piece did not): the largest of all.
        assert_eq!(of_in(&dhry, &without_ctx).sigma, 0.4);
        // An unknown benchmark: the largest of all, its levels said to be undeclared.
        let f = of_in(&result("new.thing@1", "os", json!({})), &without_ctx);
        assert_eq!(f.sigma, 0.4);
        assert!(f.source.contains("not declared"), "{}", f.source);
        // No figures at all: the minimum, said so.
        assert!(of_in(&dhry, &[]).source.contains("no reference figures"));
    }

    #[test]
    fn an_unpinned_pair_placed_differently_is_judged_at_its_pinned_kinds_noise() {
        let os = result(
            "ctx.pipe@1",
            "os",
            json!({"mode": "process", "footprint_kb": 0}),
        );
        assert_eq!(of_in(&os, TABLE).sigma, 0.92);
        let f = placement_held_in(&os, 0.1, 1.0, TABLE).unwrap();
        assert_eq!(f.sigma, 0.29);
        assert!(f.source.contains("10% and 100%"), "{}", f.source);
        // Thread mode has no pinned kind in this table; c2c has no unpinned kind at all.
        let thread = result("ctx.pipe@1", "os", json!({"mode": "thread"}));
        assert!(placement_held_in(&thread, 0.1, 1.0, TABLE).is_none());
    }

    #[test]
    fn kinds_keep_words_and_drop_numbers() {
        let r = result(
            "memory.latency@1",
            "cpus",
            json!({"size_bytes": 4096, "pages": "4k"}),
        );
        assert_eq!(
            kind(&r.benchmark, &r.placement.name, &r.params),
            "memory.latency [cpus] pages=4k"
        );
        assert_eq!(numbers(&r.params), "size_bytes=4096");
    }
}
