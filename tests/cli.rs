//! The command line end to end: probe on this machine, run/history/show/export/import/
//! compare, the run lock, Ctrl-C, and bad inputs (exit 2, one `error:` line, no change to
//! the database).

use serde_json::Value;
use std::path::Path;

mod common;

use common::TestEnv as Env;

fn fixture(name: &str) -> String {
    common::fixture(name).display().to_string()
}

/// The database's bytes (with its WAL), to prove a refused command changed nothing.
fn db_state(db: &Path) -> Vec<u8> {
    let mut v = std::fs::read(db).unwrap_or_default();
    v.extend(std::fs::read(db.with_extension("db-wal")).unwrap_or_default());
    v
}

#[test]
fn probe_json_describes_this_machine() {
    let env = Env::new();
    let p = env.json(&["probe", "--json"]);
    truebench::result::validate_probe(&p).unwrap();
    assert_eq!(p["schema"], "truebench.probe/1");
    let online = p["cpus"]["online"].as_array().unwrap();
    let nproc = std::thread::available_parallelism().unwrap().get();
    assert!(
        online.len() >= nproc,
        "{} online CPUs but {nproc} available",
        online.len()
    );
    assert!(p["clock"]["clocksource"].is_string());
    let mono = p["clock"]["read_cost_ns"]["monotonic"].as_f64().unwrap();
    let sys = p["clock"]["syscall_cost_ns"]["monotonic"].as_f64().unwrap();
    assert!(
        (1.0..5000.0).contains(&mono),
        "monotonic read {mono} ns is implausible"
    );
    assert!(
        (20.0..50_000.0).contains(&sys),
        "syscall read {sys} ns is implausible"
    );
    assert!(
        p["probe_ms"].as_f64().unwrap() < 1000.0,
        "probe took {} ms",
        p["probe_ms"]
    );
    // The container layer rests on namespaces: a marker file alone never makes one.
    if p["virtualization"]["container"].is_string() {
        let ev = p["virtualization"]["evidence"].to_string();
        assert!(
            ev.contains("non-initial namespaces") || ev.contains("container="),
            "{ev}"
        );
    }
}

/// This project's machine: a KVM guest with a stray /.dockerenv. Only meaningful there.
#[test]
fn probe_on_the_project_vm_says_kvm_not_container() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let is_project_vm = Path::new("/.dockerenv").exists()
        && cpuinfo.contains(" hypervisor")
        && std::fs::read_link("/proc/self/ns/pid")
            .map(|l| l.to_string_lossy().contains("4026531836"))
            .unwrap_or(false);
    if !is_project_vm {
        eprintln!("skipped: not the project's KVM guest with a stray /.dockerenv");
        return;
    }
    let p = Env::new().json(&["probe", "--json"]);
    assert_eq!(p["virtualization"]["vm"], "kvm");
    assert_eq!(p["virtualization"]["container"], Value::Null);
    assert_eq!(p["cpus"]["online"].as_array().unwrap().len(), 2);
    let ids: Vec<&str> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"stray-container-marker"), "{ids:?}");
    assert!(ids.contains(&"pmu-unavailable"), "{ids:?}");
}

