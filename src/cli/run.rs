//! `truebench run [SUITE,...]`: the options of a suite run; the session (src/session/)
//! probes, runs the suites' benchmarks with progress on stderr, stores the run and prints
//! its table (or `--json` document). Ctrl-C keeps finished results.

use super::choices::{Mode, Placement};
use crate::bench::{self, RunOptions};
use crate::error::usage_hint;
use crate::session;
use crate::store::Location;
use std::io::IsTerminal;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench run                                  the default suites (`--list` names them)\n  \
truebench run timers,ctx --samples 20          two suites, 20 timed batches per result\n  \
truebench run ctx --placement same-cpu,os --mode thread\n  \
truebench run classic --copies 1,2x --pin      UnixBench-style index, 1 and 2N copies\n  \
truebench run --precision 5% --budget 120s     rounds added until each row's MDE is 5%\n  \
truebench run --tag host=web-01 --start-at 2026-11-23T15:00:00Z")]
pub struct Args {
    /// Suites to run, comma-separated (default: the default suites). `--list` shows them.
    #[arg(value_delimiter = ',', value_name = "SUITE[,SUITE...]")]
    suites: Vec<String>,
    /// Print the run document (truebench.result/1) as JSON instead of the summary.
    #[arg(long)]
    json: bool,
    /// Print every result in one table (median, CI, CV, n, timer share, placement, what was
    /// observed) and each suite's full tables, instead of the summary per suite.
    #[arg(short, long)]
    verbose: bool,
    /// Samples (timed batches) per result, 3 to 10^6; each batch lasts at least 2 ms and 10^4
    /// clock reads. They are split over each benchmark's rounds, at least 2 per round (10
    /// in 5 rounds: 2 each; 10 in 4: 3 each, 12 in all); the clock reads and memory
    /// bandwidth, whose samples are whole measurements, take at least 1 per round, in more
    /// rounds (1 each by default).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(3..=1_000_000))]
    samples: u32,
    /// Rounds each benchmark's samples are drawn in, spread across the run in a shuffled
    /// order; a disturbed round is measured again and kept out of the figures, and the
    /// spread between rounds is each row's own noise (docs/methodology.md, Rounds). The
    /// timers draw five times as many, c2c and memory bandwidth twice; a classic round is
    /// one pass of each case (two of 10 s with --full). 1 to 1000.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    rounds: u32,
    /// The minimum detectable effect (against an identical run, α 0.05, power 0.8) every
    /// row should reach (`5%` or `0.05`), instead of its family's (timers 3%,
    /// memory.latency 8%, ctx same-cpu 10%, memory.bandwidth 15%, c2c 20%, classic 5%):
    /// the budget's rounds go to the rows furthest from it; prints per row what it reached
    /// and why not.
    #[arg(long, value_name = "PERCENT", value_parser = parse_precision)]
    precision: Option<f64>,
    /// The run's whole time, process start to stored document, as a ceiling (`90s`, or seconds;
    /// 1 s to 24 h): every row starts with a few rounds, the rest goes to the rows whose
    /// MDE is furthest from their target; a row the budget cut says what it reached and
    /// why [default: the benchmarks' shares, 40 s for the default suites on a small
    /// machine].
    #[arg(long, value_name = "DURATION", value_parser = parse_budget)]
    budget: Option<f64>,
    /// List the suites and their benchmarks, and exit.
    #[arg(long)]
    list: bool,
    /// ctx suite: placements, comma-separated (default: every applicable one and os).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    placement: Vec<Placement>,
    /// ctx suite: an explicit CPU pair (`--cpus 0,3`), as placement `cpus`; one CPU
    /// (`--cpus 2`) puts both tasks on it.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    cpus: Option<Vec<u32>>,
    /// ctx suite: task mode, process (fork), thread, or both [default: both].
    #[arg(long)]
    mode: Option<Mode>,
    /// ctx suite: KiB of its own memory each side touches per hop (lmbench lat_ctx style;
    /// 0 to 1048576, 1 GiB) [default: 0].
    #[arg(long, value_name = "KB", value_parser = clap::value_parser!(u64).range(0..=1_048_576))]
    footprint: Option<u64>,
    /// memory suite: size of each bandwidth array, all threads together (e.g. 512M, 2G;
    /// default: 4x the last-level caches, at least 128 MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    array_size: Option<u64>,
    /// timers suite, root only: measure every clock and the per-event memory figure under
    /// each available clocksource, then restore the original (also on Ctrl-C or error).
    /// Without this flag truebench never touches the clocksource.
    #[arg(long)]
    clocksource_sweep: bool,
    #[command(flatten)]
    classic: crate::bench::classic::Options,
    #[command(flatten)]
    measuring: super::measuring::Args,
}

