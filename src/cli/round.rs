//! `truebench __round BENCH` (hidden): one round of a benchmark measured in a fresh process
//! for `run` (`bench::fresh_process`), each result printed as one JSON line on stdout as it
//! finishes.

use crate::bench::fresh_process::Batching;
use crate::bench::memory::per_event;
use crate::bench::timers;
use crate::error::usage;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The benchmark's id (`timers.clock-read@1`).
    pub bench: String,
    /// Samples (timed batches) per result.
    #[arg(long)]
    pub samples: usize,
    /// The shortest timed batch, ns.
    #[arg(long, allow_negative_numbers = true)]
    pub min_batch_ns: f64,
    /// The cost of one read of the timing clock, ns.
    #[arg(long, allow_negative_numbers = true)]
    pub clock_cost_ns: f64,
}

/// Refuse (exit 2, nothing printed) what no round can be measured with.
fn check(a: &Args) -> anyhow::Result<()> {
    if ![timers::ID, per_event::ID].contains(&a.bench.as_str()) {
        return Err(usage(format!(
            "{} is not measured in a fresh process (only {} and {})",
            a.bench,
            timers::ID,
            per_event::ID
        )));
    }
    if a.samples == 0 {
        return Err(usage("--samples must be at least 1"));
    }
    if !(a.min_batch_ns.is_finite() && a.min_batch_ns > 0.0) {
        return Err(usage(format!(
            "--min-batch-ns {} is not a positive number of ns",
            a.min_batch_ns
        )));
    }
    // A coarse clocksource can read as costing nothing: 0 is a cost, a negative one is not.
    if !(a.clock_cost_ns.is_finite() && a.clock_cost_ns >= 0.0) {
        return Err(usage(format!(
            "--clock-cost-ns {} is not a number of ns (0 or more)",
            a.clock_cost_ns
        )));
    }
    Ok(())
}

pub fn exec(a: Args) -> anyhow::Result<()> {
    check(&a)?;
    // The run's deadline: the round stops between results when it passes.
    crate::deadline::inherit();
    let b = Batching {
        samples: a.samples,
        min_batch_ns: a.min_batch_ns,
        clock_cost_ns: a.clock_cost_ns,
    };
    // Each result on its own line as it finishes (the parent keeps those finished when
    // the round is stopped).
    let mut printed: anyhow::Result<()> = Ok(());
    let mut emit = |r: crate::result::BenchResult| {
        if printed.is_ok() {
            printed = serde_json::to_string(&r)
                .map_err(anyhow::Error::from)
                .and_then(|line| crate::stdout::line(&line));
        }
    };
    match a.bench.as_str() {
        timers::ID => timers::clock_reads_here(b, &mut emit)?,
        per_event::ID => per_event::here(b, &mut emit)?,
        other => unreachable!("{other} refused by check"),
    }
    printed
}
