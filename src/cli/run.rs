//! `truebench run [SUITE,...]`: probe, run the suites' benchmarks with progress on stderr,
//! store the run, print its table (or `--json` document). Ctrl-C keeps finished results.

use crate::bench::{self, Emitted, RunContext, RunOptions, DEFAULT_SUITES};
use crate::error::{usage, usage_hint, Interrupted};
use crate::findings::{Finding, Severity};
use crate::measure::batch::{min_interval_ns, timing_clock_cost_ns};
use crate::measure::clocks::now_ns;
use crate::observe::sampler::{Sample, Sampler};
use crate::probe::{kernel, probe, sysroot::SysRoot, Unavailable};
use crate::result::{RunDocument, Tool, SCHEMA};
use crate::store::{default_path, Store};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;

#[derive(clap::Args, Debug)]
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

/// Shortest timed batch, whatever the clock costs.
const BATCH_FLOOR_NS: f64 = 2e6;

pub(crate) fn run_id(started: &chrono::DateTime<chrono::Utc>) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_i64(started.timestamp_nanos_opt().unwrap_or_default());
    format!(
        "{}-{:04x}",
        started.format("%Y%m%dT%H%M%SZ"),
        h.finish() & 0xffff
    )
}

fn progress(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    pb
}

fn list_suites() {
    for s in bench::suites() {
        let default = if DEFAULT_SUITES.contains(&s) {
            " (default)"
        } else {
            ""
        };
        println!("{s}{default}");
        for b in bench::REGISTRY.iter().filter(|b| b.suite() == s) {
            println!("  {}: {}", b.id(), b.describe());
        }
    }
}

/// Steal seconds over the run, from two /proc/stat readings.
fn steal_during(
    before: Option<&kernel::Steal>,
    after: Option<&kernel::Steal>,
    secs: f64,
    cpus: usize,
) -> Option<Finding> {
    let stolen = after?.seconds - before?.seconds;
    let share = stolen / (secs * cpus.max(1) as f64);
    (share >= 0.01).then(|| {
        Finding::new(
            "steal-time",
            Severity::Warning,
            format!("The hypervisor took {:.1}% of the CPU time during this run: results include waiting for the physical CPU.", share * 100.0),
            vec![format!("/proc/stat steal grew by {stolen:.2} s over {secs:.1} s on {cpus} CPUs")],
        )
    })
}

/// The clocksource at the end of the run differs from the one at its start (the kernel's
/// watchdog switches away from an unstable TSC; a migration can do it too).
fn clocksource_changed(before: Option<&str>, live: &SysRoot) -> Option<Finding> {
    let after = live.read_opt(crate::measure::clocksource::CURRENT)?;
    let before = before?;
    (before != after).then(|| {
        Finding::new(
            "clocksource-changed",
            Severity::Warning,
            format!("The clocksource changed during the run, from {before} to {after}: clock-read costs, and anything timed per event, differ before and after."),
            vec![format!("current_clocksource: {before} at the start, {after} at the end")],
        )
    })
}

/// Give every result the noise findings of its own measurement window (from the previous
/// result's end to its own).
fn annotate_noise(
    results: &mut [crate::result::BenchResult],
    ends: &[u64],
    start: u64,
    samples: Vec<Sample>,
    usable: usize,
) {
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let mut from = start;
    for (r, &end) in results.iter_mut().zip(ends) {
        if let Some((a, b)) = crate::findings::noise::window(&samples, from, end) {
            r.findings
                .extend(crate::findings::noise::evaluate(a, b, usable, ticks));
        }
        from = end;
    }
}

