//! truebench inside a memory cgroup (root stage): the default `run` in a cgroup v1 memory
//! limit of 256 MiB (the bandwidth arrays made smaller to fit) and of 512 MiB (larger arrays,
//! the rest of the run in what they leave; the sizing between is the unit tests' of
//! `bench::memory`) ends with exit 0, a stored document, the `memory-limit` finding and no
//! OOM kill; `experiment` of a command that allocates past its limit reports the kernel's OOM
//! kill. Each cgroup is made under /sys/fs/cgroup/memory and removed afterwards, also when
//! the test fails.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output};

mod common;

use common::TestEnv;

const V1_MEMORY: &str = "/sys/fs/cgroup/memory";

/// A v1 memory cgroup with a limit, removed when dropped.
struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    fn new(name: &str, limit_mib: u64) -> MemoryCgroup {
        let dir =
            PathBuf::from(V1_MEMORY).join(format!("truebench-test-{name}-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let cg = MemoryCgroup { dir };
        std::fs::write(
            cg.dir.join("memory.limit_in_bytes"),
            (limit_mib << 20).to_string(),
        )
        .unwrap();
        cg
    }

    fn oom_kills(&self) -> u64 {
        let t = std::fs::read_to_string(self.dir.join("memory.oom_control")).unwrap();
        t.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|v| v.trim().parse().ok())
            .expect("an oom_kill line (kernel 4.13 or later)")
    }

    /// Run `truebench ARGS` of `env` inside this cgroup (it moves itself in before exec).
    fn truebench(&self, env: &TestEnv, args: &[&str]) -> Output {
        let procs = self.dir.join("cgroup.procs");
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("truebench"));
        c.args(args)
            .env("TRUEBENCH_DB", env.db())
            .env("TRUEBENCH_LOCK", env.lock())
            .env_remove("XDG_DATA_HOME");
        // SAFETY: only a write(2) of this process's id between fork and exec.
        unsafe {
            c.pre_exec(move || std::fs::write(&procs, std::process::id().to_string()));
        }
        c.output().unwrap()
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Its processes have exited; the kernel may take a moment to let the group go.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("could not remove {}", self.dir.display());
    }
}

fn v1_memory_or_skip() -> bool {
    common::needs_root();
    let here = std::path::Path::new(V1_MEMORY)
        .join("memory.limit_in_bytes")
        .exists();
    if !here {
        eprintln!("no cgroup v1 memory hierarchy at {V1_MEMORY}: nothing to test here");
    }
    here
}

#[test]
#[ignore = "needs root"]
fn the_default_run_fits_a_memory_limit_and_names_it() {
    if !v1_memory_or_skip() {
        return;
    }
    for limit in [256u64, 512] {
        let env = TestEnv::new();
        let cg = MemoryCgroup::new(&format!("run{limit}"), limit);
        let before = cg.oom_kills();
        let out = cg.truebench(&env, &["run", "--json", "--budget", "25s"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{limit} MiB: {err}");
        assert_eq!(cg.oom_kills(), before, "{limit} MiB: an OOM kill");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        truebench::result::validate(&doc).unwrap();
        let f = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "memory-limit")
            .unwrap_or_else(|| panic!("{limit} MiB: no memory-limit finding"));
        let msg = f["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("memory limit {limit} MiB"))
                && msg.contains(&*cg.dir.to_string_lossy()),
            "{msg}"
        );
        assert_eq!(
            doc["env"]["memory"]["cgroup"]["limit"]["bytes"],
            limit << 20,
            "the probe's limit"
        );
        // Stored: the run is in the database.
        env.text(&["show", doc["run_id"].as_str().unwrap()]);
    }
}

#[test]
#[ignore = "needs root"]
fn an_experiment_whose_command_is_oom_killed_says_so() {
    if !v1_memory_or_skip() {
        return;
    }
    let env = TestEnv::new();
    let helper = common::touch_memory_helper(env.dir.path());
    let cg = MemoryCgroup::new("experiment", 128);
    let before = cg.oom_kills();
    let out = cg.truebench(
        &env,
        &[
            "experiment",
            "--runs",
            "2",
            "--json",
            "--",
            helper.to_str().unwrap(),
            "400",
            "0",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(cg.oom_kills() > before, "the kernel counted no OOM kill");
    assert!(
        err.contains("killed by signal 9 (SIGKILL)") && err.contains("OOM killer"),
        "{err}"
    );
    assert!(err.contains("memory limit 128 MiB"), "{err}");
    // The document is stored and says how the run ended.
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed = &doc["experiment"]["failed"];
    assert_eq!(failed["exit_signal"], 9, "{failed}");
    assert!(
        failed["oom_kills"]["kills"].as_u64().unwrap() >= 1,
        "{failed}"
    );
    env.text(&["show", doc["run_id"].as_str().unwrap()]);
}
