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

/// Start `run timers,ctx --samples 3` under qemu and send SIGTERM once its progress on
/// stderr shows `marker` (None: at once, while qemu starts and the probe runs); it must be
/// gone within 3 s. Returns the time it took to stop.
fn stop_at(marker: Option<&str>) -> Duration {
    use std::io::{BufRead, BufReader};
    let env = TestEnv::new();
    let mut child = under_qemu(&env, &["run", "timers,ctx", "--samples", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    if let Some(marker) = marker {
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        loop {
            match lines.next() {
                Some(Ok(l)) => {
                    seen.push_str(&l);
                    seen.push('\n');
                    if l.contains(marker) {
                        break;
                    }
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("the run ended before showing {marker:?}: {seen}");
                }
            }
        }
        // Keep reading so a full pipe never blocks it.
        std::thread::spawn(move || lines.for_each(drop));
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
        "still running 3 s after SIGTERM sent at {marker:?}: {seen}"
    );
    t.elapsed()
}

#[test]
#[ignore = "needs the aarch64 dist build and qemu-user: scripts/test stage 5"]
fn sigterm_stops_a_run_within_3_s_under_qemu_at_any_moment() {
    // SIGTERM at known moments of the run, taken from its progress lines (never from the
    // clock, which moves with the machine's load): at start (qemu and the probe), at the
    // first clock read (calibration), at the counter read, at the context-switch benchmark.
    for marker in [
        None,
        Some("truebench: 1/"),
        Some("cntvct"),
        Some("ctx.pipe"),
    ] {
        let took = stop_at(marker);
        eprintln!("SIGTERM at {marker:?}: stopped in {took:?}");
    }
}
