//! The `ctx` suite: `ctx.pipe@1`, the context-switch test UnixBench gets wrong, done per
//! placement. Two tasks pass a token through two pipes; one round trip = write, read on the
//! other side, write back, read. Reported in ns per round trip for every applicable
//! placement plus `os` (unpinned), in process (fork) and thread mode, with what was
//! observed: where each task ran, migrations and switches. The os row gets a finding that
//! says what it really measured.

mod pingpong;

use super::{Benchmark, Emitted, RunContext, Skipped};
use crate::findings::placement::explain_os;
use crate::findings::results::annotate;
use crate::placement::{self, Resolved};
use crate::result::observed::{Observed, PairSeen, TaskSeen, Tasks};
use crate::result::{BenchResult, Placement, Quality};
use pingpong::{measure, Measurement, Mode, Spec};
use std::collections::BTreeSet;

pub struct PipeRoundTrip;

/// The shortest timed batch of round trips: scheduling noise averages out over many.
const CTX_BATCH_FLOOR_NS: f64 = 20e6;

/// The placements to run: `--cpus` and `--placement` when given, else all of them.
fn wanted(ctx: &RunContext) -> (Vec<Resolved>, Vec<Skipped>) {
    let o = ctx.options;
    let mut names = o.placements.clone();
    if names.is_empty() && o.cpus.is_none() {
        names = placement::NAMES.iter().map(|s| s.to_string()).collect();
    }
    let (mut ok, na) = placement::resolve_all(&names, ctx.probe);
    if let Some(c) = &o.cpus {
        if let Ok(r) = placement::explicit(c, ctx.probe) {
            // Before `os`, so the os finding can use it as the cross-CPU figure.
            let at = ok.iter().position(|r| r.name == "os").unwrap_or(ok.len());
            ok.insert(at, r);
        }
    }
    let skipped = na
        .into_iter()
        .map(|n| Skipped {
            benchmark: "ctx.pipe@1".into(),
            case: n.name,
            reason: n.reason,
        })
        .collect();
    (ok, skipped)
}

fn modes(ctx: &RunContext) -> Vec<Mode> {
    let m: Vec<Mode> = ctx
        .options
        .modes
        .iter()
        .filter_map(|m| Mode::from_name(m))
        .collect();
    if m.is_empty() {
        vec![Mode::Process, Mode::Thread]
    } else {
        m
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Process => "process",
        Mode::Thread => "thread",
    }
}

fn task_seen(m: &Measurement, side: usize) -> (TaskSeen, Option<&'static str>) {
    let (c, seen): (_, BTreeSet<u32>) = if side == 0 {
        (m.a, m.observations.iter().map(|o| o.0).collect())
    } else {
        (m.b, m.observations.iter().map(|o| o.1).collect())
    };
    let missing = c.migrations.is_none().then_some(
        "no se.nr_migrations in /proc/PID/task/TID/sched (kernel without CONFIG_SCHED_DEBUG)",
    );
    (
        TaskSeen {
            cpus_seen: seen.into_iter().collect(),
            migrations: c.migrations,
            voluntary_switches: c.voluntary_switches,
            involuntary_switches: c.involuntary_switches,
        },
        missing,
    )
}

const ZERO: crate::observe::task::TaskCounters = crate::observe::task::TaskCounters {
    voluntary_switches: Some(0),
    involuntary_switches: Some(0),
    migrations: Some(0),
};