#[test]
fn probe_text_draws_the_topology() {
    let out = Env::new()
        .cmd()
        .args(["probe", "--root", &fixture("epyc-multi-llc-2node")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Package 0 [0-31]"), "{text}");
    assert!(
        text.contains("L3 16 MiB (LLC) [0-3,16-19]: 4 cores"),
        "{text}"
    );
    assert!(
        text.contains("Core [0,16] — L1d 32 KiB, L1i 32 KiB, L2 512 KiB"),
        "{text}"
    );
    assert!(text.contains("not measured (captured tree)"), "{text}");
}

#[test]
fn run_stores_a_valid_document_with_plausible_timers() {
    let env = Env::new();
    let doc = env.run(&["timers", "--samples", "5"]);
    let run = truebench::result::validate(&doc).unwrap();
    assert_eq!(run.suites, vec!["timers"]);
    assert!(!run.interrupted);
    assert!(run.results.len() >= 10, "{} results", run.results.len());
    for r in &run.results {
        assert_eq!(r.benchmark, "timers.clock-read@1");
        assert_eq!(r.unit, "ns/read");
        assert_eq!(r.stats.n, 5);
        assert_eq!(r.samples.len(), 5);
        assert!(
            r.quality.timer_share < 0.001,
            "{}: timer share {}",
            r.key(),
            r.quality.timer_share
        );
        assert!(
            r.quality.batch_ns >= 2e6 * 0.9,
            "{}: batch {} ns",
            r.key(),
            r.quality.batch_ns
        );
        assert!(
            (0.1..100_000.0).contains(&r.stats.median),
            "{}: {} ns",
            r.key(),
            r.stats.median
        );
    }
    let clock = |c: &str, p: &str| {
        run.results
            .iter()
            .find(|r| {
                r.params.get("clock").map(|v| v.to_string()).as_deref() == Some(c)
                    && r.params.get("path").map(|v| v.to_string()).as_deref() == Some(p)
            })
            .unwrap()
            .stats
            .median
    };
    assert!(clock("monotonic_coarse", "vdso") < clock("monotonic", "syscall"));
    let hist = env.json(&["history", "--json"]);
    assert_eq!(hist.as_array().unwrap().len(), 1);
    assert_eq!(hist[0]["run_id"], doc["run_id"]);
}

#[test]
fn show_export_import_compare_round_trip() {
    let env = Env::new();
    let a = env.run(&["timers", "--samples", "5"]);
    let b = env.run(&["timers", "--samples", "5"]);
    let (ida, idb) = (a["run_id"].as_str().unwrap(), b["run_id"].as_str().unwrap());

    let shown = env.json(&["show", ida, "--json"]);
    assert_eq!(shown, a);
    let text = env.cmd().args(["show", "latest"]).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains(idb));

    let file = env.dir.path().join("a.json");
    env.cmd()
        .args(["export", ida, "-o"])
        .arg(&file)
        .assert()
        .success();
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(exported, a);

    // Import into a second database: the same document comes back out.
    let other = Env::new();
    other.cmd().arg("import").arg(&file).assert().success();
    assert_eq!(other.json(&["export", ida]), a);

    let c = env.json(&["compare", ida, idb, "--json"]);
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), a["results"].as_array().unwrap().len());
    for r in rows {
        assert!(r["ratio"].as_f64().unwrap() > 0.0);
        assert!(r["verdict"].is_string());
    }
    assert_eq!(
        c["env_differences"].as_array().unwrap().len(),
        0,
        "{}",
        c["env_differences"]
    );
    let text = String::from_utf8(
        env.cmd()
            .args(["compare", ida, idb])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(text.contains("B/A") && text.contains("ns/read"), "{text}");
    // A run against itself is compared, and the reader told so; two runs are not.
    let same = env.cmd().args(["compare", ida, ida]).output().unwrap();
    assert!(same.status.success());
    let said = String::from_utf8_lossy(&same.stderr);
    assert!(
        said.contains(&format!("A and B are the same run ({ida})")),
        "{said}"
    );
    let two = env.cmd().args(["compare", ida, idb]).output().unwrap();
    assert!(!String::from_utf8_lossy(&two.stderr).contains("the same run"));
}

