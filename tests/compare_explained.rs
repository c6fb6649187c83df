//! `compare` explains real differences on this machine, each by the right cause and not by
//! a wrong one: ctx on two CPUs against one (placement, nothing left when pinned), the
//! per-event memory figure with the clock forced through the system call (timer, its batch
//! twin unmoved), a run under half a CPU of quota (capacity and throttling, root; with a
//! calibration for the classic suite, from each run's rounds without one), a clocksource
//! switch (the timer on every fine vDSO clock row, root), a run
//! beside a CPU hog on every CPU (noise), a busy loop on one CPU during B (the neighbour, on
//! the ping-pong across CPUs, whichever way it moved); two runs of the same command call nothing
//! explained by a cause that did not change. Plus the several-run options on stored
//! documents. Benchmark runs are as short as the CLI allows, with loose bounds: the
//! machine is shared.

mod common;

use common::TestEnv;
use serde_json::Value;
use std::process::Command;
use truebench::result::rounds::Cause;

/// The measuring tests of this file run one at a time (they compare figures that
/// contention between them would move).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `attempt` up to `n` times until it returns Ok: a real scenario on this shared
/// machine may be spoilt by another tenant's burst; every failure is reported if none passes.
fn within_tries<T>(n: usize, attempt: impl FnMut() -> Result<T, String>) -> T {
    try_up_to(n, attempt).unwrap_or_else(|why| panic!("no try of {n} passed:\n{why}"))
}

/// As `within_tries`, but the caller decides what no passing try means.
fn try_up_to<T>(n: usize, mut attempt: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let mut why = vec![];
    for _ in 0..n {
        match attempt() {
            Ok(t) => return Ok(t),
            Err(e) => why.push(e),
        }
    }
    Err(why.join("\n"))
}

const CTX: &[&str] = &[
    "ctx",
    "--mode",
    "process",
    "--placement",
    "os,same-cpu,same-llc",
    // The unpinned pair is started afresh per sample: a minority of samples placed the
    // other way must stay outside the median's interval (n = 15: ranks 4..12).
    "--samples",
    "15",
];

/// `truebench run ARGS --json` under a prefix command (taskset...) or with an env var.
fn run_with(
    env: &TestEnv,
    prefix: &[&str],
    vars: &[(&str, &std::path::Path)],
    args: &[&str],
) -> Value {
    let bin = assert_cmd::cargo::cargo_bin("truebench");
    let mut cmd = match prefix.split_first() {
        Some((p, rest)) => {
            let mut c = Command::new(p);
            c.args(rest).arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    cmd.env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .env_remove("XDG_DATA_HOME")
        .args(["run", "--json"])
        .args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn id(doc: &Value) -> &str {
    doc["run_id"].as_str().unwrap()
}

/// `compare A B --json` in a database holding only A and B: the retried runs of a test do
/// not become a drift history for the compared pair.
fn compare(_env: &TestEnv, a: &Value, b: &Value) -> Value {
    let fresh = TestEnv::new();
    for (name, doc) in [("a.json", a), ("b.json", b)] {
        let f = fresh.file(name, &doc.to_string());
        fresh.cmd().arg("import").arg(&f).assert().success();
    }
    let c = fresh.json(&["compare", id(a), id(b), "--json"]);
    assert_eq!(c["schema"], "truebench.compare/1");
    c
}

/// The row of `benchmark` with these params (as `k=v,...`) and placement.
fn row<'a>(c: &'a Value, benchmark: &str, params: &str, placement: &str) -> &'a Value {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["benchmark"] == benchmark && r["placement"] == placement && r["params"] == params
        })
        .unwrap_or_else(|| panic!("no row {benchmark} {params} {placement} in {c}"))
}

fn causes(r: &Value) -> Vec<(&str, &str)> {
    r["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["cause"].as_str().unwrap(), e["claim"].as_str().unwrap()))
        .collect()
}

/// The row's explanation by `cause`, which must claim to explain all or part of it.
fn explained_by<'a>(r: &'a Value, cause: &str) -> &'a Value {
    let e = r["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["cause"] == cause)
        .unwrap_or_else(|| panic!("no {cause} explanation: {r}"));
    assert!(
        matches!(e["claim"].as_str(), Some("explains" | "partly")),
        "{e}"
    );
    e
}

/// A claim that says the cause accounts for (part of) the difference.
fn claims(claim: &str) -> bool {
    matches!(claim, "explains" | "partly" | "contributes")
}

fn colocation(doc: &Value, placement: &str) -> f64 {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["placement"]["name"] == placement)
        .unwrap()["placement"]["observed"]["colocated_fraction"]
        .as_f64()
        .unwrap()
}

