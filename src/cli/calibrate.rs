//! `truebench calibrate [SUITE,...]`: run the suites K times (`--runs`, default 5) as
//! ordinary stored runs tagged `calibration=<id>`, in shuffled order, and print per row the
//! between-run spread and the smallest difference `compare` can detect on this host
//! (src/session/calibrate.rs). Run it once per host; `compare` finds it in the store.

use crate::bench::RunOptions;
use crate::compare::stats::noise_model::{CALIBRATION_TAG, MIN_RUNS};
use crate::error::usage_hint;
use crate::session::{self, suites::SuiteRun};
use crate::store::Location;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench calibrate timers,ctx                 5 runs; `compare` then uses this spread\n  \
truebench calibrate --runs 8 --samples 20")]
pub struct Args {
    /// Suites to run, comma-separated (default: the default suites).
    #[arg(value_delimiter = ',', value_name = "SUITE[,SUITE...]")]
    suites: Vec<String>,
    /// How many separate runs (3 to 100; more runs, a smaller detectable difference).
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u32).range(MIN_RUNS as i64..=100))]
    runs: u32,
    /// Samples (timed batches) per result, 3 to 10^6, as `run --samples`.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(3..=1_000_000))]
    samples: u32,
    /// Print the calibration (truebench.calibration/1) as JSON instead of the text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    measuring: super::measuring::Args,
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let (names, benches) = super::plan::suites(&a.suites)?;
    let common = a.measuring.common()?;
    if let Some(k) = common.tags.keys().find(|k| k.starts_with(CALIBRATION_TAG)) {
        return Err(usage_hint(
            format!("--tag {k}=... is set by calibrate itself"),
            "use another tag key",
        ));
    }
    let make = || {
        SuiteRun::new(
            names.clone(),
            benches.clone(),
            RunOptions {
                modes: super::choices::Mode::Both.names(),
                ..Default::default()
            },
            crate::session::suites::Asked {
                samples: a.samples as usize,
                rounds: crate::session::rounds::DEFAULT_ROUNDS,
                precision: None,
                budget: crate::session::suites::Budget::Off,
            },
            std::time::Instant::now(),
            false,
            super::detail(false),
        )
    };
    session::calibrate::calibrate(&make, a.runs as usize, a.json, db, &common)
}