/// An unpinned pair measured with a fresh pair of tasks per sample: where the scheduler
/// puts a new pair (together or apart) is decided when it starts and then mostly kept, so
/// one pair for all samples would put the placement at the run level, out of the CI's
/// reach. Each sample is one batch of its own pair (after its warm-up and batch sizing).
fn fresh_per_sample(spec: &Spec) -> anyhow::Result<Measurement> {
    let one = Spec {
        mode: spec.mode,
        cpus: spec.cpus,
        footprint: spec.footprint,
        samples: 1,
        min_batch_ns: spec.min_batch_ns,
    };
    let add = |x: Option<u64>, y: Option<u64>| Some(x? + y?);
    let mut all = Measurement {
        batches: Vec::with_capacity(spec.samples),
        observations: Vec::with_capacity(spec.samples),
        a: ZERO,
        b: ZERO,
        interrupted: false,
    };
    for _ in 0..spec.samples {
        let m = measure(&one)?;
        all.batches.extend(m.batches);
        all.observations.extend(m.observations);
        for (sum, c) in [(&mut all.a, m.a), (&mut all.b, m.b)] {
            sum.voluntary_switches = add(sum.voluntary_switches, c.voluntary_switches);
            sum.involuntary_switches = add(sum.involuntary_switches, c.involuntary_switches);
            sum.migrations = add(sum.migrations, c.migrations);
        }
        if m.interrupted || crate::deadline::stop_requested() {
            all.interrupted = true;
            break;
        }
    }
    Ok(all)
}

/// What was observed while the placement ran.
fn observed(m: &Measurement, r: &Resolved) -> Observed {
    let n = m.observations.len();
    let together = m.observations.iter().filter(|(a, b)| a == b).count();
    let round_trips: u64 = m.batches.iter().map(|b| b.iterations).sum();
    let (a, miss_a) = task_seen(m, 0);
    let (b, miss_b) = task_seen(m, 1);
    Observed::Pair(PairSeen {
        relation: r.why.to_string(),
        pinned: r.cpus.is_some(),
        observations: n as u64,
        colocated_fraction: if n > 0 {
            together as f64 / n as f64
        } else {
            0.0
        },
        round_trips,
        tasks: Tasks { a, b },
        unavailable: miss_a
            .or(miss_b)
            .map(|why| [("migrations".to_string(), why.to_string())].into()),
        cpu_kinds: None,
    })
}

impl Benchmark for PipeRoundTrip {
    /// "pipe round trip processes same-cpu", and the memory each side touches per hop.
    fn label(&self, params: &crate::result::Params, placement: &str) -> Option<String> {
        let p: PipeParams = params.read()?;
        let mut s = format!(
            "pipe round trip {} {placement}",
            crate::units::noun(2u64, &p.mode)
        );
        if p.footprint_kb > 0 {
            s.push_str(&format!(
                ", {} touched",
                crate::units::bytes(p.footprint_kb * 1024)
            ));
        }
        Some(s)
    }

    fn refresh(&self, r: &mut BenchResult) {
        r.derived
            .insert("round_trips_per_s".into(), 1e9 / r.stats.median);
    }