/// The suite-specific options given, each with the suite it applies to.
fn suite_options(a: &Args) -> Vec<(&'static str, &'static str)> {
    let mut given = vec![];
    let ctx = [
        (!a.placement.is_empty(), "--placement"),
        (a.cpus.is_some(), "--cpus"),
        (a.mode.is_some(), "--mode"),
        (a.footprint.is_some(), "--footprint"),
    ];
    given.extend(ctx.into_iter().filter(|g| g.0).map(|g| (g.1, "ctx")));
    if a.array_size.is_some() {
        given.push(("--array-size", "memory"));
    }
    if a.clocksource_sweep {
        given.push(("--clocksource-sweep", "timers"));
    }
    given.extend(a.classic.given().into_iter().map(|f| (f, "classic")));
    given
}

/// An option that applies to none of the suites named is refused (exit 2), never
/// silently ignored.
fn refuse_inapplicable(a: &Args, benches: &[&'static dyn bench::Benchmark]) -> anyhow::Result<()> {
    for (flag, suite) in suite_options(a) {
        if !benches.iter().any(|b| b.suite() == suite) {
            return Err(usage_hint(
                format!("{flag} applies to the {suite} suite, which this run does not include"),
                format!("truebench run {suite} {flag} ..."),
            ));
        }
    }
    Ok(())
}

/// `512M`, `2G`, `64K` or plain bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    crate::probe::topology::parse_size(s)
        .filter(|b| *b >= 4096)
        .ok_or_else(|| format!("'{s}' is not a size of at least 4K (e.g. 512M, 2G)"))
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    // The budget counts from the process's start (what `time truebench run` shows).
    let started = crate::deadline::process_start().unwrap_or_else(std::time::Instant::now);
    if a.list {
        return crate::stdout::write(&session::suites::list());
    }
    let (names, benches) = super::plan::suites(&a.suites)?;

    super::distinct(
        "--placement",
        &a.placement.iter().map(|p| p.name()).collect::<Vec<_>>(),
    )?;
    super::distinct("--copies", a.classic.copies.as_deref().unwrap_or_default())?;
    refuse_inapplicable(&a, &benches)?;
    let common = a.measuring.common()?;
    let options = RunOptions {
        placements: a.placement.iter().map(|p| p.name().to_string()).collect(),
        cpus: a.cpus.clone(),
        modes: a.mode.unwrap_or(Mode::Both).names(),
        footprint_kb: a.footprint.unwrap_or(0),
        array_bytes: a.array_size,
        clocksource_sweep: a.clocksource_sweep,
        classic: a.classic.clone(),
    };
    if std::io::stderr().is_terminal() {
        eprintln!("truebench: probing the machine...");
    }
    session::run_with(
        &mut session::suites::SuiteRun::new(
            names,
            benches,
            options,
            session::suites::Asked::options(a.samples, a.rounds, a.precision, a.budget),
            started,
            a.json,
            super::detail(a.verbose),
        ),
        db,
        &common,
    )
}

/// `--precision`: `5%` or a fraction `0.05`, above 0 and below 100%.
pub(super) fn parse_precision(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{s}' is not a percentage (5% or 0.05)"))?;
    if !(v > 0.0 && v < 1.0) {
        return Err(format!("'{s}' must be above 0% and below 100%"));
    }
    Ok(v)
}

/// `--budget`: seconds (`90`, `90s`, `1500ms`), from 1 s to 24 h.
pub(super) fn parse_budget(s: &str) -> Result<f64, String> {
    let us = crate::duration::micros(s, crate::duration::Bare::Seconds)
        .ok_or_else(|| format!("'{s}' is not a duration (90s, 90, 1500ms)"))?;
    let secs = us / 1e6;
    if !(1.0..=86_400.0).contains(&secs) {
        return Err(format!("'{s}' must be between 1 s and 24 h"));
    }
    Ok(secs)
}
