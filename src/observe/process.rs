//! A target process followed thread by thread: CPU time (the process total, exited threads
//! included), the CPUs its live threads are on, migrations and run-queue wait summed over
//! live threads, and voluntary/involuntary switches of the whole process.

use super::task;
use procfs_core::process::{Schedstat, Stat};
use procfs_core::FromRead;

#[derive(Debug, Clone, Default)]
pub struct ProcCounters {
    /// utime + stime of the whole process, ticks.
    pub cpu_ticks: u64,
    pub threads: usize,
    /// The CPU each live thread last ran on.
    pub cpus: Vec<u32>,
    pub voluntary: Option<u64>,
    pub involuntary: Option<u64>,
    /// Sum over live threads (a thread that exits takes its count with it).
    pub migrations: Option<u64>,
    /// Run-queue wait summed over live threads, ns (/proc/PID/task/TID/schedstat field 2).
    pub runq_wait_ns: Option<u64>,
    /// The process's cgroup cpu.stat: periods throttled and time throttled (µs).
    pub nr_throttled: Option<u64>,
    pub throttled_us: Option<u64>,
    /// perf_event counts on the target (syscalls, cycles...), cumulative; see `counters`.
    pub events: std::collections::BTreeMap<String, u64>,
    /// Each live thread as read (for the NUMA view, src/observe/homes.rs).
    pub tasks: Vec<TaskSample>,
}

/// One thread at one reading.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSample {
    pub tid: i32,
    pub name: String,
    /// The CPU it last ran on (stat field 39).
    pub cpu: Option<u32>,
    /// Its cumulative run time, ns: schedstat field 1, else stat utime + stime in ticks.
    pub run_ns: u64,
    /// se.nr_migrations (None without CONFIG_SCHED_DEBUG).
    pub migrations: Option<u64>,
}

/// The cpu.stat file of process `pid`'s cgroup, when it has a cpu controller.
pub fn cpu_stat_path(pid: i32) -> Option<String> {
    let root = crate::probe::sysroot::SysRoot::live();
    let mut ignored = crate::probe::Unavailable::default();
    crate::probe::cgroup::read_for(&root, &pid.to_string(), &mut ignored)?.cpu_stat_path
}

/// Add the throttling counters of `cpu_stat` (a cgroup cpu.stat path) to `c`.
pub fn add_throttling(c: &mut ProcCounters, cpu_stat: &str) {
    if let Ok(s) = std::fs::read_to_string(cpu_stat) {
        let (_, throttled, us) =
            crate::probe::cgroup::parse_cpu_stat(&s, s.contains("throttled_usec"));
        c.nr_throttled = throttled;
        c.throttled_us = us;
    }
}

/// A /proc/PID/stat (or /proc/PID/task/TID/stat) line, parsed by procfs-core.
pub fn parse_stat(text: &str) -> Option<Stat> {
    Stat::from_read(text.as_bytes()).ok()
}

/// utime + stime of a stat line, in clock ticks.
pub fn cpu_ticks(text: &str) -> Option<u64> {
    parse_stat(text).map(|s| s.utime + s.stime)
}

/// The CPU a task last ran on, from its stat line.
pub fn last_cpu(text: &str) -> Option<u32> {
    parse_stat(text)?.processor.map(|c| c as u32)
}