#[test]
fn compare_names_environment_differences() {
    let env = Env::new();
    let a = env.run(&["timers", "--samples", "5"]);
    // The same run as if measured in the docker container fixture with another clocksource.
    let mut b = a.clone();
    b["run_id"] = "20990101T000000Z-beef".into();
    b["env"]["virtualization"]["container"] = "docker".into();
    b["env"]["clock"]["clocksource"] = "kvm-clock".into();
    b["env"]["cpus"]["cgroup_quota"] = 1.5.into();
    let f = env.file("b.json", &b.to_string());
    env.cmd().arg("import").arg(&f).assert().success();
    let c = env.json(&[
        "compare",
        a["run_id"].as_str().unwrap(),
        "20990101",
        "--json",
    ]);
    let whats: Vec<&str> = c["env_differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["what"].as_str().unwrap())
        .collect();
    assert_eq!(whats, vec!["CPU quota", "container", "clocksource"]);
}

#[test]
fn a_second_run_refuses_and_names_the_holder() {
    let env = Env::new();
    let held = env.hold_lock("truebench run timers");
    let out = env
        .cmd()
        .args(["run", "timers", "--samples", "3"])
        .output()
        .unwrap();
    common::assert_lock_refused(&out, "truebench run timers");
    assert!(
        !env.db().exists()
            || env
                .json(&["history", "--json"])
                .as_array()
                .unwrap()
                .is_empty()
    );
    drop(held);
    env.cmd()
        .args(["run", "timers", "--samples", "3"])
        .assert()
        .success();
}

#[test]
fn ctrl_c_keeps_finished_results_and_exits_130() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let env = Env::new();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"));
    cmd.env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .args(["run", "timers", "--samples", "400", "--rounds", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // Progress goes to stderr one line per finished result (stderr is not a terminal):
    // interrupt once the first result is finished, whatever the machine's speed.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    loop {
        first.clear();
        let n = std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
        assert!(n > 0, "the run ended before finishing a result");
        if first.starts_with("truebench: 1/") {
            break;
        }
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "stderr: {rest}");
    assert!(rest.contains("error: interrupted"), "{rest}");
    let doc = env.json(&["show", "latest", "--json"]);
    let run = truebench::result::validate(&doc).unwrap();
    assert!(run.interrupted);
    assert!(
        !run.results.is_empty(),
        "the result finished before the interrupt was not kept"
    );
    assert!(
        run.results.len() < 11,
        "all {} results finished before the interrupt",
        run.results.len()
    );
    for r in &run.results {
        assert_eq!(r.stats.n, 400, "an unfinished result was kept");
    }
    // The lock was released: another run can start.
    env.cmd()
        .args(["run", "timers", "--samples", "3"])
        .assert()
        .success();
}

#[test]
fn every_command_answers_help() {
    let env = Env::new();
    for sub in [
        "probe", "run", "history", "show", "export", "import", "compare",
    ] {
        let out = env.cmd().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage: truebench"),
            "{sub} --help"
        );
    }
    let out = env.cmd().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Exit codes"));
    let list = env.cmd().args(["run", "--list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("timers.clock-read@1"));
}

#[test]
fn bad_inputs_exit_2_with_one_error_line_and_change_nothing() {
    let env = Env::new();
    let a = env.run(&["timers", "--samples", "5"]);
    let id = a["run_id"].as_str().unwrap().to_string();
    let before = db_state(&env.db());

    let broken = env.file("broken.json", "{\"schema\": \"truebench.result/1\", ");
    let probe_doc = env.file(
        "probe.json",
        &env.json(&["probe", "--json", "--root", &fixture("arm-no-l3")])
            .to_string(),
    );
    let mut tampered = a.clone();
    tampered["run_id"] = "20990101T000000Z-dead".into();
    tampered["results"][0]["stats"]["median"] = 12345.0.into();
    let tampered = env.file("tampered.json", &tampered.to_string());
    let mut no_results_key = a.clone();
    no_results_key.as_object_mut().unwrap().remove("results");
    let no_results_key = env.file("incomplete.json", &no_results_key.to_string());
    let plain_file = env.file("plain.txt", "not a directory");
    let existing = env.file("exists.json", "{}");
    let dir = env.dir.path().to_str().unwrap().to_string();
    let db_in_proc = "/proc/version/results.db".to_string();

    let cases: Vec<Vec<String>> = vec![
        vec!["frobnicate".into()],
        vec!["run".into(), "nosuchsuite".into()],
        vec![
            "run".into(),
            "timers".into(),
            "--samples".into(),
            "many".into(),
        ],
        vec![
            "run".into(),
            "timers".into(),
            "--samples".into(),
            "0".into(),
        ],
        vec!["probe".into(), "--root".into(), "/nonexistent/tree".into()],
        vec![
            "probe".into(),
            "--root".into(),
            plain_file.display().to_string(),
        ],
        vec!["probe".into(), "--root".into(), dir.clone()],
        vec!["import".into(), broken.display().to_string()],
        vec!["import".into(), probe_doc.display().to_string()],
        vec!["import".into(), tampered.display().to_string()],
        vec!["import".into(), no_results_key.display().to_string()],
        vec!["import".into(), "/nonexistent/run.json".into()],
        vec!["show".into(), "nosuchrun".into()],
        vec!["compare".into(), id.clone(), "nosuchrun".into()],
        vec![
            "export".into(),
            id.clone(),
            "-o".into(),
            existing.display().to_string(),
        ],
        vec!["history".into(), "--limit".into(), "0".into()],
        vec!["history".into(), "--limit".into(), "-3".into()],
        vec!["compare".into(), id.clone()],
        vec![
            "run".into(),
            "timers".into(),
            "--samples".into(),
            "-1".into(),
        ],
        vec!["run".into(), "timers".into(), "--rounds".into(), "0".into()],
        vec![
            "run".into(),
            "timers".into(),
            "--precision".into(),
            "200%".into(),
        ],
        vec![
            "run".into(),
            "timers".into(),
            "--precision".into(),
            "5%".into(),
            "--budget".into(),
            "abc".into(),
        ],
        vec![
            "run".into(),
            "ctx".into(),
            "--cpus".into(),
            "0,99999".into(),
        ],
        vec!["run".into(), "--frobnicate".into()],
        vec!["record".into(), "--json".into(), "--csv".into()],
        vec!["show".into()],
        vec!["--db".into(), dir.clone(), "history".into()],
        vec!["--db".into(), db_in_proc, "run".into(), "timers".into()],
        vec![
            "import".into(),
            env.dir.path().join("a.json").display().to_string(),
        ],
    ];
    // The last case: the run is already in the database.
    std::fs::write(env.dir.path().join("a.json"), a.to_string()).unwrap();

    for args in &cases {
        let out = env.cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: exit {:?}, stderr {err}",
            out.status.code()
        );
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with("error:"),
            "{args:?}: stderr starts {first:?}"
        );
        assert_eq!(
            err.lines().count(),
            1,
            "{args:?}: more than one line: {err}"
        );
        assert!(
            out.stdout.is_empty(),
            "{args:?}: printed {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(db_state(&env.db()), before, "{args:?} changed the database");
    }
    assert_eq!(
        std::fs::read_to_string(&existing).unwrap(),
        "{}",
        "export overwrote a file"
    );
}

/// An option is refused (exit 2, nothing written) when none of the suites named uses it,
/// instead of being silently ignored; closed choices are refused by their names.
#[test]
fn an_option_no_named_suite_uses_is_refused() {
    let env = Env::new();
    for (args, flag) in [
        (&["timers", "--cpus", "0,1"][..], "--cpus"),
        (&["timers", "--copies", "2"][..], "--copies"),
        (&["timers", "--mode", "thread"][..], "--mode"),
        (&["timers", "--footprint", "4"][..], "--footprint"),
        (&["memory", "--placement", "same-cpu"][..], "--placement"),
        (&["ctx", "--array-size", "512M"][..], "--array-size"),
        (&["ctx", "--full"][..], "--full"),
        (&["ctx", "--clocksource-sweep"][..], "--clocksource-sweep"),
        (&["ctx", "--placement", "same-socket"][..], "--placement"),
        (&["ctx", "--mode", "fiber"][..], "--mode"),
    ] {
        let out = env.cmd().arg("run").args(args).output().unwrap();
        common::assert_refused(&env, &out, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
    let help = env.cmd().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("[possible values: same-cpu, smt-sibling"),
        "{help}"
    );
    for name in truebench::placement::NAMES {
        assert!(help.contains(name), "{name} missing from run --help");
    }
}

/// The subcommands `truebench --help` lists (every one but `help`).
fn subcommands(env: &Env) -> Vec<String> {
    let out = env.cmd().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let commands = text
        .split("Commands:\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .unwrap_or_default()
        .to_string();
    commands
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// Each option's paragraph of a subcommand's `--help`, keyed by its long name.
fn option_paragraphs(help: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![];
    for line in help.lines() {
        let t = line.trim_start();
        let is_option = line.len() - t.len() >= 2
            && (t.starts_with("--") || (t.starts_with('-') && t.get(2..5) == Some(", -")));
        if is_option {
            let name = t[t.find("--").unwrap() + 2..]
                .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .next()
                .unwrap()
                .to_string();
            out.push((name, line.to_string()));
        } else if let Some(last) = out.last_mut() {
            if !line.is_empty() && line.starts_with(' ') {
                last.1.push(' ');
                last.1.push_str(t);
            }
        }
    }
    out
}

/// `--help` answers for every subcommand (and `help CMD` says the same), within 100
/// columns, with examples where the usage is not obvious; every bounded option says its
/// bounds: an option refused outside a range (tried with 0 and a huge value, with an
/// unusable database so that an accepted value never starts any work) names that range
/// in its help.
#[test]
fn every_subcommand_help_gives_ranges_and_examples() {
    let env = Env::new();
    let subs = subcommands(&env);
    assert!(subs.len() >= 15, "{subs:?}");
    let obvious = ["probe", "history", "show", "report"];
    // A database under a regular file: every command that would start work with an
    // accepted value is refused first (the value errors come before it).
    let unusable = env.file("not-a-dir", "").join("results.db");
    let mut checked = 0;
    let mut unsaid = vec![];
    for sub in &subs {
        let out = env.cmd().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success(), "{sub} --help");
        let help = String::from_utf8_lossy(&out.stdout).to_string();
        let via_help = env.cmd().args(["help", sub]).output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&via_help.stdout),
            help,
            "help {sub}"
        );
        for l in help.lines() {
            assert!(l.chars().count() <= 100, "{sub} --help: {l}");
        }
        if !obvious.contains(&sub.as_str()) {
            assert!(
                help.contains("Examples:\n  truebench"),
                "{sub} --help has no example"
            );
        }
        for (name, text) in option_paragraphs(&help) {
            if !text.contains('<') || name == "db" || name == "help" {
                continue;
            }
            for bad in ["0", "99999999999"] {
                let flag = format!("--{name}");
                let out = env
                    .cmd()
                    .env("TRUEBENCH_DB", &unusable)
                    .current_dir(env.dir.path())
                    .args([sub.as_str(), &flag, bad])
                    .output()
                    .unwrap();
                assert!(
                    !env.db().exists(),
                    "{sub} {flag} {bad} created the database"
                );
                let err = String::from_utf8_lossy(&out.stderr).to_string();
                let stated = |range: &str| text.contains(range);
                // clap's ranged integers: "0 is not in 1..=1000".
                if err.contains(" is not in ") || err.contains(" is outside ") {
                    checked += 1;
                }
                if let Some(r) = err.split(" is not in ").nth(1) {
                    let r = r.split(' ').next().unwrap();
                    let (lo, hi) = r.split_once("..=").unwrap();
                    let unbounded = [u32::MAX as i128, u64::MAX as i128, i32::MAX as i128]
                        .iter()
                        .any(|m| hi == m.to_string());
                    let type_min = lo == "0" || lo == i32::MIN.to_string();
                    let pow =
                        (hi.len() > 4 && hi[1..].chars().all(|c| c == '0') && &hi[..1] == "1")
                            .then(|| format!("{lo} to 10^{}", hi.len() - 1));
                    // A bare integer's own limits (`--cpus 99999999999`) need no words.
                    if !((unbounded && (type_min || stated(&format!("at least {lo}"))))
                        || stated(&format!("{lo} to {hi}"))
                        || pow.is_some_and(|p| stated(&p)))
                    {
                        unsaid.push(format!("{sub} {flag}: refused as {r}: {text}"));
                    }
                }
                // Seconds: "0 is outside 0.1 to 3600 s".
                if let Some(r) = err.split(" is outside ").nth(1) {
                    let range: String = r.split(' ').take(3).collect::<Vec<_>>().join(" ");
                    if !stated(&range) {
                        unsaid.push(format!("{sub} {flag}: refused outside {range}: {text}"));
                    }
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} bounded values were refused");
    assert!(
        unsaid.is_empty(),
        "bounds not in the help:\n{}",
        unsaid.join("\n")
    );
}

/// The stored timers run of tests/fixtures/documents.
fn timers_document() -> std::path::PathBuf {
    common::documents()
        .into_iter()
        .find(|p| p.ends_with("timers.json"))
        .unwrap()
}

/// `-o`/`--capture` never write over a file they did not write: `probe --capture`,
/// `export -o` refuse an existing file; `report -o` and `export --format openmetrics -o`
/// replace only a report or metrics file of their own (a slip of `-o results.db` replaced
/// the database), all before any work, exit 2, the file untouched.
#[test]
fn output_files_never_replace_a_file_truebench_did_not_write() {
    let env = Env::new();
    let doc = timers_document();
    env.text(&["import", doc.to_str().unwrap()]);
    let db = env.db();
    let before = db_state(&db);
    let db_arg = db.to_str().unwrap();
    for args in [
        vec!["probe", "--capture", db_arg],
        vec!["report", "latest", "-o", db_arg],
        vec!["export", "latest", "--format", "openmetrics", "-o", db_arg],
        vec!["export", "latest", "-o", db_arg],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error:") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(err.contains("already exists"), "{args:?}: {err}");
        assert_eq!(db_state(&db), before, "{args:?} changed the database");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Its own files are replaced: a report over a report, metrics over metrics, and an
    // empty file.
    let html = env.dir.path().join("r.html");
    let prom = env.dir.path().join("m.prom");
    std::fs::write(&prom, "").unwrap();
    for _ in 0..2 {
        let r = env
            .cmd()
            .args(["report", "latest", "-o"])
            .arg(&html)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let m = env
            .cmd()
            .args(["export", "latest", "--format", "openmetrics", "-o"])
            .arg(&prom)
            .output()
            .unwrap();
        assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    }
    let cap = env.dir.path().join("cap.tar.gz");
    let out = env
        .cmd()
        .args(["probe", "--capture"])
        .arg(&cap)
        .output()
        .unwrap();
    assert!(out.status.success() && cap.exists());
}

/// `predict` with a run that is not a load-step run is bad input: exit 2, one line
/// saying what the run is, nothing on standard output.
#[test]
fn predict_refuses_a_run_without_load_steps() {
    let env = Env::new();
    let doc = timers_document();
    env.text(&["import", doc.to_str().unwrap()]);
    let out = env.cmd().args(["predict", "latest"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: run ") && err.contains("has no load steps"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// A measuring command refused for its database (a path under a regular file) says so in
/// one `error:` line, before any work: calibrate announced itself first.
#[test]
fn a_measuring_command_refused_for_its_database_says_one_line() {
    let env = Env::new();
    let unusable = env.file("not-a-dir", "").join("results.db");
    for args in [
        vec!["run", "timers", "--samples", "3"],
        vec!["calibrate", "timers", "--samples", "3"],
        vec!["loadstep", "--rates", "100", "--step-duration", "0.1"],
        vec!["record", "--duration", "0.2"],
        vec!["experiment", "--runs", "1", "--", "true"],
    ] {
        let out = env
            .cmd()
            .env("TRUEBENCH_DB", &unusable)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: cannot use results database") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
