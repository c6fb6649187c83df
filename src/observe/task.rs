//! Per-task scheduler counters from /proc/<pid>/task/<tid>/{status,sched}: voluntary and
//! involuntary context switches (status, always present) and migrations (`se.nr_migrations`
//! in sched, present with CONFIG_SCHED_DEBUG). A counter that cannot be read is None.

use procfs_core::process::Status;
use procfs_core::FromBufRead;
use serde::Serialize;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TaskCounters {
    pub voluntary_switches: Option<u64>,
    pub involuntary_switches: Option<u64>,
    pub migrations: Option<u64>,
}

/// The value of `key` in a `key: value` or `key   :   value` listing.
pub fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key)
            .then(|| v.trim().parse::<f64>().ok().map(|x| x as u64))
            .flatten()
    })
}

/// A /proc/PID/status file, parsed by procfs-core.
pub fn parse_status(text: &str) -> Option<Status> {
    Status::from_buf_read(text.as_bytes()).ok()
}

/// Parse the two files' texts.
pub fn parse(status: Option<&str>, sched: Option<&str>) -> TaskCounters {
    let status = status.and_then(parse_status);
    TaskCounters {
        voluntary_switches: status.as_ref().and_then(|s| s.voluntary_ctxt_switches),
        involuntary_switches: status.as_ref().and_then(|s| s.nonvoluntary_ctxt_switches),
        migrations: sched.and_then(|s| field(s, "se.nr_migrations")),
    }
}

/// Read the counters of thread `tid` of process `pid`.
pub fn read(pid: i32, tid: i32) -> TaskCounters {
    let dir = format!("/proc/{pid}/task/{tid}");
    let status = std::fs::read_to_string(format!("{dir}/status")).ok();
    let sched = std::fs::read_to_string(format!("{dir}/sched")).ok();
    parse(status.as_deref(), sched.as_deref())
}

impl TaskCounters {
    /// Counts between two readings; a counter missing from either is None.
    pub fn since(&self, before: &TaskCounters) -> TaskCounters {
        let d = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        TaskCounters {
            voluntary_switches: d(self.voluntary_switches, before.voluntary_switches),
            involuntary_switches: d(self.involuntary_switches, before.involuntary_switches),
            migrations: d(self.migrations, before.migrations),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_status_and_sched_fields() {
        // A real /proc/PID/status (captured on the project's VM), switch counts set to 12 and 3.
        let status = include_str!("../../tests/fixtures/proc/status");
        let sched = "x (1, #threads: 1)\n---\nse.exec_start   :   2027643.291605\nse.nr_migrations    :     7\n";
        let c = parse(Some(status), Some(sched));
        assert_eq!(
            c,
            TaskCounters {
                voluntary_switches: Some(12),
                involuntary_switches: Some(3),
                migrations: Some(7)
            }
        );
        let none = parse(Some(status), None);
        assert_eq!(none.migrations, None);
        let later = TaskCounters {
            voluntary_switches: Some(20),
            involuntary_switches: Some(3),
            migrations: None,
        };
        assert_eq!(later.since(&c).voluntary_switches, Some(8));
        assert_eq!(later.since(&c).migrations, None);
    }

    #[test]
    fn this_thread_has_counters() {
        // SAFETY: getpid/gettid have no preconditions.
        let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
        let c = read(pid, tid);
        assert!(c.voluntary_switches.is_some() && c.involuntary_switches.is_some());
    }
}
