//! `truebench run [SUITE,...]`: the options of a suite run; the session (src/session/)
//! probes, runs the suites' benchmarks with progress on stderr, stores the run and prints
//! its table (or `--json` document). Ctrl-C keeps finished results.

use crate::bench::{self, RunOptions, DEFAULT_SUITES};
use crate::error::usage_hint;
use crate::session;
use std::io::IsTerminal;
use std::path::Path;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Suites to run, comma-separated (default: the default suites). `--list` shows them.
    #[arg(value_delimiter = ',', value_name = "SUITE[,SUITE...]")]
    suites: Vec<String>,
    /// Print the run document (truebench.result/1) as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Samples (timed batches) per result; each batch lasts at least 2 ms and at least 10^4 clock reads.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(3..=1_000_000))]
    samples: u32,
    /// List the suites and their benchmarks, and exit.
    #[arg(long)]
    list: bool,
    /// Placements for communication tests, comma-separated: os, same-cpu, smt-sibling,
    /// same-llc, cross-llc, cross-package, cross-node (default: every applicable one and os).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    placement: Vec<String>,
    /// An explicit CPU pair for communication tests (`--cpus 0,3`), as placement `cpus`.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    cpus: Option<Vec<u32>>,
    /// Task mode for ctx tests: process (fork), thread, or both.
    #[arg(long, default_value = "both", value_parser = ["process", "thread", "both"])]
    mode: String,
    /// KiB of its own memory each side of a ctx test touches per hop (lmbench lat_ctx style).
    #[arg(long, default_value_t = 0, value_name = "KB", value_parser = clap::value_parser!(u64).range(0..=1_048_576))]
    footprint: u64,
    /// Size of each memory-bandwidth array, all threads together (e.g. 512M, 2G; default:
    /// 4x the last-level caches, at least 128 MiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    array_size: Option<u64>,
    /// Timers suite only, root only: measure every clock and the per-event memory figure
    /// under each available clocksource, then restore the original (also on Ctrl-C or error).
    /// Without this flag truebench never touches the clocksource.
    #[arg(long)]
    clocksource_sweep: bool,
    /// Classic suite: copy counts to run, comma-separated (default: 1 and N, N = the CPUs
    /// this process may really use: affinity ∩ cpuset, narrowed by a CPU quota).
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    copies: Option<Vec<u32>>,
    /// Classic suite: pin the copies one per CPU, spread across nodes, LLCs and cores.
    #[arg(long)]
    pin: bool,
    /// Classic suite: UnixBench's passes and durations (10 x 10 s, 3 x 30 s, 3 x 60 s: about
    /// 28 minutes per copy count) instead of the quick plan (5 passes of 0.5-1 s).
    #[arg(long)]
    full: bool,
    /// Classic suite: also run the file copies flushed to the device (fdatasync at each
    /// rewind), reported as fsync=true and kept out of the index.
    #[arg(long)]
    fsync: bool,
}

/// `512M`, `2G`, `64K` or plain bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    crate::probe::topology::parse_size(s)
        .filter(|b| *b >= 4096)
        .ok_or_else(|| format!("'{s}' is not a size of at least 4K (e.g. 512M, 2G)"))
}

pub fn exec(a: Args, db: Option<&Path>) -> anyhow::Result<()> {
    if a.list {
        print!("{}", session::suites::list());
        return Ok(());
    }
    let names: Vec<String> = if a.suites.is_empty() {
        DEFAULT_SUITES.iter().map(|s| s.to_string()).collect()
    } else {
        a.suites
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let benches = bench::select(&names).map_err(|bad| {
        usage_hint(
            format!("unknown suite '{bad}'"),
            format!("known suites: {}", bench::suites().join(", ")),
        )
    })?;

    crate::placement::check_names(&a.placement).map_err(|bad| {
        usage_hint(
            format!("unknown placement '{bad}'"),
            format!("placements: {}", crate::placement::NAMES.join(", ")),
        )
    })?;
    let options = RunOptions {
        placements: a.placement.clone(),
        cpus: a.cpus.clone(),
        modes: match a.mode.as_str() {
            "both" => vec!["process".into(), "thread".into()],
            m => vec![m.to_string()],
        },
        footprint_kb: a.footprint,
        array_bytes: a.array_size,
        clocksource_sweep: a.clocksource_sweep,
        copies: a.copies.as_ref().map(|v| {
            let mut v: Vec<usize> = v.iter().map(|c| *c as usize).collect();
            v.dedup();
            v
        }),
        pin: a.pin,
        full: a.full,
        fsync: a.fsync,
    };
    let classic = benches.iter().any(|b| b.suite() == "classic");
    if !classic && (a.copies.is_some() || a.pin || a.full || a.fsync) {
        return Err(usage_hint(
            "--copies, --pin, --full and --fsync apply to the classic suite",
            "truebench run classic --copies 1,2",
        ));
    }
    if a.clocksource_sweep && !benches.iter().any(|b| b.suite() == "timers") {
        return Err(usage_hint(
            "--clocksource-sweep applies to the timers suite",
            "truebench run timers --clocksource-sweep",
        ));
    }
    if std::io::stderr().is_terminal() {
        eprintln!("truebench: probing the machine...");
    }
    session::run(
        &mut session::suites::SuiteRun {
            names,
            benches,
            options,
            samples: a.samples as usize,
            json: a.json,
        },
        db,
    )
}
