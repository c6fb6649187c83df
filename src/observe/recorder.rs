//! `truebench record`: timestamped system metrics, a target process's metrics and a
//! business metric on one clock, one row per interval; then the cost per unit of work and
//! each metric's correlation with the business rate. Rows are computed from two readings
//! (pure), so they are tested on synthetic counters.

use super::process::ProcCounters;
use super::system::{cpu_shares, Counters, CpuShare};
use crate::measure::stats::correlation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything read at one instant.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub t_ns: u64,
    pub sys: Counters,
    pub target: Option<ProcCounters>,
    /// The business metric's cumulative counter.
    pub metric: Option<f64>,
    /// Why the business metric was asked for and not read at this instant.
    pub metric_missing: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRow {
    /// CPU time of the process over the interval, % of one CPU.
    pub cpu_pct: f64,
    pub threads: usize,
    pub cpus: Vec<u32>,
    pub migrations_per_s: Option<f64>,
    pub voluntary_per_s: Option<f64>,
    pub involuntary_per_s: Option<f64>,
    /// Time its threads waited runnable on a run queue, ms per second.
    pub runq_wait_ms_per_s: Option<f64>,
    /// Its cgroup's quota periods in which it was throttled, and the time throttled, per second.
    pub throttled_periods_per_s: Option<f64>,
    pub throttled_ms_per_s: Option<f64>,
    /// perf_event counts per second: `syscalls`, and `cycles`, `instructions`, `llc_misses`,
    /// `stalled_cycles` where a PMU has them; an event missing here is in `unavailable`.
    #[serde(default)]
    pub events_per_s: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// End of the interval, seconds since the recording started.
    pub t_s: f64,
    pub interval_s: f64,
    pub cpus: Vec<CpuShare>,
    pub ctxt_per_s: f64,
    pub intr_per_s: f64,
    /// Function-call, reschedule and TLB-shootdown IPIs per second.
    pub ipi_per_s: Option<[f64; 3]>,
    pub runnable: Option<u32>,
    /// Share of the interval in which some task waited for a CPU (PSI), %.
    pub psi_cpu_some_pct: Option<f64>,
    pub target: Option<TargetRow>,
    /// The business metric's rate over the interval, units per second.
    pub metric_per_s: Option<f64>,
    /// Why the business metric has no rate in this interval although one was asked for
    /// (it gave no number at the interval's start or end); absent when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_missing: Option<String>,
    /// NUMA allocation and balancing counters of /proc/vmstat over the interval (numa_hit,
    /// numa_miss, numa_pages_migrated...), events in the interval; a counter the kernel
    /// lacks is absent (the recording's `unavailable` says why).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub numa_events: BTreeMap<String, u64>,
}

fn per_s(a: Option<u64>, b: Option<u64>, secs: f64) -> Option<f64> {
    Some(b?.saturating_sub(a?) as f64 / secs)
}

