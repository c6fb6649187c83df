//! `truebench record [--interval S] [--duration S] [--pid PID | -- COMMAND...]`: the options
//! of a recording; the session (src/session/record.rs) records system metrics, a target
//! process and a business metric on one clock, one line per interval on the terminal, and
//! stores it as a run (suite `record`) so show/export/compare work on it.

use crate::session::{
    self,
    record::{Options, Output, Recording},
};
use crate::store::Location;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench record --duration 60                 the system, one row a second, for a minute\n  \
truebench record -- ./batch-job input          the system and the command, until it exits\n  \
truebench record --pid 4242 --metric-file /run/app.count --interval 5 --duration 600")]
pub struct Args {
    /// Seconds between samples (0.1 to 3600).
    #[arg(long, default_value = "1", value_parser = super::parse_secs)]
    interval: f64,
    /// Stop after this many seconds, 0.1 to 3600 (default: when the command exits, or
    /// Ctrl-C).
    #[arg(long, value_parser = super::parse_secs)]
    duration: Option<f64>,
    /// Follow this running process (and its threads: CPUs, migrations, NUMA homes; its
    /// memory per node).
    #[arg(long, conflicts_with = "command")]
    pid: Option<i32>,
    /// A command printing a cumulative business counter (transactions done...), run every interval.
    #[arg(long, value_name = "CMD")]
    metric_cmd: Option<String>,
    /// A file holding a cumulative business counter, read every interval.
    #[arg(long, value_name = "PATH", conflicts_with = "metric_cmd")]
    metric_file: Option<PathBuf>,
    /// Print the run document (with the recording) as JSON at the end instead of the live table.
    #[arg(long)]
    json: bool,
    /// Print the rows as CSV at the end instead of the live table.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// The command to start and follow (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
    #[command(flatten)]
    measuring: super::measuring::Args,
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let common = a.measuring.common()?;
    let output = if a.json {
        Output::Json
    } else if a.csv {
        Output::Csv
    } else {
        Output::Live
    };
    let o = Options {
        interval: a.interval,
        duration: a.duration,
        pid: a.pid,
        metric_cmd: a.metric_cmd,
        metric_file: a.metric_file,
        output,
        command: a.command,
    };
    session::run_with(&mut Recording::new(o), db, &common)
}