#[test]
fn ctx_on_one_cpu_is_explained_by_placement_with_no_residual_when_pinned() {
    let _one = one_at_a_time();
    let env = TestEnv::new();
    // The scheduler decides where an unpinned pair runs; on a loaded shared machine it
    // often keeps it together on two CPUs too (wake-affine). Up to four tries for a run
    // that spread in at least 80% of the observations; if none did, the pair's samples mix
    // both placements (a median's interval spanning both may then overlap B's), and
    // placement must only not be blamed for less than it changed.
    let mut a = run_with(&env, &[], &[], CTX);
    for _ in 0..3 {
        if colocation(&a, "os") <= 0.2 {
            break;
        }
        a = run_with(&env, &[], &[], CTX);
    }
    let fa = colocation(&a, "os");
    // B on one CPU: its rounds are not disturbed by its own two ends sharing that CPU (only
    // other tasks' time and steal count), so the row is called from them.
    let b = run_with(&env, &["taskset", "-c", "0"], &[], CTX);
    assert_eq!(colocation(&b, "os"), 1.0);
    let c = compare(&env, &a, &b);
    let os = row(&c, "ctx.pipe@1", "footprint_kb=0,mode=process", "os");
    if fa > 0.2 {
        // Often together in A as well: placement may be named only for a shift of at
        // least 20 points of the observations.
        eprintln!("the unpinned pair never mostly spread over two CPUs here (co-located {fa})");
        let blamed = causes(os).iter().any(|(c, _)| *c == "placement");
        assert!(!blamed || 1.0 - fa >= 0.2, "{os}");
        return;
    }
    assert_eq!(os["verdict"], "B better", "{os}");
    assert!(os["ratio"].as_f64().unwrap() < 0.5, "{os}");
    let placement = explained_by(os, "placement");
    assert!(
        placement["predicted"].as_f64().unwrap() < 0.5,
        "{placement}"
    );
    // Pinned on one CPU both runs measured the same thing: a difference called there is
    // the host's (steal, a neighbour, its clock), and a measured cause the documents bear
    // out claims it; none is left "B worse" unclaimed.
    let same = row(&c, "ctx.pipe@1", "footprint_kb=0,mode=process", "same-cpu");
    if matches!(same["verdict"].as_str(), Some("B worse" | "B better")) {
        let found = causes(same);
        assert!(
            found.iter().any(|(_, k)| claims(k)),
            "pinned same-cpu moved unclaimed: {same}"
        );
        for (cause, claim) in found.into_iter().filter(|(_, k)| claims(k)) {
            if let Err(why) = measured_change(cause, &a, &b, same) {
                panic!("{cause} ({claim}) blamed, but the documents show {why}: {same}");
            }
        }
    }
    // Nothing else is blamed than placement and noise, or a change of the host the
    // documents show: the same machine, timer and capacity for a pair.
    for (cause, claim) in causes(os) {
        if claims(claim) && !matches!(cause, "placement" | "noise") {
            if let Err(why) = measured_change(cause, &a, &b, os) {
                panic!("{cause} ({claim}) blamed, but the documents show {why}: {os}");
            }
        }
    }
    // B did not measure the pair apart (one usable CPU), and says why.
    let only_a = c["only_in_a"].to_string();
    assert!(
        only_a.contains("same-llc") && only_a.contains("1 usable CPU"),
        "{only_a}"
    );
    // The summary line names placement, both co-location fractions and the pinned residual.
    let line = c["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| s.as_str().filter(|s| s.starts_with("ctx:")))
        .unwrap();
    let pct = |f: f64| format!("{:.0}%", f * 100.0);
    assert!(
        line.contains("(placement)")
            && line.contains(&format!(
                "shared one CPU in 100% of observations and A's in {}",
                pct(fa)
            ))
            && line.contains("pinned"),
        "{line}"
    );
}

#[test]
fn a_syscall_clock_is_explained_by_the_timer_and_the_batch_figure_holds() {
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let shim = common::slow_clock_shim(env.dir.path());
    let args = ["memory.per-event", "--samples", "5"];
    let fast = run_with(&env, &[], &[], &args);
    let slow = run_with(&env, &[], &[("LD_PRELOAD", &shim)], &args);
    let c = compare(&env, &fast, &slow);
    let pe = row(
        &c,
        "memory.per-event@1",
        "block_bytes=1024,timing=per-event",
        "os",
    );
    let batch = row(
        &c,
        "memory.per-event@1",
        "block_bytes=1024,timing=batch",
        "os",
    );
    // The batch figure holds against the clock: reading it is under 1% of the batch time in
    // both runs, so the slower clock can move that figure by no more, and the timer does not
    // claim it. Whether the host moved it between the runs (its 1 KiB writes were bimodal
    // from run to run in a noisy hour, 35-38 or 53-58 GB/s) is for its rounds to say; no
    // bound between the two runs is assumed.
    for doc in [&fast, &slow] {
        let results = doc["results"].as_array().unwrap();
        let x = results.iter().find(|x| is_row(x, batch)).unwrap();
        let share = x["quality"]["timer_share"].as_f64().unwrap();
        assert!(share < 0.01, "batch timer share {share}: {batch}");
    }
    assert!(!causes(batch).iter().any(|(c, _)| *c == "timer"), "{batch}");
    // The per-event figure collapsed (5x or more), far beyond its rounds' spread.
    assert_eq!(pe["verdict"], "B worse", "{pe}");
    // The timer claims it, judged against its batch-timed twin: all of it when the twin
    // did not move beyond its noise, part of it when it did (the work moved too).
    let timer = explained_by(pe, "timer");
    assert!(
        timer["evidence"].to_string().contains("batch-timed twin"),
        "{timer}"
    );
    let twin_real = matches!(batch["verdict"].as_str(), Some("B better" | "B worse"));
    let want = if twin_real { "partly" } else { "explains" };
    assert_eq!(timer["claim"], want, "twin {}: {timer}", batch["verdict"]);
    // It predicts the way the figure moved: a slower clock, fewer MB/s. (How far it predicts
    // rests on the timer share, the probe's cost of a read times the reads: an estimate that
    // reached 100% of a slow run's time, where a read through the system call also slowed
    // the writes around it.)
    assert!(timer["predicted"].as_f64().unwrap() < 1.0, "{timer}");
    for (cause, claim) in causes(pe) {
        if claims(claim) && !matches!(cause, "timer" | "noise") {
            if let Err(why) = measured_change(cause, &fast, &slow, pe) {
                panic!("{cause} ({claim}) blamed, but the documents show {why}: {pe}");
            }
        }
    }
}

/// A cgroup made for one test (a CPU quota, a cpuset), removed when dropped.
struct Group {
    dir: std::path::PathBuf,
}

impl Group {
    /// Its directory under the controller `v1` of cgroup v1 where this machine has it, else
    /// under the cgroup2 root with `v2_controller` enabled for children; `v1` files written
    /// in order there, `v2` files in order here.
    fn make(
        v1: &str,
        v1_files: &[(&str, String)],
        v2_controller: &str,
        v2_files: &[(&str, String)],
    ) -> Group {
        let name = format!("truebench-compare-test-{}", std::process::id());
        let v1_root = std::path::Path::new("/sys/fs/cgroup").join(v1);
        let (dir, files) = if v1_root.join(v1_files[0].0).exists() {
            (v1_root.join(&name), v1_files)
        } else {
            let root = std::path::Path::new("/sys/fs/cgroup");
            let _ = std::fs::write(
                root.join("cgroup.subtree_control"),
                format!("+{v2_controller}"),
            );
            (root.join(&name), v2_files)
        };
        std::fs::create_dir(&dir).unwrap();
        let g = Group { dir };
        for (file, value) in files {
            std::fs::write(g.dir.join(file), value)
                .unwrap_or_else(|e| panic!("{}: {e}", g.dir.join(file).display()));
        }
        g
    }

    /// A CPU quota of half a CPU.
    fn half_cpu() -> Group {
        Group::make(
            "cpu",
            &[
                ("cpu.cfs_period_us", "100000".into()),
                ("cpu.cfs_quota_us", "50000".into()),
            ],
            "cpu",
            &[("cpu.max", "50000 100000".into())],
        )
    }

    /// A cpuset of the one CPU `cpu` (and every memory node of the root's).
    fn one_cpu(cpu: u32) -> Group {
        let mems = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "0".into())
        };
        Group::make(
            "cpuset",
            &[
                ("cpuset.cpus", cpu.to_string()),
                ("cpuset.mems", mems("/sys/fs/cgroup/cpuset/cpuset.mems")),
            ],
            "cpuset",
            &[
                ("cpuset.cpus", cpu.to_string()),
                ("cpuset.mems", mems("/sys/fs/cgroup/cpuset.mems.effective")),
            ],
        )
    }
}

