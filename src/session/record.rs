//! `truebench record`: system metrics, a target process (one it starts, or `--pid`) and a
//! business metric on one clock, one row per interval, inside the session (so it holds the
//! run lock and gets the run-level findings); stored as a run with suite `record`.

use super::{Measurement, Measuring};
use crate::error::usage;
use crate::measure::clocks::now_ns;
use crate::observe::counters::TargetCounters;
use crate::observe::homes::{Homes, Locality};
use crate::observe::numa::{NumaView, ProcessMemory};
use crate::observe::recorder::{
    is_sliver, next_reading_ns, own_cpu_share, row, summarize, CommandEnd, Reading, Row,
};
use crate::observe::system::{self, ticks_per_second};
use crate::observe::{numa_maps, process, vmstat};
use crate::probe::{sysroot::SysRoot, ProbeDoc};
use crate::result::RunDocument;
use crate::store::Location;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How a recording is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// One line per interval as it is taken.
    Live,
    /// The run document as JSON at the end.
    Json,
    /// The rows as CSV at the end.
    Csv,
}

/// A recording, as the command line asked for it.
#[derive(Debug, Clone)]
pub struct Options {
    /// Seconds between samples.
    pub interval: f64,
    /// Stop after this many seconds (else when the command exits, or Ctrl-C).
    pub duration: Option<f64>,
    /// Follow this running process.
    pub pid: Option<i32>,
    /// A command printing a cumulative business counter.
    pub metric_cmd: Option<String>,
    /// A file holding a cumulative business counter.
    pub metric_file: Option<PathBuf>,
    pub output: Output,
    /// The command to start and follow (empty: none).
    pub command: Vec<String>,
}

/// The recording inside the session.
pub struct Recording {
    o: Options,
    /// The command once started.
    child: Option<std::process::Child>,
    /// The rows, once measured (for the CSV output).
    rows: Vec<Row>,
    /// The recorder's own share of one CPU, once measured (None: too short to resolve).
    share: Option<f64>,
    /// How the command we started ended, once it did.
    command_end: Option<CommandEnd>,
    /// This process's memory cgroup (from the probe), and its OOM counter from just
    /// before the command started: the command runs in the same cgroup.
    memory: crate::probe::memory_limit::MemoryDoc,
    oom: Option<crate::probe::memory_limit::OomWatch>,
}

impl Recording {
    pub fn new(o: Options) -> Recording {
        Recording {
            o,
            child: None,
            rows: vec![],
            share: None,
            command_end: None,
            memory: Default::default(),
            oom: None,
        }
    }
}

fn read_metric(a: &Options) -> Result<f64, String> {
    crate::observe::recorder::read_metric(
        a.metric_cmd.as_deref(),
        a.metric_file.as_deref(),
        a.interval,
    )
}

/// The business metric's source as the user named it (`--metric-file PATH`).
fn metric_source(a: &Options) -> String {
    match (&a.metric_cmd, &a.metric_file) {
        (Some(c), _) => format!("--metric-cmd '{c}'"),
        (None, Some(f)) => format!("--metric-file {}", f.display()),
        (None, None) => String::new(),
    }
}

/// The first reason the business metric was not read, said once on stderr and kept for
/// the recording's `unavailable` list; each interval without it is marked in its row.
#[derive(Default)]
struct MetricMisses {
    first: Option<String>,
}

impl MetricMisses {
    fn see(&mut self, r: &Reading, a: &Options) {
        if let (None, Some(why)) = (&self.first, &r.metric_missing) {
            let line = format!("{}: {why}", metric_source(a));
            eprintln!("truebench: {line} (each interval without it is marked)");
            self.first = Some(line);
        }
    }
}

/// The business metric at this instant (its fields of a [`Reading`]).
fn metric_reading(a: &Options) -> Reading {
    if a.metric_cmd.is_none() && a.metric_file.is_none() {
        return Reading::default();
    }
    match read_metric(a) {
        Ok(v) => Reading {
            metric: Some(v),
            ..Reading::default()
        },
        Err(why) => Reading {
            metric_missing: Some(why),
            ..Reading::default()
        },
    }
}

fn reading(
    target: Option<i32>,
    cpu_stat: Option<&str>,
    counters: Option<&mut TargetCounters>,
    a: &Options,
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
        sys: system::read(&SysRoot::live()),
        target: t,
        ..metric_reading(a)
    }
}

/// The NUMA view followed over the readings: the target's threads, its last readable
/// numa_maps (a command that exited leaves a zombie without mappings) or why none was.
struct NumaFollow {
    loc: Locality,
    homes: Homes,
    memory: Option<ProcessMemory>,
    memory_error: Option<String>,
}

impl NumaFollow {
    fn new(env: &ProbeDoc) -> NumaFollow {
        NumaFollow {
            loc: Locality::new(env),
            homes: Homes::default(),
            memory: None,
            memory_error: None,
        }
    }

