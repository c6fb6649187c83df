//! The timers suite and the timer problem end to end: a clock read forced through the
//! system call (an LD_PRELOAD shim) leaves batch-timed results alone, collapses the
//! per-event figure, and raises `clock-read-syscall`; the clocksource sweep restores the
//! clocksource, also after Ctrl-C, and is refused without root.

mod common;

use common::TestEnv;
use serde_json::Value;
use std::process::Command;

const CURRENT: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// The measuring tests of this file run one at a time: the sweeps must each see the real
/// original clocksource (their private lock files do not exclude each other as the
/// machine-wide one would), and the shim test compares figures that contention would move.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The result of `doc` timed as `timing` says (`per-event` or `batch`).
fn row<'a>(doc: &'a Value, timing: &str) -> &'a Value {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["params"]["timing"] == timing)
        .unwrap()
}

fn median(r: &Value) -> f64 {
    r["stats"]["median"].as_f64().unwrap()
}

/// memory.per-event with its five rounds whole (a budget of 10 s: under the shim a round
/// takes several times longer, and the default budget of one cheap benchmark would cut
/// them) and no more (a target of 50% every row reaches in its first stage).
const PER_EVENT: &[&str] = &[
    "memory.per-event",
    "--samples",
    "5",
    "--budget",
    "10s",
    "--precision",
    "50%",
];

#[test]
fn a_syscall_clock_collapses_per_event_timing_but_not_batch_timing() {
    let _one_at_a_time = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    let shim = common::slow_clock_shim(env.dir.path());
    let fast = env.run(PER_EVENT);
    let slow: Value = serde_json::from_slice(
        common::succeeded(
            env.cmd()
                .env("LD_PRELOAD", &shim)
                .arg("run")
                .args(PER_EVENT)
                .arg("--json"),
        )
        .as_bytes(),
    )
    .unwrap();
    // Each figure is held against what its own run measured, never against the other
    // run's: the host's 1 KiB batch writes were bimodal from run to run in a noisy hour
    // (35-38 or 53-58 GB/s), so two runs' batch figures need not agree whatever the clock.
    let (fast_pe, fast_batch) = (row(&fast, "per-event"), row(&fast, "batch"));
    let (slow_pe, slow_batch) = (row(&slow, "per-event"), row(&slow, "batch"));
    // The shim made the clock itself slower: its measured cost moved as a changed clock
    // does (3x or more, compare's rule for a clock that changed), not as noise.
    let cost = |r: &Value| r["quality"]["clock_cost_ns"].as_f64().unwrap();
    assert!(
        cost(slow_pe) >= 3.0 * cost(fast_pe),
        "the shim did not slow the clock: {} -> {} ns",
        cost(fast_pe),
        cost(slow_pe)
    );
    // Batch timing holds: reading the clock is under 1% of the slow run's batch time, so
    // the slower clock can move the batch figure by no more than that.
    let share = |r: &Value| r["quality"]["timer_share"].as_f64().unwrap();
    assert!(share(slow_batch) < 0.01, "{}", slow_batch["quality"]);
    // Per-event timing collapses: the clock is most of the slow run's per-event time (the
    // share is the probe's cost of a read times the reads, an estimate: through the system
    // call a read also slows the writes around it, and the share may reach 100%)...
    assert!(share(slow_pe) > 0.5, "{}", slow_pe["quality"]);
    // ...so the slow run's per-event figure falls against its own batch figure, measured in
    // the same rounds, far more than the fast run's does against its own (each run's ratio:
    // the host's level of the moment cancels; a slow run measured 0.02, a fast one 0.21).
    let relative = |pe: &Value, batch: &Value| median(pe) / median(batch);
    let (rf, rs) = (relative(fast_pe, fast_batch), relative(slow_pe, slow_batch));
    assert!(
        rs < 0.6 * rf,
        "per-event figure did not collapse: {rf:.3} -> {rs:.3} of the batch figure"
    );
    // The slow run says why: the probe flags the clock, the per-event row is timer-bound.
    let ids = common::finding_ids(&slow_pe["findings"]);
    assert!(
        ids.contains(&"timer-bound") && ids.contains(&"per-event-timing"),
        "{ids:?}"
    );
    let env_ids = common::finding_ids(&slow["findings"]);
    assert!(env_ids.contains(&"clock-read-syscall"), "{env_ids:?}");
    // Without the shim, a machine whose vDSO read is well below the syscall raises nothing.
    let cost = &fast["env"]["clock"];
    let (vdso, sys) = (
        cost["read_cost_ns"]["monotonic"].as_f64().unwrap(),
        cost["syscall_cost_ns"]["monotonic"].as_f64().unwrap(),
    );
    if vdso < 0.5 * sys {
        let fast_ids = common::finding_ids(&fast["findings"]);
        assert!(
            !fast_ids.contains(&"clock-read-syscall"),
            "{vdso} ns vs {sys} ns: {fast_ids:?}"
        );
    }
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn current() -> String {
    std::fs::read_to_string(CURRENT).unwrap().trim().to_string()
}

/// Root, and a clocksource file it may write (fails otherwise: these tests are ignored
/// unless run as root).
fn needs_writable_clocksource() {
    common::needs_root();
    assert!(
        std::fs::OpenOptions::new()
            .write(true)
            .open(CURRENT)
            .is_ok(),
        "{CURRENT} is not writable"
    );
}

#[test]
#[ignore = "needs root"]
fn the_sweep_measures_every_clocksource_and_restores_the_original() {
    needs_writable_clocksource();
    let _one_at_a_time = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = current();
    let env = TestEnv::new();
    let doc = env.run(&["timers", "--clocksource-sweep", "--samples", "3"]);
    assert_eq!(current(), before, "clocksource not restored");
    let available = std::fs::read_to_string(
        "/sys/devices/system/clocksource/clocksource0/available_clocksource",
    )
    .unwrap();
    for cs in available.split_whitespace() {
        let tagged = doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["params"]["clocksource"] == cs)
            .count();
        assert!(tagged >= 3, "{cs}: {tagged} results");
    }
}

#[test]
#[ignore = "needs root"]
fn ctrl_c_during_the_sweep_restores_the_clocksource() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    needs_writable_clocksource();
    let available = std::fs::read_to_string(
        "/sys/devices/system/clocksource/clocksource0/available_clocksource",
    )
    .unwrap();
    assert!(
        available.split_whitespace().count() >= 2,
        "one clocksource only ({available}): nothing to switch to"
    );
    let _one_at_a_time = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = current();
    let env = TestEnv::new();
    let child = Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .args(["run", "timers", "--clocksource-sweep", "--samples", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt while another clocksource is in force.
    let t0 = std::time::Instant::now();
    while current() == before && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_ne!(current(), before, "the sweep never switched");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(current(), before, "clocksource not restored after Ctrl-C");
}

#[test]
fn the_sweep_is_refused_without_root_and_outside_timers() {
    use std::os::unix::process::CommandExt;
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args(["run", "ctx", "--clocksource-sweep"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("applies to the timers suite"));
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("truebench"));
    cmd.args(["run", "timers", "--clocksource-sweep"])
        .env("TRUEBENCH_DB", "/nonexistent/never-written.db");
    if is_root() {
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().expect("run the binary (as nobody when root)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: --clocksource-sweep needs root"),
        "{err}"
    );
}
