//! The `timers` suite: the cost of reading each clock, as benchmark results. One result
//! per clock and read path (vDSO or system call), in ns per read, so the timer's share of
//! any other result can be judged, and a clock read that became a syscall shows.

use super::{Benchmark, Emitted, RunContext};
use crate::error::Interrupted;
use crate::findings::results::annotate;
use crate::measure::clocks::{cost_batches, Clock, Path};
use crate::result::{BenchResult, Placement, Quality};
use serde_json::json;

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

impl Benchmark for ClockRead {
    fn id(&self) -> &'static str {
        "timers.clock-read@1"
    }

    fn describe(&self) -> &'static str {
        "ns per clock read, per clock (monotonic, monotonic_raw, realtime, monotonic_coarse, boottime, rdtsc) and path (vdso = clock_gettime through libc; syscall = the raw system call; instruction = rdtsc)"
    }

    fn planned(&self, _ctx: &RunContext) -> usize {
        cases().len()
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        for (clock, path) in cases() {
            if crate::interrupt::requested() {
                return Err(Interrupted.into());
            }
            let batches = cost_batches(clock, path, ctx.samples, ctx.min_batch_ns);
            if batches.len() < ctx.samples {
                return Err(Interrupted.into()); // an unfinished result is not kept
            }
            let samples: Vec<f64> = batches.iter().map(|b| b.ns_per_iteration()).collect();
            let quality = Quality::of(ctx.clock_cost_ns, &batches);
            let params = [
                ("clock".to_string(), json!(clock.name())),
                ("path".to_string(), json!(clock.path_label(path))),
            ]
            .into_iter()
            .collect();
            let os = Placement::os();
            let mut r = BenchResult::new(self.id(), params, os, "ns/read", true, samples, quality)
                .ok_or_else(|| anyhow::anyhow!("no valid samples for {}", clock.name()))?;
            annotate(&mut r);
            emit(Emitted::Result(Box::new(r)));
        }
        Ok(())
    }
}
