//! Nothing truebench starts outlives it, however it dies: a SIGKILL, an OOM kill or a CI
//! timeout skip every destructor and signal handler, so the stopping cannot be done by
//! truebench itself. Before the first command it launches (`record -- CMD`, `experiment
//! -- CMD`, `loadstep --server`), truebench starts a watchdog: a copy of its own binary
//! (`/proc/self/exe`, hidden argument [`ARG`]) that blocks reading a pipe whose only
//! writer is truebench. When truebench ends, however it ends, the kernel closes the pipe
//! and the watchdog's read returns: it then kills (SIGKILL) every process that carries
//! truebench's mark and every process in truebench's capacity cgroups, until none is left
//! (a few seconds at most), and says how many there were on stderr.
//!
//! The mark is an environment variable, [`VAR`], set on every launched command: every
//! descendant inherits it, whatever its process group or session (`setsid`, a daemonised
//! server), and it holds the marks of the truebench processes above, so a truebench run
//! under truebench is covered by both watchdogs. A descendant that execs with a cleared
//! environment (`env -i`, `sudo`) loses the mark: as root it is still found by its cgroup
//! when the command runs under a capacity policy, and while truebench lives it is stopped
//! as an adopted orphan (`crate::descendants`).
//!
//! The mark is not enough where a command overwrites its environment block: nginx writes
//! its process title over it (`/proc/PID/environ` then holds no mark, in the master and its
//! workers). So truebench also writes each launched command's pid and start time into the
//! pipe ([`launched`]), and the watchdog stops those processes, their descendants and the
//! members of their process groups too (an nginx master may die of SIGPIPE first, its
//! workers then orphaned to init but still in its group): it stops (SIGSTOP) them all
//! first, so that no child is orphaned away from the tree while its parent is killed,
//! then kills them.
//!
//! The watchdog ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT (a Ctrl-C to the terminal's
//! process group is truebench's to handle), holds no file but the pipe and stderr, and
//! uses no CPU while truebench runs.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The hidden first argument that makes the binary a watchdog.
pub const ARG: &str = "__watchdog";
/// The environment variable carrying the marks (comma-separated) of the truebench
/// processes a command descends from.
pub const VAR: &str = "TRUEBENCH_RUN";
/// How long the watchdog keeps killing before it gives up on what is left (a process in
/// uninterruptible sleep).
pub const SWEEP: Duration = Duration::from_secs(5);

struct Running {
    pid: i32,
    mark: String,
    /// The pipe's write end: never closed while truebench lives (close-on-exec, so no
    /// launched command holds it).
    _pipe: OwnedFd,
}

static WATCHDOG: OnceLock<Option<Running>> = OnceLock::new();

/// The watchdog's pid, once started: it is truebench's child but no command's orphan.
pub fn pid() -> Option<i32> {
    WATCHDOG.get().and_then(|w| w.as_ref()).map(|w| w.pid)
}

/// Start the watchdog if it is not running yet; its mark. None when it could not be
/// started (said once on stderr): commands then stop only while truebench lives.
fn running() -> Option<&'static Running> {
    WATCHDOG
        .get_or_init(|| {
            start()
                .map_err(|e| eprintln!("truebench: warning: no watchdog ({e}): a command started now is stopped if truebench ends on a signal it can handle, not if it is killed"))
                .ok()
        })
        .as_ref()
}

fn start() -> Result<Running, String> {
    let (read, write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| format!("pipe: {e}"))?;
    let nonce = std::fs::read_to_string("/proc/sys/kernel/random/uuid")
        .map(|s| s.trim().replace('-', ""))
        .unwrap_or_default();
    let mark = format!("{}.{nonce}", std::process::id());
    let child = Command::new("/proc/self/exe")
        .arg(ARG)
        .arg(&mark)
        .arg(std::process::id().to_string())
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .env_remove(VAR)
        .spawn()
        .map_err(|e| format!("cannot start /proc/self/exe: {e}"))?;
    let pid = child.id() as i32;
    // Never waited for by truebench: reaped by init once truebench is gone.
    drop(child);
    Ok(Running {
        pid,
        mark,
        _pipe: write,
    })
}

/// Tell the watchdog that process `pid` was launched (after `mark` and the spawn): it and
/// its descendants are stopped when truebench dies, even if they overwrite their
/// environment (nginx's process title). Its start time goes with it, so that a pid reused
/// after the command ended is never touched.
pub fn launched(pid: i32) {
    if cfg!(test) {
        return;
    }
    let Some(Some(w)) = WATCHDOG.get() else {
        return;
    };
    if let Some(start) = start_time(pid) {
        // One short line: written whole (below PIPE_BUF); the watchdog reads all the time.
        let _ = nix::unistd::write(&w._pipe, format!("{pid} {start}\n").as_bytes());
    }
}

