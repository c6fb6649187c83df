//! A target process followed thread by thread: CPU time (the process total, exited threads
//! included), the CPUs its live threads are on, migrations and run-queue wait summed over
//! live threads, and voluntary/involuntary switches of the whole process.

use super::task;

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
}

/// Field `n` (1-based, as in proc(5)) of a /proc/PID/stat line.
pub fn stat_field(text: &str, n: usize) -> Option<u64> {
    let close = text.rfind(')')?;
    // Fields after the name start at field 3 (state).
    text[close + 2..]
        .split_whitespace()
        .nth(n.checked_sub(3)?)?
        .parse()
        .ok()
}

/// Read the process `pid`; None when it is gone.
pub fn read(pid: i32) -> Option<ProcCounters> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok();
    let mut c = ProcCounters {
        cpu_ticks: stat_field(&stat, 14).unwrap_or(0) + stat_field(&stat, 15).unwrap_or(0),
        voluntary: status
            .as_deref()
            .and_then(|s| task::field(s, "voluntary_ctxt_switches")),
        involuntary: status
            .as_deref()
            .and_then(|s| task::field(s, "nonvoluntary_ctxt_switches")),
        migrations: Some(0),
        runq_wait_ns: Some(0),
        ..Default::default()
    };
    let tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    for tid in tids {
        let dir = format!("/proc/{pid}/task/{tid}");
        let Ok(ts) = std::fs::read_to_string(format!("{dir}/stat")) else {
            continue;
        };
        c.threads += 1;
        if let Some(cpu) = stat_field(&ts, 39) {
            if !c.cpus.contains(&(cpu as u32)) {
                c.cpus.push(cpu as u32);
            }
        }
        let t = task::read(pid, tid);
        c.migrations = c.migrations.zip(t.migrations).map(|(a, b)| a + b);
        let wait = std::fs::read_to_string(format!("{dir}/schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok());
        c.runq_wait_ns = c.runq_wait_ns.zip(wait).map(|(a, b)| a + b);
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
        assert_eq!(stat_field(s, 14), Some(7));
        assert_eq!(stat_field(s, 15), Some(3));
        assert_eq!(stat_field(s, 39), Some(1));
        assert_eq!(stat_field(s, 2), None);
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
