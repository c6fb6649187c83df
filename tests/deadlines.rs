//! Every external wait has a deadline, every read a bound, every process truebench starts
//! is stopped with its descendants: the truebench binary run against hostile inputs (a
//! captured tree holding a FIFO or /dev/zero, a database server that never answers, a
//! command that ignores SIGTERM or daemonises), each checked for its wall time, its peak
//! memory (from wait4) and what it leaves running.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How a truebench run ended: exit code, wall time, peak RSS, its output.
struct Ran {
    code: Option<i32>,
    wall: Duration,
    max_rss_mib: f64,
    stdout: String,
    stderr: String,
}

/// Run `cmd` (its output to files), killing it after `limit` (then the test fails on
/// `wall`); its wall time and peak resident memory from wait4.
fn run_measured(mut cmd: Command, limit: Duration) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    cmd.stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .stdin(std::process::Stdio::null());
    let t = Instant::now();
    // Reaped by wait4 below, for its resource usage.
    #[allow(clippy::zombie_processes)]
    let pid = cmd.spawn().unwrap().id() as i32;
    // SAFETY: wait4 writes into locals we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status = 0;
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if t.elapsed() > limit {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ran {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        wall: t.elapsed(),
        max_rss_mib: ru.ru_maxrss as f64 / 1024.0,
        stdout: std::fs::read_to_string(out).unwrap_or_default(),
        stderr: std::fs::read_to_string(err).unwrap_or_default(),
    }
}

fn truebench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_truebench"));
    c.env_remove("TRUEBENCH_DB").env_remove("XDG_DATA_HOME");
    c
}

/// A copy of the this-vm captured tree in which `rel` is replaced by `plant` (called with
/// the path to create).
fn tree_with(dir: &Path, rel: &str, plant: impl Fn(&Path)) -> PathBuf {
    let root = dir.join("root");
    let ok = Command::new("cp")
        .arg("-a")
        .arg(common::fixture("this-vm"))
        .arg(&root)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let p = root.join(rel);
    std::fs::remove_file(&p).unwrap();
    plant(&p);
    root
}

fn fifo(p: &Path) {
    nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

fn dev_zero(p: &Path) {
    std::os::unix::fs::symlink("/dev/zero", p).unwrap();
}

/// An over-size regular file: 8 MiB of cpuinfo-like text, more than the 4 MiB limit.
fn huge(p: &Path) {
    let line = "processor\t: 0\n".repeat(8 << 20 >> 4);
    std::fs::write(p, line).unwrap();
}

#[test]
fn probe_over_a_fifo_or_dev_zero_ends_within_10s_under_256mb() {
    type Plant = fn(&Path);
    let cases: [(&str, Plant); 5] = [
        ("proc/cpuinfo", fifo),
        ("proc/cpuinfo", dev_zero),
        ("proc/cpuinfo", huge),
        ("sys/devices/system/cpu/online", fifo),
        ("sys/devices/system/cpu/online", dev_zero),
    ];
    for (rel, plant) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = tree_with(dir.path(), rel, plant);
        let mut c = truebench();
        c.args(["probe", "--json", "--root"]).arg(&root);
        let r = run_measured(c, Duration::from_secs(60));
        let what = format!(
            "{rel} as {}",
            std::fs::symlink_metadata(root.join(rel))
                .map(|m| format!("{:?}", m.file_type()))
                .unwrap_or_default()
        );
        assert!(
            r.wall < Duration::from_secs(10),
            "{what}: probe took {:.1} s",
            r.wall.as_secs_f64()
        );
        assert!(
            r.max_rss_mib < 256.0,
            "{what}: probe used {:.0} MiB",
            r.max_rss_mib
        );
        // The probe ends normally: the fact is unavailable, nothing crashed.
        assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert!(doc.is_object(), "{what}");
    }
}

/// Processes whose command line holds `tag`.
fn running_with(tag: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(tag))
                .unwrap_or(false)
        })
        .filter(|p| {
            // A zombie is gone (its parent has yet to reap it).
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .map(|s| !s.rsplit(") ").next().unwrap_or("").starts_with('Z'))
                .unwrap_or(false)
        })
        .collect()
}

