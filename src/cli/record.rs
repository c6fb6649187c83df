//! `truebench record [--interval S] [--duration S] [--pid PID | -- COMMAND...]`: system
//! metrics, a target process and a business metric on one clock, one line per interval on
//! the terminal, stored as a run (suite `record`) so show/export/compare work on it.

use crate::error::{usage, usage_hint, Interrupted};
use crate::findings::{Finding, Severity};
use crate::measure::clocks::now_ns;
use crate::observe::counters::TargetCounters;
use crate::observe::process;
use crate::observe::recorder::{row, summarize, Reading, Row};
use crate::observe::system::{self, ticks_per_second};
use crate::probe::{probe, sysroot::SysRoot};
use crate::store::{default_path, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seconds between samples (0.1 to 3600).
    #[arg(long, default_value = "1", value_parser = super::parse_secs)]
    interval: f64,
    /// Stop after this many seconds (default: when the command exits, or Ctrl-C).
    #[arg(long, value_parser = super::parse_secs)]
    duration: Option<f64>,
    /// Follow this running process (and its threads).
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
}

fn read_metric(a: &Args) -> Option<f64> {
    let text = if let Some(cmd) = &a.metric_cmd {
        let out = std::process::Command::new("sh")
            .args(["-c", cmd])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        std::fs::read_to_string(a.metric_file.as_ref()?).ok()?
    };
    text.split_whitespace().next()?.parse().ok()
}

fn reading(
    target: Option<i32>,
    cpu_stat: Option<&str>,
    counters: Option<&mut TargetCounters>,
    a: &Args,
) -> Reading {
    let mut t = target.and_then(process::read);
    if let (Some(t), Some(path)) = (t.as_mut(), cpu_stat) {
        process::add_throttling(t, path);
    }
    if let (Some(t), Some(c)) = (t.as_mut(), counters) {
        t.events = c.read();
    }
    Reading {
        t_ns: now_ns(),
        sys: system::read(),
        target: t,
        metric: if a.metric_cmd.is_some() || a.metric_file.is_some() {
            read_metric(a)
        } else {
            None
        },
    }
}

const HEADER: &str =
    "    time   %usr  %sys %iowt %steal  %idle    cs/s  intr/s   IPI/s  runq  psi%";

fn live_line(r: &Row) -> String {
    let n = r.cpus.len().max(1) as f64;
    let avg = |f: &dyn Fn(&system::CpuShare) -> f64| r.cpus.iter().map(f).sum::<f64>() / n;
    let mut s = format!(
        "{:>7.1}s {:>6.1} {:>5.1} {:>5.1} {:>6.1} {:>6.1} {:>7.0} {:>7.0} {:>7} {:>5} {:>5}",
        r.t_s,
        avg(&|c| c.user),
        avg(&|c| c.system),
        avg(&|c| c.iowait),
        avg(&|c| c.steal),
        avg(&|c| c.idle),
        r.ctxt_per_s,
        r.intr_per_s,
        r.ipi_per_s
            .map(|v| format!("{:.0}", v.iter().sum::<f64>()))
            .unwrap_or_else(|| "-".into()),
        r.runnable
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-".into()),
        r.psi_cpu_some_pct
            .map(|v| format!("{v:.1}"))
            .unwrap_or_else(|| "-".into()),
    );
    if let Some(t) = &r.target {
        let f = |v: Option<f64>| v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into());
        s.push_str(&format!(
            " | target cpu {:>5.1}% thr {} on {:?} cs/s {}+{} migr/s {} runq-wait {} ms/s throttled {} ms/s",
            t.cpu_pct,
            t.threads,
            t.cpus,
            f(t.voluntary_per_s),
            f(t.involuntary_per_s),
            f(t.migrations_per_s),
            f(t.runq_wait_ms_per_s),
            f(t.throttled_ms_per_s),
        ));
        for (k, v) in &t.events_per_s {
            s.push_str(&format!(" {k}/s {v:.0}"));
        }
    }
    if let Some(m) = r.metric_per_s {
        s.push_str(&format!(" | work {m:.1}/s"));
    }
    s
}

