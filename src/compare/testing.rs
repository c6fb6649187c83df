//! Synthetic run documents for the tests of `compare` and those above it (causes, the
//! noise model, the fleet, the report): each builder makes the smallest document in which
//! one thing is present (or absent), everything else equal. Built from the run document
//! alone, so a test of any room of `compare` may use them; what judges a pair of them for
//! a cause's test is in `compare::causes::testing`.

use crate::finding::{Finding, Severity};
use crate::result::observed::{PairSeen, TaskSeen, Tasks};
use crate::result::{
    testing, BenchResult, CpuSpeed, Observed, RunDocument, SpeedPoint, SpeedSample,
};
use serde_json::{json, Value};

/// A result of 10 samples spread ±4% around `median`.
pub fn result(
    bench: &str,
    placement: &str,
    cpus: Option<Vec<u32>>,
    params: Value,
    median: f64,
    lower_is_better: bool,
) -> BenchResult {
    let mut r = testing::result(bench, placement, cpus, params, median);
    r.samples = (0..10)
        .map(|i| median * (1.0 + 0.04 * (i as f64 - 4.5) / 4.5))
        .collect();
    r.stats = crate::measure::stats::Stats::of(&r.samples).unwrap();
    r.lower_is_better = lower_is_better;
    r
}

fn task(cpus: Vec<u32>) -> TaskSeen {
    TaskSeen {
        cpus_seen: cpus,
        migrations: Some(0),
        voluntary_switches: Some(100),
        involuntary_switches: Some(0),
    }
}

/// A ctx run: the unpinned (os) row with co-location `f` and median `os`, and its pinned
/// same-cpu and same-llc rows when given.
pub fn ctx_run(id: &str, f: f64, os: f64, same: Option<f64>, apart: Option<f64>) -> RunDocument {
    let params = json!({"mode": "process", "footprint_kb": 0});
    let mut o = result("ctx.pipe@1", "os", None, params.clone(), os, true);
    o.placement.observed = Some(Observed::Pair(PairSeen {
        relation: "not pinned".into(),
        pinned: false,
        observations: 20,
        colocated_fraction: f,
        round_trips: 1000,
        tasks: Tasks {
            a: task(vec![0]),
            b: task(if f > 0.5 { vec![0] } else { vec![1] }),
        },
        unavailable: None,
        cpu_kinds: None,
    }));
    let mut results = vec![o];
    if let Some(s) = same {
        results.push(result(
            "ctx.pipe@1",
            "same-cpu",
            Some(vec![0, 0]),
            params.clone(),
            s,
            true,
        ));
    }
    if let Some(x) = apart {
        results.push(result(
            "ctx.pipe@1",
            "same-llc",
            Some(vec![0, 1]),
            params.clone(),
            x,
            true,
        ));
    }
    testing::run(id, results, testing::env())
}

/// memory.per-event timed per event (timer share `share`) and as a batch.
pub fn per_event_run(id: &str, share: f64, per_event: f64, batch: f64) -> RunDocument {
    let mut pe = result(
        "memory.per-event@1",
        "os",
        None,
        json!({"timing": "per-event", "block_bytes": 1024}),
        per_event,
        false,
    );
    pe.quality.timer_share = share;
    // The clock's cost grows with its share of the same work (20 ns at 2%).
    pe.quality.clock_cost_ns = 1000.0 * share / (1.0 - share);
    let mut b = result(
        "memory.per-event@1",
        "os",
        None,
        json!({"timing": "batch", "block_bytes": 1024}),
        batch,
        false,
    );
    b.quality.timer_share = 2e-5;
    testing::run(id, vec![pe, b], testing::env())
}

/// A `throttled` finding as the sampler writes it.
fn throttled() -> Finding {
    Finding::new(
        "throttled",
        Severity::Warning,
        "The cgroup CPU quota throttled this process.",
        vec!["cpu.stat nr_throttled +12, 60.0 ms throttled".into()],
    )
}

/// A classic run (dhrystone only) under an optional CPU quota: (copies, median lps).
pub fn classic_run(
    id: &str,
    quota: Option<f64>,
    rows: &[(u64, f64)],
    throttle: bool,
) -> RunDocument {
    let mut env = testing::env();
    env.cpus.cgroup_quota = quota;
    env.cpus.capacity = quota.unwrap_or(env.cpus.usable_width as f64);
    let results = rows
        .iter()
        .map(|(c, m)| {
            let mut r = result("classic.dhrystone@1", "os", None, json!({"copies": c, "copies_basis": format!("{c} copies: why"), "passes": 5, "plan": "quick", "window_s": 0.5}), *m, false);
            if throttle {
                r.findings.push(throttled());
            }
            r
        })
        .collect();
    testing::run(id, results, env)
}