/// The row for the interval between two readings.
pub fn row(a: &Reading, b: &Reading, start_ns: u64, ticks_per_s: f64) -> Row {
    let secs = ((b.t_ns - a.t_ns) as f64 / 1e9).max(1e-9);
    let target = match (&a.target, &b.target) {
        (Some(x), Some(y)) => Some(TargetRow {
            cpu_pct: y.cpu_ticks.saturating_sub(x.cpu_ticks) as f64 / ticks_per_s / secs * 100.0,
            threads: y.threads,
            cpus: y.cpus.clone(),
            migrations_per_s: per_s(x.migrations, y.migrations, secs),
            voluntary_per_s: per_s(x.voluntary, y.voluntary, secs),
            involuntary_per_s: per_s(x.involuntary, y.involuntary, secs),
            runq_wait_ms_per_s: per_s(x.runq_wait_ns, y.runq_wait_ns, secs).map(|ns| ns / 1e6),
            throttled_periods_per_s: per_s(x.nr_throttled, y.nr_throttled, secs),
            throttled_ms_per_s: per_s(x.throttled_us, y.throttled_us, secs).map(|us| us / 1e3),
            events_per_s: y
                .events
                .iter()
                .filter_map(|(k, b)| {
                    let a = x.events.get(k)?;
                    Some((k.clone(), b.saturating_sub(*a) as f64 / secs))
                })
                .collect(),
        }),
        _ => None,
    };
    Row {
        t_s: (b.t_ns - start_ns) as f64 / 1e9,
        interval_s: secs,
        cpus: cpu_shares(&a.sys, &b.sys),
        ctxt_per_s: b.sys.ctxt.saturating_sub(a.sys.ctxt) as f64 / secs,
        intr_per_s: b.sys.intr.saturating_sub(a.sys.intr) as f64 / secs,
        ipi_per_s: a
            .sys
            .ipi
            .zip(b.sys.ipi)
            .map(|(x, y)| [0, 1, 2].map(|i| y[i].saturating_sub(x[i]) as f64 / secs)),
        runnable: b.sys.procs_running,
        psi_cpu_some_pct: per_s(a.sys.psi_some_us, b.sys.psi_some_us, secs).map(|us| us / 1e4),
        target,
        metric_per_s: a.metric.zip(b.metric).map(|(x, y)| (y - x) / secs),
        metric_missing: b
            .metric_missing
            .clone()
            .or_else(|| a.metric_missing.clone()),
        numa_events: match (&a.sys.numa, &b.sys.numa) {
            (Some(x), Some(y)) => super::vmstat::deltas(x, y),
            _ => BTreeMap::new(),
        },
    }
}

