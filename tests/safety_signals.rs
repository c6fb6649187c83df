//! Ctrl-C and SIGTERM end every command promptly, whatever it waits on: a load step whose
//! HTTP server stalls, a recording whose metric file is a FIFO without writer. What was
//! finished is kept (exit 130).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::TestEnv as Env;

/// Wait for `child` at most `limit`; its exit code, or None (then it is killed).
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<i32> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s.code().unwrap_or(-1));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn term(child: &Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .args(args)
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Defect 8: `loadstep --http` against a server that stalls ends on SIGTERM within a
/// second or two (it hung through SIGINT and SIGTERM).
#[test]
fn sigterm_ends_a_load_step_whose_server_stalls() {
    let env = Env::new();
    let url = format!("http://{}/", common::silent_listener());
    let mut child = spawn(
        &env,
        &[
            "loadstep",
            "--http",
            &url,
            "--rates",
            "50",
            "--step-duration",
            "30",
            "--warmup",
            "0.1",
            "--workers",
            "1",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    term(&child);
    let code = wait_at_most(&mut child, Duration::from_secs(5));
    assert_eq!(
        code,
        Some(130),
        "still running 5 s after SIGTERM, or wrong exit"
    );
}

/// Defect 8: without a signal, a stalled server cannot hold a step past its time limits.
#[test]
fn a_stalled_server_cannot_hold_a_load_step_for_ever() {
    let env = Env::new();
    let url = format!("http://{}/", common::silent_listener());
    let mut child = spawn(
        &env,
        &[
            "loadstep",
            "--http",
            &url,
            "--rates",
            "20",
            "--step-duration",
            "0.3",
            "--warmup",
            "0.1",
            "--workers",
            "1",
        ],
    );
    let code = wait_at_most(&mut child, Duration::from_secs(40));
    assert!(code.is_some(), "still running after 40 s");
}

/// Defect 10: a recording with a FIFO metric file and no writer ends on SIGTERM, keeping
/// what it recorded (it blocked in open() and ignored INT and TERM).
#[test]
fn sigterm_ends_a_recording_waiting_on_a_fifo() {
    let env = Env::new();
    let fifo = env.dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let mut child = spawn(
        &env,
        &[
            "record",
            "--interval",
            "0.2",
            "--metric-file",
            fifo.to_str().unwrap(),
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    term(&child);
    assert_eq!(wait_at_most(&mut child, Duration::from_secs(5)), Some(130));
    let h = env.json(&["history", "--json"]);
    assert_eq!(h.as_array().unwrap().len(), 1, "the recording was not kept");
}

/// Issue 37 item 1: truebench SIGKILLed while it runs a command whose tree forks, starts
/// a child in a session of its own (`setsid`) and waits: after 5 s no process of the tree
/// runs, with no truebench command run afterwards (its watchdog stopped them).
fn sigkill_leaves_nothing_of_the_tree(args: &[&str], tag: &str) {
    let env = Env::new();
    // Durations unique to this test, to find the tree's processes by command line.
    let secs = [
        format!("58.{tag}1"),
        format!("57.{tag}2"),
        format!("30.{tag}3"),
    ];
    let script = format!(
        "sleep {} & setsid sleep {} & sleep {}",
        secs[0], secs[1], secs[2]
    );
    let mut argv: Vec<&str> = args.to_vec();
    argv.extend(["--", "sh", "-c", &script]);
    let mut child = spawn(&env, &argv);
    let until = Instant::now() + Duration::from_secs(30);
    while secs.iter().any(|s| common::sleeping(s).is_empty()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let started: Vec<i32> = secs.iter().flat_map(|s| common::sleeping(s)).collect();
    assert_eq!(started.len(), 3, "the tree did not start: {started:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_secs(5));
    let left: Vec<i32> = secs.iter().flat_map(|s| common::sleeping(s)).collect();
    for p in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(left.is_empty(), "outlived a SIGKILLed truebench: {left:?}");
}

#[test]
fn sigkill_of_record_leaves_nothing_of_its_command() {
    sigkill_leaves_nothing_of_the_tree(&["record"], "41");
}

#[test]
fn sigkill_of_experiment_leaves_nothing_of_its_command() {
    sigkill_leaves_nothing_of_the_tree(&["experiment", "--runs", "1"], "42");
}
