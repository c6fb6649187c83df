//! A load-step experiment: the same step plan under each variant (placement policy ×
//! worker count), variants run in a shuffled order, repeated, so drift does not pass for a
//! difference; per step the system's counters over exactly the measured window; then per
//! variant the knee and the USL and Amdahl fits, across worker counts the scaling curve, and
//! across variants which one wins each step and whether the difference is real (rank test on
//! the per-interval p99 latencies).

use super::capacity::{self, Group, Layout, Setting};
use super::model::{self, Fit};
use super::mq::{self, Plan, Service};
use super::step::{self, StepSummary, SysDelta};
use crate::measure::stats::mann_whitney_p;
use crate::observe::counters::TargetCounters;
use crate::observe::process;
use crate::policy::resolve::{node_groups, refused_nodes, worker_cpus};
use crate::policy::{Placement, Policy};
use crate::probe::ProbeDoc;
use rand::{seq::SliceRandom, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// A step is steady when it completed at least this share of what was sent.
pub const STEADY_SHARE: f64 = 0.98;

#[derive(Debug, Clone)]
pub struct Config {
    pub rates: Vec<f64>,
    pub warmup: Duration,
    pub measure: Duration,
    pub workers: Vec<usize>,
    pub service_us: f64,
    pub footprint_kb: usize,
    pub policies: Vec<Policy>,
    /// Capacity settings (quota × cpuset width) to run each policy without a capacity of
    /// its own under; empty: the process's own cgroup, untouched.
    pub capacity: Vec<Setting>,
    /// Where capacity groups go (needed when `capacity` is not empty).
    pub layout: Option<Layout>,
    pub repeat: usize,
    pub seed: u64,
    /// `--http`: the target each worker (connection) sends GETs to, and the server's PID
    /// for its costs per request (None: not measured).
    pub http: Option<super::http::Target>,
    pub server_pid: Option<i32>,
    /// `--server`: the server command truebench starts for each variant under the
    /// variant's policy, and how long it may take to answer.
    pub server: Option<(Vec<String>, Duration)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Index of the last step before cost grew faster than load, and its planned rate.
    pub step: usize,
    pub rate: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantResult {
    pub policy: String,
    pub workers: usize,
    pub pinned_cpus: Option<Vec<u32>>,
    /// The capacity setting, its cpuset's CPUs, and how the service was put in it.
    pub capacity: Option<Setting>,
    pub cpuset: Option<Vec<u32>>,
    pub capacity_note: Option<String>,
    /// Per step: the repeat with the median p99 (the worse of two); all repeats below.
    pub steps: Vec<StepSummary>,
    pub repeats: Vec<Vec<StepSummary>>,
    pub knee_latency: Option<Knee>,
    pub knee_cost: Option<Knee>,
    /// Throughput against Little's-law concurrency over the 100 ms intervals of the valid,
    /// steady steps.
    pub usl: Option<Fit>,
    pub amdahl: Option<Fit>,
}

/// How a variant other than a step's best did at that step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contender {
    pub median_interval_p99_us: Option<f64>,
    /// Mann-Whitney p against the best; null with too few intervals.
    pub p_value: Option<f64>,
    /// p < 0.05: the difference from the best is real.
    pub real: bool,
}

/// One step of the comparison of variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepComparison {
    pub rate: f64,
    pub compared: bool,
    /// Why the step was not compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_median_interval_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others: Option<BTreeMap<String, Contender>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The variant with the most steps won; null when no step was compared.
    pub winner: Option<String>,
    pub step_wins: BTreeMap<String, usize>,
    pub steps: Vec<StepComparison>,
    /// The test used, in words.
    pub test: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    pub workers: f64,
    pub max_valid_completed_rate: f64,
}

/// The highest valid completed rate per worker count, with the USL and Amdahl fits on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    pub points: Vec<ScalingPoint>,
    pub usl: Option<Fit>,
    pub amdahl: Option<Fit>,
    pub note: String,
}

fn label(policy: &str, workers: usize, capacity: Option<Setting>) -> String {
    match capacity {
        Some(c) => format!("{policy} x{workers} {}", c.name()),
        None => format!("{policy} x{workers}"),
    }
}