    fn id(&self) -> &'static str {
        "ctx.pipe@1"
    }

    /// Two tasks woken in turn through pipes: CPU work that follows the clock when both
    /// share one CPU; apart, each waits on the other's wake-up.
    fn nature(&self, r: &BenchResult) -> super::nature::Nature {
        use super::nature::{Clock, Kernel, Nature, Tasks};
        Nature {
            clock: if r.placement.name == "same-cpu" {
                Clock::Follows
            } else {
                Clock::No
            },
            kernel: Kernel::Sleeps,
            tasks: Tasks::Pair,
            ..Nature::default()
        }
    }

    fn levels(&self) -> &'static [super::levels::LevelUse] {
        use super::levels::*;
        const L: &[LevelUse] = &[
            per_sample(Level::Sample, "consecutive timed batches of round trips"),
            per_sample(Level::Allocation, "unpinned (os): fresh pipes and buffers per sample; pinned: one set per placement (only --footprint memory, a few pages)"),
            per_sample(Level::Process, "unpinned (os): a fresh pair of tasks per sample, so where the scheduler puts it is in the CI; pinned pairs keep one pair, their placement fixed by pinning"),
            between_runs(Level::Run, "frequency and neighbours of the run: separate runs (calibrate)"),
            BOOT_AND_HOST[0],
            BOOT_AND_HOST[1],
        ];
        L
    }

    fn describe(&self) -> &'static str {
        "ns per round trip of a token passed through two pipes between two tasks (process or thread), per placement, with where the tasks were seen"
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        let (ok, na) = wanted(ctx);
        ok.len() * modes(ctx).len() + na.len()
    }

    /// 9 s of a default run: about five rounds of three placements in two modes (1.7 s a
    /// round on a 2-vCPU guest), more with more placements.
    fn budget_share_s(&self, ctx: &RunContext) -> f64 {
        let cases = wanted(ctx).0.len() * modes(ctx).len();
        crate::bench::scaled_share(9.0, cases as f64, 6.0)
    }

    /// By placement: 10% on one CPU (a pinned pair's round trips agree within a few
    /// percent); 15% across two pinned CPUs (the wake-up crosses CPUs, and on a VM the host
    /// places them); 25% unpinned (`os`: the scheduler puts a fresh pair together or apart,
    /// a figure in two modes whose rounds spread 30-40% here).
    fn mde_target(&self, r: &BenchResult) -> f64 {
        match (&r.placement.cpus, r.pinned_cpus().len()) {
            (None, _) => 0.25,
            (Some(_), 1) => 0.10,
            _ => 0.15,
        }
    }

    fn plan(&self, ctx: &RunContext) -> Vec<placement::Planned> {
        let (ok, skipped) = wanted(ctx);
        let modes: Vec<&str> = modes(ctx).into_iter().map(mode_name).collect();
        ok.into_iter()
            .map(|r| {
                placement::Planned::run(
                    self.id(),
                    r.name,
                    r.cpus.map(|c| c.to_vec()),
                    format!("{} ({} mode)", r.why, modes.join(" and ")),
                )
            })
            .chain(
                skipped
                    .into_iter()
                    .map(|s| placement::Planned::skip(self.id(), s.case, s.reason)),
            )
            .collect()
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        let (resolved, skipped) = wanted(ctx);
        for s in skipped {
            emit(Emitted::Skipped(s));
        }
        for mode in modes(ctx) {
            let mut done: Vec<BenchResult> = Vec::new();
            for r in &resolved {
                let spec = Spec {
                    mode,
                    cpus: r.cpus,
                    footprint: (ctx.options.footprint_kb * 1024) as usize,
                    samples: ctx.samples,
                    min_batch_ns: ctx.min_batch_ns.max(CTX_BATCH_FLOOR_NS),
                };
                if crate::deadline::stop_requested() {
                    return crate::deadline::stopped();
                }
                emit(Emitted::Running(format!("{} {}", r.name, mode_name(mode))));
                let m = if r.cpus.is_none() {
                    fresh_per_sample(&spec)?
                } else {
                    measure(&spec)?
                };
                if m.interrupted {
                    // Ctrl-C or the deadline: an unfinished result is not kept.
                    return crate::deadline::stopped();
                }
                let samples: Vec<f64> = m.batches.iter().map(|b| b.ns_per_iteration()).collect();
                let quality = Quality::of(ctx.clock_cost_ns, &m.batches);
                let params = crate::result::Params::from_struct(&PipeParams {
                    mode: mode_name(mode).into(),
                    footprint_kb: ctx.options.footprint_kb,
                });
                let placement = Placement {
                    cpu_kinds: None,
                    name: r.name.clone(),
                    cpus: r.cpus.map(|c| c.to_vec()),
                    observed: Some(observed(&m, r)),
                };
                let mut res = BenchResult::new(
                    self.id(),
                    params,
                    placement,
                    "ns/round-trip",
                    true,
                    samples,
                    quality,
                )
                .ok_or_else(|| anyhow::anyhow!("ctx.pipe: no valid samples"))?;
                self.refresh(&mut res);
                annotate(&mut res);
                crate::findings::placement::mixed_cpu_kinds(
                    &ctx.probe.topology.cpu_kinds,
                    &mut res,
                );
                if r.name == "os" {
                    res.findings
                        .extend(explain_os(&res, &done, &ctx.probe.findings));
                }
                done.push(res.clone());
                emit(Emitted::Result(Box::new(res)));
            }
        }
        Ok(())
    }
}

/// The params of `ctx.pipe`: task mode and the KiB each side touches per hop.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PipeParams {
    pub mode: String,
    #[serde(default)]
    pub footprint_kb: u64,
}