/// A `noisy-neighbour` finding stating `share` of the usable CPUs.
pub fn noisy(share: f64) -> Finding {
    Finding::new(
        "noisy-neighbour",
        Severity::Warning,
        format!("Other processes used {:.0}% of the usable CPUs while this was measured: the figure includes waiting for them.", share * 100.0),
        vec!["other processes: 1.10 CPU-s of 2.00 CPU-s available on 2 usable CPU(s)".into(), "hog (pid 77): 1.10 CPU-s".into()],
    )
}

/// A timers run of one clock-read row, with a noise finding on it when given.
pub fn timers_run(id: &str, median: f64, noise: Option<Finding>) -> RunDocument {
    let mut r = result(
        "timers.clock-read@1",
        "os",
        None,
        json!({"clock": "monotonic", "path": "vdso"}),
        median,
        true,
    );
    r.findings.extend(noise);
    testing::run(id, vec![r], testing::env())
}

/// A timers run of one clock-read row measured in rounds at `medians` (ns), in that order,
/// one a second, its place among all the run's rounds every `seq_step`th.
pub fn timers_in_rounds(id: &str, medians: &[f64], seq_step: usize) -> RunDocument {
    use crate::result::rounds::{noise_of, Round, Rounds};
    let mut sorted = medians.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut doc = timers_run(id, sorted[sorted.len() / 2], None);
    let rounds: Vec<Round> = medians
        .iter()
        .enumerate()
        .map(|(i, m)| Round {
            seq: i * seq_step,
            at_s: i as f64,
            median: *m,
            samples: 1,
            ..Default::default()
        })
        .collect();
    let center = doc.results[0].stats.median.ln();
    doc.results[0].rounds = Some(Rounds {
        noise: noise_of(&rounds, Some(center), None),
        rounds,
    });
    doc
}

/// The run with an effective clock of `ghz` at the start and end of each suite.
pub fn with_speed(mut doc: RunDocument, ghz: f64) -> RunDocument {
    doc.cpu_speed = Some(CpuSpeed {
        method: "dependent adds".into(),
        samples: [SpeedPoint::Start, SpeedPoint::End]
            .into_iter()
            .map(|point| SpeedSample {
                suite: "timers".into(),
                point,
                cpu: 0,
                cpu_kind: None,
                cycles_per_ns: ghz,
                elapsed_ns: 1e6,
            })
            .collect(),
        unavailable: vec![],
        canaries: vec![],
        pair_canaries: vec![],
    });
    doc
}

/// A latency row at working set `size` on a machine whose LLC is `llc` bytes.
pub fn latency_run(id: &str, llc: u64, size: u64, median: f64) -> RunDocument {
    let mut env = testing::env();
    let level = env.topology.llc_level.unwrap();
    for c in env.topology.caches.iter_mut().filter(|c| c.level == level) {
        c.size_bytes = Some(llc);
    }
    let r = result(
        "memory.latency@1",
        "cpus",
        Some(vec![0]),
        json!({"size_bytes": size, "pages": "4k"}),
        median,
        true,
    );
    testing::run(id, vec![r], env)
}

/// A classic run of 1 copy per test with each test's index, and the suite's index "1".
pub fn index_run(id: &str, tests: &[(&str, f64)]) -> RunDocument {
    let results: Vec<BenchResult> = tests
        .iter()
        .map(|(t, ix)| {
            let mut r = result(
                &format!("classic.{t}@1"),
                "os",
                None,
                json!({"copies": 1, "passes": 5, "plan": "quick", "window_s": 0.5}),
                *ix * 100.0,
                false,
            );
            r.derived.insert(crate::result::figures::INDEX.into(), *ix);
            r
        })
        .collect();
    let geo = (tests.iter().map(|t| t.1.ln()).sum::<f64>() / tests.len() as f64).exp();
    let mut doc = testing::run(id, results, testing::env());
    doc.indexes = Some(crate::result::SuiteIndexes {
        by_copies: [("1".to_string(), Some(geo))].into_iter().collect(),
        unixbench_style: Default::default(),
        tests: Default::default(),
        partial: false,
        n: 2,
        n_basis: "2 copies".into(),
        placement_range: Default::default(),
    });
    doc
}

