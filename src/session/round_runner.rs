//! The rounds of a run as they are measured (`run`'s loop, `session::suites`, and the
//! rounds `--precision` buys, `session::precision`): per benchmark its rounds so far, the
//! CPUs they use, the CPU-speed canaries read per CPU and the pair canaries read per pair
//! of CPUs. A round is one call of the benchmark with a share of the samples, the canaries
//! read before it and the disturbance readings around it (`session::rounds`); at the end
//! each benchmark's rounds are pooled into its rows. Under `ab` ([`Runner::with_sides`])
//! each round is measured on both sides, in a fresh random order, the host switched
//! between them (`policy::sides`), one seq and clock for both, so the document of each side
//! says when each of its rounds ran beside the other's.

use super::disturbance::{self, Canary, PairCanary, Readings};
use super::merge::{self, Measured};
use super::progress::Progress;
use super::rounds;
use super::Measuring;
use crate::bench::{Benchmark, Emitted, RunContext};
use crate::policy::sides::Sides;
use crate::result::rounds::Cause;
use crate::result::suite_cost::{self, SuiteMeter};
use crate::result::BenchResult;
use rand::seq::SliceRandom;
use std::collections::BTreeMap;

/// CPUs a round's canary reads at most (each costs about 3 ms).
const CANARY_CPUS: usize = 2;

/// What one side of the rounds has read: per benchmark its rounds, and the canaries.
#[derive(Default)]
struct Side {
    measured: Vec<Vec<Measured>>,
    /// Every canary reading so far, per CPU.
    canaries: BTreeMap<u32, Vec<f64>>,
    /// Every pair canary reading so far, per pair of CPUs.
    pair_canaries: BTreeMap<[u32; 2], Vec<f64>>,
    /// Cases it could not run, with why (side B's; side A's go into the document).
    skipped: Vec<crate::result::Skipped>,
}

pub struct Runner<'a> {
    benches: &'a [&'static dyn Benchmark],
    /// The sides each round measures (`ab`: A and B, switched between), None for a run.
    switch: Option<&'a mut Sides>,
    /// Per side (one for a run) what its rounds read.
    sides: Vec<Side>,
    /// Per side after A, the machine its cases are planned on (B's probe under `ab`).
    envs: Vec<&'a crate::probe::ProbeDoc>,
    /// Per benchmark: the CPUs its rounds use (read for disturbances) and the canary's.
    cpus: Vec<Vec<u32>>,
    canary_cpus: Vec<Vec<u32>>,
    /// Per benchmark: the CPU pair its pair canary reads (`pair_cpus`).
    pair_cpus: Vec<Option<[u32; 2]>>,
    /// Per benchmark: the samples each of its rounds draws (`rounds::samples_in_round`).
    samples: Vec<usize>,
    /// Per benchmark: seconds its rounds took so far.
    pub spent_s: Vec<f64>,
    /// Per benchmark: its rounds before `--precision` added any (None: none added).
    pub stage1: Vec<Option<usize>>,
    seq: usize,
    t0: std::time::Instant,
    ticks: f64,
}

