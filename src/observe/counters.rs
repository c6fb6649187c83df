//! perf_event counters on a target process: its system calls (the raw_syscalls:sys_enter
//! tracepoint) and, where a PMU exists, cycles, instructions, LLC misses and stalled
//! cycles. One counter per thread alive when counting starts, each with `inherit`, so the
//! threads and child processes created later count into their creator's counter (the
//! kernel folds a child's count in, also after it exits). Each event that cannot be opened
//! is named with its reason; its count is then absent, never zero.

use crate::measure::perf::{Counter, Event, Spec, Whom};
use std::collections::BTreeMap;

/// The tracepoint counted for system calls.
const SYSCALL_TRACEPOINT: &str = "events/raw_syscalls/sys_enter/id";
/// Where tracefs is usually mounted.
const TRACEFS_MOUNTS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The hardware events, by the name they carry in recordings.
const HARDWARE: &[(&str, Event)] = &[
    ("cycles", Event::Cycles),
    ("instructions", Event::Instructions),
    ("llc_misses", Event::CacheMisses),
    ("stalled_cycles", Event::StalledCyclesBackend),
];

/// Counters of one event, one per thread that was alive at the start.
struct EventCounters {
    name: String,
    counters: Vec<Counter>,
}

/// The open counters on a target, and what could not be opened.
pub struct TargetCounters {
    events: Vec<EventCounters>,
    /// Event name → why it is not counted.
    pub unavailable: BTreeMap<String, String>,
    /// How the counts were obtained (user-only counting, a temporary tracefs mount...).
    pub notes: Vec<String>,
}

fn parse_id(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The id of the raw_syscalls:sys_enter tracepoint, and a note when tracefs had to be
/// mounted to read it. tracefs not mounted (this VM) is mounted on a private directory as
/// root, read, and unmounted at once: the counter does not need the mount afterwards.
fn syscall_tracepoint_id() -> Result<(u64, Option<String>), String> {
    for dir in TRACEFS_MOUNTS {
        if let Ok(t) = std::fs::read_to_string(format!("{dir}/{SYSCALL_TRACEPOINT}")) {
            return parse_id(&t)
                .map(|id| (id, None))
                .ok_or_else(|| format!("{dir}/{SYSCALL_TRACEPOINT} holds no number"));
        }
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(
            "tracefs is not mounted (no /sys/kernel/tracing/events) and mounting it needs root"
                .into(),
        );
    }
    let dir = tempfile::tempdir().map_err(|e| format!("no directory to mount tracefs on: {e}"))?;
    nix::mount::mount(
        Some("tracefs"),
        dir.path(),
        Some("tracefs"),
        nix::mount::MsFlags::MS_NOSUID
            | nix::mount::MsFlags::MS_NODEV
            | nix::mount::MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(|e| format!("tracefs is not mounted and mounting it failed: {e}"))?;
    let text = std::fs::read_to_string(dir.path().join(SYSCALL_TRACEPOINT));
    let _ = nix::mount::umount2(dir.path(), nix::mount::MntFlags::MNT_DETACH);
    let text =
        text.map_err(|e| format!("tracefs has no raw_syscalls:sys_enter tracepoint: {e}"))?;
    let id = parse_id(&text).ok_or("the tracepoint id file holds no number")?;
    Ok((
        id,
        Some("tracefs was not mounted: it was mounted on a private directory to read the raw_syscalls:sys_enter id, then unmounted".into()),
    ))
}

/// Open `event` on every thread of `pid` (kernel and user counted unless `user_only`).
fn open_on_threads(pid: i32, event: Event, user_only: bool) -> std::io::Result<Vec<Counter>> {
    let mut out = Vec::new();
    for tid in super::process::threads(pid) {
        let built = Counter::open(&Spec {
            event,
            whom: Whom::Task(tid),
            inherit: true,
            exclude_kernel: user_only,
        });
        match built {
            Ok(mut c) => {
                c.enable()?;
                out.push(c);
            }
            // The thread exited between listing and opening: its work is gone with it.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(e),
        }
    }
    if out.is_empty() {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(out)
}

impl TargetCounters {
    /// Open the counters on process `pid`.
    pub fn open(pid: i32) -> TargetCounters {
        let mut me = TargetCounters {
            events: Vec::new(),
            unavailable: BTreeMap::new(),
            notes: Vec::new(),
        };
        match syscall_tracepoint_id() {
            Ok((id, note)) => {
                me.notes.extend(note);
                // System calls enter the kernel: the count is zero unless kernel events count.
                match open_on_threads(pid, Event::Tracepoint(id), false) {
                    Ok(counters) => me.events.push(EventCounters {
                        name: "syscalls".into(),
                        counters,
                    }),
                    Err(e) => {
                        me.unavailable
                            .insert("syscalls".into(), open_error("raw_syscalls:sys_enter", &e));
                    }
                }
            }
            Err(why) => {
                me.unavailable.insert("syscalls".into(), why);
            }
        }
        for (name, hw) in HARDWARE {
            let opened = open_on_threads(pid, *hw, false).or_else(|e| {
                if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) {
                    let c = open_on_threads(pid, *hw, true)?;
                    me.notes.push(format!(
                        "{name}: user-mode only (kernel counting not permitted)"
                    ));
                    Ok(c)
                } else {
                    Err(e)
                }
            });
            match opened {
                Ok(counters) => me.events.push(EventCounters {
                    name: (*name).into(),
                    counters,
                }),
                Err(e) => {
                    me.unavailable.insert((*name).into(), open_error(name, &e));
                }
            }
        }
        me
    }

    /// The cumulative counts so far, scaled for multiplexing (a counter that has not run
    /// yet has counted nothing); an event none of whose counters could be read is left out.
    pub fn read(&mut self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for ev in &mut self.events {
            let mut total = 0.0;
            let mut read = false;
            for c in &mut ev.counters {
                let Ok(ct) = c.read_count_and_time() else {
                    continue;
                };
                read = true;
                if ct.time_running > 0 {
                    total += ct.count as f64 * ct.time_enabled as f64 / ct.time_running as f64;
                }
            }
            if read {
                out.insert(ev.name.clone(), total.round() as u64);
            }
        }
        out
    }
}

fn open_error(what: &str, e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ESRCH) => format!("{what}: the target has no threads left to count"),
        Some(errno) => format!("{what}: {}", crate::probe::pmu::errno_reason(errno)),
        None => format!("{what}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracepoint_ids_parse() {
        assert_eq!(parse_id("321\n"), Some(321));
        assert_eq!(parse_id("x"), None);
    }

    /// A child that makes a known number of system calls is counted with them, including
    /// the work of a thread it starts after counting began (inherit). Root only: the
    /// tracepoint needs tracefs, which only root may mount here.
    #[test]
    #[ignore = "needs root"]
    fn syscalls_of_a_child_are_counted() {
        assert!(nix::unistd::geteuid().is_root(), "this test needs root");
        // dd with bs=1 makes one read and one write per byte: 2 × 20000 system calls.
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "read x; dd if=/dev/zero of=/dev/null bs=1 count=20000 2>/dev/null",
            ])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut tc = TargetCounters::open(child.id() as i32);
        assert!(
            !tc.unavailable.contains_key("syscalls"),
            "{:?}",
            tc.unavailable
        );
        let before = tc.read().get("syscalls").copied().unwrap_or(0);
        {
            use std::io::Write;
            writeln!(child.stdin.take().unwrap(), "go").unwrap();
        }
        child.wait().unwrap();
        let after = tc.read()["syscalls"];
        let n = after - before;
        assert!((40_000..60_000).contains(&n), "{n} system calls counted");
    }
}
