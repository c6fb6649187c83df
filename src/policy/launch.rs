//! A command truebench launches under a policy (a batch job of `experiment`, a server of
//! `loadstep --server`): started in its own process group with the policy applied before
//! exec, killed by the kernel if truebench dies, waited for with its resource usage, and
//! stopped as a whole (SIGTERM to the group and every process of its tree, SIGKILL after a
//! grace period) when dropped: on success, error, panic and Ctrl-C alike, nothing it
//! started is left running, and its capacity cgroup goes once it is empty. Descendants that
//! left its group and tree (a `setsid` child, a daemonised server) are adopted by truebench
//! and stopped when it ends (`crate::descendants`); if truebench is killed, its watchdog
//! stops the whole tree (`crate::watchdog`).

use super::apply::{self, Pinner, Prepared};
use super::resolve::Instance;
use super::Policy;
use crate::loadstep::capacity::Group;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a stopped command gets between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);

/// How a launched command ended, and what it used (its own and its waited-for
/// descendants' resource usage, from wait4).
#[derive(Debug, Clone, PartialEq)]
pub struct Exited {
    /// The exit code; None when a signal ended it (then `signal`).
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub wall_s: f64,
    pub user_s: f64,
    pub system_s: f64,
    pub voluntary: u64,
    pub involuntary: u64,
}

impl Exited {
    /// "exit status 3" / "killed by signal 9 (SIGKILL)".
    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => killed_by(s),
            _ => "ended".into(),
        }
    }
}

/// "killed by signal 9 (SIGKILL)": a signal by number and name.
pub fn killed_by(signal: i32) -> String {
    match nix::sys::signal::Signal::try_from(signal) {
        Ok(name) => format!("killed by signal {signal} ({})", name.as_str()),
        Err(_) => format!("killed by signal {signal}"),
    }
}

/// A running command under a policy.
pub struct Launched {
    pub pid: i32,
    /// Its command line, for messages.
    pub what: String,
    started: Instant,
    reaped: bool,
    pinner: Option<Pinner>,
    /// The capacity group: removed (on drop) after the command is gone.
    group: Option<Group>,
}

/// The command line in words, as the user wrote it.
pub fn words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Launched {
    /// Start `argv` under `policy` at `at`, in `group` if given; stdout/stderr as given.
    /// Err: it could not be started (not found, not executable, the policy refused), said
    /// in one line.
    pub fn start(
        argv: &[String],
        policy: &Policy,
        at: &Instance,
        group: Option<Group>,
        stdout: Stdio,
        stderr: Stdio,
    ) -> Result<Launched, String> {
        let what = words(argv);
        crate::descendants::adopt_orphans();
        let Some((prog, args)) = argv.split_first() else {
            return Err("no command given".into());
        };
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        crate::watchdog::mark(&mut cmd);
        apply::install(&mut cmd, Prepared::new(policy, at, group.as_ref())?);
        let started = Instant::now();
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("cannot execute '{prog}': not found"),
            std::io::ErrorKind::PermissionDenied => {
                format!("cannot execute '{prog}': permission denied (or the policy {policy} was refused)")
            }
            _ => format!("cannot start '{what}' under {policy}: {e}"),
        })?;
        let pid = child.id() as i32;
        crate::watchdog::launched(pid);
        // The std handle is not waited on: wait4 below reaps the child with its rusage.
        drop(child);
        let pinner = at.pin_order.clone().map(|o| Pinner::start(pid, o));
        Ok(Launched {
            pid,
            what,
            started,
            reaped: false,
            pinner,
            group,
        })
    }

    /// Whether it has ended, without reaping it (its /proc entry stays readable).
    pub fn has_exited(&self) -> bool {
        use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
        if self.reaped {
            return true;
        }
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
        !matches!(
            waitid(Id::Pid(Pid::from_raw(self.pid)), flags),
            Ok(WaitStatus::StillAlive)
        )
    }

    /// Wait until it ends; its status and resource usage. The wall time runs from just
    /// before the fork. What it left running is stopped then, and said on stderr.
    pub fn wait(&mut self) -> Exited {
        // SAFETY: a zeroed rusage is valid; wait4 writes into locals we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let mut status = 0;
        loop {
            let r = unsafe { libc::wait4(self.pid, &mut status, 0, &mut ru) };
            if r == self.pid || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
            {
                break;
            }
        }
        let wall_s = self.started.elapsed().as_secs_f64();
        self.reaped = true;
        if let Some(p) = self.pinner.take() {
            p.finish();
        }
        use crate::descendants::{said, stop, Scope, GRACE};
        let outlived = stop(Scope::Groups(&[self.pid]), GRACE);
        if outlived > 0 {
            eprintln!("{}", said(outlived, &self.what));
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Exited {
            code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            wall_s,
            user_s: tv(ru.ru_utime),
            system_s: tv(ru.ru_stime),
            voluntary: ru.ru_nvcsw as u64,
            involuntary: ru.ru_nivcsw as u64,
        }
    }

    /// The capacity group it runs in, if any.
    pub fn group(&self) -> Option<&Group> {
        self.group.as_ref()
    }

    /// Its process tree now (it and its descendants).
    pub fn tree(&self) -> Vec<i32> {
        crate::observe::process::tree(self.pid)
    }

    /// Stop it and everything it started: SIGTERM to its process group and tree, SIGKILL
    /// to what is left after `grace`; reaped. Ok(true) when it ended on SIGTERM.
    pub fn stop(&mut self, grace: Duration) -> bool {
        if self.reaped {
            return true;
        }
        let tree = self.tree();
        signal_all(self.pid, &tree, Signal::SIGTERM);
        let until = Instant::now() + grace;
        while Instant::now() < until && !self.has_exited() {
            std::thread::sleep(Duration::from_millis(10));
        }
        let polite = self.has_exited();
        // Whatever is left of the group or tree (workers of a master that died first).
        let tree: Vec<i32> = tree.into_iter().chain(self.tree()).collect();
        signal_all(self.pid, &tree, Signal::SIGKILL);
        self.wait();
        // Descendants reparented away from it: wait until they are gone too.
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && tree.iter().any(|p| alive(*p)) {
            std::thread::sleep(Duration::from_millis(5));
        }
        polite
    }
}