impl Group {
    /// `truebench ARGS` inside the group (it joins before it starts), its JSON output.
    fn run(&self, env: &TestEnv, args: &[&str]) -> Value {
        let procs = self.dir.join("cgroup.procs");
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("truebench"));
        cmd.env("TRUEBENCH_DB", env.db())
            .env("TRUEBENCH_LOCK", env.lock())
            .args(args);
        // Writing 0 moves the writer: the child joins the group before it execs.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || std::fs::write(&procs, "0"));
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
#[ignore = "needs root"]
fn half_a_cpu_of_quota_is_explained_by_capacity_and_throttling() {
    common::needs_root();
    let _one = one_at_a_time();
    let env = TestEnv::new();
    // The host's noise first, as docs/compare.md asks before trusting a verdict.
    env.cmd()
        .args([
            "calibrate",
            "classic.dhrystone",
            "--runs",
            "5",
            "--samples",
            "5",
        ])
        .assert()
        .success();
    let args = ["run", "--json", "classic.dhrystone", "--samples", "5"];
    let a = env.json(&args);
    let b = Group::half_cpu().run(&env, &args);
    assert_eq!(b["env"]["cpus"]["cgroup_quota"], 0.5);
    // Without the calibration (a database holding A and B only) the classic rows rest on
    // each run's own rounds (the suite is measured in rounds): half a CPU is called from
    // them and explained by capacity, or, where a row's rounds cannot tell, nothing is
    // explained.
    let own = compare(&env, &a, &b);
    let mut called = 0;
    for r in own["rows"].as_array().unwrap() {
        // Never the reference floor: the rows have rounds (the helper's store may hold the
        // calibration too, which then gives the noise when it is the larger).
        assert!(
            matches!(r["noise"]["basis"].as_str(), Some("rounds" | "calibration")),
            "{r}"
        );
        if r["verdict"] == "B worse" {
            called += 1;
            let cap = explained_by(r, "capacity");
            assert!(cap["evidence"].to_string().contains("throttled"), "{cap}");
        } else if r["verdict"] == "cannot tell" {
            // The quota differs between the runs: a row that cannot be told is offered the
            // causes that would claim it, and says so; it is never called by them.
            let offered = r["explanations"].as_array().unwrap();
            assert!(offered.is_empty() || r["status"] == "offered", "{r}");
        }
    }
    assert!(called >= 1, "half a CPU not called from the rounds: {own}");
    let c = env.json(&["compare", id(&a), id(&b), "--json"]);
    let rows = c["rows"].as_array().unwrap();
    // 1 copy and all usable CPUs both match B's single copy, by role.
    assert!(rows.len() >= 2, "{c}");
    let mut worse = 0;
    for r in rows {
        // The noise is each run's rounds or the calibration, whichever is larger; the
        // calibration gives what only separate runs sample (the drift between runs).
        assert!(
            matches!(r["noise"]["basis"].as_str(), Some("rounds" | "calibration")),
            "{r}"
        );
        assert!(
            r["drift"]["basis"]
                .as_str()
                .is_some_and(|b| b.starts_with("calibration")),
            "{r}"
        );
        match r["verdict"].as_str().unwrap() {
            "B worse" => {
                worse += 1;
                let cap = explained_by(r, "capacity");
                assert!(cap["evidence"].to_string().contains("throttled"), "{cap}");
            }
            "B better" => {
                // On a loaded machine the quota group can get more CPU than the unlimited
                // run did (the group competes as one task): capacity cannot be the reason.
                let cap = r["explanations"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["cause"] == "capacity")
                    .unwrap_or_else(|| panic!("no capacity cause: {r}"));
                assert_eq!(cap["claim"], "ruled-out", "{cap}");
            }
            // Not a real difference under other tenants' load: nothing may be explained.
            other => {
                eprintln!("the quota run's difference was not real here: {other}");
                assert!(r["explanations"].as_array().unwrap().is_empty(), "{r}");
            }
        }
    }
    // Against this host's calibration the full-width row (all usable CPUs against half a
    // CPU: about 4x on 2 CPUs) is far beyond the noise.
    assert!(worse >= 1, "no row called worse under half a CPU: {c}");
}

/// With no calibration, each run's own rounds are the noise. Under half a CPU of quota:
/// - a ping-pong on one CPU is called about 2x slower and explained by capacity (its samples
///   fall in two modes, with and without a throttled period; every round holds both, so the
///   rounds agree);
/// - the classic suite's system-call and pipe rows are called slower (about 0.5-0.6x of A)
///   and explained by capacity, never "cannot tell" for want of a noise figure (issue 47:
///   the seed's own test, UnixBench in a capped VM; one copy each).
///
/// Both in one pair of runs (one run measures both suites, interleaved in rounds).
#[test]
#[ignore = "needs root"]
fn half_a_cpu_of_quota_is_called_on_ctx_and_classic_rows_from_the_rounds_with_no_calibration() {
    common::needs_root();
    let args = [
        "run",
        "--json",
        "ctx,classic.syscall,classic.pipe-throughput",
        "--mode",
        "process",
        "--placement",
        "same-cpu",
        "--copies",
        "1",
        "--rounds",
        "5",
        "--budget",
        "25s",
    ];
    under_half_a_cpu(&args, |c| {
        let r = row(c, "ctx.pipe@1", "footprint_kb=0,mode=process", "same-cpu");
        worse_by_capacity(r)?;
        // About 2x; a loud hour's steal or neighbour in one run's rounds moves it further,
        // and the pair is measured again.
        let ratio = r["ratio"].as_f64().unwrap();
        if !(1.3..4.0).contains(&ratio) {
            return Err(format!("B/A {ratio} under half a CPU: {r}"));
        }
        for bench in ["classic.syscall@2", "classic.pipe-throughput@1"] {
            let r = c["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["benchmark"] == bench)
                .unwrap_or_else(|| panic!("no {bench} row: {c}"));
            worse_by_capacity(r)?;
        }
        Ok(())
    });
}

/// `truebench ARGS` unlimited (A), then under half a CPU of quota (B), compared alone in a
/// fresh database and checked by `check`; measured again up to three times while it fails.
fn under_half_a_cpu(args: &[&str], check: impl Fn(&Value) -> Result<(), String>) {
    let _one = one_at_a_time();
    let env = TestEnv::new();
    within_tries(3, || {
        let a = env.json(args);
        let b = Group::half_cpu().run(&env, args);
        assert_eq!(b["env"]["cpus"]["cgroup_quota"], 0.5);
        check(&compare(&env, &a, &b))
    });
}

/// A row on its rounds, called worse, capacity explaining it with the throttling measured.
fn worse_by_capacity(r: &Value) -> Result<(), String> {
    assert_eq!(r["noise"]["basis"], "rounds", "{r}");
    if r["verdict"] != "B worse" {
        return Err(format!("not called worse under half a CPU: {r}"));
    }
    let cap = explained_by(r, "capacity");
    assert!(cap["evidence"].to_string().contains("throttled"), "{cap}");
    Ok(())
}

/// The current clocksource set to another, restored when dropped.
struct Clocksource {
    file: std::path::PathBuf,
    was: String,
}

impl Clocksource {
    /// Switch to an available clocksource other than the current one (None: there is none).
    fn other() -> Option<Clocksource> {
        let dir = std::path::Path::new("/sys/devices/system/clocksource/clocksource0");
        let file = dir.join("current_clocksource");
        let was = std::fs::read_to_string(&file).ok()?.trim().to_string();
        let avail = std::fs::read_to_string(dir.join("available_clocksource")).ok()?;
        let to = avail
            .split_whitespace()
            .find(|c| *c != was && *c != "jiffies")?;
        std::fs::write(&file, to).ok()?;
        Some(Clocksource { file, was })
    }
}

impl Drop for Clocksource {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.file, &self.was);
    }
}

