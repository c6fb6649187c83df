//! `truebench ab SETTING[,SETTING...] [SUITE,...]`: the host as found (A, or `--a`) against
//! the host under the settings given (B), measured round by round in one run
//! (`session::ab`); prints `compare`'s table of the paired verdicts. The settings are
//! parsed by clap (exit 2 on a bad one) and checked against the machine before anything
//! runs (`policy::setting`).

use crate::policy::setting::{self, Settings};
use crate::session;
use crate::store::Location;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Settings: cpus=LIST (affinity of the measuring threads), cpuset=LIST, \
quota=CPUS, weight=N (a cgroup truebench makes and moves itself into; root), class=other|batch|idle|fifo:P|rr:P, \
nice=N, mempolicy=local|bind|interleave|preferred, thp=always|madvise|never and clocksource=NAME \
(system-wide, root; restored at the end, on Ctrl-C and error, and by the next truebench command after a kill).\n\n\
Examples:\n  \
truebench ab thp=never memory              THP as found against THP off, the memory suite\n  \
truebench ab cpuset=0 ctx                  the ping-pong kept on CPU 0 or not\n  \
truebench ab quota=0.5 classic             half a CPU of quota against none\n  \
truebench ab clocksource=kvm-clock timers  the clock reads under another clocksource\n  \
truebench ab nice=0                        an A/A: both sides alike (docs/ab.md)\n  \
truebench ab thp=never --a thp=always      both sides set"
)]
pub struct Args {
    /// B's settings, comma-separated (KEY=VALUE; a CPU list's commas stay in it).
    #[arg(value_name = "SETTING[,SETTING...]", value_parser = setting::parse)]
    settings: Settings,
    /// Suites to run, comma-separated (default: the default suites).
    #[arg(value_delimiter = ',', value_name = "SUITE[,SUITE...]")]
    suites: Vec<String>,
    /// A's settings (default: the host as found).
    #[arg(long = "a", value_name = "SETTING[,SETTING...]", value_parser = setting::parse)]
    a: Option<Settings>,
    /// Print the paired comparison as JSON (schema truebench.compare/1).
    #[arg(long)]
    json: bool,
    /// Every column (MDE, noise basis, p) and each cause's evidence.
    #[arg(short, long)]
    verbose: bool,
    /// Samples (timed batches) per result and side, 3 to 10^6 (as `run --samples`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(3..=1_000_000))]
    samples: u32,
    /// Rounds per benchmark and side, 2 to 1000 (as `run --rounds`; each round measures
    /// both sides).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=1000))]
    rounds: u32,
    /// The MDE every row should reach (`5%` or `0.05`), as `run --precision`.
    #[arg(long, value_name = "PERCENT", value_parser = super::run::parse_precision)]
    precision: Option<f64>,
    /// The whole time, as a ceiling (`90s`; 1 s to 24 h) [default: twice `run`'s, as
    /// every round is measured on both sides].
    #[arg(long, value_name = "DURATION", value_parser = super::run::parse_budget)]
    budget: Option<f64>,
    /// The false discovery rate controlled across the rows (0 < Q < 1).
    #[arg(long, value_name = "Q", default_value_t = crate::compare::stats::verdict::DEFAULT_FDR, value_parser = super::compare::parse_fdr)]
    fdr: f64,
    #[command(flatten)]
    measuring: super::measuring::Args,
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let started = crate::deadline::process_start().unwrap_or_else(std::time::Instant::now);
    let (names, benches) = super::plan::suites(&a.suites)?;
    let common = a.measuring.common()?;
    let run = session::suites::SuiteRun::new(
        names,
        benches,
        crate::bench::RunOptions::default(),
        session::suites::Asked::options(a.samples, a.rounds, a.precision, a.budget),
        started,
        a.json,
        super::detail(a.verbose),
    );
    session::run_with(
        &mut session::ab::Ab::new(run, a.a.unwrap_or_default(), a.settings, a.fdr, a.verbose),
        db,
        &common,
    )
}