    fn add(&mut self, target: Option<i32>, r: &Reading, start_ns: u64) {
        let (Some(pid), Some(t)) = (target, &r.target) else {
            return;
        };
        self.homes.add(&t.tasks, &self.loc);
        match numa_maps::read(pid, (r.t_ns - start_ns) as f64 / 1e9) {
            Ok(Some(m)) => self.memory = Some(m),
            Ok(None) => {}
            Err(e) => self.memory_error = Some(e),
        }
    }

    /// The view (with a target), and what could not be read into `unavailable`.
    fn finish(
        self,
        target: Option<i32>,
        start: &Reading,
        unavailable: &mut BTreeMap<String, String>,
    ) -> Option<NumaView> {
        for (k, why) in vmstat::missing(
            start.sys.numa.as_ref().unwrap_or(&BTreeMap::new()),
            start.sys.numa.is_some(),
        ) {
            unavailable.insert(format!("numa_events.{k}"), why);
        }
        target?;
        if self.memory.is_none() {
            unavailable.insert(
                "numa.memory".into(),
                self.memory_error
                    .unwrap_or_else(|| "the target had no mappings whenever it was read".into()),
            );
        }
        let balancing = std::fs::read_to_string("/proc/sys/kernel/numa_balancing")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        if balancing.is_none() {
            unavailable.insert(
                "numa.balancing".into(),
                "no /proc/sys/kernel/numa_balancing (kernel without CONFIG_NUMA_BALANCING)".into(),
            );
        }
        Some(NumaView {
            nodes: self.loc.node_count(),
            llc_groups: self.loc.llc_count(),
            balancing,
            threads: self.homes.placements(&self.loc),
            memory: self.memory,
        })
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
    } else if r.metric_missing.is_some() {
        s.push_str(" | work unread");
    }
    s
}

/// One CSV line: one CPU in one interval, with the interval's system-wide and target
/// figures; an empty cell is a figure that could not be read.
#[derive(serde::Serialize)]
struct CsvRow {
    t_s: f64,
    interval_s: f64,
    cpu: u32,
    user_pct: f64,
    system_pct: f64,
    iowait_pct: f64,
    irq_pct: f64,
    softirq_pct: f64,
    steal_pct: f64,
    idle_pct: f64,
    ctxt_per_s: f64,
    intr_per_s: f64,
    runnable: Option<u32>,
    psi_cpu_some_pct: Option<f64>,
    target_cpu_pct: Option<f64>,
    target_migrations_per_s: Option<f64>,
    target_voluntary_per_s: Option<f64>,
    target_involuntary_per_s: Option<f64>,
    target_runq_wait_ms_per_s: Option<f64>,
    target_syscalls_per_s: Option<f64>,
    target_cycles_per_s: Option<f64>,
    target_instructions_per_s: Option<f64>,
    target_llc_misses_per_s: Option<f64>,
    metric_per_s: Option<f64>,
}

/// `x` rounded to `digits` decimals (the CSV carries no false precision).
fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