/// The thread ids of process `pid` (empty when it is gone).
pub fn threads(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Process `pid` and its descendants now (a server's master and its workers), from
/// /proc/PID/task/TID/children.
pub fn tree(pid: i32) -> Vec<i32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() && out.len() < 100_000 {
        let p = out[i];
        for tid in threads(p) {
            let kids = std::fs::read_to_string(format!("/proc/{p}/task/{tid}/children"))
                .unwrap_or_default();
            out.extend(
                kids.split_whitespace()
                    .filter_map(|k| k.parse::<i32>().ok()),
            );
        }
        i += 1;
    }
    out
}

/// The counters of several processes added up (CPU, switches, migrations); None when none
/// of them is there.
pub fn read_sum(pids: &[i32]) -> Option<ProcCounters> {
    let all: Vec<ProcCounters> = pids.iter().filter_map(|p| read(*p)).collect();
    let add = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
    let mut it = all.into_iter();
    let mut sum = it.next()?;
    for c in it {
        sum.cpu_ticks += c.cpu_ticks;
        sum.threads += c.threads;
        sum.cpus.extend(c.cpus);
        sum.voluntary = add(sum.voluntary, c.voluntary);
        sum.involuntary = add(sum.involuntary, c.involuntary);
        sum.migrations = add(sum.migrations, c.migrations);
        sum.runq_wait_ns = add(sum.runq_wait_ns, c.runq_wait_ns);
        sum.tasks.extend(c.tasks);
    }
    sum.cpus.sort_unstable();
    sum.cpus.dedup();
    Some(sum)
}

/// Read the process `pid`; None when it is gone.
pub fn read(pid: i32) -> Option<ProcCounters> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| task::parse_status(&s));
    let mut c = ProcCounters {
        cpu_ticks: cpu_ticks(&stat).unwrap_or(0),
        voluntary: status.as_ref().and_then(|s| s.voluntary_ctxt_switches),
        involuntary: status.as_ref().and_then(|s| s.nonvoluntary_ctxt_switches),
        migrations: Some(0),
        runq_wait_ns: Some(0),
        ..Default::default()
    };
    for tid in threads(pid) {
        let dir = format!("/proc/{pid}/task/{tid}");
        let Some(st) = std::fs::read_to_string(format!("{dir}/stat"))
            .ok()
            .and_then(|t| parse_stat(&t))
        else {
            continue;
        };
        c.threads += 1;
        let cpu = st.processor.map(|p| p as u32);
        if let Some(cpu) = cpu {
            if !c.cpus.contains(&cpu) {
                c.cpus.push(cpu);
            }
        }
        let t = task::read(pid, tid);
        c.migrations = c.migrations.zip(t.migrations).map(|(a, b)| a + b);
        let schedstat = std::fs::read_to_string(format!("{dir}/schedstat"))
            .ok()
            .and_then(|s| Schedstat::from_read(s.as_bytes()).ok());
        let wait = schedstat.as_ref().map(|s| s.run_delay);
        c.runq_wait_ns = c.runq_wait_ns.zip(wait).map(|(a, b)| a + b);
        c.tasks.push(TaskSample {
            tid,
            cpu,
            run_ns: schedstat.map(|s| s.sum_exec_runtime).unwrap_or_else(|| {
                (st.utime + st.stime).saturating_mul(1_000_000_000)
                    / super::system::ticks_per_second()
            }),
            migrations: t.migrations,
            name: st.comm,
        });
    }
    c.cpus.sort_unstable();
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_name_with_spaces() {
        let s = "42 (a b) S 1 42 42 0 -1 4194304 10 0 0 0 7 3 0 0 20 0 2 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0";
        assert_eq!(cpu_ticks(s), Some(10));
        assert_eq!(last_cpu(s), Some(1));
        assert_eq!(parse_stat(s).unwrap().comm, "a b");
        assert_eq!(cpu_ticks("garbage"), None);
    }

    #[test]
    fn throttling_comes_from_the_space_separated_cpu_stat() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cpu.stat");
        std::fs::write(
            &f,
            "nr_periods 52000\nnr_throttled 3100\nthrottled_usec 98000000\n",
        )
        .unwrap();
        let mut c = ProcCounters::default();
        add_throttling(&mut c, f.to_str().unwrap());
        assert_eq!(
            (c.nr_throttled, c.throttled_us),
            (Some(3100), Some(98_000_000))
        );
        std::fs::write(&f, "nr_periods 7\nnr_throttled 2\nthrottled_time 9000000\n").unwrap();
        add_throttling(&mut c, f.to_str().unwrap());
        assert_eq!((c.nr_throttled, c.throttled_us), (Some(2), Some(9000)));
    }

    #[test]
    fn this_process_reads_with_its_threads() {
        let c = read(std::process::id() as i32).unwrap();
        assert!(c.threads >= 1);
        assert!(!c.cpus.is_empty());
        assert!(c.voluntary.is_some());
        assert!(read(i32::MAX).is_none());
    }
}