fn name(v: &VariantResult) -> String {
    label(&v.policy, v.workers, v.capacity)
}

fn p99(s: &StepSummary) -> f64 {
    s.latency.as_ref().map(|l| l.p99).unwrap_or(f64::INFINITY)
}

/// The process's counters at one instant, and the calling (load generator) thread's CPU
/// ticks.
struct Snapshot {
    /// The service process: this one (mq) or the `--pid` server (http); None without one.
    process: Option<process::ProcCounters>,
    events: BTreeMap<String, u64>,
    generator_ticks: u64,
    /// Whether the generator runs inside the service process (its CPU is subtracted).
    generator_inside: bool,
    throttling: (Option<u64>, Option<u64>),
}

/// Read the counters now (called from the load generator's thread): the service process,
/// its perf counters, the generator's CPU (this thread for mq; this whole process for
/// http, whose connections are the generator too), the capacity group's throttling.
fn snapshot(
    service: Option<&[i32]>,
    counters: &mut [TargetCounters],
    group: Option<&Group>,
    generator_inside: bool,
) -> Snapshot {
    let own_path = if generator_inside {
        "/proc/thread-self/stat"
    } else {
        "/proc/self/stat"
    };
    let own = std::fs::read_to_string(own_path).unwrap_or_default();
    Snapshot {
        throttling: group.map(|g| g.throttling()).unwrap_or((None, None)),
        process: service.and_then(process::read_sum),
        events: counters.iter_mut().fold(BTreeMap::new(), |mut all, c| {
            for (k, v) in c.read() {
                *all.entry(k).or_insert(0) += v;
            }
            all
        }),
        generator_ticks: process::cpu_ticks(&own).unwrap_or(0),
        generator_inside,
    }
}

/// The run time of the threads between two readings, seconds: per thread the difference,
/// a thread first seen in the second reading with all of its run time (it started in
/// between). A thread that exited in between takes its time with it.
fn run_s(a: &process::ProcCounters, b: &process::ProcCounters) -> f64 {
    b.tasks
        .iter()
        .map(|t| {
            let before = a
                .tasks
                .iter()
                .find(|x| x.tid == t.tid)
                .map_or(0, |x| x.run_ns);
            t.run_ns.saturating_sub(before)
        })
        .sum::<u64>() as f64
        / 1e9
}

fn delta(a: &Snapshot, b: &Snapshot, ticks: f64) -> SysDelta {
    let d = |x: Option<u64>, y: Option<u64>| Some(y?.saturating_sub(x?));
    let generator = b.generator_ticks.saturating_sub(a.generator_ticks);
    let (pa, pb) = (a.process.as_ref(), b.process.as_ref());
    SysDelta {
        cpu_s: pa.zip(pb).map(|(x, y)| {
            if !b.generator_inside {
                // Another process (--pid, --server): its threads' run time in ns, not the
                // 10 ms clock ticks, which at a tenth of a CPU over a second are ±10%.
                return run_s(x, y);
            }
            let t = y.cpu_ticks.saturating_sub(x.cpu_ticks);
            let t = if b.generator_inside {
                t.saturating_sub(generator)
            } else {
                t
            };
            t as f64 / ticks
        }),
        generator_cpu_s: generator as f64 / ticks,
        voluntary: d(pa.and_then(|p| p.voluntary), pb.and_then(|p| p.voluntary)),
        involuntary: d(
            pa.and_then(|p| p.involuntary),
            pb.and_then(|p| p.involuntary),
        ),
        migrations: d(pa.and_then(|p| p.migrations), pb.and_then(|p| p.migrations)),
        events: b
            .events
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.saturating_sub(*a.events.get(k)?))))
            .collect(),
        throttled_periods: d(a.throttling.0, b.throttling.0),
        throttled_us: d(a.throttling.1, b.throttling.1),
    }
}

/// Where a variant ran: pinned CPUs, and its capacity group's CPUs and note.
struct Placed {
    pinned: Option<Vec<u32>>,
    capacity: Option<Setting>,
    cpuset: Option<Vec<u32>>,
    note: Option<String>,
}