/// Whether a process is still running (a zombie no longer is).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| crate::observe::process::parse_stat(&s))
        .is_some_and(|s| s.state != 'Z' && s.state != 'X')
}

/// Send `sig` to the launched command `pid` (its process group and tree), while it is
/// still truebench's child (not yet reaped: its pid is not another process's).
pub fn signal_command(pid: i32, sig: Signal) {
    let me = std::process::id() as i32;
    let ours = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| crate::observe::process::parse_stat(&s))
        .is_some_and(|s| s.ppid == me);
    if ours {
        signal_all(pid, &crate::observe::process::tree(pid), sig);
    }
}

fn signal_all(pgid: i32, tree: &[i32], sig: Signal) {
    let _ = kill(Pid::from_raw(-pgid), sig);
    for p in tree {
        let _ = kill(Pid::from_raw(*p), sig);
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        self.stop(GRACE);
        // Then the group (its own Drop), empty now.
        self.group.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Instance {
        Instance {
            cpus: None,
            pin_order: None,
            memory_nodes: None,
            partition: "test".into(),
        }
    }

    fn argv(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    fn start(s: &[&str]) -> Result<Launched, String> {
        Launched::start(
            &argv(s),
            &Policy::OS,
            &at(),
            None,
            Stdio::null(),
            Stdio::null(),
        )
    }

    #[test]
    fn a_command_is_waited_for_with_its_usage() {
        let mut l = start(&[
            "/bin/sh",
            "-c",
            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3",
        ])
        .unwrap();
        let e = l.wait();
        assert_eq!(e.code, Some(3));
        assert!(e.user_s + e.system_s > 0.0, "{e:?}");
        assert!(e.wall_s > 0.0 && e.wall_s < 30.0);
    }

    #[test]
    fn dropping_stops_the_whole_tree() {
        let l = start(&["/bin/sh", "-c", "sleep 30 & sleep 30 & wait"]).unwrap();
        let until = Instant::now() + Duration::from_secs(5);
        while l.tree().len() < 3 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let tree = l.tree();
        assert_eq!(tree.len(), 3, "{tree:?}");
        drop(l);
        assert!(tree.iter().all(|p| !alive(*p)), "{tree:?}");
    }

    #[test]
    fn a_missing_program_is_said_in_one_line() {
        let e = start(&["/nonexistent/server"]).err().unwrap();
        assert!(e.contains("cannot execute") && !e.contains('\n'), "{e}");
    }
}
