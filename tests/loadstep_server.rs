//! `loadstep --http --server`: truebench starts nginx (a temporary config on a free
//! loopback port) for each variant under that variant's policy, drives the steps, costs the
//! server's process tree per request, and leaves no nginx behind, also on Ctrl-C; a server
//! that never answers, exits at once or cannot be executed is one clear line; a SIGKILLed
//! truebench leaves nothing of the server (its watchdog), a setsid child included.

mod common;

use common::{nginx_config, TestEnv};
use std::path::Path;
use std::time::{Duration, Instant};

/// nginx processes started with this test's config.
fn nginx_of(dir: &Path) -> Vec<i32> {
    let tag = dir.join("nginx.conf").display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|c| {
                    let c = String::from_utf8_lossy(&c);
                    c.contains("nginx") && c.contains(&tag)
                })
                .unwrap_or(false)
        })
        .collect()
}

fn args(port: u16, server: &str, policies: &str) -> Vec<String> {
    [
        "loadstep",
        "--http",
        &format!("http://127.0.0.1:{port}/"),
        "--server",
        server,
        "--policy",
        policies,
        "--rates",
        "200,400",
        "--step-duration",
        "0.4",
        "--warmup",
        "0.1",
        "--workers",
        "2",
        "--repeat",
        "1",
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Each variant's server started under its policy, its steps costed per request, the
/// variants compared and every server stopped. A step the load generator itself lagged in
/// (a loud hour: the schedule lag p99 past 10 ms) is invalid, as it should be: the run is
/// tried again, up to three times; if every try had such a step, what the test is about is
/// checked on the last one, each such step left out of the comparison.
fn run_policies(policies: &str) {
    let env = TestEnv::new();
    let (port, server) = nginx_config(env.dir.path());
    let args = args(port, &server, policies);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (doc, lagged) = common::loadstep_until_valid(&env, &args);
    if !lagged.is_empty() {
        eprintln!("the load generator lagged in these tries: {lagged:?}");
    }
    truebench::result::validate(&doc).unwrap();
    let ls = &doc["loadstep"];
    let variants = ls["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    for v in variants {
        for (i, s) in v["steps"].as_array().unwrap().iter().enumerate() {
            if s["valid"] != true {
                assert_eq!(ls["comparison"]["steps"][i]["compared"], false, "{s}");
            }
            // The launched server's tree is costed per request: its context switches (its
            // CPU time is in clock ticks, too coarse for 80 requests of a few µs).
            let cs = s["per_tx"]["context_switches"].as_f64();
            assert!(cs.is_some_and(|c| c > 0.0 && c < 1000.0), "{s}");
        }
    }
    // A winner wherever a step of every variant was valid.
    let compared = ls["comparison"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["compared"] == true);
    assert_eq!(ls["comparison"]["winner"].is_string(), compared, "{ls}");
    assert!(nginx_of(env.dir.path()).is_empty(), "nginx left running");
}

#[test]
fn nginx_under_os_and_pinned_is_compared_and_stopped() {
    run_policies("os,pinned");
}

#[test]
#[ignore = "needs root"]
fn nginx_under_nice_and_fifo_is_compared_and_stopped() {
    common::needs_root();
    run_policies("nice:10,fifo:10");
    // No real-time thread is left anywhere with nginx's name.
    assert!(std::fs::read_dir("/proc").unwrap().flatten().all(|e| {
        std::fs::read_to_string(e.path().join("comm")).map_or(true, |c| c.trim() != "nginx")
            || std::fs::read_to_string(e.path().join("stat"))
                .map_or(true, |s| s.split_whitespace().nth(40) != Some("1"))
    }));
}

#[test]
fn ctrl_c_stops_the_server() {
    let env = TestEnv::new();
    let (port, server) = nginx_config(env.dir.path());
    let mut a = args(port, &server, "os");
    a[8] = "200,200,200,200,200,200".into();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .args(&a)
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while nginx_of(env.dir.path()).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!nginx_of(env.dir.path()).is_empty(), "nginx never started");
    std::thread::sleep(Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(nginx_of(env.dir.path()).is_empty(), "nginx left running");
}

#[test]
fn a_server_that_never_answers_exits_or_cannot_run_is_one_line() {
    let env = TestEnv::new();
    let port = common::free_port();
    let tag = format!("3{}.5", std::process::id() % 1000);
    for (server, code, says) in [
        (format!("sleep {tag}"), 1, "did not answer"),
        (
            "false".to_string(),
            1,
            "ended before it answered (exit status 1)",
        ),
        ("/nonexistent/server".to_string(), 2, "cannot execute"),
    ] {
        let mut a = args(port, &server, "os");
        a.extend(["--ready-timeout".into(), "0.5".into()]);
        let out = env.cmd().args(&a).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{server}: {err}");
        let line = err.lines().find(|l| l.starts_with("error:")).unwrap();
        assert!(line.contains(says), "{server}: {err}");
    }
    let left = std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c) == format!("sleep\0{tag}\0"))
    });
    assert!(!left, "the server that never answered was left running");
}

#[test]
fn a_capacity_setting_for_a_server_truebench_did_not_start_is_refused() {
    // The capacity group is the server's; a server followed with --pid or only reached
    // at its URL is in no group truebench makes.
    let env = TestEnv::new();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    for extra in [
        &["--cpu-quota", "0.5", "--cpuset-width", "1"][..],
        &["--policy", "cap:0.5/1"][..],
    ] {
        let mut a = vec!["loadstep", "--http", &url, "--rates", "100"];
        a.extend_from_slice(extra);
        let out = env.cmd().args(&a).output().unwrap();
        common::assert_refused(&env, &out, &a);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--server"),
            "{a:?}"
        );
    }
}

/// Whether `pid` is still an nginx process (not gone, not a zombie, not reused).
fn still_nginx(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "nginx")
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')))
}

/// Issue 37 item 1: truebench SIGKILLed while `loadstep --server` runs a server whose
/// start script leaves a child in a session of its own (`setsid`) and execs nginx (a
/// master and 2 workers, which write their process title over their environment, and so
/// over truebench's mark): after 5 s no process of the tree runs, with no truebench
/// command run afterwards (the watchdog stopped the launched process's tree).
#[test]
fn sigkill_of_loadstep_leaves_nothing_of_its_server() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let (port, server) = nginx_config(env.dir.path());
    let secs = format!("56.{}", std::process::id() % 10_000);
    let script = env.dir.path().join("server.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nsetsid sleep {secs} &\nexec {server}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut a = args(port, script.to_str().unwrap(), "os");
    a[8] = "200,200,200,200,200,200,200,200,200,200".into();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .args(&a)
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The master and its 2 workers, and the setsid child.
    let until = Instant::now() + Duration::from_secs(20);
    let mut tree = vec![];
    while Instant::now() < until {
        tree = nginx_of(env.dir.path())
            .into_iter()
            .flat_map(truebench::observe::process::tree)
            .collect();
        if tree.len() >= 3 && !common::sleeping(&secs).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        tree.len() >= 3,
        "nginx and its workers never started: {tree:?}"
    );
    assert_eq!(
        common::sleeping(&secs).len(),
        1,
        "the setsid child never started"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_secs(5));
    let left: Vec<i32> = tree
        .into_iter()
        .filter(|p| still_nginx(*p))
        .chain(common::sleeping(&secs))
        .collect();
    for p in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*p),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(left.is_empty(), "outlived a SIGKILLed truebench: {left:?}");
}
