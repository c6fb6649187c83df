//! `memory.per-event@1`: the sysbench memory method on purpose. An event writes a 1 KiB
//! block (128 eight-byte stores) and, as sysbench 1.0 does, reads CLOCK_MONOTONIC three
//! times per event (a time-limit check and a start/stop pair). Beside it, the same events
//! timed as one batch. Both in MB/s (10^6 B/s of block bytes written); the ratio and the
//! timer share say how much of the "bandwidth" is the clock.

use crate::bench::{fresh_process, Benchmark, Emitted, RunContext};
use crate::findings::results::annotate;
use crate::measure::batch::{calibrate, time_batch, Batch};
use crate::measure::clocks::now_ns;
use crate::result::{BenchResult, Placement, Quality};

pub struct PerEvent;

pub const BLOCK: usize = 1024;
/// Clock reads per event in the per-event method (sysbench 1.0.20).
pub const READS_PER_EVENT: f64 = 3.0;

/// One event: 128 eight-byte stores over the block, not vectorised (as sysbench's).
#[inline(always)]
fn event(block: &mut [u64; BLOCK / 8], v: u64) {
    for w in block.iter_mut() {
        // SAFETY: a valid, aligned, exclusively borrowed word.
        unsafe { std::ptr::write_volatile(w, v) };
    }
}

/// `n` events, each bracketed by clock reads like sysbench; returns the summed event times
/// so the reads cannot be dropped.
fn per_event(block: &mut [u64; BLOCK / 8], n: u64) -> u64 {
    let mut total = 0u64;
    for i in 0..n {
        let _limit_check = std::hint::black_box(now_ns());
        let t0 = now_ns();
        event(block, i);
        total = total.wrapping_add(now_ns() - t0);
    }
    std::hint::black_box(total)
}

fn batched(block: &mut [u64; BLOCK / 8], n: u64) {
    for i in 0..n {
        event(block, i);
    }
}

/// Samples for both methods, alternating so both see the same machine: (per-event, batch).
pub fn measure(samples: usize, min_batch_ns: f64) -> (Vec<Batch>, Vec<Batch>) {
    let mut block = Box::new([0u64; BLOCK / 8]);
    let mut pe = |n: u64| {
        per_event(&mut block, n);
    };
    let n_pe = calibrate(&mut pe, min_batch_ns);
    let mut block2 = Box::new([0u64; BLOCK / 8]);
    let mut b = |n: u64| batched(&mut block2, n);
    let n_b = calibrate(&mut b, min_batch_ns);
    let mut out = (Vec::new(), Vec::new());
    for _ in 0..samples {
        if crate::deadline::stop_requested() {
            break;
        }
        out.0.push(time_batch(&mut pe, n_pe));
        out.1.push(time_batch(&mut b, n_b));
    }
    out
}

fn rate(b: &Batch) -> f64 {
    (b.iterations as f64 * BLOCK as f64 / 1e6) / (b.elapsed_ns as f64 / 1e9)
}

/// The two results, the per-event one carrying the verdict.
/// With `clock_cost_ns` the timing clock's cost and `kernel_clocksource` the clocksource in
/// force (for the verdict's words); `clocksource` tags the params during a sweep.
pub fn results(
    id: &str,
    clock_cost_ns: f64,
    kernel_clocksource: Option<&str>,
    pe: &[Batch],
    batch: &[Batch],
    clocksource: Option<&str>,
) -> Option<(BenchResult, BenchResult)> {
    let make = |timing: &str, batches: &[Batch], reads_per_event: f64| {
        let mut q = Quality::of(clock_cost_ns, batches);
        if reads_per_event > 0.0 {
            // Every event reads the clock, not only the batch edges.
            let events: u64 = batches.iter().map(|b| b.iterations).sum();
            let ns: u64 = batches.iter().map(|b| b.elapsed_ns).sum();
            q.timer_share = (clock_cost_ns * reads_per_event * events as f64 / ns as f64).min(1.0);
        }
        let params = crate::result::Params::from_struct(&PerEventParams {
            timing: timing.into(),
            block_bytes: BLOCK as u64,
            clocksource: clocksource.map(String::from),
        });
        let samples: Vec<f64> = batches.iter().map(rate).collect();
        BenchResult::new(id, params, Placement::os(), "MB/s", false, samples, q)
    };
    let mut p = make("per-event", pe, READS_PER_EVENT)?;
    let b = make("batch", batch, 0.0)?;
    annotate(&mut p);
    p.findings.push(crate::findings::memory::per_event_timing(
        &p,
        &b,
        BLOCK,
        clock_cost_ns,
        kernel_clocksource,
    ));
    Some((p, b))
}

