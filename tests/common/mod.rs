//! Shared by the integration tests: a private database and lock file per test (so tests
//! run in parallel), the truebench command bound to them, fixture tree paths, a free port
//! and a server that never answers.
#![allow(dead_code)] // each test file uses its own subset

pub mod browser;
pub mod fleet;
pub mod pg;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub struct TestEnv {
    pub dir: TempDir,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    pub fn lock(&self) -> PathBuf {
        self.dir.path().join("run.lock")
    }

    /// `truebench` with TRUEBENCH_DB and TRUEBENCH_LOCK pointing into this test's directory.
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("truebench").unwrap();
        c.env("TRUEBENCH_DB", self.db())
            .env("TRUEBENCH_LOCK", self.lock())
            .env_remove("XDG_DATA_HOME");
        c
    }

    /// Run `truebench ARGS`; it must succeed; its stdout.
    pub fn text(&self, args: &[&str]) -> String {
        succeeded(self.cmd().args(args))
    }

    /// Run and parse stdout as JSON; the command must succeed.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
    }

    /// Run suites with `--json`, validate the document, return it.
    /// `run --json ARGS`, in one round unless ARGS say `--rounds`: these tests check what a
    /// run measures (counts, placements, bounds, the order of its suites); the rounds
    /// themselves are tested in src/session/rounds.rs and by bench/aa_compare.sh.
    pub fn run(&self, args: &[&str]) -> Value {
        let one: &[&str] = if args.contains(&"--rounds") {
            &[]
        } else {
            &["--rounds", "1"]
        };
        let doc = self.json(&[&["run", "--json"], one, args].concat());
        truebench::result::validate(&doc)
            .unwrap_or_else(|e| panic!("{args:?}: invalid document: {e}"));
        doc
    }

    /// Hold the run lock as another run would, naming `holder` in it, until dropped.
    pub fn hold_lock(&self, holder: &str) -> nix::fcntl::Flock<std::fs::File> {
        use nix::fcntl::{Flock, FlockArg};
        std::fs::write(
            self.lock(),
            format!("pid 4242 since 2026-11-22T00:00:00Z: {holder}\n"),
        )
        .unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(self.lock())
            .unwrap();
        Flock::lock(f, FlockArg::LockExclusiveNonblock)
            .map_err(|(_, e)| e)
            .unwrap()
    }

    /// `truebench --db DB import FILE` for every file at once (parallel processes); each
    /// must succeed.
    pub fn imports_at_once(&self, db: &std::ffi::OsStr, files: &[PathBuf]) {
        let children: Vec<_> = files
            .iter()
            .map(|f| {
                std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"))
                    .arg("--db")
                    .arg(db)
                    .arg("import")
                    .arg(f)
                    .env("TRUEBENCH_LOCK", self.lock())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// Write a file in this test's directory.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

/// A fixture tree's path (tests/fixtures/sysroots/NAME).
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysroots")
        .join(name)
}

/// The run documents of tests/fixtures/documents (one per kind of run), in name order.
pub fn documents() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

/// A result's rounds as the library reads them (a document stores them as columns).
pub fn rounds_of(result: &Value) -> Option<truebench::result::rounds::Rounds> {
    serde_json::from_value(result.get("rounds")?.clone()).ok()
}

/// The ids of the findings in a JSON `findings` array.
pub fn finding_ids(findings: &Value) -> Vec<&str> {
    findings
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["id"].as_str()).collect())
        .unwrap_or_default()
}

/// A test marked `#[ignore = "needs root"]` (run by CI as root with `--ignored`): it fails,
/// never passes silently, when run without root.
pub fn needs_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test needs root: run it as root (cargo test --profile dist -- --ignored)"
    );
}

/// A refused command: exit 2, one `error:` line first, and no database created.
pub fn assert_refused(env: &TestEnv, out: &std::process::Output, what: &dyn std::fmt::Debug) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{what:?}: exit {:?}, stderr {err}",
        out.status.code()
    );
    assert!(err.starts_with("error:"), "{what:?}: stderr {err}");
    assert!(!env.db().exists(), "{what:?} created the database");
}

