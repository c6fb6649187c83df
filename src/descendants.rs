//! Descendants that outlive the command truebench started: a script that starts a
//! `setsid` child and exits, a server start script that daemonises the server. Before it
//! starts a command truebench makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), so
//! every orphan of that command becomes truebench's child instead of init's: when the
//! command ends (or is stopped) its orphans are found, stopped (SIGTERM, SIGKILL after the
//! grace period, with their own descendants) and reaped, and the user is told how many
//! there were. Nothing the command started keeps running, and no real-time class it was
//! given outlives the run.
//!
//! An adopted orphan is told from truebench's own children (workers it forks, a metric
//! command) by its process group or session: a launched command has a process group of its
//! own, and truebench starts no child in another session, so a child of truebench in
//! another session, or in the group of a command that ended, is an orphan of that command.

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How long stopped descendants get between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);
/// How long after SIGKILL a descendant may take to go before it is given up on (a
/// process in uninterruptible sleep).
const KILL_WAIT: Duration = Duration::from_secs(2);

/// Make truebench the reaper of every orphan of the commands it starts from now on.
/// False when the kernel refused (before Linux 3.4): orphans then go to init, and only
/// the process groups of launched commands can still be signalled.
pub fn adopt_orphans() -> bool {
    // SAFETY: a plain prctl on this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// Which of truebench's children count as left behind.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Orphans of commands in these process groups (launched commands' pids), and any in
    /// another session.
    Groups(&'a [i32]),
    /// Every child: the caller has no child of its own any more (`record -- CMD` after its
    /// command ended).
    AllChildren,
}

/// One process as /proc shows it.
struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    session: i32,
    zombie: bool,
}

fn processes() -> Vec<Proc> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let s = crate::observe::process::parse_stat(&text)?;
            Some(Proc {
                pid,
                ppid: s.ppid,
                pgrp: s.pgrp,
                session: s.session,
                zombie: s.state == 'Z' || s.state == 'X',
            })
        })
        .collect()
}

/// The live processes left behind in `scope` (adopted orphans and their descendants),
/// besides those in `known` (already signalled, whatever their group now); the ones that
/// already ended are reaped.
fn left_behind(scope: Scope, known: &BTreeSet<i32>) -> Vec<i32> {
    let me = std::process::id() as i32;
    // SAFETY: getsid(0) only reads this process's session id.
    let my_session = unsafe { libc::getsid(0) };
    // The watchdog is truebench's child but no command's orphan.
    let watchdog = crate::watchdog::pid();
    let all: Vec<Proc> = processes()
        .into_iter()
        .filter(|p| Some(p.pid) != watchdog)
        .collect();
    let (live, ended) = select(&all, me, my_session, scope, known);
    for p in ended {
        let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
    }
    live
}

/// Of the processes `all`, those `me` (in session `my_session`) holds left behind in
/// `scope`: the live ones with their live descendants, and the ended ones to reap.
fn select(
    all: &[Proc],
    me: i32,
    my_session: i32,
    scope: Scope,
    known: &BTreeSet<i32>,
) -> (Vec<i32>, Vec<i32>) {
    let ours = |p: &Proc| {
        p.ppid == me
            && (known.contains(&p.pid)
                || match scope {
                    Scope::AllChildren => true,
                    Scope::Groups(g) => p.session != my_session || g.contains(&p.pgrp),
                })
    };
    let (mut live, mut ended) = (Vec::new(), Vec::new());
    for p in all.iter().filter(|p| ours(p)) {
        if p.zombie {
            ended.push(p.pid);
        } else {
            live.push(p.pid);
        }
    }
    // Their descendants (children of a left-behind process are not truebench's yet).
    let mut i = 0;
    while i < live.len() && live.len() < 100_000 {
        let parent = live[i];
        live.extend(
            all.iter()
                .filter(|p| p.ppid == parent && !p.zombie)
                .map(|p| p.pid),
        );
        i += 1;
    }
    (live, ended)
}

/// Stop what is left behind in `scope`: SIGTERM, SIGKILL to what remains after `grace`,
/// reaped. The number of processes that were still running.
pub fn stop(scope: Scope, grace: Duration) -> usize {
    let mut seen: BTreeSet<i32> = BTreeSet::new();
    let start = Instant::now();
    loop {
        let left = left_behind(scope, &seen);
        if left.is_empty() {
            break;
        }
        let late = start.elapsed() >= grace;
        if late && start.elapsed() >= grace + KILL_WAIT {
            break;
        }
        for p in left {
            if seen.insert(p) {
                let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
            }
            if late {
                let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    seen.len()
}

/// The sentence for stderr when `n` processes outlived `what`.
pub fn said(n: usize, what: &str) -> String {
    format!(
        "truebench: {} started by '{what}' outlived it and {} stopped (SIGTERM, SIGKILL after {} s)",
        crate::units::count(n, "process"),
        if n == 1 { "was" } else { "were" },
        GRACE.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, pgrp: i32, session: i32) -> Proc {
        Proc {
            pid,
            ppid,
            pgrp,
            session,
            zombie: false,
        }
    }

    /// truebench is 100 in session 1; it launched 200 (group 200), which has ended.
    #[test]
    fn orphans_are_told_from_truebenchs_own_children() {
        let all = [
            p(100, 1, 100, 1),
            p(150, 100, 100, 1),   // its own worker: same group and session
            p(300, 100, 300, 300), // a setsid daemon, adopted
            p(301, 300, 300, 300), // the daemon's child
            p(400, 100, 200, 1),   // `cmd &` of the launched command, adopted
            p(500, 1, 500, 500),   // someone else's daemon
            Proc {
                zombie: true,
                ..p(600, 100, 200, 1) // an orphan that ended: reaped, not counted
            },
        ];
        let none = BTreeSet::new();
        let (live, ended) = select(&all, 100, 1, Scope::Groups(&[200]), &none);
        assert_eq!(live, [300, 400, 301]);
        assert_eq!(ended, [600]);
        // Another command's group: only the daemon in another session.
        let (live, _) = select(&all, 100, 1, Scope::Groups(&[700]), &none);
        assert_eq!(live, [300, 301]);
        // Already signalled, now in truebench's group: still followed.
        let (live, _) = select(&all, 100, 1, Scope::Groups(&[700]), &BTreeSet::from([150]));
        assert_eq!(live, [150, 300, 301]);
        // A recording has no child of its own: every child is left behind.
        let (live, _) = select(&all, 100, 1, Scope::AllChildren, &none);
        assert_eq!(live, [150, 300, 400, 301]);
        assert!(said(2, "x").contains("2 processes started by 'x' outlived it and were stopped"));
        assert!(said(1, "x").contains("1 process started by 'x' outlived it and was stopped"));
    }
}
