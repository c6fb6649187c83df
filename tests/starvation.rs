//! A run in a starved CPU share (root stage): `run timers,ctx` in a cgroup of the lowest CPU
//! weight (v1 `cpu.shares` 2, v2 `cpu.weight` 1) beside a group of the default weight whose
//! spinners keep every CPU busy ends within its budget, names the starvation
//! (`cpu-starved`, with the weight), and `compare` with a run outside it names the cause
//! (`cpu-share`). Each cgroup is removed afterwards and the spinners killed, also when the
//! test fails.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

mod common;

use common::TestEnv;
use serde_json::Value;

/// A cpu cgroup of a given weight, removed when dropped (after its spinners).
struct CpuGroup {
    dir: PathBuf,
    spinners: Vec<Child>,
}

impl CpuGroup {
    /// Under the v1 cpu hierarchy where there is one, else under cgroup2's root. `lowest`:
    /// the lowest weight of the version, else its default.
    fn new(name: &str, lowest: bool) -> CpuGroup {
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let name = format!("truebench-test-{name}-{}", std::process::id());
        let (dir, file, value) = if v1.join("cpu.shares").exists() {
            (
                v1.join(name),
                "cpu.shares",
                if lowest { "2" } else { "1024" },
            )
        } else {
            (
                Path::new("/sys/fs/cgroup").join(name),
                "cpu.weight",
                if lowest { "1" } else { "100" },
            )
        };
        std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let g = CpuGroup {
            dir,
            spinners: vec![],
        };
        std::fs::write(g.dir.join(file), value).unwrap();
        g
    }

    /// `cmd` started inside this group (it moves itself in before exec).
    fn inside<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let procs = self.dir.join("cgroup.procs");
        // SAFETY: only a write(2) of this process's id between fork and exec.
        unsafe {
            cmd.pre_exec(move || std::fs::write(&procs, std::process::id().to_string()));
        }
        cmd
    }

    /// A spinning shell per usable CPU inside this group.
    fn spin(&mut self) {
        for _ in 0..std::thread::available_parallelism().unwrap().get() {
            let mut c = Command::new("sh");
            c.args(["-c", "while :; do :; done"]);
            let child = self.inside(&mut c).spawn().unwrap();
            self.spinners.push(child);
        }
    }

    fn truebench(&self, env: &TestEnv, args: &[&str]) -> Output {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("truebench"));
        c.args(args)
            .env("TRUEBENCH_DB", env.db())
            .env("TRUEBENCH_LOCK", env.lock());
        self.inside(&mut c).output().unwrap()
    }
}

impl Drop for CpuGroup {
    fn drop(&mut self) {
        for c in &mut self.spinners {
            let _ = c.kill();
            let _ = c.wait();
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("could not remove {}", self.dir.display());
    }
}

fn id(doc: &Value) -> &str {
    doc["run_id"].as_str().unwrap()
}

#[test]
#[ignore = "needs root"]
fn a_run_starved_of_cpu_ends_within_its_budget_names_its_share_and_compare_names_the_cause() {
    common::needs_root();
    let env = TestEnv::new();
    let budget_s = 20.0;
    let args = ["run", "--json", "timers,ctx", "--budget", "20s"];
    // A: the same run with nothing beside it.
    let a = env.json(&args);
    let mut busy = CpuGroup::new("busy", false);
    busy.spin();
    let low = CpuGroup::new("low", true);
    let t0 = Instant::now();
    let out = low.truebench(&env, &args);
    let took = t0.elapsed().as_secs_f64();
    drop(busy);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The budget bounds the whole run; the process's own start and exit add a little.
    assert!(
        took < budget_s + 5.0,
        "the starved run took {took:.1} s on a budget of {budget_s} s: {err}"
    );
    let b: Value = serde_json::from_slice(&out.stdout).unwrap();
    let starved = b["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "cpu-starved")
        .unwrap_or_else(|| panic!("no cpu-starved finding: {}", b["findings"]));
    let msg = starved["message"].as_str().unwrap();
    assert!(
        msg.contains("cpu.shares 2 (default 1024)") || msg.contains("cpu.weight 1 (default 100)"),
        "{msg}"
    );
    assert!(msg.starts_with("This cgroup got "), "{msg}");
    // What the budget left unmeasured is said, not missing.
    let rows = b["results"].as_array().unwrap().len();
    let said = b["skipped"].as_array().unwrap().iter().any(|s| {
        s["reason"]
            .as_str()
            .is_some_and(|r| r.contains("budget") && r.contains("cpu-starved"))
    });
    assert!(rows > 0 || said, "no row and nothing said: {b}");
    // compare names the CPU weight among what differs between the runs, and the CPU share
    // on the rows it calls (a starved run may get one round a row: no spread to call from).
    let c = env.json(&["compare", id(&a), id(&b), "--json"]);
    let weight = c["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["what"] == "CPU weight")
        .unwrap_or_else(|| panic!("no CPU weight candidate: {}", c["candidates"]));
    assert_eq!(weight["status"], "differs", "{weight}");
    assert!(
        weight["b"].as_str().unwrap().contains("(default "),
        "{weight}"
    );
    let called: Vec<&Value> = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "B worse")
        .collect();
    for r in called {
        assert!(
            r["explanations"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["cause"] == "cpu-share"),
            "cpu-share not named: {r}"
        );
    }
}