/// A command refused because another run holds the lock: exit 1, naming the holder
/// that `TestEnv::hold_lock` wrote.
pub fn assert_lock_refused(out: &std::process::Output, holder: &str) {
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: another truebench run holds the lock"),
        "{err}"
    );
    assert!(err.contains("pid 4242") && err.contains(holder), "{err}");
}

/// Run a command that must succeed; its stdout.
pub fn succeeded(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A tool on PATH, or where scripts/test installs the Go tools and the Python virtual
/// environment ($TRUEBENCH_TOOLS, default ~/.cache/truebench/tools); the test fails
/// (never passes) without it.
pub fn tool(name: &str) -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let cache = std::env::var_os("TRUEBENCH_TOOLS")
        .map(PathBuf::from)
        .or_else(|| {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
            Some(base.join("truebench/tools"))
        });
    let cache: Vec<PathBuf> = cache
        .into_iter()
        .flat_map(|d| [d.join("venv/bin"), d])
        .collect();
    on_path
        .chain(cache)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} is needed: `scripts/test --deps-only` installs it (see REQUIREMENTS, GO_TOOLS and PY_REQUIREMENTS there)")
        })
}

/// Build the LD_PRELOAD shim that forces clock reads through the system call
/// (tests/fixtures/slowclock.c) with the C compiler, into `dir`.
pub fn slow_clock_shim(dir: &std::path::Path) -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/slowclock.c");
    let out = dir.join("slowclock.so");
    let ok = std::process::Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "cc could not build the shim (scripts/test installs gcc)"
    );
    out
}

/// No cgroup truebench makes (`truebench-*`) is left in any hierarchy.
pub fn assert_no_cgroup_left() {
    let leftovers: Vec<_> = [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/cpuset",
    ]
    .iter()
    .filter_map(|d| std::fs::read_dir(d).ok())
    .flatten()
    .flatten()
    .filter(|e| e.file_name().to_string_lossy().starts_with("truebench-"))
    .map(|e| e.path())
    .collect();
    assert!(leftovers.is_empty(), "cgroups left behind: {leftovers:?}");
}

/// The `dist` build of truebench for `target` (None: this machine's own), built by
/// scripts/test with `cargo build --profile dist [--target TRIPLE]` before the tests that
/// need it; the test fails (never passes) without it.
pub fn dist_binary(target: Option<&str>) -> PathBuf {
    let root = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let path = match target {
        Some(t) => root.join(t).join("dist/truebench"),
        None => root.join("dist/truebench"),
    };
    assert!(
        path.is_file(),
        "no dist binary at {}: build it with `cargo build --profile dist{}` (scripts/test does)",
        path.display(),
        target.map(|t| format!(" --target {t}")).unwrap_or_default()
    );
    path
}

/// A free loopback port, and an nginx config (2 worker processes) serving a file there from
/// `dir`, readable by nginx's unprivileged workers; the `--server` command that starts it.
pub fn nginx_config(dir: &std::path::Path) -> (u16, String) {
    use std::os::unix::fs::PermissionsExt;
    let port = free_port();
    std::fs::create_dir_all(dir.join("html")).unwrap();
    std::fs::write(dir.join("html/index.html"), "ok\n").unwrap();
    for d in [dir, &dir.join("html")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let d = dir.display();
    let conf = format!(
        "daemon off;\nworker_processes 2;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 64; }}\nhttp {{ access_log off;\n\
         client_body_temp_path {d}/b; proxy_temp_path {d}/p; fastcgi_temp_path {d}/f;\n\
         uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;\n\
         server {{ listen 127.0.0.1:{port}; root {d}/html; keepalive_requests 100000000; }} }}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("nginx is needed (apt-get install nginx)");
    let server = format!("{nginx} -c {d}/nginx.conf -e {d}/error.log -p {d}");
    (port, server)
}

/// A free TCP port on 127.0.0.1 (free when asked: bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A TCP server on 127.0.0.1 that accepts every connection and never answers (a hung
/// server, a port that is not the protocol the client speaks): what a connection sends is
/// read and dropped, and the connection held open until the client closes it or the test
/// ends. Its address.
pub fn silent_listener() -> std::net::SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while std::io::Read::read(&mut s, &mut buf).is_ok_and(|n| n > 0) {}
            });
        }
    });
    addr
}