/// With no calibration, a clocksource switch (tsc -> kvm-clock here) is called on every
/// fine clock read through the vDSO, explained by the timer, and the rows that never read
/// the clocksource (rdtsc, the coarse clocks) are not blamed on it.
#[test]
#[ignore = "needs root"]
fn a_clocksource_switch_is_called_on_every_vdso_clock_row_and_explained_by_the_timer() {
    common::needs_root();
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let args = ["timers"];
    within_tries(3, || {
        let a = run_with(&env, &[], &[], &args);
        let b = {
            let _switched = Clocksource::other()
                .expect("a second clocksource to switch to (this test induces a switch)");
            run_with(&env, &[], &[], &args)
        };
        assert_ne!(
            a["env"]["clock"]["clocksource"],
            b["env"]["clock"]["clocksource"]
        );
        let c = compare(&env, &a, &b);
        for clock in ["monotonic", "monotonic_raw", "realtime", "boottime"] {
            let r = row(
                &c,
                "timers.clock-read@1",
                &format!("clock={clock},path=vdso"),
                "os",
            );
            if !matches!(r["verdict"].as_str(), Some("B worse" | "B better")) {
                return Err(format!("{clock} vdso not called: {r}"));
            }
            // The timer rests on the rows measured in the same rounds that read no
            // clocksource: it rules the clock out only when they moved as much (the host
            // moved everything), and then the pair is measured again.
            let timer = r["explanations"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["cause"] == "timer")
                .unwrap_or_else(|| panic!("no timer explanation: {r}"));
            if !matches!(timer["claim"].as_str(), Some("explains" | "partly")) {
                let held = timer["evidence"].to_string();
                assert!(
                    held.contains("the rows whose reads it leaves alone"),
                    "{timer}"
                );
                return Err(format!(
                    "{clock} vdso moved with the rows that read no clocksource: {timer}"
                ));
            }
        }
        for (clock, path) in [("monotonic_coarse", "vdso"), ("rdtsc", "instruction")] {
            let label = format!("clock={clock},path={path}");
            let r = c["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["params"] == label.as_str());
            if let Some(r) = r {
                assert!(!causes(r).iter().any(|(c, _)| *c == "timer"), "{r}");
            }
        }
        Ok(())
    });
}

/// Busy loops on every CPU, stopped when dropped.
struct Hogs(Vec<std::process::Child>);

impl Hogs {
    fn start(n: usize) -> Hogs {
        Hogs(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_cpu_hog_on_every_cpu_is_explained_as_noise() {
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let args = [
        "ctx",
        "--mode",
        "process",
        "--placement",
        "same-cpu",
        "--samples",
        "10",
    ];
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let outcome = try_up_to(3, || {
        let quiet = run_with(&env, &[], &[], &args);
        let hogs = Hogs::start(cpus);
        let noisy = run_with(&env, &[], &[], &args);
        drop(hogs);
        let c = compare(&env, &quiet, &noisy);
        let r = row(&c, "ctx.pipe@1", "footprint_kb=0,mode=process", "same-cpu");
        let found = causes(r);
        // Noise, or the hogs as a neighbour in B's rounds, or the waiting for a CPU they
        // made B's canaries read (the CPU share), may be blamed; any other cause only where
        // the documents show it changed too (the host's steal, its clock).
        for (cause, claim) in &found {
            if claims(claim) && !matches!(*cause, "noise" | "neighbour" | "cpu-share") {
                if let Err(why) = measured_change(cause, &quiet, &noisy, r) {
                    panic!("{cause} ({claim}) blamed, but the documents show {why}: {r}");
                }
            }
        }
        // What the documents say the hog added: the others' share of the row's CPUs in
        // each run's rounds. On a machine other tenants already saturate it cannot rise
        // much, and noise may then not be named; otherwise it must explain.
        let (sa, sb) = (others_share(&quiet, r), others_share(&noisy, r));
        if sb - sa < 0.15 {
            return Err(format!(
                "the hog raised the others' share only from {sa} to {sb}"
            ));
        }
        if r["verdict"] != "B worse" {
            return Err(format!("not slower beside the hog: {r}"));
        }
        // Every round beside the hog is disturbed and in B's figures (noise reads them),
        // or a few were kept and the neighbour cause reads their figures.
        assert!(
            found.contains(&("noise", "explains")) || found.contains(&("neighbour", "explains")),
            "{r}"
        );
        Ok(())
    });
    // A try the hogs did not show in the documents is measured again; after the tries the
    // test fails, whether the hogs could not be made to show or the row was not called.
    if let Err(e) = outcome {
        panic!("no try of 3 called the row slower beside the hogs and named them: {e}");
    }
}

/// Whether result `x` of a run document is compare's row `r` (benchmark, placement and
/// each `k=v` of its params).
fn is_row(x: &Value, r: &Value) -> bool {
    x["benchmark"] == r["benchmark"]
        && x["placement"]["name"] == r["placement"]
        && r["params"].as_str().unwrap().split(',').all(|kv| {
            let Some((k, v)) = kv.split_once('=') else {
                return false;
            };
            match &x["params"][k] {
                Value::String(s) => s == v,
                other => v.parse::<Value>().is_ok_and(|p| &p == other),
            }
        })
}

/// The rounds of `doc`'s result matching compare row `r`.
fn row_rounds(doc: &Value, r: &Value) -> Option<truebench::result::rounds::Rounds> {
    let x = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| is_row(x, r))?;
    common::rounds_of(x)
}

/// The mean of `figure` over the rounds a row's figures rest on (the kept ones; all when
/// fewer than two were kept), as the run recorded it per round; None when the row has no
/// rounds or one of them has no figure.
fn round_mean(
    doc: &Value,
    r: &Value,
    figure: fn(&truebench::result::rounds::Round) -> Option<f64>,
) -> Option<f64> {
    let rounds = row_rounds(doc, r)?;
    let p: Vec<f64> = rounds
        .pooled()
        .iter()
        .map(|y| figure(y))
        .collect::<Option<_>>()?;
    (!p.is_empty()).then(|| p.iter().sum::<f64>() / p.len() as f64)
}

/// The log medians of the rounds a row's figures rest on, in the run's order.
fn round_logs(doc: &Value, r: &Value) -> Option<Vec<f64>> {
    let rounds = row_rounds(doc, r)?;
    let mut pooled = rounds.pooled();
    pooled.sort_by_key(|y| y.seq);
    Some(pooled.iter().map(|y| y.median.ln()).collect())
}

/// The share of each run's rounds above the widest gap between the two runs' sorted round
/// medians (the modes `round-modes` names, read here on their own).
fn mode_shares(a: &Value, b: &Value, r: &Value) -> Option<(f64, f64)> {
    let (la, lb) = (round_logs(a, r)?, round_logs(b, r)?);
    let mut all: Vec<f64> = la.iter().chain(&lb).copied().collect();
    all.sort_by(f64::total_cmp);
    let least = all.len() / 5;
    let cut = (least.max(1)..all.len() - least.max(1))
        .max_by(|&i, &j| (all[i] - all[i - 1]).total_cmp(&(all[j] - all[j - 1])))
        .map(|i| 0.5 * (all[i] + all[i - 1]))?;
    let share = |v: &[f64]| v.iter().filter(|x| **x > cut).count() as f64 / v.len() as f64;
    Some((share(&la), share(&lb)))
}

/// The largest move of a stretch of at least three consecutive rounds of one run from
/// that run's other rounds (a ratio, 1.2 for 20%), over both runs.
fn largest_stretch(a: &Value, b: &Value, r: &Value) -> Option<f64> {
    let mut most: f64 = 1.0;
    for logs in [round_logs(a, r)?, round_logs(b, r)?] {
        let n = logs.len();
        for from in 0..n {
            for to in from + 3..=n {
                let rest: Vec<f64> = logs[..from].iter().chain(&logs[to..]).copied().collect();
                if rest.len() < 3 {
                    continue;
                }
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                most = most.max((mean(&logs[from..to]) - mean(&rest)).abs().exp());
            }
        }
    }
    Some(most)
}

/// Other tasks' mean share (%) of the row's CPUs over the rounds its figures rest on.
fn round_others(doc: &Value, r: &Value) -> Option<f64> {
    round_mean(doc, r, |y| y.others.as_ref().map(|o| o.percent))
}

/// The hypervisor's mean steal (% of the CPUs' time) over the rounds a row's figures rest on.
fn round_steal(doc: &Value, r: &Value) -> Option<f64> {
    round_mean(doc, r, |y| y.steal)
}

/// The mean over a row's rounds of the share (%) of their canaries' time spent waiting for
/// a CPU.
fn round_waited(doc: &Value, r: &Value) -> Option<f64> {
    round_mean(doc, r, |y| y.waited)
}

/// The last CPU this process may run on.
fn last_cpu() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    list.trim()
        .rsplit([',', '-'])
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// With no calibration, a busy loop on the last CPU during B moves the process ping-pong
/// pinned across CPUs (here it got faster: a CPU kept busy does not enter an idle state,
/// so a wake-up on it is quicker; where the loop takes its CPU time it gets slower).
/// Whichever way it is called, the neighbour cause names it, from the other tasks' share
/// of the CPUs each round recorded.
#[test]
fn a_busy_loop_on_one_cpu_is_named_as_a_neighbour_on_the_ping_pong_across_cpus() {
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let args = [
        "ctx",
        "--mode",
        "process",
        "--placement",
        "same-llc",
        "--rounds",
        "5",
    ];
    let cpu = last_cpu().to_string();
    let outcome = try_up_to(3, || {
        let a = run_with(&env, &[], &[], &args);
        let b = {
            let _hog = Hogs(vec![Command::new("taskset")
                .args(["-c", &cpu, "sh", "-c", "while :; do :; done"])
                .spawn()
                .unwrap()]);
            run_with(&env, &[], &[], &args)
        };
        let c = compare(&env, &a, &b);
        let r = row(&c, "ctx.pipe@1", "footprint_kb=0,mode=process", "same-llc");
        // The loop holds most of one of the row's two CPUs in every round, and B's rounds
        // say so whether or not they were flagged.
        let ob = round_others(&b, r).expect("B's rounds record other tasks' share");
        // In a loud hour the hypervisor takes the loop's CPU time too, and a loop that got
        // too little of its CPU to keep it out of idle is not the neighbour this test needs.
        if ob < 25.0 {
            return Err(format!("the loop held only {ob}% of the row's CPUs"));
        }
        let oa = round_others(&a, r).expect("A's rounds record other tasks' share");
        if oa * 3.0 > ob {
            return Err(format!("A ran beside others too ({oa}% vs {ob}%)"));
        }
        if !matches!(r["verdict"].as_str(), Some("B worse" | "B better")) {
            return Err(format!("not called beside the busy loop: {r}"));
        }
        let e = explained_by(r, "neighbour");
        assert_eq!(e["claim"], "explains", "{e}");
        eprintln!("{}: {}", r["verdict"], e["because"]);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("no try of 3 called the ping-pong across CPUs beside the loop and named it: {e}");
    }
}

/// The share of the CPUs other processes used while a run measured row `r`: the mean its
/// rounds recorded (the figures a pooled row rests on), else (a result measured in one
/// piece) its noisy-neighbour finding's share of the usable CPUs (0 without one).
fn others_share(doc: &Value, r: &Value) -> f64 {
    if let Some(p) = round_others(doc, r) {
        return p / 100.0;
    }
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| is_row(x, r))
        .and_then(|x| {
            x["findings"]
                .as_array()?
                .iter()
                .find(|f| f["id"] == "noisy-neighbour")
        })
        .and_then(|f| {
            let m = f["message"].as_str()?;
            let rest = &m[m.find("used ")? + 5..];
            rest[..rest.find('%')?].parse::<f64>().ok()
        })
        .map(|p| p / 100.0)
        .unwrap_or(0.0)
}

/// The median of a run's pair canary readings (ns one-way; every reading of this 2-CPU
/// machine is of its one pair).
fn pair_typical(doc: &Value) -> f64 {
    let mut ns: Vec<f64> = doc["cpu_speed"]["pair_canaries"]
        .as_array()
        .expect("host-placement blamed on a run without pair canaries")
        .iter()
        .map(|p| p["ns"].as_f64().unwrap())
        .collect();
    assert!(
        !ns.is_empty(),
        "host-placement blamed without pair canaries"
    );
    ns.sort_by(f64::total_cmp);
    let n = ns.len();
    (ns[(n - 1) / 2] + ns[n / 2]) / 2.0
}

/// What the two runs' results of one row recorded about noise: finding messages, and the
/// other-tasks and steal disturbances of its rounds.
fn noise_of(doc: &Value, r: &Value) -> Vec<String> {
    let rows = || {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| is_row(x, r))
    };
    let findings = rows()
        .flat_map(|x| x["findings"].as_array().unwrap().clone())
        .filter(|f| f["id"] == "noisy-neighbour" || f["id"] == "steal-time")
        .map(|f| f["message"].to_string());
    let rounds = rows()
        .filter_map(common::rounds_of)
        .flat_map(|rs| rs.rounds)
        .flat_map(|y| y.disturbed)
        .filter(|d| matches!(d.cause, Cause::OtherTasks | Cause::Steal))
        .map(|d| d.text(None));
    findings.chain(rounds).collect()
}

/// The mean effective clock (GHz) a run sampled at its suites' starts and ends.
fn run_ghz(doc: &Value) -> Option<f64> {
    let v: Vec<f64> = doc["cpu_speed"]["samples"]
        .as_array()?
        .iter()
        .filter_map(|x| x["cycles_per_ns"].as_f64())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Whether the documents show what `cause` claims about row `r` of two runs: each cause is
/// held against what it measured (a shared host moves between runs, and a cause that says
/// so is right), never assumed unchanged. Err says what the documents show instead.
fn measured_change(cause: &str, a: &Value, b: &Value, r: &Value) -> Result<(), String> {
    let check = |ok: bool, what: String| if ok { Ok(()) } else { Err(what) };
    match cause {
        "placement" => {
            let p = r["placement"].as_str().unwrap();
            let (fa, fb) = (colocation(a, p), colocation(b, p));
            check((fa - fb).abs() >= 0.2, format!("placement at {fa} vs {fb}"))
        }
        "noise" => check(
            noise_of(a, r) != noise_of(b, r),
            format!("noise alike: {:?}", noise_of(a, r)),
        ),
        // Another tenant beside one run: its rounds record it.
        "neighbour" => match (round_others(a, r), round_others(b, r)) {
            (Some(x), Some(y)) => {
                let (lo, hi) = (x.min(y), x.max(y));
                check(
                    hi >= 5.0 && hi >= 3.0 * lo,
                    format!("others {lo}% vs {hi}%"),
                )
            }
            _ => Err("neighbour without both sides' figures".into()),
        },
        // The host kept the vCPUs apart in one run and close in the other: both
        // documents' pair canaries must say so.
        "host-placement" => {
            let (ta, tb) = (pair_typical(a), pair_typical(b));
            let (lo, hi) = (ta.min(tb), ta.max(tb));
            check(hi >= 1.5 * lo, format!("pair canaries {ta} vs {tb} ns"))
        }
        // The host's turbo budget or its other tenants moved the effective clock (the
        // loud hour of 2026-11-28: 2.19 and 2.45 GHz): both documents' samples say so.
        "cpu-speed" => match (run_ghz(a), run_ghz(b)) {
            (Some(x), Some(y)) => check(
                (y / x).ln().abs() >= 1.05f64.ln(),
                format!("effective clocks {x:.2} vs {y:.2} GHz"),
            ),
            _ => Err("cpu-speed without both runs' clocks".into()),
        },
        // The two runs' rounds fall in two modes in other shares: both documents' rounds
        // say so.
        "round-modes" => match mode_shares(a, b, r) {
            Some((x, y)) => check(
                (x - y).abs() >= 0.15,
                format!(
                    "rounds in the upper mode {:.0}% vs {:.0}%",
                    x * 100.0,
                    y * 100.0
                ),
            ),
            None => Err("round-modes without both sides' rounds".into()),
        },
        // A stretch of one run's rounds moved from the rest of that run: its rounds say so.
        "run-shift" => match largest_stretch(a, b, r) {
            Some(x) => check(
                x >= 1.03,
                format!("no stretch of rounds moved 3% (at most {x:.3})"),
            ),
            None => Err("run-shift without both sides' rounds".into()),
        },
        // The hypervisor took more of one run's rounds: both documents' rounds say so.
        "steal" => match (round_steal(a, r), round_steal(b, r)) {
            (Some(x), Some(y)) => check(
                (x - y).abs() >= 1.0,
                format!("steal {x:.1}% vs {y:.1}% of the rounds' CPU time"),
            ),
            _ => Err("steal without both sides' figures".into()),
        },
        // A neighbour or a low CPU weight made one run's threads wait for a CPU: both
        // documents' rounds say so.
        "cpu-share" => match (round_waited(a, r), round_waited(b, r)) {
            (Some(x), Some(y)) => check(
                (x - y).abs() >= 1.0,
                format!("waiting {x:.1}% vs {y:.1}% of the canaries' time"),
            ),
            _ => Err("cpu-share without both sides' figures".into()),
        },
        // The clock itself: another clocksource, a read that fell back to the system call
        // in one run, or the probes' costs of the row's clock 3x apart.
        "timer" => {
            let syscall = |d: &Value| {
                common::finding_ids(&d["env"]["findings"]).contains(&"clock-read-syscall")
            };
            let param = |k: &str| {
                r["params"]
                    .as_str()
                    .unwrap()
                    .split(',')
                    .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                    .map(str::to_string)
            };
            let key = if param("path").as_deref() == Some("syscall") {
                "syscall_cost_ns"
            } else {
                "read_cost_ns"
            };
            let cost = |d: &Value| d["env"]["clock"][key][param("clock")?.as_str()].as_f64();
            let probe_apart = cost(a)
                .zip(cost(b))
                .is_some_and(|(x, y)| (y / x).ln().abs() >= 3f64.ln());
            check(
                a["env"]["clock"]["clocksource"] != b["env"]["clock"]["clocksource"]
                    || syscall(a) != syscall(b)
                    || probe_apart,
                "the same clocksource and read path, the probe's costs within 3x".into(),
            )
        }
        other => Err(format!(
            "{other}: not a cause two runs of one command can show"
        )),
    }
}

/// Two runs of one command on a shared host measure alike only when the host let them: a
/// cause `compare` names between them must be one the documents show changed (each claim
/// held against what it measured), never one that did not.
#[test]
fn the_same_command_twice_blames_no_cause_that_did_not_change() {
    let _one = one_at_a_time();
    let env = TestEnv::new();
    for args in [&["timers", "--samples", "5"][..], CTX] {
        let a = run_with(&env, &[], &[], args);
        let b = run_with(&env, &[], &[], args);
        let c = compare(&env, &a, &b);
        assert_eq!(c["env_differences"].as_array().unwrap().len(), 0, "{c}");
        assert!(c["topology_differences"].as_array().unwrap().is_empty());
        for r in c["rows"].as_array().unwrap() {
            for (cause, claim) in causes(r) {
                if claims(claim) {
                    if let Err(why) = measured_change(cause, &a, &b, r) {
                        panic!("{cause} ({claim}) blamed, but the documents show {why}: {r}");
                    }
                }
            }
        }
    }
}

/// Stored copies of the timers fixture, one per host, with tags.
fn fleet(env: &TestEnv) -> Vec<String> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/documents/timers.json"),
    )
    .unwrap();
    let mut ids = vec![];
    for (i, (host, rack)) in [("h1", "r1"), ("h2", "r2"), ("h3", "r2"), ("h1", "r1")]
        .iter()
        .enumerate()
    {
        let mut d: Value = serde_json::from_str(&text).unwrap();
        let id = format!("20990101T00000{i}Z-f{i:03}");
        d["run_id"] = id.clone().into();
        d["started_at"] = format!("2026-01-01T00:00:0{i}Z").into();
        d["host"] = (*host).into();
        d["tags"] = serde_json::json!({"rack": rack});
        let f = env.file(&format!("{i}.json"), &d.to_string());
        env.cmd().arg("import").arg(&f).assert().success();
        ids.push(id);
    }
    ids
}

#[test]
fn several_runs_rank_against_a_baseline_per_host_top_and_by_tag() {
    let env = TestEnv::new();
    let ids = fleet(&env);
    // The newest run of each host: h1's second run, h2, h3, as a fleet.
    let f = env.json(&["compare", "--latest-per-host", "--json", "--by", "tag:rack"]);
    assert_eq!(f["schema"], "truebench.compare/1");
    assert_eq!(f["view"], "fleet");
    let runs: Vec<&str> = f["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert!(runs.contains(&ids[3].as_str()) && !runs.contains(&ids[0].as_str()));
    // Identical documents: no outlier, one shared rank.
    let hosts = f["hosts"].as_array().unwrap();
    assert!(
        hosts
            .iter()
            .all(|h| h["outlier"] == false && h["rank"] == 1),
        "{hosts:?}"
    );
    let groups: Vec<&str> = f["tag_groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups.len(), 2, "{groups:?}");
    // --baseline RUN: each run against it, ranked per row; each row written once.
    let f = env.json(&[
        "compare",
        &ids[0],
        &ids[1],
        &ids[2],
        "--baseline",
        &ids[0],
        "--by",
        "tag:rack",
        "--json",
    ]);
    let ranked = &f["ranking"][0];
    assert_eq!(ranked["entries"].as_array().unwrap().len(), 3);
    assert!(ranked["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["rank"] == 1));
    assert_eq!(ranked["groups"].as_array().unwrap().len(), 2);
    assert!(f["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["explanations"].as_array().unwrap().is_empty()));
    assert!(f["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c.get("rows").is_none()));
    // --baseline picks the run the others are judged against; --top 1 keeps both ends.
    let f = env.json(&[
        "compare",
        &ids[0],
        &ids[1],
        &ids[2],
        "--baseline",
        &ids[2],
        "--top",
        "1",
        "--json",
    ]);
    assert_eq!(f["baseline"], ids[2].as_str());
    assert_eq!(f["ranking"][0]["entries"].as_array().unwrap().len(), 2);
    assert_eq!(f["ranking"][0]["omitted"], 1);
    let text = env.text(&["compare", &ids[0], &ids[1], &ids[2], "--by", "tag:rack"]);
    assert!(text.contains("r2") && text.contains("2 hosts"), "{text}");
    let text = env.text(&[
        "compare",
        &ids[0],
        &ids[1],
        &ids[2],
        "--by",
        "tag:rack",
        "--baseline",
        &ids[0],
    ]);
    assert!(text.contains("group r2: 2 runs"), "{text}");
}

#[test]
fn two_runs_are_shown_with_their_tags() {
    let env = TestEnv::new();
    let ids = fleet(&env);
    let text = env.text(&["compare", &ids[0], &ids[1]]);
    assert!(
        text.contains(&format!("A = {} (tags rack=r1)", ids[0])),
        "{text}"
    );
    assert!(
        text.contains(&format!("B = {} (tags rack=r2)", ids[1])),
        "{text}"
    );
    let j = env.json(&["compare", &ids[0], &ids[1], "--json"]);
    assert_eq!(j["tags"][0]["rack"], "r1", "{}", j["tags"]);
    assert_eq!(j["tags"][1]["rack"], "r2", "{}", j["tags"]);
    let html = env.text(&["report", &ids[0], &ids[1]]);
    assert!(html.contains("Tags: A rack=r1 | B rack=r2"), "{html}");
}

#[test]
fn bad_compare_requests_are_refused() {
    let env = TestEnv::new();
    let ids = fleet(&env);
    for args in [
        vec!["compare", ids[0].as_str()],
        vec!["compare", ids[0].as_str(), ids[1].as_str(), "--by", "rack"],
        vec!["compare", ids[0].as_str(), "--latest-per-host"],
        vec!["compare", ids[0].as_str(), ids[1].as_str(), "--top", "0"],
        vec![
            "compare",
            ids[0].as_str(),
            ids[1].as_str(),
            "--baseline",
            "nosuch",
        ],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error:") && out.stdout.is_empty(),
            "{args:?}: {err}"
        );
    }
}

/// Rows of compare `c` whose verdict is a call.
fn called(c: &Value) -> Vec<&Value> {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| matches!(r["verdict"].as_str(), Some("B better" | "B worse")))
        .collect()
}

/// Every call of `c` is claimed by a measured cause (explains, partly, contributes).
fn every_call_claimed(c: &Value) -> Result<(), String> {
    for r in called(c) {
        if !causes(r).iter().any(|(_, k)| claims(k)) {
            return Err(format!("a call no measured cause claims: {r}"));
        }
    }
    Ok(())
}

/// A condition of B, story 1 with a cgroup: A on every CPU, B in a cpuset of one CPU (no
/// calibration). The unpinned ping-pong's two ends share B's one CPU, and truebench's own
/// threads there are the row, not a disturbance: both modes' `os` rows are called "B better"
/// and placement explains them, in every try where A's pair ran apart at all (a try whose A
/// kept its pair together, as a loaded host's scheduler may, did not make the condition and
/// is measured again; after three such the test fails).
#[test]
#[ignore = "needs root"]
fn a_cpuset_of_one_cpu_is_called_on_the_unpinned_ping_pong_and_explained_by_placement() {
    common::needs_root();
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let args = ["run", "--json", "ctx", "--budget", "12s"];
    within_tries(3, || {
        let a = env.json(&args);
        let b = Group::one_cpu(0).run(&env, &args);
        assert_eq!(
            b["env"]["cpus"]["usable"],
            serde_json::json!([0]),
            "{}",
            b["env"]["cpus"]
        );
        let fa = colocation(&a, "os");
        if fa > 0.5 {
            return Err(format!(
                "A's unpinned pair ran together in {fa} of observations"
            ));
        }
        let c = compare(&env, &a, &b);
        for mode in ["process", "thread"] {
            let os = row(
                &c,
                "ctx.pipe@1",
                &format!("footprint_kb=0,mode={mode}"),
                "os",
            );
            assert_eq!(os["verdict"], "B better", "{mode}: {os}");
            let p = explained_by(os, "placement");
            assert!(p["because"].as_str().unwrap().contains("100%"), "{p}");
            // B's rounds were not set aside for its own threads' waiting.
            assert!(
                !os["why"].as_str().unwrap().contains("disturbed"),
                "{mode}: {os}"
            );
        }
        // A same-cpu row is called only where a measured cause claims it.
        every_call_claimed(&c)?;
        Ok(())
    });
}

/// A copy loop over a 256 MiB buffer on the last CPU, stopped when dropped: a neighbour
/// that holds that CPU's memory bandwidth for as long as it runs.
fn memory_hog() -> Hogs {
    let cpu = last_cpu().to_string();
    Hogs(vec![Command::new("taskset")
        .args([
            "-c",
            &cpu,
            "python3",
            "-c",
            "a = bytearray(256 << 20)\nb = bytearray(256 << 20)\nwhile True:\n    b[:] = a\n",
        ])
        .spawn()
        .unwrap()])
}

/// A neighbour of B for its whole run: A quiet, B beside a process copying a 256 MiB buffer
/// on the other CPU. The neighbour is in every round of B at a steady share (a condition
/// of B, kept in its figures), so at least half the 2-thread bandwidth rows it moved by more
/// than 15% are called "B worse" and claimed by `neighbour`, with the share it took in each
/// run. A try where the documents do not show the neighbour (under a quarter of the CPUs, or
/// A beside others too) is measured again; after three tries the test fails.
#[test]
#[ignore = "needs root"]
fn a_neighbour_holding_memory_bandwidth_for_all_of_b_is_called_and_named() {
    common::needs_root();
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let args = ["run", "--json", "memory.bandwidth", "--budget", "25s"];
    within_tries(3, || {
        let a = env.json(&args);
        let b = {
            let _hog = memory_hog();
            std::thread::sleep(std::time::Duration::from_millis(300));
            env.json(&args)
        };
        let c = compare(&env, &a, &b);
        let two: Vec<&Value> = c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["params"].as_str().unwrap().contains("threads=2"))
            .collect();
        let (oa, ob) = (round_others(&a, two[0]), round_others(&b, two[0]));
        let (oa, ob) = (
            oa.unwrap_or(0.0),
            ob.expect("B's rounds record other tasks"),
        );
        if ob < 25.0 || oa * 3.0 > ob {
            return Err(format!(
                "the neighbour did not show: others {oa}% in A, {ob}% in B"
            ));
        }
        every_call_claimed(&c)?;
        let moved: Vec<&&Value> = two
            .iter()
            .filter(|r| r["ratio"].as_f64().unwrap() < 1.0 / 1.15)
            .collect();
        let named = moved
            .iter()
            .filter(|r| {
                r["verdict"] == "B worse"
                    && r["explanations"].as_array().unwrap().iter().any(|e| {
                        e["cause"] == "neighbour"
                            && e["claim"] == "explains"
                            && e["evidence"].to_string().contains("A: other tasks used")
                            && e["evidence"].to_string().contains("B: other tasks used")
                    })
            })
            .count();
        if moved.is_empty() || named * 2 < moved.len() {
            return Err(format!(
                "{named} of {} 2-thread rows moved by more than 15% called and named: {}",
                moved.len(),
                serde_json::to_string(&moved).unwrap()
            ));
        }
        eprintln!(
            "{named} of {} moved 2-thread rows called and named",
            moved.len()
        );
        Ok(())
    });
}

/// A busy loop on the last CPU for the whole of B (timers, ctx): the rows it moved by more
/// than 30% are called and claimed (by `neighbour`, or `placement` where the loop moved the
/// unpinned ping-pong), and no call is left unclaimed.
#[test]
#[ignore = "needs root"]
fn a_busy_loop_for_all_of_b_is_called_and_claimed_on_the_rows_it_moved() {
    common::needs_root();
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let args = ["run", "--json", "timers,ctx", "--budget", "16s"];
    let cpu = last_cpu().to_string();
    within_tries(3, || {
        let a = env.json(&args);
        let b = {
            let _hog = Hogs(vec![Command::new("taskset")
                .args(["-c", &cpu, "sh", "-c", "while :; do :; done"])
                .spawn()
                .unwrap()]);
            env.json(&args)
        };
        let c = compare(&env, &a, &b);
        every_call_claimed(&c)?;
        let mut moved = 0;
        for r in c["rows"].as_array().unwrap() {
            let x = r["ratio"].as_f64().unwrap();
            if (0.7..=1.3).contains(&x) || round_others(&b, r).is_none_or(|o| o < 20.0) {
                continue;
            }
            moved += 1;
            if !matches!(r["verdict"].as_str(), Some("B better" | "B worse")) {
                return Err(format!("moved {x:.2}x beside the loop, not called: {r}"));
            }
            assert!(
                causes(r)
                    .iter()
                    .any(|(k, cl)| matches!(*k, "neighbour" | "placement") && claims(cl)),
                "{r}"
            );
        }
        eprintln!("{moved} rows moved by more than 30% beside the loop, each called and claimed");
        Ok(())
    });
}

/// A bursty neighbour during B only (busy 30 ms of every 100 ms on each CPU): some rounds
/// are disturbed and set aside, and no call is left that no measured cause claims.
#[test]
#[ignore = "needs root"]
fn a_bursty_neighbour_during_b_leaves_no_call_unclaimed() {
    common::needs_root();
    let _one = one_at_a_time();
    let env = TestEnv::new();
    let args = ["run", "--json", "timers,ctx", "--budget", "12s"];
    let a = env.json(&args);
    let b = {
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        let burst = "import time\nwhile True:\n    t = time.monotonic()\n    while time.monotonic() - t < 0.03:\n        pass\n    time.sleep(0.07)\n";
        let _hogs = Hogs(
            (0..cpus)
                .map(|i| {
                    Command::new("taskset")
                        .args(["-c", &i.to_string(), "python3", "-c", burst])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        );
        env.json(&args)
    };
    let c = compare(&env, &a, &b);
    every_call_claimed(&c).unwrap();
    // What the bursts cost is said where a row cannot be told for them.
    for r in c["rows"].as_array().unwrap() {
        let why = r["why"].as_str().unwrap();
        if why.contains("rounds of B disturbed") && why.contains("other-tasks") {
            assert!(why.contains("other tasks took"), "{r}");
        }
    }
}
