//! `truebench ab`: settings refused before anything runs (exit 2, one line), a short A/A
//! stored as two tagged documents whose rows `ab` and `compare` test on their paired
//! rounds, and (root) a system-wide setting put back by the next command after the run
//! that changed it was killed with SIGKILL.

mod common;

use common::TestEnv;
use std::time::{Duration, Instant};

#[test]
fn settings_this_host_cannot_take_are_refused_before_anything_runs() {
    let env = TestEnv::new();
    for (args, says) in [
        (vec!["ab", "thp=sometimes"], "always, madvise or never"),
        (vec!["ab", "speed=max", "timers"], "unknown setting"),
        (vec!["ab", "cpus=4096", "timers"], "CPU 4096 is not among"),
        (vec!["ab", "nice=1,class=batch"], "class twice"),
        (
            vec!["ab", "clocksource=no-such-clock", "timers"],
            "clocksource",
        ),
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        common::assert_refused(&env, &out, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn an_a_a_is_stored_as_two_documents_whose_rows_are_tested_on_paired_rounds() {
    let env = TestEnv::new();
    let c = env.json(&["ab", "nice=0", "timers", "--budget", "8s", "--json"]);
    assert_eq!(c["schema"], "truebench.compare/1");
    let rows = c["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{c}");
    let mut tested = 0;
    for r in rows {
        assert_eq!(r["noise"]["basis"], "paired", "{r}");
        if let Some(mde) = r["mde"].as_f64() {
            tested += 1;
            assert!(mde > 0.0 && mde.is_finite(), "{r}");
            assert!(r["ci"].is_array(), "{r}");
        }
    }
    assert!(tested > 0, "no row tested: {c}");
    let (a, b) = (c["a"].as_str().unwrap(), c["b"].as_str().unwrap());
    for (id, side, settings) in [(a, "a", "as found"), (b, "b", "nice=0")] {
        let doc = env.json(&["export", id]);
        assert_eq!(doc["tags"]["ab"], a, "{id}");
        assert_eq!(doc["tags"]["ab-side"], side, "{id}");
        assert_eq!(doc["tags"]["ab-settings"], settings, "{id}");
    }
    // compare reads the stored pair as ab printed it (the rounds' medians as stored, to
    // their digits).
    let again = env.json(&["compare", a, b, "--json"]);
    for (x, y) in rows.iter().zip(again["rows"].as_array().unwrap()) {
        assert_eq!(x["noise"]["basis"], y["noise"]["basis"]);
        if let (Some(m), Some(n)) = (x["mde"].as_f64(), y["mde"].as_f64()) {
            assert!((m - n).abs() <= 1e-3 * m, "{x} against {y}");
        }
    }
}

/// The THP file's current mode and the two others.
fn thp_modes() -> (String, Vec<String>) {
    let text = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap();
    let now = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap()
        .to_string();
    let others = ["always", "madvise", "never"]
        .iter()
        .filter(|m| **m != now)
        .map(|m| m.to_string())
        .collect();
    (now, others)
}

#[test]
#[ignore = "needs root"]
fn thp_left_changed_by_a_killed_ab_run_is_restored_by_the_next_command() {
    common::needs_root();
    let env = TestEnv::new();
    let (original, others) = thp_modes();
    // Both sides away from the original: whenever the kill lands, THP is not as found.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_truebench"))
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .args(["ab", &format!("thp={}", others[0]), "--a"])
        .arg(format!("thp={}", others[1]))
        .args(["timers", "--budget", "60s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while thp_modes().0 == original {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "ab never changed THP"
        );
        assert!(child.try_wait().unwrap().is_none(), "ab ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    let left = thp_modes().0;
    assert_ne!(left, original, "THP restored by a killed process?");
    let out = env.cmd().args(["history"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(thp_modes().0, original, "not restored: {err}");
    assert!(
        err.contains(&format!("restored THP to {original}"))
            && err.contains(&format!("left it at {left}")),
        "{err}"
    );
    // Said once: the next command finds nothing to do.
    let out = env.cmd().args(["history"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("restored THP"));
}

/// Every `truebench-PID-ab-N` group left in the cgroup hierarchies mounted here.
fn ab_groups() -> Vec<String> {
    let mut left = vec![];
    for base in [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/cpuset",
    ] {
        if let Ok(rd) = std::fs::read_dir(base) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with("truebench-") && n.contains("-ab-") {
                    left.push(format!("{base}/{n}"));
                }
            }
        }
    }
    left
}

/// A cgroup setting: B's document holds the machine as B saw it, a case B cannot place is
/// B's skipped case with its reason (and only in A), and no group is left afterwards.
#[test]
#[ignore = "needs root"]
fn a_cgroup_setting_is_seen_by_side_b_only_and_its_group_removed() {
    common::needs_root();
    let env = TestEnv::new();
    let before = ab_groups();
    let c = env.json(&[
        "ab",
        "cpuset=0,quota=0.5",
        "ctx",
        "--budget",
        "15s",
        "--json",
    ]);
    assert_eq!(ab_groups(), before, "a group was left");
    let (a, b) = (c["a"].as_str().unwrap(), c["b"].as_str().unwrap());
    let (da, db) = (env.json(&["export", a]), env.json(&["export", b]));
    assert_eq!(
        db["env"]["cpus"]["usable"],
        serde_json::json!([0]),
        "{}",
        db["env"]["cpus"]
    );
    assert_eq!(db["env"]["cpus"]["cgroup_quota"], 0.5);
    assert_ne!(da["env"]["cpus"]["cgroup_quota"], 0.5);
    let diffs = c["env_differences"].to_string();
    assert!(
        diffs.contains("usable CPUs") && diffs.contains("CPU quota"),
        "{diffs}"
    );
    if da["env"]["cpus"]["usable"].as_array().unwrap().len() > 1 {
        // A two-CPU placement cannot exist on B's one CPU: said as B's, not A's.
        let only_a = c["only_in_a"].to_string();
        assert!(only_a.contains("B did not run it"), "{only_a}");
        let (sa, sb) = (
            da["skipped"].as_array().unwrap(),
            db["skipped"].as_array().unwrap(),
        );
        let only_b: Vec<_> = sb.iter().filter(|s| !sa.contains(s)).collect();
        assert!(!only_b.is_empty(), "A {sa:?}, B {sb:?}");
        assert!(
            sa.iter()
                .all(|s| !s["reason"].to_string().contains("only 1 usable CPU")),
            "B's skipped cases in A's document: {sa:?}"
        );
    }
    for r in c["rows"].as_array().unwrap() {
        assert_eq!(r["noise"]["basis"], "paired", "{r}");
    }
}