fn csv(rows: &[Row]) -> String {
    let mut out = String::from("t_s,interval_s,cpu,user_pct,system_pct,iowait_pct,irq_pct,softirq_pct,steal_pct,idle_pct,ctxt_per_s,intr_per_s,runnable,psi_cpu_some_pct,target_cpu_pct,target_migrations_per_s,target_voluntary_per_s,target_involuntary_per_s,target_runq_wait_ms_per_s,target_syscalls_per_s,target_cycles_per_s,target_instructions_per_s,target_llc_misses_per_s,metric_per_s\n");
    let o = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
    for r in rows {
        for c in &r.cpus {
            let t = r.target.as_ref();
            out.push_str(&format!(
                "{:.3},{:.3},{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.1},{:.1},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                r.t_s,
                r.interval_s,
                c.cpu,
                c.user,
                c.system,
                c.iowait,
                c.irq,
                c.softirq,
                c.steal,
                c.idle,
                r.ctxt_per_s,
                r.intr_per_s,
                r.runnable.map(|v| v.to_string()).unwrap_or_default(),
                o(r.psi_cpu_some_pct),
                o(t.map(|t| t.cpu_pct)),
                o(t.and_then(|t| t.migrations_per_s)),
                o(t.and_then(|t| t.voluntary_per_s)),
                o(t.and_then(|t| t.involuntary_per_s)),
                o(t.and_then(|t| t.runq_wait_ms_per_s)),
                o(t.and_then(|t| t.events_per_s.get(crate::result::figures::SYSCALLS).copied())),
                o(t.and_then(|t| t.events_per_s.get(crate::result::figures::CYCLES).copied())),
                o(t.and_then(|t| t.events_per_s.get(crate::result::figures::INSTRUCTIONS).copied())),
                o(t.and_then(|t| t.events_per_s.get(crate::result::figures::LLC_MISSES).copied())),
                o(r.metric_per_s),
            ));
        }
    }
    out
}

