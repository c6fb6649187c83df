//! The command line: clap definitions, dispatch to one file per subcommand, and the
//! mapping of errors to one `error:` line and the exit codes of docs/architecture.md.

mod ab;
mod calibrate;
mod choices;
mod compare;
mod compare_precision;
mod experiment;
mod import_many;
mod loadstep;
mod measuring;
mod output;
mod plan;
mod predict;
mod probe;
mod record;
mod report;
mod round;
mod run;
mod runs;
mod trend;
mod usage_error;

use crate::error::{exit_code, EXIT_OK};
use clap::{FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "truebench",
    version,
    about = "A Linux system benchmark whose numbers you can trust, and which explains them",
    long_about = "truebench benchmarks a Linux machine (bare metal, VM or container) and says where each \
number was measured, how sure it is, and why it may differ elsewhere: placement of tasks on CPUs, \
the cost of the timer itself, cgroup quotas against cpuset widths, steal time.\n\n\
Start with `truebench probe` (the machine as data), then `truebench run` (the default suites; \
results go to a SQLite file or a PostgreSQL database), `truebench history`, `truebench show latest`, \
`truebench compare A B`.",
    after_help = "Exit codes: 0 ok, 1 the run failed, 2 bad usage or bad input (nothing written), 130 interrupted (finished results kept).\n\
Environment: TRUEBENCH_DB (results database, path or postgresql:// URL), PGPASSWORD, PGPASSFILE, TRUEBENCH_LOCK (run lock file), XDG_DATA_HOME."
)]
pub struct Cli {
    /// Results database: a SQLite file, or a PostgreSQL database as
    /// postgresql://USER@HOST[:PORT]/DB[?sslmode=require] (password from ~/.pgpass or
    /// PGPASSWORD). Default: $TRUEBENCH_DB, else $XDG_DATA_HOME/truebench/results.db, else
    /// ~/.local/share/truebench/results.db. A measuring command or import creates the file
    /// and its directory when missing.
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Describe this machine: CPUs and limits, topology and caches, NUMA, VM and container
    /// layers, clocks and their read cost, kernel, PMU, steal; with findings.
    Probe(probe::Args),
    /// Show what `run` would run where on this machine (or a captured tree), without running.
    Plan(plan::Args),
    /// Run benchmark suites, store the run and print its results.
    Run(run::Args),
    /// Run suites K times (default 5, shuffled, stored as runs tagged calibration=ID) and
    /// print per row this host's run-to-run spread and the smallest difference `compare`
    /// can detect; `compare` then uses it. Run it once per host.
    Calibrate(calibrate::Args),
    /// Record system metrics (and a process, and a business metric) per interval on one clock.
    Record(record::Args),
    /// Drive a workload open-loop at fixed load steps: latency (coordinated omission
    /// corrected), cost per transaction, knee, USL fit, placement policies compared.
    Loadstep(loadstep::Args),
    /// Run a batch command to completion under policy variants (placement, scheduling
    /// class, memory policy, capacity) in shuffled repeated order: medians, CIs, winner.
    Experiment(experiment::Args),
    /// Measure the host as found (A) and under settings (B: cpuset=0, thp=never, quota=0.5,
    /// nice=5, clocksource=NAME...) round by round in one run; paired verdicts per row.
    Ab(ab::Args),
    /// List stored runs, newest first.
    #[command(visible_alias = "list")]
    History(runs::HistoryArgs),
    /// Show one stored run's results and findings.
    Show(runs::ShowArgs),
    /// Print or write stored runs: the JSON document (truebench.result/1), or ndjson,
    /// openmetrics, gobench (for benchstat) or csv.
    Export(runs::ExportArgs),
    /// Add a run document (JSON, truebench.result/1) to the database, after validating it.
    Import(runs::ImportArgs),
    /// Compare runs: medians, ratios, whether differences are real (beyond this host's
    /// run-to-run noise and its minimum detectable effect, at a false discovery rate), and each difference explained by placement, topology, timer, capacity,
    /// noise, a neighbour, the host's share of the LLC or CPU speed with its evidence; several runs ranked against a baseline.
    Compare(compare::Args),
    /// Write one self-contained HTML report (charts as inline SVG, no network) of runs.
    Report(report::Args),
    /// Predict from stored load-step runs the highest rate held below a p99 target per
    /// capacity setting (QUOTA/WIDTH), and the smallest setting for a target rate.
    Predict(predict::Args),
    /// Read each host's stored runs as series per row: the change points (E-divisive means
    /// with a t-test), the rows that change together as one change, each explained by the
    /// compare of the runs either side; `--fleet` groups hosts that changed alike.
    Trend(trend::Args),
    /// One round of a benchmark in a fresh process, for `run` (results as JSON on stdout).
    #[command(name = "__round", hide = true)]
    Round(round::Args),
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    let args = usage_error::help_flags_after_help(std::env::args_os().collect());
    let cli = match usage_error::command()
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => Ok(c),
        // --help and --version print and exit 0; no command at all prints the help, exit 2.
        Err(e)
            if !e.use_stderr()
                || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            e.exit()
        }
        Err(e) => Err(anyhow::Error::new(usage_error::from_clap(&e, &args[1..]))),
    };
    match cli.and_then(dispatch) {
        Ok(()) => EXIT_OK,
        Err(e) if e.downcast_ref::<crate::stdout::StdoutClosed>().is_some() => EXIT_OK,
        Err(e) if e.downcast_ref::<crate::error::CommandExit>().is_some() => exit_code(&e),
        Err(e) => {
            eprintln!("error: {}", crate::error::one_line(&e));
            exit_code(&e)
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    let db = cli
        .db
        .as_deref()
        .map(|d| crate::store::Location::parse(d.as_os_str()))
        .transpose()?;
    let db = db.as_ref();
    // A child round of `run` measures and prints, nothing else (no clean-up of other runs).
    let cli = match cli.command {
        Command::Round(a) => return round::exec(a),
        _ => cli,
    };
    for done in crate::cleanup::after_killed_runs() {
        eprintln!("truebench: {done}");
    }
    match cli.command {
        Command::Probe(a) => probe::exec(a),
        Command::Plan(a) => plan::exec(a),
        Command::Run(a) => run::exec(a, db),
        Command::Calibrate(a) => calibrate::exec(a, db),
        Command::Record(a) => record::exec(a, db),
        Command::Loadstep(a) => loadstep::exec(a, db),
        Command::Experiment(a) => experiment::exec(a, db),
        Command::Ab(a) => ab::exec(a, db),
        Command::History(a) => runs::history(a, db),
        Command::Show(a) => runs::show(a, db),
        Command::Export(a) => runs::export(a, db),
        Command::Import(a) => runs::import(a, db),
        Command::Compare(a) => compare::exec(a, db),
        Command::Report(a) => report::exec(a, db),
        Command::Predict(a) => predict::exec(a, db),
        Command::Trend(a) => trend::exec(a, db),
        Command::Round(_) => unreachable!("dispatched above"),
    }
}

/// A list option must not name the same thing twice (`--policy os,os` would run the work
/// twice and compare it with itself): exit 2 naming the repeated value.
pub(crate) fn distinct<T: PartialEq + std::fmt::Display>(
    flag: &str,
    items: &[T],
) -> anyhow::Result<()> {
    for (i, x) in items.iter().enumerate() {
        if items[..i].contains(x) {
            return Err(crate::error::usage_hint(
                format!("{flag} names {x} twice"),
                "give each value once",
            ));
        }
    }
    Ok(())
}

/// Seconds from the command line (`3`, `0.5`, `2s`, `500ms`), 0.1 to 3600.
pub(crate) fn parse_secs(s: &str) -> Result<f64, String> {
    let v = crate::duration::micros(s, crate::duration::Bare::Seconds)
        .ok_or_else(|| format!("'{s}' is not a number of seconds (3, 0.5, 500ms)"))?
        / 1e6;
    if (0.1..=3600.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s} is outside 0.1 to 3600 s"))
    }
}

/// The text detail a `--verbose`/`--all` flag asks for.
pub(crate) fn detail(full: bool) -> crate::report::text::Detail {
    if full {
        crate::report::text::Detail::Full
    } else {
        crate::report::text::Detail::Summary
    }
}

/// Print a value as one pretty JSON document on stdout.
pub(crate) fn print_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    crate::session::print_json(v)
}

#[cfg(test)]
mod tests {
    use super::parse_secs;

    #[test]
    fn seconds_take_a_unit_or_none() {
        assert_eq!(parse_secs("3"), Ok(3.0));
        assert_eq!(parse_secs("2s"), Ok(2.0));
        assert_eq!(parse_secs("500ms"), Ok(0.5));
        for bad in ["fast", "0.05", "2h", "NaN", "inf", "-1"] {
            assert!(parse_secs(bad).is_err(), "{bad}");
        }
    }
}