/// The series that may explain the business rate, by name.
fn series(rows: &[Row]) -> BTreeMap<String, Vec<f64>> {
    let mut m: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in rows {
        m.entry("ctxt_per_s".into()).or_default().push(r.ctxt_per_s);
        m.entry("intr_per_s".into()).or_default().push(r.intr_per_s);
        if let Some(p) = r.psi_cpu_some_pct {
            m.entry("psi_cpu_some_pct".into()).or_default().push(p);
        }
        if let Some(t) = &r.target {
            m.entry("target_cpu_pct".into())
                .or_default()
                .push(t.cpu_pct);
            for (k, v) in [
                ("target_migrations_per_s", t.migrations_per_s),
                ("target_involuntary_per_s", t.involuntary_per_s),
                ("target_runq_wait_ms_per_s", t.runq_wait_ms_per_s),
            ] {
                if let Some(v) = v {
                    m.entry(k.into()).or_default().push(v);
                }
            }
            for (k, v) in &t.events_per_s {
                m.entry(format!("target_{k}_per_s")).or_default().push(*v);
            }
        }
    }
    m
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Summary {
    /// Work done over the recording, in business units.
    pub units: Option<f64>,
    /// Cost per unit of work: CPU-µs, context switches, migrations, and perf_event counts
    /// (syscalls, cycles...) of the target.
    pub per_unit: BTreeMap<String, f64>,
    /// Pearson correlation of each metric with the business rate over the rows.
    pub correlation_with_metric: BTreeMap<String, f64>,
}

pub fn summarize(rows: &[Row]) -> Summary {
    let rated: Vec<&Row> = rows.iter().filter(|r| r.metric_per_s.is_some()).collect();
    if rated.is_empty() {
        return Summary::default();
    }
    let units: f64 = rated
        .iter()
        .map(|r| r.metric_per_s.unwrap_or(0.0) * r.interval_s)
        .sum();
    let mut per_unit = BTreeMap::new();
    if units > 0.0 {
        let total = |f: &dyn Fn(&TargetRow) -> Option<f64>| -> Option<f64> {
            rated
                .iter()
                .map(|r| Some(f(r.target.as_ref()?)? * r.interval_s))
                .sum()
        };
        if let Some(cpu_s) = total(&|t| Some(t.cpu_pct / 100.0)) {
            per_unit.insert("target_cpu_us".into(), cpu_s * 1e6 / units);
        }
        if let (Some(v), Some(i)) = (
            total(&|t| t.voluntary_per_s),
            total(&|t| t.involuntary_per_s),
        ) {
            per_unit.insert("target_context_switches".into(), (v + i) / units);
        }
        if let Some(m) = total(&|t| t.migrations_per_s) {
            per_unit.insert("target_migrations".into(), m / units);
        }
        let events: std::collections::BTreeSet<&String> = rated
            .iter()
            .filter_map(|r| r.target.as_ref())
            .flat_map(|t| t.events_per_s.keys())
            .collect();
        for k in events {
            if let Some(n) = total(&|t| t.events_per_s.get(k).copied()) {
                per_unit.insert(format!("target_{k}"), n / units);
            }
        }
        let cs: f64 = rated.iter().map(|r| r.ctxt_per_s * r.interval_s).sum();
        per_unit.insert("system_context_switches".into(), cs / units);
    }
    let owned: Vec<Row> = rated.iter().map(|r| (*r).clone()).collect();
    let rate: Vec<f64> = owned.iter().filter_map(|r| r.metric_per_s).collect();
    let correlation_with_metric = series(&owned)
        .into_iter()
        .filter(|(_, v)| v.len() == rate.len())
        .filter_map(|(k, v)| Some((k, correlation(&v, &rate)?)))
        .collect();
    Summary {
        units: Some(units),
        per_unit,
        correlation_with_metric,
    }
}

/// The business metric's counter is a number: more than this is not one.
pub const METRIC_MAX_BYTES: usize = 4096;

/// How long one read of the business metric may take: half an interval, 50 ms to 5 s.
pub fn metric_timeout(interval_s: f64) -> std::time::Duration {
    std::time::Duration::from_secs_f64((interval_s / 2.0).clamp(0.05, 5.0))
}

/// The first number printed by `cmd` or held in the first [`METRIC_MAX_BYTES`] of `file`,
/// read bounded in size and time; Err(why not), in words, when there is none this time (a
/// FIFO without writer, /dev/zero, text that is not a number, a command that hangs).
pub fn read_metric(
    cmd: Option<&str>,
    file: Option<&std::path::Path>,
    interval_s: f64,
) -> Result<f64, String> {
    let limit = metric_timeout(interval_s);
    let bytes = match (cmd, file) {
        (Some(c), _) => crate::bounded::command_output(c, METRIC_MAX_BYTES, limit),
        (None, Some(f)) => crate::bounded::read_prefix(f, METRIC_MAX_BYTES, Some(limit)),
        (None, None) => return Err("no metric command or file".into()),
    }
    .map_err(|e| format!("cannot read it: {e}"))?;
    let text = String::from_utf8_lossy(&bytes);
    match text.split_whitespace().next() {
        Some(word) => word.parse::<f64>().ok().filter(|v| v.is_finite()),
        None => None,
    }
    .ok_or_else(|| {
        if bytes.is_empty() {
            "it is empty".to_string()
        } else if bytes.len() >= METRIC_MAX_BYTES {
            format!("no number in the first {} KiB", METRIC_MAX_BYTES / 1024)
        } else {
            format!("no number in its {} bytes", bytes.len())
        }
    })
}

/// When to take reading number `done + 1`: the next tick of a fixed grid from `start_ns`
/// (so intervals do not drift), but never later than the end of `duration_s`.
pub fn next_reading_ns(
    start_ns: u64,
    done: usize,
    interval_s: f64,
    duration_s: Option<f64>,
) -> u64 {
    let tick = start_ns + ((done + 1) as f64 * interval_s * 1e9) as u64;
    match duration_s {
        Some(d) => tick.min(start_ns + (d * 1e9) as u64),
        None => tick,
    }
}

/// An interval cut short (the command exited, Ctrl-C) to under a quarter of what it was
/// planned to last gives rates over a few ms that mean nothing: it is dropped.
pub fn is_sliver(interval_s: f64, planned_s: f64) -> bool {
    interval_s < 0.25 * planned_s
}

/// The recorder's own CPU time, counted in clock ticks, is stated as a share of the wall
/// time only over at least this many ticks (one tick is then at most 1%).
pub const MIN_TICKS_FOR_SHARE: f64 = 100.0;

/// The recorder's CPU share of one CPU; None when the recording was too short for the
/// tick-counted CPU time to resolve it (a 5 ms recording would claim thousands of %).
pub fn own_cpu_share(own_cpu_s: f64, wall_s: f64, ticks_per_s: f64) -> Option<f64> {
    (wall_s * ticks_per_s >= MIN_TICKS_FOR_SHARE).then(|| own_cpu_s / wall_s)
}

/// How a recorded command ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CommandEnd {
    /// Its exit status, when it exited.
    pub exit_status: Option<i32>,
    /// The signal that killed it, when one did.
    pub exit_signal: Option<i32>,
    /// truebench stopped it (the duration ended, Ctrl-C) rather than it ending by itself.
    pub stopped_by_truebench: bool,
}

