//! The ctx suite on this machine: a short real run per placement with plausibility bounds,
//! the observed placement of pinned runs, the os finding, and bad placement options.

mod common;

use common::TestEnv;
use serde_json::Value;

fn run(env: &TestEnv, args: &[&str]) -> Value {
    env.run(&[&["ctx", "--samples", "5"], args].concat())
}

#[test]
fn pinned_runs_stay_where_they_were_put_and_cost_plausible_times() {
    let env = TestEnv::new();
    let doc = run(
        &env,
        &["--placement", "same-cpu,same-llc,os", "--mode", "process"],
    );
    let results = doc["results"].as_array().unwrap();
    let usable = doc["env"]["cpus"]["usable"].as_array().unwrap().len();
    for r in results {
        assert_eq!(r["benchmark"], "ctx.pipe@1");
        assert_eq!(r["unit"], "ns/round-trip");
        let median = r["stats"]["median"].as_f64().unwrap();
        // A pipe round trip is two writes, two reads and two wake-ups: 0.2 µs to 5 ms.
        assert!(
            (200.0..5e6).contains(&median),
            "{}: {median} ns",
            r["placement"]["name"]
        );
        let obs = &r["placement"]["observed"];
        assert_eq!(obs["observations"], 5);
        assert!(r["derived"]["round_trips_per_s"].as_f64().unwrap() > 0.0);
        if let Some(cpus) = r["placement"]["cpus"].as_array() {
            // Pinned: every observation saw each task on its own CPU.
            assert_eq!(
                obs["tasks"]["a"]["cpus_seen"],
                Value::Array(vec![cpus[0].clone()]),
                "{obs}"
            );
            assert_eq!(
                obs["tasks"]["b"]["cpus_seen"],
                Value::Array(vec![cpus[1].clone()]),
                "{obs}"
            );
            let want = if cpus[0] == cpus[1] { 1.0 } else { 0.0 };
            assert_eq!(obs["colocated_fraction"].as_f64().unwrap(), want);
        }
    }
    // Requested placements, in order, less those listed as not applicable here.
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["placement"]["name"].as_str().unwrap())
        .collect();
    let skipped: Vec<&str> = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["case"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = ["same-cpu", "same-llc", "os"]
        .into_iter()
        .filter(|n| !skipped.contains(n))
        .collect();
    assert_eq!(names, want);
    if usable >= 2 && skipped.is_empty() {
        let same = results[0]["stats"]["median"].as_f64().unwrap();
        let cross = results[1]["stats"]["median"].as_f64().unwrap();
        // A loose plausibility bound only: crossing CPUs adds a wake-up (an IPI unless the
        // idle CPU polls), so it is never far cheaper; the observed CPUs above prove placement.
        assert!(
            cross > same * 0.5,
            "same-cpu {same} ns, same-llc {cross} ns"
        );
    }
    // The os row always carries its explanation.
    let os = results
        .iter()
        .find(|r| r["placement"]["name"] == "os")
        .unwrap();
    let ids = common::finding_ids(&os["findings"]);
    assert!(
        ids.iter().any(|i| i.starts_with("os-placement-")),
        "os row without a placement finding: {ids:?}"
    );
}

#[test]
fn every_placement_is_run_or_listed_with_its_reason() {
    let env = TestEnv::new();
    let doc = run(&env, &["--mode", "thread"]);
    let mut seen: Vec<String> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["placement"]["name"].as_str().unwrap().to_string())
        .collect();
    for s in doc["skipped"].as_array().unwrap() {
        assert!(!s["reason"].as_str().unwrap().is_empty());
        seen.push(s["case"].as_str().unwrap().to_string());
    }
    seen.sort();
    let mut all: Vec<String> = truebench::placement::NAMES
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.sort();
    assert_eq!(seen, all);
}

#[test]
fn explicit_cpus_and_footprint() {
    let env = TestEnv::new();
    let doc = run(
        &env,
        &["--cpus", "0", "--mode", "thread", "--footprint", "16"],
    );
    let r = &doc["results"].as_array().unwrap()[0];
    assert_eq!(r["placement"]["name"], "cpus");
    assert_eq!(r["placement"]["cpus"], serde_json::json!([0, 0]));
    assert_eq!(r["params"]["footprint_kb"], 16);
}

#[test]
fn bad_placement_options_exit_2_and_write_nothing() {
    let env = TestEnv::new();
    for args in [
        vec!["--placement", "diagonal"],
        vec!["--cpus", "0,9999"],
        vec!["--cpus", "0,1,2"],
        vec!["--cpus", "x"],
        vec!["--mode", "fiber"],
        vec!["--footprint", "-3"],
    ] {
        let out = env.cmd().args(["run", "ctx"]).args(&args).output().unwrap();
        common::assert_refused(&env, &out, &args);
    }
}

/// Processes (other than `except`) whose environment holds `marker`.
fn processes_with(marker: &str, except: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != except)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| String::from_utf8_lossy(&env).contains(marker))
                .unwrap_or(false)
        })
        .collect()
}

#[test]
fn ctrl_c_in_process_mode_reaps_the_child() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let env = TestEnv::new();
    let marker = format!("TRUEBENCH_TEST_MARKER={}", std::process::id());
    let (k, v) = marker.split_once('=').unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .env(k, v)
        .args([
            "run",
            "ctx",
            "--mode",
            "process",
            "--placement",
            "same-llc,same-cpu",
            "--samples",
            "1000",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the forked echo task exists, then interrupt.
    let t0 = std::time::Instant::now();
    while processes_with(&marker, pid).is_empty() && t0.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        !processes_with(&marker, pid).is_empty(),
        "no forked task seen"
    );
    kill(Pid::from_raw(pid as i32), Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(
        processes_with(&marker, 0),
        Vec::<u32>::new(),
        "tasks left behind after Ctrl-C"
    );
}
