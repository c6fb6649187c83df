//! `truebench experiment` through the binary: a CPU-bound command under `os` and
//! `compact:1` in shuffled repeated order, with its figures, placement and comparison;
//! `--instances 2` with its makespan and partitions, `per-node` skipped on one node with
//! its reason and planned on a two-node tree; the metric file; bad input and Ctrl-C leave
//! nothing running.

mod common;

use common::{assert_refused, TestEnv};
use serde_json::Value;
use std::time::{Duration, Instant};

/// A short CPU-bound command (about 0.05-0.3 s of shell arithmetic here).
const BUSY: &[&str] = &[
    "sh",
    "-c",
    "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done",
];

fn variant<'a>(doc: &'a Value, policy: &str) -> &'a Value {
    doc["experiment"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["policy"] == policy)
        .unwrap_or_else(|| panic!("no variant {policy}"))
}

#[test]
fn five_runs_of_two_policies_in_shuffled_order_with_their_figures() {
    let env = TestEnv::new();
    let doc = env.json(
        &[
            &[
                "experiment",
                "--runs",
                "5",
                "--policy",
                "os,compact:1",
                "--json",
                "--",
            ][..],
            BUSY,
        ]
        .concat(),
    );
    truebench::result::validate(&doc).unwrap();
    let e = &doc["experiment"];
    assert_eq!(e["order"].as_array().unwrap().len(), 10);
    for p in ["os", "compact:1"] {
        let v = variant(&doc, p);
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 5);
        let ran = e["order"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o.as_str().unwrap().starts_with(&format!("{p} (")))
            .count();
        assert_eq!(ran, 5);
        for r in runs {
            let i = &r["instances"][0];
            let wall = i["wall_s"].as_f64().unwrap();
            let cpu = i["user_s"].as_f64().unwrap() + i["system_s"].as_f64().unwrap();
            assert!((0.001..30.0).contains(&wall), "{wall} s");
            // A single-threaded command cannot use more CPU than wall time (+ a tick).
            assert!(cpu > 0.0 && cpu <= wall + 0.02, "cpu {cpu} s wall {wall} s");
            assert!(i["voluntary"].as_u64().is_some());
        }
        let m = &v["makespan_s"];
        assert!(m["ci95_low"].as_f64() <= m["median"].as_f64());
        assert!(m["median"].as_f64() <= m["ci95_high"].as_f64());
    }
    // compact:1 confines the command to one CPU, the first of the compact order.
    let cpus = variant(&doc, "compact:1")["placement"][0]["cpus"].clone();
    assert_eq!(cpus.as_array().unwrap().len(), 1, "{cpus}");
    assert!(variant(&doc, "os")["placement"][0]["cpus"].is_null());
    let c = &e["comparison"];
    assert!(["os", "compact:1"].contains(&c["winner"].as_str().unwrap()));
    assert!(c["others"].as_object().unwrap().len() == 1);
    assert!(e["rt_throttling"]["note"].as_str().unwrap().len() > 10);
    // Stored, and shown through the one view.
    let shown = env.text(&["show", "latest"]);
    assert!(
        shown.contains("Experiment:") && shown.contains("compact:1: wall"),
        "{shown}"
    );
    // An experiment is data of its own: the text never says there are none.
    assert!(!shown.contains("No results."), "{shown}");
}

/// A CPU-bound command of about 0.3-1 s here: long enough to be sampled many times.
const LONGER_BUSY: &[&str] = &[
    "sh",
    "-c",
    "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done",
];