impl CommandEnd {
    pub fn from_status(s: std::process::ExitStatus, stopped_by_truebench: bool) -> CommandEnd {
        use std::os::unix::process::ExitStatusExt;
        CommandEnd {
            exit_status: s.code(),
            exit_signal: s.signal(),
            stopped_by_truebench,
        }
    }

    /// The exit code truebench passes on, as `time` does: the command's own non-zero
    /// status, 128 + N when signal N killed it; None when it succeeded or truebench
    /// stopped it.
    pub fn passed_on(&self) -> Option<i32> {
        if self.stopped_by_truebench {
            return None;
        }
        match (self.exit_status, self.exit_signal) {
            (Some(0), _) => None,
            (Some(c), _) => Some(c),
            (None, Some(sig)) => Some(128 + sig),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_recordings_claim_no_overhead_and_durations_cut_the_grid() {
        assert_eq!(own_cpu_share(0.05, 0.001, 100.0), None);
        assert_eq!(own_cpu_share(0.01, 2.0, 100.0), Some(0.005));
        assert_eq!(next_reading_ns(0, 0, 6.0, Some(0.5)), 500_000_000);
        assert_eq!(next_reading_ns(0, 1, 1.0, None), 2_000_000_000);
        assert!(is_sliver(0.004, 1.0) && !is_sliver(0.5, 0.5));
        let code = |c: Option<i32>, s: Option<i32>, by: bool| {
            CommandEnd {
                exit_status: c,
                exit_signal: s,
                stopped_by_truebench: by,
            }
            .passed_on()
        };
        assert_eq!(code(Some(7), None, false), Some(7));
        assert_eq!(code(None, Some(9), false), Some(137));
        assert_eq!(code(Some(0), None, false), None);
        assert_eq!(code(None, Some(15), true), None);
    }

    fn reading(t_s: f64, ctxt: u64, cpu_ticks: u64, vol: u64, metric: f64) -> Reading {
        Reading {
            t_ns: (t_s * 1e9) as u64,
            sys: Counters {
                cpu: vec![(0, [t_s as u64 * 50, 0, 0, t_s as u64 * 50, 0, 0, 0, 0])],
                ctxt,
                numa: Some([("numa_hit".to_string(), ctxt / 2)].into()),
                ..Default::default()
            },
            target: Some(ProcCounters {
                cpu_ticks,
                threads: 2,
                cpus: vec![0],
                voluntary: Some(vol),
                involuntary: Some(0),
                migrations: Some(0),
                runq_wait_ns: Some(0),
                nr_throttled: Some(cpu_ticks / 10),
                throttled_us: Some(cpu_ticks * 100),
                events: [("syscalls".to_string(), vol * 5)].into(),
                tasks: vec![],
            }),
            metric: Some(metric),
            metric_missing: None,
        }
    }

    #[test]
    fn an_interval_whose_metric_gave_no_number_says_why() {
        let a = reading(0.0, 0, 0, 0, 10.0);
        let mut b = reading(1.0, 100, 10, 10, 0.0);
        b.metric = None;
        b.metric_missing = Some("no number in its 3 bytes".into());
        let r = row(&a, &b, 0, 100.0);
        assert_eq!(r.metric_per_s, None);
        assert_eq!(
            r.metric_missing.as_deref(),
            Some("no number in its 3 bytes")
        );
        // The next interval starts from the unread instant: no rate either, same reason.
        let c = reading(2.0, 200, 20, 20, 30.0);
        assert_eq!(row(&b, &c, 0, 100.0).metric_missing, r.metric_missing);
        // Read at both ends: a rate and no mark.
        let ok = row(&a, &c, 0, 100.0);
        assert_eq!((ok.metric_per_s, ok.metric_missing), (Some(10.0), None));
    }

    #[test]
    fn a_metric_file_without_a_number_gives_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("done");
        std::fs::write(&f, "1234 transactions\n").unwrap();
        assert_eq!(read_metric(None, Some(&f), 1.0), Ok(1234.0));
        std::fs::write(&f, "").unwrap();
        assert_eq!(read_metric(None, Some(&f), 1.0).unwrap_err(), "it is empty");
        std::fs::write(&f, "n/a\n").unwrap();
        assert_eq!(
            read_metric(None, Some(&f), 1.0).unwrap_err(),
            "no number in its 4 bytes"
        );
        let zero = std::path::Path::new("/dev/zero");
        assert_eq!(
            read_metric(None, Some(zero), 1.0).unwrap_err(),
            "no number in the first 4 KiB"
        );
        // A large file whose first word is a number: the number (only 4 KiB are read).
        std::fs::write(&f, format!("77\n{}", "x".repeat(100_000))).unwrap();
        assert_eq!(read_metric(None, Some(&f), 1.0), Ok(77.0));
        let missing = dir.path().join("absent");
        assert!(read_metric(None, Some(&missing), 1.0)
            .unwrap_err()
            .starts_with("cannot read it: "));
    }

    #[test]
    fn rows_are_rates_over_the_interval() {
        let a = reading(0.0, 1000, 0, 0, 0.0);
        let b = reading(2.0, 3000, 100, 40, 500.0);
        let r = row(&a, &b, 0, 100.0);
        assert_eq!(r.interval_s, 2.0);
        assert_eq!(r.ctxt_per_s, 1000.0);
        assert_eq!(r.metric_per_s, Some(250.0));
        // vmstat counters are events in the interval, not rates.
        assert_eq!(r.numa_events, [("numa_hit".to_string(), 1000)].into());
        let t = r.target.unwrap();
        assert_eq!(t.cpu_pct, 50.0); // 100 ticks = 1 CPU-s over 2 s
        assert_eq!(t.voluntary_per_s, Some(20.0));
        assert_eq!(t.throttled_periods_per_s, Some(5.0));
        assert_eq!(t.throttled_ms_per_s, Some(5.0));
        assert_eq!(t.events_per_s["syscalls"], 100.0);
        assert_eq!(r.cpus[0].user, 50.0);
    }

    #[test]
    fn cost_per_unit_and_correlation() {
        // The business rate doubles when context switches double.
        let rs: Vec<Reading> = vec![
            reading(0.0, 0, 0, 0, 0.0),
            reading(1.0, 100, 10, 10, 100.0),
            reading(2.0, 300, 30, 30, 300.0),
            reading(3.0, 400, 40, 40, 400.0),
        ];
        let rows: Vec<Row> = rs.windows(2).map(|w| row(&w[0], &w[1], 0, 100.0)).collect();
        let s = summarize(&rows);
        assert_eq!(s.units, Some(400.0));
        // 0.4 CPU-s for 400 units: 1000 CPU-µs per unit; 40 switches: 0.1 per unit.
        assert!((s.per_unit["target_cpu_us"] - 1000.0).abs() < 1e-9);
        assert!((s.per_unit["target_context_switches"] - 0.1).abs() < 1e-12);
        // 200 system calls for 400 units.
        assert!((s.per_unit["target_syscalls"] - 0.5).abs() < 1e-12);
        assert!((s.correlation_with_metric["target_syscalls_per_s"] - 1.0).abs() < 1e-12);
        assert!((s.correlation_with_metric["ctxt_per_s"] - 1.0).abs() < 1e-12);
        assert!(summarize(&rows[..0]).units.is_none());
    }
}