fn analyse(
    policy: &str,
    workers: usize,
    placed: Placed,
    repeats: Vec<Vec<StepSummary>>,
) -> VariantResult {
    let steps: Vec<StepSummary> = (0..repeats.first().map(|r| r.len()).unwrap_or(0))
        .map(|i| {
            let mut of: Vec<&StepSummary> = repeats.iter().filter_map(|r| r.get(i)).collect();
            of.sort_by(|a, b| p99(a).total_cmp(&p99(b)));
            of[of.len() / 2].clone()
        })
        .collect();
    let valid: Vec<&StepSummary> = steps.iter().filter(|s| s.valid).collect();
    let load: Vec<f64> = valid.iter().map(|s| s.planned_rate).collect();
    let lat: Vec<f64> = valid.iter().map(|s| p99(s)).collect();
    let cost: Vec<f64> = valid
        .iter()
        .map(|s| s.per_tx.get("cpu_us").copied().unwrap_or(0.0))
        .collect();
    let knee_at = |k: Option<usize>| {
        k.map(|i| Knee {
            step: steps
                .iter()
                .position(|s| s.planned_rate == load[i])
                .unwrap_or(i),
            rate: load[i],
        })
    };
    // Little's law holds in a steady state only: a step whose queue kept growing (completed
    // below 98% of sent) stays out of the fit. The points are the steps' 100 ms intervals.
    let pts: Vec<(f64, f64)> = valid
        .iter()
        .filter(|s| s.completed_rate >= STEADY_SHARE * s.sent_rate)
        .flat_map(|s| s.interval_points.iter().map(|p| (p[0], p[1])))
        .filter(|(n, x)| *n > 0.0 && *x > 0.0)
        .collect();
    VariantResult {
        policy: policy.into(),
        workers,
        pinned_cpus: placed.pinned,
        capacity: placed.capacity,
        cpuset: placed.cpuset,
        capacity_note: placed.note,
        knee_latency: knee_at(model::knee(&load, &lat, 0.1)),
        knee_cost: knee_at(model::knee(&load, &cost, 0.1)),
        usl: model::fit(&pts, true),
        amdahl: model::fit(&pts, false),
        steps,
        repeats,
    }
}

/// Which variant wins each step (lowest median of its interval p99s), and whether each
/// other variant differs from it for real (Mann-Whitney p < 0.05).
pub fn compare(variants: &[VariantResult]) -> Comparison {
    let n_steps = variants.iter().map(|v| v.steps.len()).min().unwrap_or(0);
    let mut wins: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_step = Vec::new();
    for i in 0..n_steps {
        if variants.iter().any(|v| !v.steps[i].valid) {
            per_step.push(StepComparison {
                rate: variants[0].steps[i].planned_rate,
                compared: false,
                why: Some("a variant's step is not valid".into()),
                best: None,
                best_median_interval_p99_us: None,
                others: None,
            });
            continue;
        }
        let samples: Vec<Vec<f64>> = variants
            .iter()
            .map(|v| {
                v.repeats
                    .iter()
                    .filter_map(|r| r.get(i))
                    .flat_map(|s| s.interval_p99_us.iter().copied())
                    .collect()
            })
            .collect();
        let med = |v: &[f64]| crate::measure::stats::Stats::of(v).map(|s| s.median);
        let best = (0..variants.len())
            .filter(|k| med(&samples[*k]).is_some())
            .min_by(|a, b| {
                med(&samples[*a])
                    .unwrap()
                    .total_cmp(&med(&samples[*b]).unwrap())
            });
        let Some(best) = best else { continue };
        *wins.entry(name(&variants[best])).or_default() += 1;
        let others: BTreeMap<String, Contender> = (0..variants.len())
            .filter(|k| *k != best)
            .map(|k| {
                let p = mann_whitney_p(&samples[best], &samples[k]);
                (
                    name(&variants[k]),
                    Contender {
                        median_interval_p99_us: med(&samples[k]),
                        p_value: p,
                        real: p.is_some_and(|p| p < 0.05),
                    },
                )
            })
            .collect();
        per_step.push(StepComparison {
            rate: variants[best].steps[i].planned_rate,
            compared: true,
            why: None,
            best: Some(name(&variants[best])),
            best_median_interval_p99_us: med(&samples[best]),
            others: Some(others),
        });
    }
    let winner = wins.iter().max_by_key(|(_, n)| **n).map(|(k, _)| k.clone());
    Comparison {
        winner,
        step_wins: wins,
        steps: per_step,
        test: "Mann-Whitney U on the p99 latency of each 100 ms interval (all repeats), p < 0.05"
            .into(),
    }
}