/// A process's start time (clock ticks after boot, /proc/PID/stat field 22).
fn start_time(pid: i32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(crate::observe::process::parse_stat(&text)?.starttime)
}

/// The launched processes a pipe's text names (`PID START` lines, each written whole;
/// anything else is left out).
fn roots(text: &[u8]) -> Vec<(i32, u64)> {
    text.split(|b| *b == b'\n')
        .filter_map(|l| {
            let l = std::str::from_utf8(l).ok()?;
            let (p, s) = l.split_once(' ')?;
            Some((p.parse().ok()?, s.parse().ok()?))
        })
        .collect()
}

/// Mark `cmd` (a command about to be launched) so that it and all its descendants are
/// stopped when truebench dies. In a unit-test binary there is no truebench to re-execute:
/// nothing is done.
pub fn mark(cmd: &mut Command) {
    if cfg!(test) {
        return;
    }
    if let Some(w) = running() {
        cmd.env(VAR, marks(std::env::var(VAR).ok().as_deref(), &w.mark));
    }
}

/// The marks a launched command carries: those truebench carries, then its own.
fn marks(inherited: Option<&str>, own: &str) -> String {
    match inherited {
        Some(s) if !s.is_empty() => format!("{s},{own}"),
        _ => own.to_string(),
    }
}

/// Whether an environment block (`/proc/PID/environ`: NUL-separated) carries `mark`.
fn carries(environ: &[u8], mark: &str) -> bool {
    let key = format!("{VAR}=");
    environ
        .split(|b| *b == 0)
        .filter_map(|kv| kv.strip_prefix(key.as_bytes()))
        .any(|v| v.split(|b| *b == b',').any(|m| m == mark.as_bytes()))
}

/// The watchdog itself: `args` are the mark and truebench's pid. Blocks until the pipe on
/// stdin closes, then stops what carries the mark. The exit code.
pub fn main(args: &[String]) -> i32 {
    let (Some(mark), Some(parent)) = (args.first(), args.get(1).and_then(|p| p.parse().ok()))
    else {
        return 2;
    };
    for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: setting a signal to be ignored.
        unsafe { libc::signal(s, libc::SIG_IGN) };
    }
    let mut buf = [0u8; 512];
    let mut said: Vec<u8> = Vec::new();
    let mut stdin = std::io::stdin().lock();
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => said.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let n = sweep(mark, parent, &roots(&said));
    if n > 0 {
        eprintln!(
            "truebench: {} started by truebench (pid {parent}) outlived it and {} killed by its watchdog",
            crate::units::count(n, "process"),
            if n == 1 { "was" } else { "were" },
        );
    }
    0
}

/// Kill every process carrying `mark`, in a capacity cgroup of truebench `parent`, or
/// launched by it (`roots`, still of the same start time) or descending from one of those,
/// until none is left or [`SWEEP`] has passed; the number killed.
fn sweep(mark: &str, parent: i32, roots: &[(i32, u64)]) -> usize {
    let me = std::process::id() as i32;
    let groups = cgroup_procs_files(parent);
    let launched: Vec<i32> = roots
        .iter()
        .filter(|(p, s)| start_time(*p) == Some(*s))
        .map(|(p, _)| *p)
        .collect();
    let mut killed: BTreeSet<i32> = BTreeSet::new();
    // Every process found, stopped before any is killed: a parent killed first would
    // orphan its children out of the tree (to init) before they were seen.
    let mut stopped: BTreeSet<i32> = BTreeSet::new();
    let start = Instant::now();
    while start.elapsed() < SWEEP {
        let mut found: BTreeSet<i32> = marked(mark);
        for f in &groups {
            if let Ok(text) = std::fs::read_to_string(f) {
                found.extend(text.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
            }
        }
        for p in launched.iter().chain(stopped.iter()) {
            found.extend(crate::observe::process::tree(*p).into_iter().skip(1));
        }
        found.extend(launched.iter().filter(|p| start_time(**p).is_some()));
        found.extend(group_members(roots));
        found.retain(|p| *p != me && *p != parent && *p > 1);
        let new: Vec<i32> = found.difference(&stopped).copied().collect();
        if !new.is_empty() && stopped.len() < 100_000 {
            for p in &new {
                let _ = kill(Pid::from_raw(*p), Signal::SIGSTOP);
            }
            stopped.extend(new);
            continue;
        }
        if found.is_empty() {
            break;
        }
        for p in found {
            if kill(Pid::from_raw(p), Signal::SIGKILL).is_ok() {
                killed.insert(p);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    killed.len()
}

/// The live processes in the process group of a launched process (each leads its own): the
/// launched process may be gone before the watchdog looks (truebench's death closes its
/// output pipe, SIGPIPE ends an nginx master at once), its children then orphaned to init,
/// outside its tree, and without a mark when they overwrote their environment; they keep
/// its group. A group whose leader's pid now belongs to another process (reused: another
/// start time) is left alone.
fn group_members(roots: &[(i32, u64)]) -> BTreeSet<i32> {
    let groups: BTreeSet<i32> = roots
        .iter()
        .filter(|(p, s)| start_time(*p).is_none_or(|t| t == *s))
        .map(|(p, _)| *p)
        .collect();
    if groups.is_empty() {
        return BTreeSet::new();
    }
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return BTreeSet::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|t| crate::observe::process::parse_stat(&t))
                .is_some_and(|s| groups.contains(&s.pgrp) && s.state != 'Z')
        })
        .collect()
}

/// The live processes whose environment carries `mark`.
fn marked(mark: &str) -> BTreeSet<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return BTreeSet::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            // A zombie's environ reads empty: it is not counted.
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| carries(&env, mark))
        })
        .collect()
}