pub fn exec(a: Args, db: Option<&Path>) -> anyhow::Result<()> {
    if a.list {
        list_suites();
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
    if a.clocksource_sweep {
        if !benches.iter().any(|b| b.suite() == "timers") {
            return Err(usage_hint(
                "--clocksource-sweep applies to the timers suite",
                "truebench run timers --clocksource-sweep",
            ));
        }
        if !nix::unistd::geteuid().is_root() {
            return Err(usage_hint(
                format!(
                    "--clocksource-sweep needs root: it writes {}",
                    crate::measure::clocksource::CURRENT
                ),
                "run it as root, or drop the flag",
            ));
        }
    }

    if std::io::stderr().is_terminal() {
        eprintln!("truebench: probing the machine...");
    }
    let live = SysRoot::live();
    let env = probe(&live);
    if let Some(asked) = options.array_bytes {
        let avail = crate::bench::memory::region::available_bytes();
        crate::bench::memory::bandwidth::array_bytes(0, None, avail, Some(asked))
            .map_err(|e| usage(format!("--array-size: {e}")))?;
    }
    if let Some(cpus) = &options.cpus {
        crate::placement::explicit(cpus, &env).map_err(|e| usage(format!("--cpus: {e}")))?;
    }

    let db_path = default_path(db)?;
    let mut store = Store::open_rw(&db_path)?;
    let _lock = crate::lock::acquire(&format!("truebench run {}", names.join(",")))?;
    crate::interrupt::install()?;

    let started = chrono::Utc::now();
    let t0 = std::time::Instant::now();
    let clock_cost_ns = timing_clock_cost_ns();
    let ctx = RunContext {
        probe: &env,
        options: &options,
        samples: a.samples as usize,
        clock_cost_ns,
        min_batch_ns: min_interval_ns(clock_cost_ns, BATCH_FLOOR_NS),
    };
    let steal_before = kernel::steal(&live, &mut Unavailable::default());

    let sampler = Sampler::start(
        env.cpus.usable.clone(),
        env.cgroup
            .as_ref()
            .and_then(|c| c.cpu_stat_path.clone())
            .map(Into::into),
    );
    // When each result finished, on CLOCK_MONOTONIC: its measurement window ends there.
    let mut finished_at: Vec<u64> = Vec::new();
    let run_start_ns = now_ns();
    let total: usize = benches.iter().map(|b| b.planned(&ctx)).sum();
    let pb = progress(total as u64);
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    let mut interrupted = false;
    for b in &benches {
        pb.set_message(b.id());
        let outcome = b.run(&ctx, &mut |e| {
            match e {
                Emitted::Result(r) => {
                    results.push(*r);
                    finished_at.push(now_ns());
                }
                Emitted::Skipped(s) => skipped.push(s),
            }
            pb.inc(1);
        });
        match outcome {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<Interrupted>().is_some() => {
                interrupted = true;
                break;
            }
            Err(e) => {
                pb.finish_and_clear();
                return Err(e.context(format!("{} failed; nothing was stored", b.id())));
            }
        }
    }
    pb.finish_and_clear();
    interrupted |= crate::interrupt::requested();
    annotate_noise(
        &mut results,
        &finished_at,
        run_start_ns,
        sampler.finish(),
        env.cpus.usable.len(),
    );

    let mut findings = env.findings.clone();
    findings.extend(clocksource_changed(env.clock.clocksource.as_deref(), &live));
    let steal_after = kernel::steal(&live, &mut Unavailable::default());
    findings.extend(steal_during(
        steal_before.as_ref(),
        steal_after.as_ref(),
        t0.elapsed().as_secs_f64(),
        env.topology.threads,
    ));
    let doc = RunDocument {
        schema: SCHEMA.into(),
        run_id: run_id(&started),
        started_at: started.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        finished_at: Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        host: env.hostname.clone(),
        suites: names,
        interrupted,
        tool: Tool::current(),
        env: env.clone(),
        findings,
        results,
        skipped,
        recording: None,
        indexes: None,
        loadstep: None,
    };
    let mut doc = doc;
    if classic {
        let (n, basis) = crate::bench::classic::copies::full_width(&env.cpus);
        doc.indexes = Some(crate::bench::classic::score::suite_indexes(
            &doc.results,
            crate::bench::classic::INDEX_TESTS,
            n,
            &basis,
        ));
    }
    super::store_and_print(
        &mut store,
        &doc,
        a.json,
        &db_path,
        "run",
        super::detail(a.verbose),
    )
}