/// What an experiment produced.
pub struct Outcome {
    pub variants: Vec<VariantResult>,
    /// The variants in the order they ran.
    pub order: Vec<String>,
    /// Per-transaction counters that could not be read, with the reason.
    pub unavailable: BTreeMap<String, String>,
    pub interrupted: bool,
}

/// Run the experiment; `progress` hears about each step.
pub fn run(
    cfg: &Config,
    probe: &ProbeDoc,
    progress: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    let me = std::process::id() as i32;
    // The service: this process (mq), or the server and its worker processes (http,
    // with --pid), as they are when the experiment starts.
    let mut service: Option<Vec<i32>> = if cfg.http.is_some() {
        cfg.server_pid.map(process::tree)
    } else {
        Some(vec![me])
    };
    // Counters on this process's threads, inherited by the workers started later.
    let mut counters: Vec<TargetCounters> = service
        .iter()
        .flatten()
        .map(|p| TargetCounters::open(*p))
        .collect();
    let mut unavailable = counters
        .first()
        .map(|c| c.unavailable.clone())
        .unwrap_or_default();
    if service.is_none() && cfg.server.is_none() {
        unavailable.insert(
            "server".into(),
            "no --pid: the server's CPU, switches and system calls per request are not measured"
                .into(),
        );
    }
    let ticks = crate::observe::system::ticks_per_second() as f64;
    let spins_per_us = mq::calibrate_spin();
    let caps: Vec<Option<Setting>> = if cfg.capacity.is_empty() {
        vec![None]
    } else {
        cfg.capacity.iter().copied().map(Some).collect()
    };
    let mut variants: Vec<(Policy, usize, Option<Setting>)> = Vec::new();
    for w in &cfg.workers {
        for p in &cfg.policies {
            // A policy with a capacity of its own (`cap:Q/W`) runs under that one only.
            let mut base = *p;
            match base.capacity.take() {
                Some(own) => variants.push((base, *w, Some(own))),
                None => variants.extend(caps.iter().map(|c| (base, *w, *c))),
            }
        }
    }
    // Groups a killed run left were removed when this command started (crate::cleanup).
    let usable = probe.cpus.usable.clone();
    let mems = cfg
        .layout
        .as_ref()
        .map(capacity::parent_mems)
        .unwrap_or_default();
    let mut runs: BTreeMap<String, (Placed, Vec<Vec<StepSummary>>)> = BTreeMap::new();
    let mut order = Vec::new();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(cfg.seed);
    let mut interrupted = false;
    let mut groups_made = 0;
    'outer: for r in 0..cfg.repeat {
        let mut this = variants.clone();
        this.shuffle(&mut rng);
        for (policy, workers, cap) in this {
            let key = label(&policy.to_string(), workers, cap);
            order.push(format!("{key} (repeat {})", r + 1));
            // The capacity group lives for this variant's steps and goes when it drops. With
            // --server the server's process tree runs in it (joined before exec, so every
            // process it forks is in it too) and truebench, the load generator, outside;
            // else the worker threads join it (v1) or this process moves in (v2).
            let own_group = match (cap, &cfg.layout) {
                (Some(c), Some(l)) => {
                    groups_made += 1;
                    let spread = crate::placement::spread_order(probe);
                    let order: Vec<u32> =
                        spread.into_iter().filter(|c| usable.contains(c)).collect();
                    Some(
                        Group::create(l, groups_made, c, &order, &mems, cfg.server.is_none())
                            .map_err(anyhow::Error::msg)?,
                    )
                }
                (Some(_), None) => anyhow::bail!("capacity settings need a cgroup layout"),
                _ => None,
            };
            // --server: started under this variant's policy (in its capacity group, which
            // it then owns), stopped (whole tree) when `server` drops at the end of the
            // variant, on error or on Ctrl-C; the group goes after it.
            let (server, own_group) = match (&cfg.server, &cfg.http) {
                (Some((argv, ready)), Some(target)) => {
                    let l = start_server(argv, &policy, own_group, *ready, target, probe)?;
                    let Some(l) = l else {
                        interrupted = true;
                        break 'outer;
                    };
                    service = Some(process::tree(l.pid));
                    counters = service
                        .iter()
                        .flatten()
                        .map(|p| TargetCounters::open(*p))
                        .collect();
                    if let Some(c) = counters.first() {
                        unavailable.extend(c.unavailable.clone());
                    }
                    (Some(l), None)
                }
                _ => (None, own_group),
            };
            let group = server
                .as_ref()
                .and_then(|l| l.group())
                .or(own_group.as_ref());
            // With --server the policy is the server's: the load generator runs as is.
            let policy = if cfg.server.is_some() {
                Policy::OS
            } else {
                policy
            };
            let pinned = worker_cpus(policy.placement, workers, probe).map(|p| match group {
                // Pinned inside the cpuset only.
                Some(g) => {
                    let inside: Vec<u32> =
                        p.iter().copied().filter(|c| g.cpus.contains(c)).collect();
                    if inside.is_empty() {
                        g.cpus.clone()
                    } else {
                        inside
                    }
                }
                None => p,
            });
            let svc = Service {
                workers,
                service_us: cfg.service_us,
                footprint_kb: cfg.footprint_kb,
                pins: pinned.clone(),
                queue_limit: 10_000_000,
                spins_per_us,
                join_files: group
                    .filter(|_| cfg.server.is_none())
                    .map(|g| g.thread_files.clone())
                    .unwrap_or_default(),
                nodes: (policy.placement == Placement::PerNode).then(|| node_groups(probe)),
                policy,
                http: cfg.http.clone(),
            };
            let refused: Vec<String> = if policy.placement == Placement::PerNode {
                refused_nodes(probe)
                    .into_iter()
                    .map(|(n, why)| format!("per-node skipped node {n}: {why}"))
                    .collect()
            } else {
                vec![]
            };
            let note = group
                .map(|g| {
                    if cfg.server.is_some() {
                        capacity::SERVER_IN_GROUP
                    } else if g.v2 {
                        capacity::PROCESS_IN_GROUP
                    } else {
                        capacity::THREADS_IN_GROUP
                    }
                    .to_string()
                })
                .into_iter()
                .chain(refused)
                .collect::<Vec<String>>();
            let placed = Placed {
                pinned,
                capacity: cap,
                cpuset: group.map(|g| g.cpus.clone()),
                note: (!note.is_empty()).then(|| note.join("; ")),
            };
            let mut steps = Vec::new();
            for rate in &cfg.rates {
                progress(&format!(
                    "{key}, repeat {}/{}: {rate:.0}/s",
                    r + 1,
                    cfg.repeat
                ));
                let plan = Plan {
                    rate: *rate,
                    warmup: cfg.warmup,
                    measure: cfg.measure,
                };
                // A server's workers as they are now: one forked after the server first
                // answered (a master slowed by its quota) is counted from this step on.
                if let Some(l) = &server {
                    service = Some(process::tree(l.pid));
                }
                let mut edges = Vec::new();
                let o = mq::run_step(
                    plan,
                    &svc,
                    cfg.measure.max(Duration::from_secs(2)),
                    &mut || {
                        edges.push(snapshot(
                            service.as_deref(),
                            &mut counters,
                            group,
                            cfg.http.is_none(),
                        ))
                    },
                );
                let sys = match edges.as_slice() {
                    [a, b] => delta(a, b, ticks),
                    _ => SysDelta::default(),
                };
                steps.push(step::summarize(*rate, &o, &sys));
                if o.interrupted {
                    interrupted = true;
                    runs.entry(key.clone())
                        .or_insert((placed, Vec::new()))
                        .1
                        .push(steps);
                    break 'outer;
                }
            }
            runs.entry(key)
                .or_insert((placed, Vec::new()))
                .1
                .push(steps);
        }
    }
    let results = variants
        .iter()
        .filter_map(|(p, w, c)| {
            let name = p.to_string();
            let (placed, reps) = runs.remove(&label(&name, *w, *c))?;
            Some(analyse(&name, *w, placed, reps))
        })
        .collect();
    Ok(Outcome {
        variants: results,
        order,
        unavailable,
        interrupted,
    })
}

