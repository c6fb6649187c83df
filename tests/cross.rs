//! truebench built for aarch64 (the dist build of scripts/test's stage 5), run under
//! qemu-aarch64 (qemu-user) on this machine. Timings mean nothing under emulation, but
//! every command must finish, and stop within 3 s of SIGTERM whatever it is doing.

mod common;

use common::TestEnv;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TARGET: &str = "aarch64-unknown-linux-gnu";

/// `qemu-aarch64 -L /usr/aarch64-linux-gnu TRUEBENCH ARGS` with the test's database and
/// lock.
fn under_qemu(env: &TestEnv, args: &[&str]) -> Command {
    let bin = common::dist_binary(Some(TARGET));
    let mut c = Command::new(common::tool("qemu-aarch64"));
    c.args(["-L", "/usr/aarch64-linux-gnu"])
        .arg(bin)
        .args(args)
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null());
    c
}

/// Wait for `child` at most `limit`; None when it is still running then (it is killed).
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
#[ignore = "needs the aarch64 dist build and qemu-user: scripts/test stage 5"]
fn timers_and_ctx_complete_under_qemu() {
    let env = TestEnv::new();
    let t = Instant::now();
    let mut child = under_qemu(&env, &["run", "timers,ctx", "--samples", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_at_most(&mut child, Duration::from_secs(600));
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = status.unwrap_or_else(|| panic!("not done in 10 min under qemu: {err}"));
    assert!(status.success(), "{status}: {err}");
    // The run is stored with results of both suites, as on the host.
    let out = under_qemu(&env, &["show", "latest", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["benchmark"].as_str())
        .collect();
    assert!(ids.iter().any(|b| b.starts_with("timers.")), "{ids:?}");
    assert!(ids.iter().any(|b| b.starts_with("ctx.")), "{ids:?}");
    // The CPU's own counter on aarch64 is the virtual counter, read by one instruction.
    let clocks = doc["results"].to_string();
    assert!(clocks.contains("cntvct"), "no cntvct clock read");
    eprintln!("run timers,ctx --samples 3 under qemu: {:?}", t.elapsed());
}

#[test]
#[ignore = "needs the aarch64 dist build and qemu-user: scripts/test stage 5"]
fn sigterm_stops_a_run_within_3_s_under_qemu_at_any_moment() {
    // SIGTERM at several moments: during the probe, the clock reads and calibration, the
    // context-switch benchmark (the moments shift with the machine's load; each must stop).
    let mut stopped = Vec::new();
    for after_s in [1.0, 4.0, 10.0, 25.0] {
        let env = TestEnv::new();
        let mut child = under_qemu(&env, &["run", "timers,ctx", "--samples", "3"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs_f64(after_s));
        if child.try_wait().unwrap().is_some() {
            continue; // done before the signal: nothing left to stop
        }
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        let t = Instant::now();
        let status = wait_at_most(&mut child, Duration::from_secs(3));
        assert!(
            status.is_some(),
            "still running 3 s after SIGTERM sent {after_s} s into the run"
        );
        eprintln!("SIGTERM at {after_s} s: stopped in {:?}", t.elapsed());
        stopped.push(after_s);
    }
    // Under emulation the run takes minutes (timers_and_ctx_complete_under_qemu), so the
    // signal reached a running truebench at least at the first moments.
    assert!(
        stopped.contains(&1.0),
        "the run was over before 1 s under qemu: the signal was never tested ({stopped:?})"
    );
}