/// The live processes whose command line is `sleep SECS` (a zombie is not running).
pub fn sleeping(secs: &str) -> Vec<i32> {
    let want = format!("sleep\0{secs}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == want.as_bytes())
                && !std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .is_ok_and(|s| s.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')))
        })
        .collect()
}

/// Every step of a loadstep document (one workload's `steps`, or each variant's).
pub fn loadstep_steps(doc: &Value) -> Vec<&Value> {
    let ls = &doc["loadstep"];
    match ls["variants"].as_array() {
        Some(vs) => vs
            .iter()
            .flat_map(|v| v["steps"].as_array().unwrap())
            .collect(),
        None => ls["steps"].as_array().unwrap().iter().collect(),
    }
}

/// Whether a valid load step's completed rate is what its plan and its own latency allow,
/// over a measured window of `window_s`: never above what was sent, and below the plan by
/// at most 2% and the requests due in the window's last `latency.max` (still in flight at
/// its end: a step counts only requests answered within it). A fixed 2% alone failed in a
/// noisy hour, where a stall of 12 ms at a half-second step's end is the host's doing; a
/// request lost or never sent has no latency to excuse it.
pub fn completed_as_planned(s: &Value, window_s: f64) -> Result<(), String> {
    let figure = |k: &str| s[k].as_f64().unwrap();
    let (planned, sent, completed) = (
        figure("planned_rate"),
        figure("sent_rate"),
        figure("completed_rate"),
    );
    let tail_s = s["latency"]["max"].as_f64().unwrap_or(0.0) / 1e6;
    let floor = planned * (0.98 - tail_s / window_s);
    let ceiling = sent + 1.0 / window_s;
    if (floor..=ceiling).contains(&completed) {
        Ok(())
    } else {
        Err(format!(
            "{completed:.1}/s completed of {planned:.1}/s planned and {sent:.1}/s sent, \
             latency max {:.1} ms: expected {floor:.1}..{ceiling:.1}/s",
            tail_s * 1e3
        ))
    }
}

/// Whether a step's invalid reason is the load generator's own: it stalled or fell behind
/// (a loud host took its CPU), which the step rightly reports.
pub fn generator_lagged(reason: &str) -> bool {
    reason.contains("load generator")
}

/// `truebench ARGS` (a `loadstep ... --json`) up to three times until every step is valid.
/// A step may be invalid only because the load generator lagged (asserted): a loud hour
/// takes its CPU, and the plan is measured again; after three such tries the last document
/// is returned all the same. Also returns each failed try's reasons, for the caller to name
/// what it could not check.
pub fn loadstep_until_valid(env: &TestEnv, args: &[&str]) -> (Value, Vec<Vec<String>>) {
    let mut lagged = vec![];
    loop {
        let doc = env.json(args);
        let invalid: Vec<String> = loadstep_steps(&doc)
            .iter()
            .filter(|s| s["valid"] != true)
            .map(|s| {
                s["invalid_reason"]
                    .as_str()
                    .unwrap_or("(no reason)")
                    .to_string()
            })
            .collect();
        for reason in &invalid {
            assert!(
                generator_lagged(reason),
                "a step was invalid for a reason other than the generator lagging: {reason}"
            );
        }
        if invalid.is_empty() || lagged.len() == 2 {
            return (doc, lagged);
        }
        lagged.push(invalid);
    }
}

/// Build the memory-touching helper (tests/fixtures/touch_memory.c) with the C compiler.
pub fn touch_memory_helper(dir: &std::path::Path) -> std::path::PathBuf {
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/touch_memory.c");
    let out = dir.join("touch_memory");
    let ok = std::process::Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "cc could not build the helper (scripts/test installs gcc)"
    );
    out
}
