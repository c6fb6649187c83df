//! The `timers` suite: the cost of reading each clock, as benchmark results. One result
//! per clock and read path (vDSO or system call), in ns per read, so the timer's share of
//! any other result can be judged, and a clock read that became a syscall shows.

use super::fresh_process;
use super::memory::per_event;
use super::{Benchmark, Emitted, RunContext};
use crate::findings::results::annotate;
use crate::knob::Switch;
use crate::measure::batch::{cost_batches, timing_clock_cost_ns};
use crate::measure::clocks::{Clock, Path};
use crate::measure::clocksource;
use crate::result::{BenchResult, Placement, Quality};
use anyhow::Context;

pub struct ClockRead;

fn cases() -> Vec<(Clock, Path)> {
    let mut v = Vec::new();
    for path in [Path::Vdso, Path::Syscall] {
        for c in Clock::ALL {
            if c.supports(path) {
                v.push((c, path));
            }
        }
    }
    v
}

/// The benchmark's id.
pub const ID: &str = "timers.clock-read@1";

impl Benchmark for ClockRead {
    fn id(&self) -> &'static str {
        ID
    }

    /// A clock read: CPU work entering the kernel where the path traps; through the
    /// system call it follows the core clock only partly.
    fn nature(&self, r: &BenchResult) -> super::nature::Nature {
        use super::nature::{Clock, Kernel, Nature};
        Nature {
            clock: if r.params.path() == Some("syscall") {
                Clock::Partly
            } else {
                Clock::Follows
            },
            kernel: Kernel::Enters,
            reads_clock: true,
            ..Nature::default()
        }
    }

    /// "vdso clock_gettime(MONOTONIC)", "rdtsc instruction", "... on hpet" in a sweep.
    fn label(&self, params: &crate::result::Params, _: &str) -> Option<String> {
        let p: ClockReadParams = params.read()?;
        let mut s = match p.path.as_str() {
            "instruction" => format!("{} instruction", p.clock),
            path => format!("{path} clock_gettime({})", p.clock.to_uppercase()),
        };
        if let Some(cs) = p.clocksource {
            s.push_str(&format!(" on {cs}"));
        }
        Some(s)
    }

    fn levels(&self) -> &'static [super::levels::LevelUse] {
        use super::levels::*;
        const L: &[LevelUse] = &[
            per_sample(Level::Sample, "consecutive timed batches of clock reads"),
            not_applicable(
                Level::Allocation,
                "no working memory: the clock's data page is the kernel's",
            ),
            per_round(
                Level::Process,
                "each round runs in a fresh process (`bench::fresh_process`): the layout exec draws moved the syscall reads 1.1% and the vDSO reads 0.7% between processes here, where the rounds of one process agreed within their sampling error",
            ),
            between_runs(
                Level::Run,
                "frequency and neighbours of the run: separate runs (calibrate)",
            ),
            between_runs(
                Level::Boot,
                "the clocksource the kernel chose at boot (a run records it): not sampled",
            ),
            BOOT_AND_HOST[1],
        ];
        L
    }

    /// Five times the rounds, of one sample each: a round of all the clock reads takes
    /// about 0.09 s here (0.11 s with two samples), and the rows' noise is between rounds
    /// (the process, the effective CPU speed of the moment; a process's samples agree
    /// within 0.2%): with fifteen rounds of two samples their median MDE in A/As of five
    /// default runs was 3.0-3.2%, against a target of 3%.
    fn round_weight(&self) -> usize {
        5
    }

    fn min_samples_per_round(&self) -> usize {
        1
    }

    /// 4 s of a default run: its 25 first rounds (0.1 s each) and as many again for rows
    /// short of their target.
    fn budget_share_s(&self, _ctx: &RunContext) -> f64 {
        4.0
    }

    /// 3%: a clock read is one of the sharpest figures a host gives (its rounds agree
    /// within 1-2% on a quiet host), and a few percent is what a changed clocksource or
    /// vDSO path moves it by.
    fn mde_target(&self, _r: &BenchResult) -> f64 {
        0.03
    }

    fn describe(&self) -> &'static str {
        "ns per clock read, per clock (monotonic, monotonic_raw, realtime, monotonic_coarse, boottime, rdtsc on x86-64, cntvct on aarch64) and path (vdso = clock_gettime through libc; syscall = the raw system call; instruction = rdtsc or mrs cntvct_el0)"
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        let sweeps = if ctx.options.clocksource_sweep {
            clocksource::available().map(|v| v.len()).unwrap_or(1)
        } else {
            1
        };
        sweeps * (cases().len() + if ctx.options.clocksource_sweep { 2 } else { 0 })
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        if !ctx.options.clocksource_sweep {
            // Each round in a fresh process (`fresh_process`): the figures move per process.
            emit(Emitted::Running("clock reads in a fresh process".into()));
            return fresh_process::measure_round(
                ID,
                fresh_process::Batching::of(ctx),
                cases().len(),
                &mut clock_reads_here,
                &mut |r| emit(Emitted::Result(Box::new(r))),
            );
        }
        // Every available clocksource in turn; the guard switches back whatever happens.
        let switch = Switch::take_recorded(crate::knob::clocksource())?;
        for cs in clocksource::available()? {
            switch
                .set(&cs)
                .with_context(|| format!("switching to clocksource {cs}"))?;
            // The timing clock's own cost changes with the clocksource.
            let cost = timing_clock_cost_ns();
            let here = RunContext {
                clock_cost_ns: cost,
                min_batch_ns: ctx.min_batch_ns.max(cost * 1e4),
                ..*ctx
            };
            clock_reads(ID, fresh_process::Batching::of(&here), Some(&cs), emit)?;
            let (pe, b) = per_event::measure(ctx.samples, here.min_batch_ns);
            if pe.len() < ctx.samples {
                return crate::deadline::stopped();
            }
            let (p, b) = per_event::results(
                per_event::ID,
                here.clock_cost_ns,
                Some(&cs),
                &pe,
                &b,
                Some(&cs),
            )
            .ok_or_else(|| anyhow::anyhow!("per-event: no valid samples"))?;
            emit(Emitted::Result(Box::new(p)));
            emit(Emitted::Result(Box::new(b)));
        }
        drop(switch);
        Ok(())
    }
}