/// The benchmark's id.
pub const ID: &str = "memory.per-event@1";

/// One round measured in this process (the child of a fresh process round, or its
/// fallback), the verdict worded with the clocksource in force now.
pub fn here(
    b: crate::bench::fresh_process::Batching,
    emit: &mut dyn FnMut(BenchResult),
) -> anyhow::Result<()> {
    let (pe, batch) = measure(b.samples, b.min_batch_ns);
    if pe.len() < b.samples {
        return crate::deadline::stopped();
    }
    let kernel = std::fs::read_to_string(crate::measure::clocksource::CURRENT).ok();
    let kernel = kernel.as_deref().map(str::trim);
    let (p, batch) = results(ID, b.clock_cost_ns, kernel, &pe, &batch, None)
        .ok_or_else(|| anyhow::anyhow!("per-event: no valid samples"))?;
    emit(p);
    emit(batch);
    Ok(())
}

impl Benchmark for PerEvent {
    /// "1 KiB writes timed per event", "... as a batch", "... on hpet" in a sweep.
    fn label(&self, params: &crate::result::Params, _: &str) -> Option<String> {
        let p: PerEventParams = params.read()?;
        let timed = match p.timing.as_str() {
            "per-event" => "per event".to_string(),
            "batch" => "as a batch".to_string(),
            other => other.to_string(),
        };
        let mut s = format!(
            "{} writes timed {timed}",
            crate::units::bytes(p.block_bytes)
        );
        if let Some(cs) = p.clocksource {
            s.push_str(&format!(" on {cs}"));
        }
        Some(s)
    }

    fn levels(&self) -> &'static [crate::bench::levels::LevelUse] {
        super::variance::PER_EVENT
    }

    fn id(&self) -> &'static str {
        ID
    }

    /// Block writes to memory, timed per event and as a batch.
    fn nature(&self, _: &BenchResult) -> crate::bench::nature::Nature {
        crate::bench::nature::Nature {
            memory: crate::bench::nature::Memory::Other,
            ..Default::default()
        }
    }

    fn describe(&self) -> &'static str {
        "MB/s of 1 KiB block writes timed per event with 3 clock reads each (the sysbench memory method), beside the same writes timed as a batch"
    }

    fn planned(&self, _ctx: &RunContext) -> usize {
        2
    }

    /// 3 s of a default run: a round is a fresh process of a few tens of ms, and a slow
    /// clock (a system call per read) makes its per-event row several times longer.
    fn budget_share_s(&self, _ctx: &RunContext) -> f64 {
        3.0
    }

    /// 15%, as a bandwidth: what matters is the ratio of its two rows, not a few percent.
    fn mde_target(&self, _r: &BenchResult) -> f64 {
        0.15
    }

    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        // Each round in a fresh process (`fresh_process`): the clock reads it times every
        // event with cost what they cost in that process.
        emit(Emitted::Running(
            "per-event and batch in a fresh process".into(),
        ));
        let b = fresh_process::Batching::of(ctx);
        fresh_process::measure_round(ID, b, self.planned(ctx), &mut here, &mut |r| {
            emit(Emitted::Result(Box::new(r)))
        })
    }
}

/// The params of `memory.per-event`: how it was timed (`per-event`, `batch`), the block
/// size, and during a clocksource sweep the clocksource.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PerEventParams {
    pub timing: String,
    pub block_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocksource: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_event_timing_is_slower_than_batch_timing_for_the_same_writes() {
        // The best sample of each (an interruption only makes a sample slower); this test
        // runs beside the others of the crate, so a pair a neighbour disturbed is measured
        // again, up to three times.
        let best = |v: &[Batch]| v.iter().map(rate).fold(0.0, f64::max);
        let mut seen = vec![];
        for _ in 0..3 {
            let (pe, b) = measure(3, 2e6);
            let (pe, b) = (best(&pe), best(&b));
            assert!(
                b > 500.0,
                "batch rate {b} MB/s implausibly low for L1-resident writes"
            );
            // Three clock reads (>= a few ns each) per 128 stores: never free.
            if pe < b {
                return;
            }
            seen.push((pe, b));
        }
        panic!("per-event timing not below batch timing (MB/s) in three tries: {seen:?}");
    }
}
