//! The command line: clap definitions, dispatch to one file per subcommand, and the
//! mapping of errors to one `error:` line and the exit codes of DESIGN.md.

mod compare;
mod loadstep;
mod output;
mod probe;
mod record;
mod report;
mod run;
mod runs;

use crate::error::{exit_code, EXIT_OK};
use clap::{Parser, Subcommand};
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
results go to a SQLite database), `truebench history`, `truebench show latest`, \
`truebench compare A B`.",
    after_help = "Exit codes: 0 ok, 1 the run failed, 2 bad usage or bad input (nothing written), 130 interrupted (finished results kept).\n\
Environment: TRUEBENCH_DB (results database), TRUEBENCH_LOCK (run lock file), XDG_DATA_HOME."
)]
pub struct Cli {
    /// Results database (default: $TRUEBENCH_DB, else $XDG_DATA_HOME/truebench/results.db,
    /// else ~/.local/share/truebench/results.db).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Describe this machine: CPUs and limits, topology and caches, NUMA, VM and container
    /// layers, clocks and their read cost, kernel, PMU, steal; with findings.
    Probe(probe::Args),
    /// Run benchmark suites, store the run and print its results.
    Run(run::Args),
    /// Record system metrics (and a process, and a business metric) per interval on one clock.
    Record(record::Args),
    /// Drive a workload open-loop at fixed load steps: latency (coordinated omission
    /// corrected), cost per transaction, knee, USL fit, placement policies compared.
    Loadstep(loadstep::Args),
    /// List stored runs, newest first.
    History(runs::HistoryArgs),
    /// Show one stored run's results and findings.
    Show(runs::ShowArgs),
    /// Print a stored run as its JSON document (truebench.result/1).
    Export(runs::ExportArgs),
    /// Add a run document (JSON, truebench.result/1) to the database, after validating it.
    Import(runs::ImportArgs),
    /// Compare two runs: medians, ratios, whether differences are real, and the
    /// environment differences that could explain them.
    Compare(compare::Args),
    /// Write one self-contained HTML report (charts as inline SVG, no network) of runs.
    Report(report::Args),
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => e.exit(), // clap: --help/--version exit 0, usage errors exit 2 with `error:`
    };
    match dispatch(cli) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            exit_code(&e)
        }
    }
}

/// The error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    let db = cli.db.as_deref();
    match cli.command {
        Command::Probe(a) => probe::exec(a),
        Command::Run(a) => run::exec(a, db),
        Command::Record(a) => record::exec(a, db),
        Command::Loadstep(a) => loadstep::exec(a, db),
        Command::History(a) => runs::history(a, db),
        Command::Show(a) => runs::show(a, db),
        Command::Export(a) => runs::export(a, db),
        Command::Import(a) => runs::import(a, db),
        Command::Compare(a) => compare::exec(a, db),
        Command::Report(a) => report::exec(a, db),
    }
}

/// Seconds from the command line (`3`, `0.5`, `2s`), 0.1 to 3600.
pub(crate) fn parse_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches('s')
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if (0.1..=3600.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} s is outside 0.1 to 3600 s"))
    }
}

/// A run document for a command that is not a suite run (record, loadstep): the machine,
/// its findings, no results yet; the caller fills in what it measured.
pub(crate) fn bare_document(
    started: &chrono::DateTime<chrono::Utc>,
    env: &crate::probe::ProbeDoc,
    suite: &str,
    interrupted: bool,
) -> anyhow::Result<crate::result::RunDocument> {
    use chrono::SecondsFormat::Millis;
    Ok(crate::result::RunDocument {
        schema: crate::result::SCHEMA.into(),
        run_id: run::run_id(started),
        started_at: started.to_rfc3339_opts(Millis, true),
        finished_at: Some(chrono::Utc::now().to_rfc3339_opts(Millis, true)),
        host: env.hostname.clone(),
        suites: vec![suite.into()],
        interrupted,
        tool: crate::result::Tool::current(),
        env: env.clone(),
        findings: env.findings.clone(),
        results: vec![],
        skipped: vec![],
        recording: None,
        indexes: None,
        loadstep: None,
    })
}

/// Store a finished run and print it (its JSON document, or its tables and where it was
/// stored); an interrupted run ends as Interrupted (exit 130) after that.
pub(crate) fn store_and_print(
    store: &mut crate::store::Store,
    doc: &crate::result::RunDocument,
    json: bool,
    db_path: &std::path::Path,
    what: &str,
    detail: crate::report::text::Detail,
) -> anyhow::Result<()> {
    store.insert(doc)?;
    if json {
        print_json(doc)?;
    } else {
        print!("{}", crate::report::text::render(doc, detail));
        eprintln!(
            "truebench: stored {what} {} in {}",
            doc.run_id,
            db_path.display()
        );
    }
    if doc.interrupted {
        return Err(crate::error::Interrupted.into());
    }
    Ok(())
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
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}