/// The run with every result measured in rounds (its median in each), other tasks using
/// `percents` of CPUs 0-1 in them, one round each; a round at 10% or more is disturbed by
/// them, as `run` flags it (the figures then rest on every round).
pub fn beside(mut doc: RunDocument, percents: &[f64]) -> RunDocument {
    use crate::result::rounds::{Cause, Disturbance, Others, Round, Rounds};
    for r in &mut doc.results {
        let rounds = percents
            .iter()
            .enumerate()
            .map(|(i, p)| Round {
                seq: i,
                waited: None,
                at_s: i as f64,
                median: r.stats.median,
                samples: 2,
                disturbed: (*p >= 10.0)
                    .then_some(Disturbance {
                        cause: Cause::OtherTasks,
                        value: *p,
                        limit: 10.0,
                        persistent: false,
                    })
                    .into_iter()
                    .collect(),
                others: Some(Others {
                    cpus: vec![0, 1],
                    percent: *p,
                }),
                steal: Some(0.0),
            })
            .collect();
        r.rounds = Some(Rounds {
            rounds,
            noise: None,
        });
    }
    doc
}

/// The run with `n` pair canaries between `cpus` around `ns` (±2%), as `run` reads them
/// before its rounds.
pub fn with_pair_canaries(mut doc: RunDocument, cpus: [u32; 2], ns: f64, n: usize) -> RunDocument {
    let speed = doc.cpu_speed.get_or_insert_with(|| CpuSpeed {
        method: "dependent adds".into(),
        ..Default::default()
    });
    speed.pair_canaries = (0..n)
        .map(|i| crate::result::PairCanaryReading {
            cpus,
            ns: ns * (1.0 + 0.02 * ((i % 5) as f64 - 2.0) / 2.0),
        })
        .collect();
    doc
}

/// A run of memory-latency rows, one per point of each (pages, curve) given.
pub fn latency_curves_run(id: &str, curves: &[(&str, &[(u64, f64)])]) -> RunDocument {
    let results = curves
        .iter()
        .flat_map(|(pages, curve)| {
            curve.iter().map(move |(size, ns)| {
                result(
                    "memory.latency@1",
                    "cpus",
                    Some(vec![0]),
                    json!({"size_bytes": size, "pages": pages}),
                    *ns,
                    true,
                )
            })
        })
        .collect();
    testing::run(id, results, testing::env())
}

/// The run with each result measured in three quiet rounds 1% apart, as `run` records
/// them (a sweep's rounds agree closely).
pub fn in_rounds(mut doc: RunDocument) -> RunDocument {
    use crate::result::rounds::{noise_of, quiet_rounds, Rounds};
    for r in &mut doc.results {
        let m = r.stats.median.ln();
        let rounds = quiet_rounds(&[m - 0.01, m, m + 0.01]);
        r.rounds = Some(Rounds {
            noise: noise_of(&rounds, Some(m), None),
            rounds,
        });
    }
    doc
}

/// The run with every result measured in rounds (their medians within 1% of its median),
/// the hypervisor taking `percents` of CPUs 0-1's time in them, one round each, other tasks
/// none; a round at 2% or more is disturbed by it as `run` flags it (kept out of the
/// figures unless fewer than two were not).
pub fn stolen(mut doc: RunDocument, percents: &[f64]) -> RunDocument {
    use crate::result::rounds::{noise_of, Cause, Disturbance, Others, Round, Rounds};
    for r in &mut doc.results {
        let m = r.stats.median;
        let rounds: Vec<Round> = percents
            .iter()
            .enumerate()
            .map(|(i, p)| Round {
                seq: i,
                waited: None,
                at_s: i as f64,
                median: m * (1.0 + 0.01 * ((i % 3) as f64 - 1.0)),
                samples: 2,
                disturbed: (*p >= 2.0)
                    .then_some(Disturbance {
                        cause: Cause::Steal,
                        value: *p,
                        limit: 2.0,
                        persistent: false,
                    })
                    .into_iter()
                    .collect(),
                others: Some(Others {
                    cpus: vec![0, 1],
                    percent: 0.0,
                }),
                steal: Some(*p),
            })
            .collect();
        r.rounds = Some(Rounds {
            noise: noise_of(&rounds, Some(m.ln()), None),
            rounds,
        });
    }
    doc
}