/// One result per clock and read path; tagged with the clocksource during a sweep.
/// One round of every clock and path measured in this process (the child of a fresh
/// process round, or its fallback).
pub fn clock_reads_here(
    b: fresh_process::Batching,
    emit: &mut dyn FnMut(BenchResult),
) -> anyhow::Result<()> {
    clock_reads(ID, b, None, &mut |e| {
        if let Emitted::Result(r) = e {
            emit(*r)
        }
    })
}

fn clock_reads(
    id: &str,
    ctx: fresh_process::Batching,
    clocksource: Option<&str>,
    emit: &mut dyn FnMut(Emitted),
) -> anyhow::Result<()> {
    for (clock, path) in cases() {
        if crate::deadline::stop_requested() {
            return crate::deadline::stopped();
        }
        emit(Emitted::Running(format!(
            "{} {}{}",
            clock.name(),
            clock.path_label(path),
            clocksource
                .map(|c| format!(" under {c}"))
                .unwrap_or_default()
        )));
        let batches = cost_batches(clock, path, ctx.samples, ctx.min_batch_ns);
        if batches.len() < ctx.samples {
            return crate::deadline::stopped(); // an unfinished result is not kept
        }
        let samples: Vec<f64> = batches.iter().map(|b| b.ns_per_iteration()).collect();
        let quality = Quality::of(ctx.clock_cost_ns, &batches);
        let params = crate::result::Params::from_struct(&ClockReadParams {
            clock: clock.name().into(),
            path: clock.path_label(path).into(),
            clocksource: clocksource.map(String::from),
        });
        let os = Placement::os();
        let mut r = BenchResult::new(id, params, os, "ns/read", true, samples, quality)
            .ok_or_else(|| anyhow::anyhow!("no valid samples for {}", clock.name()))?;
        annotate(&mut r);
        emit(Emitted::Result(Box::new(r)));
    }
    Ok(())
}

/// The params of `timers.clock-read`: the clock, its read path, and during a clocksource
/// sweep the clocksource.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClockReadParams {
    pub clock: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bench::fresh_process` on a real round: the clock reads, measured in this process
    /// when a fresh one cannot run them, with real figures and the reason on each result.
    #[test]
    fn a_round_that_cannot_run_in_a_fresh_process_is_measured_here_and_says_so() {
        // Under `cargo test` this executable is the test harness: the child prints no
        // results, and the round is measured here.
        let b = fresh_process::Batching {
            samples: 2,
            min_batch_ns: 2e5,
            clock_cost_ns: 20.0,
        };
        let mut rs = vec![];
        fresh_process::measure_round(ID, b, 11, &mut clock_reads_here, &mut |r| rs.push(r))
            .unwrap();
        assert!(!rs.is_empty());
        for r in &rs {
            assert!(
                r.stats.median > 0.0 && r.stats.median < 1e5,
                "{}",
                r.stats.median
            );
            let f = r
                .findings
                .iter()
                .find(|f| f.id == "round-in-process")
                .expect("says it ran here");
            assert!(
                f.evidence[0].starts_with("a fresh process could not run it: "),
                "{:?}",
                f.evidence
            );
        }
    }
}