fn csv(rows: &[Row]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let o = |v: Option<f64>| v.map(|x| round(x, 3));
    for r in rows {
        let t = r.target.as_ref();
        let event = |k: &str| o(t.and_then(|t| t.events_per_s.get(k).copied()));
        for c in &r.cpus {
            w.serialize(CsvRow {
                t_s: round(r.t_s, 3),
                interval_s: round(r.interval_s, 3),
                cpu: c.cpu,
                user_pct: round(c.user, 2),
                system_pct: round(c.system, 2),
                iowait_pct: round(c.iowait, 2),
                irq_pct: round(c.irq, 2),
                softirq_pct: round(c.softirq, 2),
                steal_pct: round(c.steal, 2),
                idle_pct: round(c.idle, 2),
                ctxt_per_s: round(r.ctxt_per_s, 1),
                intr_per_s: round(r.intr_per_s, 1),
                runnable: r.runnable,
                psi_cpu_some_pct: o(r.psi_cpu_some_pct),
                target_cpu_pct: o(t.map(|t| t.cpu_pct)),
                target_migrations_per_s: o(t.and_then(|t| t.migrations_per_s)),
                target_voluntary_per_s: o(t.and_then(|t| t.voluntary_per_s)),
                target_involuntary_per_s: o(t.and_then(|t| t.involuntary_per_s)),
                target_runq_wait_ms_per_s: o(t.and_then(|t| t.runq_wait_ms_per_s)),
                target_syscalls_per_s: event("syscalls"),
                target_cycles_per_s: event("cycles"),
                target_instructions_per_s: event("instructions"),
                target_llc_misses_per_s: event("llc_misses"),
                metric_per_s: o(r.metric_per_s),
            })?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// Whether the command we started has exited, without reaping it: until it is reaped its
/// /proc entry stays, so the last interval still reads its final counters.
fn exited(pid: u32) -> bool {
    use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
    !matches!(
        waitid(Id::Pid(nix::unistd::Pid::from_raw(pid as i32)), flags),
        Ok(WaitStatus::StillAlive)
    )
}

/// Stop a command we started: it had its chance to exit; then TERM to it and its tree,
/// KILL to what is left of them after 1 s; reap it.
fn stop_child(child: &mut std::process::Child) -> Option<CommandEnd> {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    if let Ok(Some(s)) = child.try_wait() {
        return Some(CommandEnd::from_status(s, false));
    }
    let pid = child.id() as i32;
    let tree = process::tree(pid);
    let signal = |pids: &[i32], sig| {
        for p in pids {
            let _ = kill(Pid::from_raw(*p), sig);
        }
    };
    signal(&tree, Signal::SIGTERM);
    for _ in 0..100 {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(CommandEnd::from_status(s, true));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Its tree first (the command still holds it together), then the command.
    signal(&process::tree(pid)[1..], Signal::SIGKILL);
    let _ = child.kill();
    child.wait().ok().map(|s| CommandEnd::from_status(s, true))
}

/// Stop what the command left running (adopted orphans: truebench has no other child
/// during a recording), saying how many.
fn stop_left_behind(what: &[String]) {
    use crate::descendants::{said, stop, Scope, GRACE};
    let n = stop(Scope::AllChildren, GRACE);
    if n > 0 {
        eprintln!("{}", said(n, &crate::policy::launch::words(what)));
    }
}

impl Drop for Recording {
    /// The command started is never left running (an error, a database that cannot be
    /// opened, a panic).
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            stop_child(c);
            stop_left_behind(&self.o.command);
        }
    }
}

impl Measurement for Recording {
    fn suites(&self) -> Vec<String> {
        vec!["record".into()]
    }

    fn holder(&self) -> String {
        match (self.o.pid, self.o.command.is_empty()) {
            (Some(pid), _) => format!("truebench record --pid {pid}"),
            (None, false) => format!("truebench record -- {}", self.o.command.join(" ")),
            (None, true) => "truebench record".into(),
        }
    }

    fn check(&mut self, env: &ProbeDoc) -> anyhow::Result<()> {
        self.memory = env.memory.clone();
        if let Some(pid) = self.o.pid {
            if process::read(pid).is_none() {
                return Err(crate::error::usage_hint(
                    format!("--pid {pid}: no such process"),
                    "give the PID of a running process",
                ));
            }
        }
        Ok(())
    }

    fn start(&mut self) -> anyhow::Result<()> {
        if let Some((prog, args)) = self.o.command.split_first() {
            crate::descendants::adopt_orphans();
            let mut cmd = std::process::Command::new(prog);
            cmd.args(args);
            crate::watchdog::mark(&mut cmd);
            self.oom = crate::probe::memory_limit::OomWatch::start(&self.memory);
            let child = cmd
                .spawn()
                .map_err(|e| usage(format!("cannot start '{prog}': {e}")))?;
            crate::watchdog::launched(child.id() as i32);
            self.child = Some(child);
        }
        Ok(())
    }

    /// The recorder measures its own CPU time: no sampler beside it.
    fn samples_noise(&self) -> bool {
        false
    }

    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()> {
        let target = self.o.pid.or(self.child.as_ref().map(|c| c.id() as i32));
        let ticks = ticks_per_second() as f64;
        let me = std::process::id() as i32;
        let my_cpu0 = process::read(me).map(|p| p.cpu_ticks).unwrap_or(0);
        let cpu_stat = target.and_then(process::cpu_stat_path);
        let mut counters = target.map(TargetCounters::open);
        let start = reading(target, cpu_stat.as_deref(), counters.as_mut(), &self.o);
        let mut metric_misses = MetricMisses::default();
        metric_misses.see(&start, &self.o);
        let mut numa = NumaFollow::new(m.env);
        numa.add(target, &start, start.t_ns);
        let mut prev = start.clone();
        let mut rows = Vec::new();
        // Live lines stop (the recording goes on) once stdout fails, e.g. `| head -3`.
        let mut live = self.o.output == Output::Live;
        if live {
            let tail = if target.is_some() {
                " | target process"
            } else {
                ""
            };
            live = crate::stdout::line(&format!("{HEADER}{tail}")).is_ok();
        }
        let mut command_exited = false;
        let mut dropped_sliver = false;
        loop {
            // The next tick of a fixed grid (intervals do not drift), or --duration's end.
            let next = next_reading_ns(start.t_ns, rows.len(), self.o.interval, self.o.duration);
            let planned_s = (next - prev.t_ns) as f64 / 1e9;
            while now_ns() < next {
                if crate::interrupt::requested() {
                    break;
                }
                if self.child.as_ref().is_some_and(|c| exited(c.id())) {
                    command_exited = true;
                    break;
                }
                let left = next.saturating_sub(now_ns()).min(50_000_000);
                std::thread::sleep(std::time::Duration::from_nanos(left));
            }
            let now = reading(target, cpu_stat.as_deref(), counters.as_mut(), &self.o);
            metric_misses.see(&now, &self.o);
            numa.add(target, &now, start.t_ns);
            let r = row(&prev, &now, start.t_ns, ticks);
            // An interval cut short (the command exited just after a tick, or at once)
            // gives rates over a few ms that mean nothing: dropped, and the recording says so.
            if is_sliver(r.interval_s, planned_s) {
                dropped_sliver = true;
            } else {
                if live {
                    live = crate::stdout::line(&live_line(&r)).is_ok();
                }
                rows.push(r);
            }
            prev = now;
            let interrupted = crate::interrupt::requested();
            let done = self
                .o
                .duration
                .is_some_and(|d| prev.t_ns - start.t_ns >= (d * 1e9) as u64);
            if interrupted
                || command_exited
                || done
                || (self.o.pid.is_some() && prev.target.is_none())
            {
                break;
            }
        }
        m.interrupted = crate::interrupt::requested();
        let command_end = self.child.take().and_then(|mut c| {
            let end = stop_child(&mut c);
            stop_left_behind(&self.o.command);
            end
        });
        let wall_s = (prev.t_ns - start.t_ns) as f64 / 1e9;
        let own_cpu_s = process::read(me)
            .map(|p| p.cpu_ticks)
            .unwrap_or(0)
            .saturating_sub(my_cpu0) as f64
            / ticks;
        // The effective CPU speed, once the recording is over (sampling first would delay
        // the first reading of a command already started) and outside its own CPU time.
        if !m.interrupted {
            m.speed("record", crate::result::SpeedPoint::End);
        }

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
        if (self.o.metric_cmd.is_some() || self.o.metric_file.is_some())
            && rows.iter().all(|r| r.metric_per_s.is_none())
        {
            unavailable.insert(
                "metric_per_s".into(),
                metric_misses.first.clone().unwrap_or_else(|| {
                    format!("{}: no interval was recorded", metric_source(&self.o))
                }),
            );
        }
        let numa_view = numa.finish(target, &start, &mut unavailable);
        if let Some(v) = &numa_view {
            match crate::findings::record::memory_remote(v) {
                Ok(f) => m.doc.findings.extend(f),
                Err(why) => {
                    unavailable.insert("finding.memory-remote".into(), why);
                }
            }
        }
        let share = own_cpu_share(own_cpu_s, wall_s, ticks);
        if share.is_none() {
            unavailable.insert(
                "recorder_cpu_share".into(),
                format!("the recording lasted {wall_s:.3} s: too short to resolve the recorder's CPU time, counted in {:.0} ms ticks", 1e3 / ticks),
            );
        }
        m.doc
            .findings
            .extend(crate::findings::record::recorder_overhead(
                own_cpu_s, wall_s, share,
            ));
        let recording = crate::result::Recording {
            interval_s: self.o.interval,
            duration_s: wall_s,
            target: target.map(|pid| crate::result::recording::RecordTarget {
                pid,
                command: (!self.o.command.is_empty()).then(|| self.o.command.join(" ")),
                exit_status: command_end.and_then(|e| e.exit_status),
                exit_signal: command_end.and_then(|e| e.exit_signal),
                stopped_by_truebench: command_end.map(|e| e.stopped_by_truebench),
                oom_kills: self.oom.as_ref().and_then(|w| w.since(&self.memory)),
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
            numa: numa_view,
        };
        m.doc.recording = Some(recording);
        self.rows = rows;
        self.share = share;
        self.command_end = command_end;
        Ok(())
    }

    fn outcome(&self) -> anyhow::Result<()> {
        match self.command_end.and_then(|e| e.passed_on()) {
            Some(code) => Err(crate::error::CommandExit(code).into()),
            None => Ok(()),
        }
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        match self.o.output {
            Output::Json => super::print_json(doc),
            Output::Csv => crate::stdout::write(&csv(&self.rows)?),
            Output::Live => {
                let Some(db_path) = stored else {
                    return Ok(());
                };
                let cpu = self
                    .share
                    .map(|s| format!("recorder used {:.2}% of one CPU", s * 100.0))
                    .unwrap_or_else(|| "too short to state the recorder's CPU share".into());
                eprintln!(
                    "truebench: stored recording {} ({}, {cpu}) in {}",
                    doc.run_id,
                    crate::units::count(self.rows.len(), "interval"),
                    db_path.display()
                );
                Ok(())
            }
        }
    }
}