/// The CPUs a benchmark's rounds use on this machine: the union of its planned cases'
/// CPUs, every usable CPU when a case is unpinned.
fn round_cpus(b: &dyn Benchmark, ctx: &RunContext) -> Vec<u32> {
    let plans = b.plan(ctx);
    let runnable: Vec<_> = plans.iter().filter(|p| p.skipped.is_none()).collect();
    if runnable.is_empty() || runnable.iter().any(|p| p.cpus.is_none()) {
        return ctx.probe.cpus.usable.clone();
    }
    let mut cpus: Vec<u32> = runnable
        .iter()
        .flat_map(|p| p.cpus.clone().unwrap_or_default())
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// The CPU pair a benchmark's pair canary reads: the first two distinct CPUs of its first
/// runnable case pinned to two or more CPUs; None when no case is (a pair pinned to one
/// CPU, unpinned or single-CPU cases). On a machine of many CPUs this samples one pair of
/// the benchmark's, not every pair it uses.
fn pair_cpus(b: &dyn Benchmark, ctx: &RunContext) -> Option<[u32; 2]> {
    b.plan(ctx)
        .iter()
        .filter(|p| p.skipped.is_none())
        .find_map(|p| {
            let cpus = p.cpus.as_ref()?;
            let a = *cpus.first()?;
            let b = *cpus.iter().find(|c| **c != a)?;
            Some([a, b])
        })
}

impl<'a> Runner<'a> {
    /// The runner of `benches`' rounds on the machine of `ctx`, each round of benchmark i
    /// drawing `samples[i]` samples.
    pub fn new(
        benches: &'a [&'static dyn Benchmark],
        ctx: &RunContext,
        samples: Vec<usize>,
    ) -> Runner<'a> {
        assert_eq!(samples.len(), benches.len(), "samples per benchmark");
        let cpus: Vec<Vec<u32>> = benches.iter().map(|b| round_cpus(*b, ctx)).collect();
        Runner {
            benches,
            switch: None,
            envs: vec![],
            sides: vec![Side {
                measured: vec![vec![]; benches.len()],
                ..Side::default()
            }],
            canary_cpus: cpus
                .iter()
                .map(|c| c.iter().take(CANARY_CPUS).copied().collect())
                .collect(),
            pair_cpus: benches.iter().map(|b| pair_cpus(*b, ctx)).collect(),
            samples,
            cpus,
            spent_s: vec![0.0; benches.len()],
            stage1: vec![None; benches.len()],
            seq: 0,
            t0: std::time::Instant::now(),
            ticks: crate::findings::noise::ticks_per_s(),
        }
    }

    /// The runner of `ab`: each round measures both sides of `sides`, in a fresh random
    /// order, each on a fresh thread under its per-thread settings, side B's cases planned
    /// on `env_b` (the machine probed under B).
    pub fn with_sides(
        mut self,
        sides: &'a mut Sides,
        env_a: &'a crate::probe::ProbeDoc,
        env_b: &'a crate::probe::ProbeDoc,
    ) -> Runner<'a> {
        self.envs = vec![env_a, env_b];
        self.sides = (0..2)
            .map(|_| Side {
                measured: vec![vec![]; self.benches.len()],
                ..Side::default()
            })
            .collect();
        self.switch = Some(sides);
        self
    }

    /// How many sides each round measures (2 under `ab`, else 1).
    pub fn sides(&self) -> usize {
        self.sides.len()
    }

    pub fn benches(&self) -> &[&'static dyn Benchmark] {
        self.benches
    }

    /// Benchmark `bench`'s rounds so far (side A's, under `ab`: B has as many).
    pub fn of(&self, bench: usize) -> &[Measured] {
        &self.sides[0].measured[bench]
    }

    /// Measure one round of benchmark `bench` (or, for a benchmark measured in one piece,
    /// the whole of it) with its samples per round, the canary before it and the readings
    /// around it; under `ab` on each side, in a fresh random order, the host switched to
    /// the side's setting before it.
    pub fn round(
        &mut self,
        m: &mut Measuring,
        bench: usize,
        ctx: &RunContext,
        progress: &mut Progress,
    ) -> anyhow::Result<()> {
        let order = match self.switch.as_mut() {
            Some(s) => s.order().to_vec(),
            None => vec![0],
        };
        for side in order {
            if let Some(s) = self.switch.as_mut() {
                s.enter(side).map_err(anyhow::Error::msg)?;
            }
            self.round_on(side, m, bench, ctx, progress)?;
        }
        Ok(())
    }

    fn round_on(
        &mut self,
        side: usize,
        m: &mut Measuring,
        bench: usize,
        ctx: &RunContext,
        progress: &mut Progress,
    ) -> anyhow::Result<()> {
        let b = self.benches[bench];
        let meter = SuiteMeter::start(b.suite());
        let in_rounds = b.in_rounds();
        let nth = self.sides[side].measured[bench].len() + 1;
        let named = match &self.switch {
            Some(_) => format!("{} ({})", b.id(), crate::policy::sides::NAMES[side]),
            None => b.id().to_string(),
        };
        progress.running(&named);
        let mut canaries = vec![];
        let mut pair = None;
        let mut disturbed = vec![];
        if in_rounds {
            for &cpu in &self.canary_cpus[bench] {
                let (read, waited) =
                    crate::measure::run_delay::during(|| crate::bench::cpu_speed::canary_on(cpu));
                if let Ok(speed) = read {
                    let c = Canary { cpu, speed, waited };
                    let seen = self.sides[side].canaries.entry(cpu).or_default();
                    disturbed.extend(disturbance::canary_drop(&c, disturbance::Typical::of(seen)));
                    seen.push(speed);
                    m.speed.canary(cpu, speed);
                    canaries.push(c);
                }
            }
            if let Some(cpus) = self.pair_cpus[bench] {
                if let Ok(ns) = crate::bench::pair::canary(cpus[0], cpus[1]) {
                    let c = PairCanary { cpus, ns };
                    let seen = self.sides[side].pair_canaries.entry(cpus).or_default();
                    disturbed.extend(disturbance::pair_moved(&c, disturbance::Typical::of(seen)));
                    seen.push(ns);
                    m.speed.pair_canary(cpus, ns);
                    pair = Some(c);
                }
            }
        }
        let at_s = self.t0.elapsed().as_secs_f64();
        let before = Readings::now(&self.cpus[bench]);
        let start_ns = before.t_ns;
        let mut results = vec![];
        // Each side plans its cases on its own machine (B's cpuset, say).
        let ctx = RunContext {
            samples: self.samples[bench],
            probe: self.envs.get(side).copied().unwrap_or(ctx.probe),
            ..*ctx
        };
        let mut skipped_here = std::mem::take(&mut self.sides[side].skipped);
        let mut emit = |e| match e {
            Emitted::Running(case) => progress.running(&format!("{} {case}", b.id())),
            Emitted::Result(r) if in_rounds => {
                progress.finished(&format!("{} {} (round {nth})", r.label(), r.unit));
                results.push(*r);
            }
            Emitted::Result(r) => {
                progress.finished(&format!("{} {}", r.label(), r.unit));
                m.finished(*r);
            }
            Emitted::Skipped(s) => {
                // Side A's (a run's) into the document; another side's kept apart.
                let into = match side {
                    0 => &mut m.doc.skipped,
                    _ => &mut skipped_here,
                };
                let seen = into
                    .iter()
                    .any(|x| x.benchmark == s.benchmark && x.case == s.case);
                if !seen {
                    if !in_rounds {
                        progress.finished(&format!("{} {}: skipped", s.benchmark, s.case));
                    }
                    into.push(s);
                }
            }
        };
        // Under `ab`, each side's round on a fresh thread given the side's per-thread
        // settings, which end with it.
        let outcome = match &self.switch {
            None => b.run(&ctx, &mut emit),
            Some(sides) => {
                let sides: &Sides = sides;
                std::thread::scope(|scope| {
                    scope
                        .spawn(|| {
                            sides.on_thread(side).map_err(anyhow::Error::msg)?;
                            b.run(&ctx, &mut emit)
                        })
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p))
                })
            }
        };
        self.sides[side].skipped = skipped_here;
        let after = Readings::now(&self.cpus[bench]);
        suite_cost::add(&mut m.doc.suite_costs, meter.finish());
        self.spent_s[bench] += self.t0.elapsed().as_secs_f64() - at_s;
        if in_rounds {
            disturbed.extend(disturbance::judge(
                &before,
                &after,
                &self.cpus[bench],
                self.ticks,
            ));
            if let Some(line) = disturbance::disturbed_line(&named, nth, &disturbed, pair.as_ref())
            {
                progress.note(&line);
            }
            self.sides[side].measured[bench].push(Measured {
                seq: self.seq,
                window_ns: (start_ns, after.t_ns),
                at_s,
                canaries,
                pair,
                disturbed,
                others: disturbance::others(&before, &after, &self.cpus[bench], self.ticks),
                steal: disturbance::steal(&before, &after),
                results,
            });
            self.seq += 1;
        }
        outcome
    }

    /// What every round so far read of the CPU its cgroup got (`findings::run::cpu_starved`):
    /// the rounds whose canaries read their waiting.
    pub fn waits(&self) -> Vec<crate::findings::run::RoundWait> {
        self.sides
            .iter()
            .flat_map(|s| s.measured.iter().flatten())
            .filter_map(|m| {
                Some(crate::findings::run::RoundWait {
                    waited: disturbance::waited(&m.canaries)?,
                    others: m.others.as_ref().map(|o| o.percent),
                    steal: m.steal,
                })
            })
            .collect()
    }

    /// The disturbed rounds to measure again: per benchmark as many as were disturbed by
    /// something passing (`disturbance::worth_again`: not the host's placement alone, nor a
    /// condition present throughout its rounds, `merge::persistent_in`, which a round
    /// measured again would see as well; under `ab`, on either side, as a round measures
    /// both), at most its budget (`rounds::remeasure_budget`), in a shuffled order.
    pub fn remeasure_slots(&self, rng: &mut impl rand::Rng) -> Vec<usize> {
        let mut out = vec![];
        for (i, rs) in self.sides[0].measured.iter().enumerate() {
            let persistent: Vec<Vec<crate::result::rounds::Cause>> = self
                .sides
                .iter()
                .map(|s| merge::persistent_in(&s.measured[i]))
                .collect();
            let disturbed = (0..rs.len())
                .filter(|&j| {
                    self.sides.iter().zip(&persistent).any(|(s, p)| {
                        s.measured[i].get(j).is_some_and(|r| {
                            let passing: Vec<_> = r
                                .disturbed
                                .iter()
                                .filter(|d| !p.contains(&d.cause))
                                .cloned()
                                .collect();
                            disturbance::worth_again(&passing)
                        })
                    })
                })
                .count();
            let n = disturbed.min(rounds::remeasure_budget(rs.len()));
            out.extend(std::iter::repeat_n(i, n));
        }
        out.shuffle(rng);
        out
    }

    /// Benchmark `bench`'s rows pooled from its rounds, each round's canaries (CPU speed
    /// and pair) judged again against the typical reading of the whole run.
    pub fn pooled(&self, bench: usize) -> Vec<BenchResult> {
        self.pooled_on(0, bench)
    }

    /// `pooled` of one side's rounds.
    fn pooled_on(&self, side: usize, bench: usize) -> Vec<BenchResult> {
        let b = self.benches[bench];
        let at = &self.sides[side];
        let rs: Vec<Measured> = at.measured[bench]
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.disturbed
                    .retain(|d| !matches!(d.cause, Cause::CpuSpeed | Cause::HostPlacement));
                for c in &r.canaries {
                    let typical = at
                        .canaries
                        .get(&c.cpu)
                        .and_then(|v| disturbance::Typical::of(v));
                    r.disturbed.extend(disturbance::canary_drop(c, typical));
                }
                if let Some(c) = &r.pair {
                    let typical = at
                        .pair_canaries
                        .get(&c.cpus)
                        .and_then(|v| disturbance::Typical::of(v));
                    r.disturbed.extend(disturbance::pair_moved(c, typical));
                }
                r
            })
            .collect();
        merge::merge(&rs, self.stage1[bench], &|r| b.refresh(r))
    }

    /// Every benchmark's rows, pooled from its rounds, in the run's benchmark order, each
    /// with the span of its benchmark's rounds (first start to last end) as its window for
    /// the sampler's noise findings.
    pub fn finish(self) -> Vec<(BenchResult, (u64, u64))> {
        self.finish_sides().swap_remove(0)
    }

    /// The cases side `side` could not run, with why (side A's are in the document).
    pub fn skipped(&self, side: usize) -> &[crate::result::Skipped] {
        &self.sides[side].skipped
    }

    /// `finish` per side (A then B under `ab`; one for a run).
    pub fn finish_sides(self) -> Vec<Vec<(BenchResult, (u64, u64))>> {
        (0..self.sides.len())
            .map(|side| self.finish_on(side))
            .collect()
    }

    fn finish_on(&self, side: usize) -> Vec<(BenchResult, (u64, u64))> {
        (0..self.benches.len())
            .flat_map(|i| {
                let rs = &self.sides[side].measured[i];
                let span = (
                    rs.iter().map(|r| r.window_ns.0).min().unwrap_or(0),
                    rs.iter().map(|r| r.window_ns.1).max().unwrap_or(0),
                );
                self.pooled_on(side, i).into_iter().map(move |r| (r, span))
            })
            .collect()
    }
}