/// The `cgroup.procs` files of truebench `parent`'s capacity groups (root only): groups
/// `truebench-PARENT-N` beside the watchdog's own cgroup (or beside the group it was
/// started in).
fn cgroup_procs_files(parent: i32) -> Vec<std::path::PathBuf> {
    // Where `loadstep::capacity::Layout::find` puts them: beside this process's own group
    // of the cpu and the cpuset hierarchies.
    let root = crate::probe::sysroot::SysRoot::live();
    let dirs: Vec<std::path::PathBuf> = ["cpu", "cpuset"]
        .iter()
        .filter_map(|c| crate::probe::cgroup::own_dir(&root, c).map(|d| d.0))
        .collect();
    let prefix = format!("truebench-{parent}-");
    let mut files = Vec::new();
    for dir in dirs {
        let base = match dir.file_name().and_then(|n| n.to_str()) {
            Some(n) if n.starts_with("truebench-") => dir.parent().map(|p| p.to_path_buf()),
            _ => Some(dir),
        };
        let Some(Ok(rd)) = base.map(std::fs::read_dir) else {
            continue;
        };
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                files.push(e.path().join("cgroup.procs"));
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_members_of_a_launched_group_are_found_and_a_reused_leader_is_not() {
        use std::os::unix::process::CommandExt;
        // A group leader with a child in its group.
        let mut leader = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = leader.id() as i32;
        let until = Instant::now() + Duration::from_secs(5);
        let mut found = BTreeSet::new();
        while Instant::now() < until {
            let start = start_time(pid).unwrap();
            found = group_members(&[(pid, start)]);
            if found.len() >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let start = start_time(pid).unwrap();
        // A leader whose pid now carries another start time (reused): its group is left.
        let reused = group_members(&[(pid, start + 1)]);
        for p in crate::observe::process::tree(pid).into_iter().rev() {
            let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
        }
        let _ = leader.wait();
        assert!(found.contains(&pid) && found.len() >= 2, "{found:?}");
        assert!(reused.is_empty(), "{reused:?}");
        // No launched process: nothing.
        assert!(group_members(&[]).is_empty());
    }

    #[test]
    fn a_mark_is_found_among_the_marks_of_the_environment() {
        let env = b"PATH=/bin\0TRUEBENCH_RUN=10.aa,20.bb\0HOME=/\0";
        assert!(carries(env, "10.aa"));
        assert!(carries(env, "20.bb"));
        assert!(!carries(env, "20.b"));
        assert!(!carries(env, "30.cc"));
        assert!(!carries(b"XTRUEBENCH_RUN=30.cc\0", "30.cc"));
        assert!(!carries(b"", "30.cc"));
        assert_eq!(marks(None, "1.a"), "1.a");
        assert_eq!(marks(Some(""), "1.a"), "1.a");
        assert_eq!(marks(Some("0.z"), "1.a"), "0.z,1.a");
    }

    #[test]
    fn launched_processes_are_read_from_the_pipe_whole_lines_only() {
        assert_eq!(roots(b"12 345\n13 346\n"), [(12, 345), (13, 346)]);
        assert_eq!(roots(b"12 345\nx y\n\n15"), [(12, 345)]);
        assert!(roots(b"").is_empty());
    }
}