#[test]
fn the_text_says_where_each_variants_threads_were_seen_and_counts_are_whole() {
    let env = TestEnv::new();
    let doc = env.json(
        &[
            &[
                "experiment",
                "--runs",
                "3",
                "--policy",
                "os,pinned",
                "--json",
                "--",
            ][..],
            LONGER_BUSY,
        ]
        .concat(),
    );
    truebench::result::validate(&doc).unwrap();
    let usable: Vec<u64> = doc["env"]["cpus"]["usable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    let seen = |p: &str| -> Vec<u64> {
        let mut v: Vec<u64> = variant(&doc, p)["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["instances"][0]["cpus_seen"].as_array().unwrap().clone())
            .map(|c| c.as_u64().unwrap())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // Pinned: the one thread is bound to the first CPU of the spread order, every run.
    let pinned = seen("pinned");
    assert_eq!(pinned.len(), 1, "pinned ran on {pinned:?}");
    assert!(usable.contains(&pinned[0]));
    let os = seen("os");
    assert!(
        !os.is_empty() && os.iter().all(|c| usable.contains(c)),
        "{os:?}"
    );
    let shown = env.text(&["show", "latest"]);
    let line = |p: &str| {
        let i = shown
            .lines()
            .position(|l| l.trim_start().starts_with(&format!("{p}: wall")))
            .unwrap_or_else(|| panic!("no line for {p}: {shown}"));
        // The figures may wrap onto further lines; the placement line follows them.
        let rest: Vec<&str> = shown.lines().skip(i).collect();
        let j = rest
            .iter()
            .position(|l| l.trim_start().starts_with("placed on"))
            .unwrap_or_else(|| panic!("no placement line for {p}: {shown}"));
        let figures: Vec<&str> = rest[..j].iter().map(|l| l.trim()).collect();
        (figures.join(" "), rest[j].to_string())
    };
    let (figures, placed) = line("pinned");
    assert!(
        placed.contains(&format!("threads seen on CPUs [{}]", pinned[0])),
        "{placed}"
    );
    assert!(placed.contains("placed on"), "{placed}");
    // Counts are whole numbers: "switches 52 [21, 93]", never "52.00 [21.00, 93.00]".
    let switches = figures.split("switches ").nth(1).unwrap();
    let switches = &switches[..switches.find(';').unwrap()];
    assert!(
        switches
            .chars()
            .all(|c| c.is_ascii_digit() || " [],".contains(c)),
        "{figures}"
    );
    let (_, placed) = line("os");
    assert!(placed.contains("threads seen on CPUs ["), "{placed}");
}

#[test]
fn two_instances_report_a_makespan_and_per_node_is_skipped_on_one_node() {
    let env = TestEnv::new();
    let doc = env.json(
        &[
            &[
                "experiment",
                "--runs",
                "2",
                "--instances",
                "2",
                "--policy",
                "compact:1,per-node",
                "--json",
                "--",
            ][..],
            BUSY,
        ]
        .concat(),
    );
    truebench::result::validate(&doc).unwrap();
    let v = variant(&doc, "compact:1");
    let place = v["placement"].as_array().unwrap();
    assert_eq!(place.len(), 2);
    assert_ne!(
        place[0]["cpus"], place[1]["cpus"],
        "each instance its own CPU"
    );
    for r in v["runs"].as_array().unwrap() {
        let walls: Vec<f64> = r["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["wall_s"].as_f64().unwrap())
            .collect();
        assert_eq!(walls.len(), 2);
        let makespan = r["makespan_s"].as_f64().unwrap();
        let longest = walls.iter().cloned().fold(0.0, f64::max);
        assert!(makespan >= longest * 0.999, "{makespan} < {longest}");
    }
    assert_eq!(v["instance_wall_s"].as_array().unwrap().len(), 2);
    let nodes = doc["env"]["numa"]["nodes"]
        .as_array()
        .map_or(1, |n| n.len());
    if nodes == 1 {
        let sk = doc["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["case"] == "per-node")
            .expect("per-node skipped on one node");
        assert!(
            sk["reason"].as_str().unwrap().contains("1 node with"),
            "{sk}"
        );
    }
}

#[test]
fn per_node_partitions_a_two_node_plan_and_degenerates_on_one() {
    let env = TestEnv::new();
    let two = common::fixture("epyc-multi-llc-2node");
    let plan = env.json(&[
        "plan",
        "--root",
        two.to_str().unwrap(),
        "--policy",
        "per-node",
        "--instances",
        "2",
        "--json",
    ]);
    let cases = plan["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    let a = cases[0]["cpus"].as_array().unwrap();
    let b = cases[1]["cpus"].as_array().unwrap();
    assert!(a.iter().all(|c| !b.contains(c)), "disjoint nodes");
    assert!(cases[0]["why"]
        .as_str()
        .unwrap()
        .contains("memory on node [0]"));
    assert!(cases[1]["why"]
        .as_str()
        .unwrap()
        .contains("memory on node [1]"));
    let one = common::fixture("this-vm");
    let plan = env.json(&[
        "plan",
        "--root",
        one.to_str().unwrap(),
        "--policy",
        "per-node",
        "--instances",
        "2",
        "--json",
    ]);
    let skipped = plan["cases"][0]["skipped"].as_str().unwrap();
    assert!(skipped.contains("1 node with"), "{skipped}");
}

#[test]
fn the_metric_file_is_read_after_each_run() {
    let env = TestEnv::new();
    let f = env.dir.path().join("done-{i}");
    let doc = env.json(&[
        "experiment",
        "--runs",
        "3",
        "--metric-file",
        f.to_str().unwrap(),
        "--json",
        "--",
        "sh",
        "-c",
        &format!("echo 42 > {}", env.dir.path().join("done-1").display()),
    ]);
    let m = &variant(&doc, "os")["metric"];
    assert_eq!(m["median"].as_f64(), Some(42.0), "{m}");
    assert_eq!(m["n"].as_u64(), Some(3));
}

#[test]
fn bad_commands_and_policies_are_refused_in_one_line() {
    let env = TestEnv::new();
    for args in [
        vec!["experiment", "--", "/nonexistent/job"],
        vec!["experiment", "--", "no-such-command-here"],
        vec!["experiment", "--policy", "fast", "--", "true"],
        vec!["experiment", "--policy", "os,os", "--", "true"],
        vec![
            "experiment",
            "--policy",
            "per-node",
            "--instances",
            "64",
            "--",
            "true",
        ],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        assert_refused(&env, &out, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.lines().count() <= 3, "{args:?}: {err}");
    }
    // A failing command has no time to compare: exit 1, saying how it ended.
    let out = env
        .cmd()
        .args(["experiment", "--runs", "1", "--", "sh", "-c", "exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exit status 3"), "{err}");
}

#[test]
fn a_real_time_class_without_the_privilege_is_refused_before_anything_starts() {
    if !nix::unistd::geteuid().is_root() {
        // Already unprivileged: the plain command must be refused.
        let env = TestEnv::new();
        let out = env
            .cmd()
            .args(["experiment", "--policy", "fifo:10", "--", "true"])
            .output()
            .unwrap();
        assert_refused(&env, &out, &"fifo:10");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let marker = dir.path().join("started");
    let bin = assert_cmd::cargo::cargo_bin("truebench");
    let out = std::process::Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["experiment", "--policy", "os,fifo:10", "--", "touch"])
        .arg(&marker)
        .env("TRUEBENCH_DB", dir.path().join("db"))
        .env("TRUEBENCH_LOCK", dir.path().join("lock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error:") && err.contains("real-time"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran");
    assert!(!dir.path().join("db").exists());
}

/// `sleep TAG` processes (not the shell or truebench whose arguments hold the tag).
fn running_with(tag: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{tag}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c) == wanted)
                .unwrap_or(false)
        })
        .collect()
}

#[test]
fn ctrl_c_stops_the_command_and_keeps_finished_runs() {
    let env = TestEnv::new();
    let tag = format!("7{}.25", std::process::id() % 1000);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .args([
            "experiment",
            "--runs",
            "20",
            "--policy",
            "os,pinned",
            "--json",
            "--",
        ])
        .args(["sh", "-c", &format!("sleep 0.3; sleep {tag}")])
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while running_with(&tag).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!running_with(&tag).is_empty(), "the command never started");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["interrupted"], true);
    assert!(running_with(&tag).is_empty(), "left running");
}

#[test]
#[ignore = "needs root"]
fn a_capacity_variant_holds_the_command_to_its_quota_and_leaves_no_cgroup() {
    common::needs_root();
    let env = TestEnv::new();
    let doc = env.json(&[
        "experiment",
        "--runs",
        "2",
        "--policy",
        "os,cap:0.25/1",
        "--json",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done",
    ]);
    truebench::result::validate(&doc).unwrap();
    // A quarter of a CPU per period: the loop's CPU time takes about four times as long in
    // wall time (the first period's quota is spent at once, hence the margin).
    for r in variant(&doc, "cap:0.25/1")["runs"].as_array().unwrap() {
        let i = &r["instances"][0];
        let wall = i["wall_s"].as_f64().unwrap();
        let cpu = i["user_s"].as_f64().unwrap() + i["system_s"].as_f64().unwrap();
        assert!(cpu > 0.05, "{i}");
        assert!(
            wall >= 2.5 * cpu,
            "capped at 0.25 CPU: wall {wall} s for {cpu} CPU-s"
        );
    }
    // Unconfined, the same loop is not held back that way.
    let os = &variant(&doc, "os")["runs"][0]["instances"][0];
    let (wall, cpu) = (
        os["wall_s"].as_f64().unwrap(),
        os["user_s"].as_f64().unwrap() + os["system_s"].as_f64().unwrap(),
    );
    assert!(cpu > 0.05 && wall < 10.0 * cpu, "{os}");
    common::assert_no_cgroup_left();
}
