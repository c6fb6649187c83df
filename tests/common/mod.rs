//! Shared by the integration tests: a private database and lock file per test (so tests
//! run in parallel), the truebench command bound to them, and fixture tree paths.
#![allow(dead_code)] // each test file uses its own subset

use assert_cmd::Command;
use serde_json::Value;
use std::path::PathBuf;
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
    pub fn run(&self, args: &[&str]) -> Value {
        let doc = self.json(&[&["run", "--json"], args].concat());
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
        "this test needs root: run it as root (cargo test --release -- --ignored)"
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
    assert!(ok, "cc could not build the shim (.ci/run installs gcc)");
    out
}