/// A tag no other test's processes carry: a sleep time of this test and process.
fn tag(n: u32) -> String {
    format!("{}{}.{}", 7 + n, std::process::id() % 100_000, 25 + n)
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool, limit: Duration) {
    let until = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < until, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A truebench command bound to a private database and lock, started in the background.
fn spawn(env: &common::TestEnv, args: &[&str]) -> std::process::Child {
    truebench()
        .args(args)
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .current_dir(env.dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for `child` at most `limit` (then it is killed: the test fails on the time, it
/// never hangs); its output.
fn wait_limited(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let until = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

/// Send SIGINT (Ctrl-C) to `child` once the process tagged `tag` runs; how long until
/// truebench ended and nothing tagged is left.
fn ctrl_c_once_running(child: std::process::Child, tag: &str) -> (Duration, String) {
    wait_for(
        "the command started",
        || !running_with(tag).is_empty(),
        Duration::from_secs(30),
    );
    // Past start-up: the command runs under truebench's watch.
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = wait_limited(child, Duration::from_secs(30));
    let took = t.elapsed();
    let left = running_with(tag);
    for p in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(left.is_empty(), "left running: {left:?}");
    (took, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A command that ignores SIGTERM (as do the processes it starts).
fn term_ignoring(tag: &str) -> String {
    format!("trap '' TERM; sleep {tag}")
}

#[test]
fn experiment_ctrl_c_stops_a_command_that_ignores_sigterm_within_6s() {
    let env = common::TestEnv::new();
    let t = tag(0);
    let script = term_ignoring(&t);
    let child = spawn(
        &env,
        &["experiment", "--runs", "3", "--", "sh", "-c", &script],
    );
    let (took, err) = ctrl_c_once_running(child, &t);
    assert!(took < Duration::from_secs(6), "took {took:?}: {err}");
}

#[test]
fn record_ctrl_c_stops_a_command_that_ignores_sigterm_within_6s() {
    let env = common::TestEnv::new();
    let t = tag(1);
    let script = term_ignoring(&t);
    let child = spawn(
        &env,
        &["record", "--interval", "0.5", "--", "sh", "-c", &script],
    );
    let (took, err) = ctrl_c_once_running(child, &t);
    assert!(took < Duration::from_secs(6), "took {took:?}: {err}");
}

/// An executable script in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A Python HTTP server on `port` whose command line carries `tag` (the directory it
/// serves, made in `dir`).
fn http_server(dir: &Path, port: u16, tag: &str) -> String {
    let d = dir.join(tag);
    std::fs::create_dir_all(&d).unwrap();
    format!(
        "/usr/bin/python3 -m http.server --bind 127.0.0.1 --directory {} {port}",
        d.display()
    )
}

#[test]
fn loadstep_ctrl_c_stops_a_server_that_ignores_sigterm_within_6s() {
    let env = common::TestEnv::new();
    let t = tag(2);
    let port = common::free_port();
    let start = script(
        env.dir.path(),
        "start.sh",
        &format!(
            "trap '' TERM\nexec {} 2>/dev/null",
            http_server(env.dir.path(), port, &t)
        ),
    );
    let child = spawn(
        &env,
        &[
            "loadstep",
            "--http",
            &format!("http://127.0.0.1:{port}/"),
            "--server",
            &start.display().to_string(),
            "--rates",
            "20",
            "--step-duration",
            "30",
            "--json",
        ],
    );
    let (took, err) = ctrl_c_once_running(child, &t);
    assert!(took < Duration::from_secs(6), "took {took:?}: {err}");
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "still listening"
    );
}

#[test]
fn a_daemonised_descendant_of_an_experiment_is_stopped_and_said() {
    let env = common::TestEnv::new();
    let t = tag(3);
    let job = script(
        env.dir.path(),
        "job.sh",
        &format!("setsid sleep {t} >/dev/null 2>&1 </dev/null &\nsleep 0.2"),
    );
    let out = truebench()
        .args(["experiment", "--runs", "1", "--"])
        .arg(&job)
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .output()
        .unwrap();
    let left = running_with(&t);
    for p in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(left.is_empty(), "left running: {left:?}");
    assert!(err.contains("1 process started by"), "{err}");
    assert!(err.contains("outlived it and was stopped"), "{err}");
}

#[test]
fn a_server_start_script_that_daemonises_leaves_nothing_listening() {
    let env = common::TestEnv::new();
    let t = tag(4);
    let port = common::free_port();
    let start = script(
        env.dir.path(),
        "start.sh",
        &format!(
            "setsid {} >/dev/null 2>&1 </dev/null &\nexit 0",
            http_server(env.dir.path(), port, &t)
        ),
    );
    let out = truebench()
        .args([
            "loadstep",
            "--http",
            &format!("http://127.0.0.1:{port}/"),
            "--server",
        ])
        .arg(&start)
        .args(["--rates", "20", "--step-duration", "0.5", "--json"])
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let left = running_with(&t);
    for p in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(
        left.is_empty(),
        "the daemonised server was left running: {left:?}: {err}"
    );
    let listening = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    assert!(!listening, "something still listens on {port}: {err}");
    assert!(err.contains("outlived it and was stopped"), "{err}");
    assert!(err.contains("ended before it answered"), "{err}");
}

#[test]
#[ignore = "needs root"]
fn no_real_time_descendant_outlives_an_experiment() {
    common::needs_root();
    let env = common::TestEnv::new();
    let t = tag(5);
    // The daemon spins (a real-time class left behind would hold a CPU).
    let job = script(
        env.dir.path(),
        "job.sh",
        &format!(
            "setsid sh -c 'while :; do :; done; sleep {t}' >/dev/null 2>&1 </dev/null &\nsleep 0.2"
        ),
    );
    let out = truebench()
        .args(["experiment", "--runs", "1", "--policy", "fifo:10", "--"])
        .arg(&job)
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .output()
        .unwrap();
    let left = running_with(&t);
    for p in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(left.is_empty(), "left running (SCHED_FIFO 10): {left:?}");
    assert!(err.contains("outlived it and was stopped"), "{err}");
}

#[test]
fn a_postgresql_server_that_never_answers_is_a_one_line_error_within_30s() {
    let env = common::TestEnv::new();
    let port = common::silent_listener().port();
    let doc = common::documents().remove(0);
    let doc = doc.to_str().unwrap();
    let urls = [
        (format!("postgresql://tb@127.0.0.1:{port}/bench"), 30),
        // The URL's connect_timeout bounds the whole set-up.
        (
            format!("postgresql://tb@127.0.0.1:{port}/bench?connect_timeout=2"),
            8,
        ),
    ];
    let commands: [&[&str]; 3] = [&["history"], &["import", doc], &["show", "latest"]];
    // The six commands wait on the server side by side (each with a lock of its own): each
    // one's time is still its own, and the test waits for the slowest instead of the sum.
    let ran: Vec<(String, u64, Ran)> = std::thread::scope(|s| {
        let handles: Vec<_> = urls
            .iter()
            .flat_map(|(url, limit)| commands.iter().map(move |args| (url, *limit, *args)))
            .enumerate()
            .map(|(k, (url, limit, args))| {
                let lock = env.dir.path().join(format!("lock-{k}"));
                s.spawn(move || {
                    let mut c = truebench();
                    c.arg("--db")
                        .arg(url)
                        .args(args)
                        .env("TRUEBENCH_LOCK", lock)
                        .env("PGPASSFILE", "/nonexistent");
                    let what = format!("{args:?} on {url}");
                    (what, limit, run_measured(c, Duration::from_secs(120)))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (what, limit, r) in ran {
        assert!(
            r.wall < Duration::from_secs(limit),
            "{what}: {:.1} s",
            r.wall.as_secs_f64()
        );
        assert_eq!(r.code, Some(1), "{what}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{what}: {}", r.stderr);
        assert_eq!(
            r.stderr.trim_end().lines().count(),
            1,
            "{what}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains("cannot reach the PostgreSQL server")
                && r.stderr.contains("accepted the connection but gave no"),
            "{what}: {}",
            r.stderr
        );
    }
}

/// The processes of the PostgreSQL server listening on `port`: the postmaster and its
/// children.
fn server_processes(port: u16) -> Vec<i32> {
    let master = running_with(&format!("-p\0{port}"));
    assert_eq!(master.len(), 1, "postmaster of port {port}: {master:?}");
    let mut all = master.clone();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let ppid = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit(") ")
                    .next()?
                    .split(' ')
                    .nth(1)?
                    .parse::<i32>()
                    .ok()
            });
        if ppid == Some(master[0]) {
            all.push(pid);
        }
    }
    all
}

fn signal(pids: &[i32], sig: nix::sys::signal::Signal) {
    for p in pids {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*p), sig);
    }
}

#[test]
fn a_run_whose_postgresql_server_froze_is_kept_in_its_fallback_file() {
    let env = common::TestEnv::new();
    let pg = common::pg::PgServer::start();
    let url = pg.database("frozen");
    let child = truebench()
        .args([
            "--db",
            &url,
            "record",
            "--interval",
            "0.5",
            "--",
            "sleep",
            "5",
        ])
        .env("TRUEBENCH_LOCK", env.lock())
        .current_dir(env.dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The store is opened (schema made) before the recording starts: then freeze it all.
    wait_for(
        "record opened the store",
        || {
            let mut c = pg.client("frozen");
            c.query_one("SELECT to_regclass('truebench.runs') IS NOT NULL", &[])
                .map(|r| r.get::<_, bool>(0))
                .unwrap_or(false)
        },
        Duration::from_secs(30),
    );
    let frozen = server_processes(pg.port);
    signal(&frozen, nix::sys::signal::Signal::SIGSTOP);
    let t = Instant::now();
    let out = wait_limited(child, Duration::from_secs(60));
    signal(&frozen, nix::sys::signal::Signal::SIGCONT);
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    // 5 s of recording, then at most 5 s to find the connection dead and 10 s for a new one.
    assert!(took < Duration::from_secs(30), "took {took:?}: {err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    let kept: Vec<PathBuf> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("truebench-run-") && n.ends_with(".json")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{err}");
    assert!(
        err.contains("the run was kept in") && err.contains(&kept[0].display().to_string()),
        "{err}"
    );
    assert!(err.contains("gave no"), "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept[0]).unwrap()).unwrap();
    assert_eq!(doc["suites"], serde_json::json!(["record"]));
}