/// Stop a command we started: it had its chance to exit; then TERM, then KILL; reap it.
fn stop_child(child: &mut std::process::Child) -> Option<i32> {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    if let Ok(Some(s)) = child.try_wait() {
        return s.code();
    }
    let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
    for _ in 0..100 {
        if let Ok(Some(s)) = child.try_wait() {
            return s.code();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let _ = child.kill();
    child.wait().ok().and_then(|s| s.code())
}

pub fn exec(a: Args, db: Option<&Path>) -> anyhow::Result<()> {
    if let Some(pid) = a.pid {
        if process::read(pid).is_none() {
            return Err(usage_hint(
                format!("--pid {pid}: no such process"),
                "give the PID of a running process",
            ));
        }
    }
    let db_path = default_path(db)?;
    let env = probe(&SysRoot::live());
    // Start the command first (a command that cannot start writes nothing), then open the
    // database (one that cannot be opened stops the command again).
    let mut child = match a.command.split_first() {
        Some((prog, args)) => Some(
            std::process::Command::new(prog)
                .args(args)
                .spawn()
                .map_err(|e| usage(format!("cannot start '{prog}': {e}")))?,
        ),
        None => None,
    };
    let mut store = match Store::open_rw(&db_path) {
        Ok(s) => s,
        Err(e) => {
            if let Some(c) = child.as_mut() {
                stop_child(c);
            }
            return Err(e);
        }
    };
    let target = a.pid.or(child.as_ref().map(|c| c.id() as i32));
    crate::interrupt::install()?;
    let started = chrono::Utc::now();
    let ticks = ticks_per_second() as f64;
    let me = std::process::id() as i32;
    let my_cpu0 = process::read(me).map(|p| p.cpu_ticks).unwrap_or(0);
    let cpu_stat = target.and_then(process::cpu_stat_path);
    let mut counters = target.map(TargetCounters::open);
    let start = reading(target, cpu_stat.as_deref(), counters.as_mut(), &a);
    let mut prev = start.clone();
    let mut rows = Vec::new();
    let live = !a.json && !a.csv;
    if live {
        println!(
            "{HEADER}{}",
            if target.is_some() {
                " | target process"
            } else {
                ""
            }
        );
    }
    let mut exit_status = None;
    loop {
        // Sleep to the next tick of a fixed grid, so intervals do not drift.
        let next = start.t_ns + ((rows.len() + 1) as f64 * a.interval * 1e9) as u64;
        while now_ns() < next {
            if crate::interrupt::requested() {
                break;
            }
            if let Some(c) = child.as_mut() {
                if let Ok(Some(s)) = c.try_wait() {
                    exit_status = Some(s.code());
                    break;
                }
            }
            let left = next.saturating_sub(now_ns()).min(50_000_000);
            std::thread::sleep(std::time::Duration::from_nanos(left));
        }
        let now = reading(target, cpu_stat.as_deref(), counters.as_mut(), &a);
        let r = row(&prev, &now, start.t_ns, ticks);
        if live {
            println!("{}", live_line(&r));
        }
        rows.push(r);
        prev = now;
        let interrupted = crate::interrupt::requested();
        let done = a
            .duration
            .is_some_and(|d| prev.t_ns - start.t_ns >= (d * 1e9) as u64);
        if interrupted
            || exit_status.is_some()
            || done
            || (a.pid.is_some() && prev.target.is_none())
        {
            break;
        }
    }
    // A last sliver of an interval (the command exited just after a tick) gives rates over
    // a few ms that mean nothing: it is dropped, and the recording says so.
    let dropped_sliver = rows.len() > 1
        && rows
            .last()
            .is_some_and(|r| r.interval_s < 0.25 * a.interval);
    if dropped_sliver {
        rows.pop();
    }
    let interrupted = crate::interrupt::requested();
    if let Some(c) = child.as_mut() {
        exit_status = Some(stop_child(c));
    }
    let wall_s = (prev.t_ns - start.t_ns) as f64 / 1e9;
    let own_cpu_s = process::read(me)
        .map(|p| p.cpu_ticks)
        .unwrap_or(0)
        .saturating_sub(my_cpu0) as f64
        / ticks;

    let mut unavailable: BTreeMap<String, String> = BTreeMap::new();
    match &counters {
        Some(c) => {
            for (k, why) in &c.unavailable {
                unavailable.insert(format!("target.{k}_per_s"), why.clone());
            }
        }
        None => {
            unavailable.insert(
                "target.events_per_s".into(),
                "syscalls and hardware counters are counted on a target: give --pid or a command"
                    .into(),
            );
        }
    }
    if target.is_some() && cpu_stat.is_none() {
        unavailable.insert(
            "target.throttling".into(),
            "the target's cgroup has no cpu controller (no cpu.stat): no quota can throttle it"
                .into(),
        );
    }
    if rows.iter().all(|r| r.psi_cpu_some_pct.is_none()) {
        unavailable.insert(
            "psi_cpu_some_pct".into(),
            "no /proc/pressure/cpu (kernel without PSI, or psi=0)".into(),
        );
    }
    if rows.iter().all(|r| r.ipi_per_s.is_none()) {
        unavailable.insert(
            "ipi_per_s".into(),
            "no CAL/RES/TLB rows in /proc/interrupts on this architecture".into(),
        );
    }
    if target.is_some()
        && rows
            .iter()
            .filter_map(|r| r.target.as_ref())
            .all(|t| t.migrations_per_s.is_none())
    {
        unavailable.insert(
            "target.migrations_per_s".into(),
            "no se.nr_migrations in /proc/PID/task/TID/sched (kernel without CONFIG_SCHED_DEBUG)"
                .into(),
        );
    }
    if (a.metric_cmd.is_some() || a.metric_file.is_some())
        && rows.iter().all(|r| r.metric_per_s.is_none())
    {
        unavailable.insert(
            "metric_per_s".into(),
            "the metric command or file gave no number".into(),
        );
    }
    let share = if wall_s > 0.0 {
        own_cpu_s / wall_s
    } else {
        0.0
    };
    let mut findings = env.findings.clone();
    if share > 0.01 {
        findings.push(Finding::new(
            "recorder-overhead",
            Severity::Warning,
            format!(
                "The recorder itself used {:.2}% of one CPU: lengthen --interval.",
                share * 100.0
            ),
            vec![format!("{own_cpu_s:.3} CPU-s over {wall_s:.1} s")],
        ));
    }
    let recording = crate::result::Recording {
        interval_s: a.interval,
        duration_s: wall_s,
        target: target.map(|pid| crate::result::recording::RecordTarget {
            pid,
            command: (!a.command.is_empty()).then(|| a.command.join(" ")),
            exit_status: exit_status.flatten(),
        }),
        recorder_cpu_share: share,
        last_short_interval_dropped: dropped_sliver,
        summary: summarize(&rows),
        rows: rows.clone(),
        unavailable,
        counter_notes: counters
            .as_ref()
            .map(|c| c.notes.clone())
            .unwrap_or_default(),
    };
    let mut doc = super::bare_document(&started, &env, "record", interrupted)?;
    doc.findings = findings;
    doc.recording = Some(recording);
    store.insert(&doc)?;
    if a.json {
        super::print_json(&doc)?;
    } else if a.csv {
        print!("{}", csv(&rows));
    } else {
        eprintln!(
            "truebench: stored recording {} ({} intervals, recorder used {:.2}% of one CPU) in {}",
            doc.run_id,
            rows.len(),
            share * 100.0,
            db_path.display()
        );
    }
    if interrupted {
        return Err(Interrupted.into());
    }
    Ok(())
}
