//! Exit codes and refusals: no panic (101) on odd arguments or a failing stdout, exit 2 with
//! a sentence and nothing written for input that cannot be right, and `record` passing on
//! the recorded command's own status.

use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

use common::TestEnv as Env;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `truebench` as a std Command (for stdout redirections), bound to the test's files.
fn raw(env: &Env) -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"));
    c.env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock());
    c
}

fn no_panic(out: &std::process::Output) {
    assert_ne!(out.status.code(), Some(101), "{}", stderr(out));
    assert!(!stderr(out).contains("panicked"), "{}", stderr(out));
}

/// Defect 11: a non-UTF-8 argument is a usage error (exit 2), not a panic.
#[test]
fn non_utf8_arguments_are_refused_not_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let bad = std::ffi::OsStr::from_bytes(b"\xff");
    for args in [
        vec!["show".as_ref(), bad],
        vec![bad],
        vec!["run".as_ref(), bad],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        no_panic(&out);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(!env.db().exists());
    }
}

/// Defect 12: stdout on a full device is exit 1 with one line; a closed pipe (`| head -1`)
/// ends quietly with exit 0; neither panics.
#[test]
fn stdout_failures_end_cleanly() {
    let env = Env::new();
    env.json(&["record", "--interval", "0.1", "--duration", "0.2", "--json"]);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = raw(&env).arg("history").stdout(full).output().unwrap();
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("error: cannot write to standard output"));
    for args in [
        vec!["show", "latest", "--json"],
        vec!["history"],
        vec!["probe"],
    ] {
        let (r, w) = nix::unistd::pipe().unwrap();
        drop(r);
        let out = raw(&env)
            .args(&args)
            .stdout(Stdio::from(w))
            .output()
            .unwrap();
        no_panic(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

/// Defect 13: `run ''` and `run ,,,` name no suite: exit 2, no empty run stored.
#[test]
fn an_empty_suite_list_is_refused() {
    let env = Env::new();
    for list in ["", ",,,", " , "] {
        let out = env.cmd().args(["run", list]).output().unwrap();
        common::assert_refused(&env, &out, &list);
        assert!(stderr(&out).contains("no suite"), "{}", stderr(&out));
    }
}

/// `__round` (the child of a fresh-process round) refuses what no round can be measured
/// with: one `error:` line, exit 2, nothing on stdout (where its parent reads results).
#[test]
fn a_child_round_refuses_bad_input_with_one_line() {
    let env = Env::new();
    let ok = ["timers.clock-read@1", "2", "2e6", "20"];
    let bad = [
        ["probe.nothing@1", "2", "2e6", "20"],
        ["memory.latency@1", "2", "2e6", "20"],
        ["timers.clock-read@1", "0", "2e6", "20"],
        ["timers.clock-read@1", "2", "NaN", "20"],
        ["timers.clock-read@1", "2", "inf", "20"],
        ["timers.clock-read@1", "2", "0", "20"],
        ["timers.clock-read@1", "2", "-1", "20"],
        ["memory.per-event@1", "2", "2e6", "-1"],
        ["memory.per-event@1", "2", "2e6", "NaN"],
    ];
    let run = |a: [&str; 4]| {
        env.cmd()
            .args(["__round", a[0], "--samples", a[1]])
            .args(["--min-batch-ns", a[2], "--clock-cost-ns", a[3]])
            .output()
            .unwrap()
    };
    for a in bad {
        let out = run(a);
        no_panic(&out);
        common::assert_refused(&env, &out, &a);
        assert!(out.stdout.is_empty(), "{a:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{a:?}: {}", stderr(&out));
    }
    let out = run(ok);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert!(!lines.is_empty());
    for l in &lines {
        serde_json::from_str::<serde_json::Value>(l).unwrap();
    }
}

/// Defect 16: `record -- false` has no 0 s interval and claims no recorder share from a
/// few milliseconds (it said "recorder used 4871.89%").
#[test]
fn a_command_that_exits_at_once_gives_no_absurd_figures() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["record", "--json", "--", "false"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    truebench::result::validate(&doc).unwrap();
    let rec = &doc["recording"];
    for r in rec["rows"].as_array().unwrap() {
        assert!(r["interval_s"].as_f64().unwrap() >= 0.25, "{r}");
    }
    match rec["recorder_cpu_share"].as_f64() {
        Some(s) => assert!(s < 1.0, "{s}"),
        None => assert!(rec["unavailable"]["recorder_cpu_share"].is_string()),
    }
    let findings = common::finding_ids(&doc["findings"]);
    assert!(!findings.contains(&"recorder-overhead"), "{findings:?}");
}

/// Defect 17: `--duration` shorter than `--interval` ends the recording at the duration.
#[test]
fn a_duration_shorter_than_the_interval_is_honoured() {
    let env = Env::new();
    let t = Instant::now();
    let doc = env.json(&["record", "--interval", "6", "--duration", "0.5", "--json"]);
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "ran {:?}",
        t.elapsed()
    );
    let d = doc["recording"]["duration_s"].as_f64().unwrap();
    assert!((0.45..1.5).contains(&d), "{d} s");
    assert_eq!(doc["recording"]["rows"].as_array().unwrap().len(), 1);
}

/// Defect 18: the recorded command's status is truebench's exit code (as `time` does),
/// and a death by signal is stored as the signal, not null.
#[test]
fn record_passes_on_the_commands_exit_status() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "record",
            "--interval",
            "0.2",
            "--",
            "sh",
            "-c",
            "sleep 0.3; exit 7",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let out = env
        .cmd()
        .args([
            "record",
            "--interval",
            "0.2",
            "--json",
            "--",
            "sh",
            "-c",
            "sleep 0.3; kill -9 $$",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(128 + 9), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &doc["recording"]["target"];
    assert_eq!(t["exit_signal"], 9, "{t}");
    assert_eq!(t["stopped_by_truebench"], false);
    // Stopped by truebench at --duration: exit 0, and said so.
    let doc = env.json(&["record", "--duration", "0.3", "--json", "--", "sleep", "30"]);
    assert_eq!(doc["recording"]["target"]["stopped_by_truebench"], true);
    assert_eq!(
        env.json(&["history", "--json"]).as_array().unwrap().len(),
        3
    );
}

/// Defect 20: a CPU quota the kernel cannot set is refused with a sentence (exit 2), not
/// a raw errno after the run started.
#[test]
fn an_impossible_cpu_quota_is_refused() {
    let env = Env::new();
    for q in ["0.00001", "0.005", "0"] {
        let out = env
            .cmd()
            .args([
                "loadstep",
                "--cpu-quota",
                q,
                "--cpuset-width",
                "1",
                "--rates",
                "100",
            ])
            .output()
            .unwrap();
        common::assert_refused(&env, &out, &q);
        assert!(
            stderr(&out).contains("the kernel's smallest"),
            "{}",
            stderr(&out)
        );
    }
}

/// Issue 37 item 5: a quota above its cpuset's width is never reached (the group never
/// throttles) and ran silently in loadstep while predict called it unusable. Every place
/// a capacity setting is born refuses it with the one rule's message, exit 2, nothing
/// written: loadstep's --cpu-quota/--cpuset-width, a `cap:Q/W` policy of loadstep and
/// experiment, predict's --capacity.
#[test]
fn a_quota_above_its_width_is_refused_the_same_way_everywhere() {
    let env = Env::new();
    let rule =
        "a quota of 5.00 CPUs on a cpuset of 1 CPU cannot be used: the quota is at most the width";
    for args in [
        vec![
            "loadstep",
            "--cpu-quota",
            "5",
            "--cpuset-width",
            "1",
            "--rates",
            "100",
        ],
        vec!["loadstep", "--policy", "cap:5/1", "--rates", "100"],
        vec!["experiment", "--policy", "cap:5/1", "--", "true"],
        vec!["predict", "latest", "--capacity", "5/1"],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        common::assert_refused(&env, &out, &args);
        assert!(stderr(&out).contains(rule), "{args:?}: {}", stderr(&out));
    }
}

/// Defect 23: a list naming a value twice (`--policy os,os`) is refused: it ran the work
/// twice and compared os with itself.
#[test]
fn repeated_list_values_are_refused() {
    let env = Env::new();
    for args in [
        vec!["loadstep", "--policy", "os,os", "--rates", "100"],
        vec!["loadstep", "--workers", "1,1", "--rates", "100"],
        vec!["run", "classic", "--copies", "1,2,1"],
        vec!["run", "ctx", "--placement", "os,same-cpu,os"],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        common::assert_refused(&env, &out, &args);
        assert!(stderr(&out).contains("twice"), "{}", stderr(&out));
    }
}
