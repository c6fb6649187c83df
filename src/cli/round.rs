//! `truebench __round BENCH` (hidden): one round of a benchmark measured in a fresh process
//! for `run` (`bench::fresh_process`), its results printed as one JSON array on stdout.

use crate::bench::fresh_process::{self, Batching};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The benchmark's id (`timers.clock-read@1`).
    pub bench: String,
    /// Samples (timed batches) per result.
    #[arg(long)]
    pub samples: usize,
    /// The shortest timed batch, ns.
    #[arg(long)]
    pub min_batch_ns: f64,
    /// The cost of one read of the timing clock, ns.
    #[arg(long)]
    pub clock_cost_ns: f64,
}

pub fn exec(a: Args) -> anyhow::Result<()> {
    let b = Batching {
        samples: a.samples,
        min_batch_ns: a.min_batch_ns,
        clock_cost_ns: a.clock_cost_ns,
    };
    let results = fresh_process::measure_here(&a.bench, b)?;
    crate::stdout::line(&serde_json::to_string(&results)?)
}