/// Start the server under `policy` and wait until `target` answers (a TCP connection),
/// within `ready`; None when Ctrl-C came first. Errors name what happened: it could not be
/// executed, it exited (with its status), it did not answer in time.
fn start_server(
    argv: &[String],
    policy: &Policy,
    group: Option<Group>,
    ready: Duration,
    target: &super::http::Target,
    probe: &ProbeDoc,
) -> anyhow::Result<Option<crate::policy::launch::Launched>> {
    use crate::policy::launch::Launched;
    use std::process::Stdio;
    let at = crate::policy::resolve::instances(policy, 1, probe)
        .map_err(|e| anyhow::anyhow!("--server under {policy}: {e}"))?;
    let mut l = Launched::start(argv, policy, &at[0], group, Stdio::null(), Stdio::null())
        .map_err(|e| anyhow::anyhow!("--server: {e}"))?;
    let until = std::time::Instant::now() + ready;
    loop {
        if crate::interrupt::requested() {
            return Ok(None);
        }
        if l.has_exited() {
            let e = l.wait();
            anyhow::bail!(
                "--server '{}' under {policy} ended before it answered ({})",
                l.what,
                e.describe()
            );
        }
        if super::http::check_reachable(target).is_ok() {
            return Ok(Some(l));
        }
        if std::time::Instant::now() >= until {
            anyhow::bail!(
                "--server '{}' under {policy} did not answer at {} within {:.1} s (stopped)",
                l.what,
                target.addr,
                ready.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The scaling curve across worker counts: per count the highest valid completed rate
/// (of the best policy), and the USL and Amdahl fits on it.
pub fn scaling(variants: &[VariantResult]) -> Option<Scaling> {
    let mut best: BTreeMap<usize, f64> = BTreeMap::new();
    for v in variants {
        let top = v
            .steps
            .iter()
            .filter(|s| s.valid)
            .map(|s| s.completed_rate)
            .fold(0.0, f64::max);
        let e = best.entry(v.workers).or_default();
        *e = e.max(top);
    }
    if best.len() < 2 {
        return None;
    }
    let pts: Vec<(f64, f64)> = best.iter().map(|(w, x)| (*w as f64, *x)).collect();
    Some(Scaling {
        points: pts
            .iter()
            .map(|(n, x)| ScalingPoint {
                workers: *n,
                max_valid_completed_rate: *x,
            })
            .collect(),
        usl: model::fit(&pts, true),
        amdahl: model::fit(&pts, false),
        note: "the highest valid step's completed rate bounds each worker count's throughput from below: give rates up to saturation".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_pin_workers_by_topology() {
        let p = crate::probe::fixture("two-socket-smt");
        assert!(worker_cpus(Placement::Os, 4, &p).is_none());
        let compact = worker_cpus(Placement::Compact(None), 4, &p).unwrap();
        let spread = worker_cpus(Placement::Spread(None), 4, &p).unwrap();
        assert_eq!(compact.len(), 4);
        assert_eq!(spread.len(), 4);
        // Compact packs the first workers into one package; spread crosses packages.
        let pkg = |c: u32| {
            p.topology
                .cpus
                .iter()
                .find(|x| x.cpu == c)
                .map(|x| x.package)
        };
        assert_eq!(pkg(compact[0]), pkg(compact[1]));
        assert_ne!(pkg(spread[0]), pkg(spread[1]));
    }
}
