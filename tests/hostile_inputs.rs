//! Hostile inputs across the commands that read user input or stored data, one test per
//! class of problem found by a sweep: `-` taken as a file name, URLs of other schemes taken
//! as paths, control characters of an imported document reaching the terminal (now shown
//! escaped by every text output), error lines
//! echoing unbounded values, refusals naming the wrong field, results in other units or
//! given twice silently compared, output files renamed over devices, FIFOs and links,
//! stores that are devices or refused leaving files beside them, figures that cannot be
//! measured (0, negative) or stats that differ from the samples, a fleet without a common
//! row scored "inf". Each input is refused with
//! exit 2, one `error:` line and nothing written, or now does what the user meant.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

use common::TestEnv as Env;

/// The timers document of an earlier version (tests/fixtures/documents/timers.json).
fn timers_doc() -> Value {
    serde_json::from_slice(&std::fs::read(document("timers.json")).unwrap()).unwrap()
}

/// tests/fixtures/documents/NAME.
fn document(name: &str) -> PathBuf {
    common::documents()
        .into_iter()
        .find(|p| p.ends_with(name))
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `truebench ARGS` run in the directory `cwd` (where a relative name would be created).
fn run_in(env: &Env, cwd: &Path, args: &[&str]) -> Output {
    env.cmd().current_dir(cwd).args(args).output().unwrap()
}

/// `truebench import FILE`.
fn import(env: &Env, file: &Path) -> Output {
    env.cmd().arg("import").arg(file).output().unwrap()
}

/// Files and directories in `dir`, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// `-o -` wrote a file called `-` in the current directory and printed nothing; `import -`
/// looked for that file. Now `-` is standard output and standard input, so
/// `export | import -` copies a run between databases.
#[test]
fn a_dash_is_standard_output_and_standard_input() {
    let env = Env::new();
    let doc = env.file("timers.json", &timers_doc().to_string());
    env.text(&["import", doc.to_str().unwrap()]);
    let cwd = tempfile::tempdir().unwrap();

    let out = run_in(&env, cwd.path(), &["export", "latest", "-o", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let exported: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(exported["run_id"], timers_doc()["run_id"]);

    let out = run_in(&env, cwd.path(), &["report", "latest", "-o", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("<html"));
    assert_eq!(
        listing(cwd.path()),
        Vec::<PathBuf>::new(),
        "a file was written"
    );

    // export | import - into another database.
    let other = env.dir.path().join("other.db");
    let out = env
        .cmd()
        .current_dir(cwd.path())
        .args(["--db", other.to_str().unwrap(), "import", "-"])
        .write_stdin(serde_json::to_vec(&exported).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let copied = env.json(&["--db", other.to_str().unwrap(), "export", "latest"]);
    assert_eq!(copied, exported);

    // Nothing on standard input: said so, nothing created.
    let fresh = Env::new();
    let out = fresh
        .cmd()
        .args(["import", "-"])
        .write_stdin("")
        .output()
        .unwrap();
    common::assert_refused(&fresh, &out, &"import - <empty");
    assert!(
        stderr(&out).contains("standard input is empty"),
        "{}",
        stderr(&out)
    );
}

/// `--db mysql://host/db` (or `file:///x.db`, or the same in TRUEBENCH_DB) was taken as a
/// SQLite path: `import` created the directories `mysql:/host/` and a database in them.
/// Now refused by its scheme before anything runs, the password not shown.
#[test]
fn urls_of_other_schemes_are_refused_and_create_nothing() {
    let env = Env::new();
    let doc = env.file("timers.json", &timers_doc().to_string());
    let cwd = tempfile::tempdir().unwrap();
    for url in [
        "mysql://ann:Zq9secret@db/bench",
        "file:///tmp/truebench-hostile.db",
        "sqlite://results.db",
    ] {
        for args in [
            vec!["--db", url, "import", doc.to_str().unwrap()],
            vec!["--db", url, "history"],
        ] {
            let out = run_in(&env, cwd.path(), &args);
            common::assert_refused(&env, &out, &args);
            let err = stderr(&out);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains("PostgreSQL") && err.contains("://"), "{err}");
            assert!(!err.contains("Zq9secret"), "password shown: {err}");
        }
        // From the environment, `run` is refused before measuring.
        let out = env
            .cmd()
            .current_dir(cwd.path())
            .env("TRUEBENCH_DB", url)
            .args(["run", "timers", "--samples", "3"])
            .output()
            .unwrap();
        common::assert_refused(&env, &out, &url);
        assert!(out.stdout.is_empty());
    }
    assert_eq!(listing(cwd.path()), Vec::<PathBuf>::new(), "created files");
    assert!(!Path::new("/tmp/truebench-hostile.db").exists());
}

/// An imported document's text holding an escape sequence was stored and then written raw
/// to the terminal by `show` and `history` (`ESC ]0;...BEL` retitles the window, `ESC [2J`
/// clears it). Such a document is taken as it is when the text is data (truebench's own
/// runs may hold one: a process or command name, and an export must import again; an
/// identifier such as the host is refused, below), and every text output shows the
/// character escaped; JSON escapes it anyway.
#[test]
fn control_characters_of_an_imported_document_never_reach_the_terminal() {
    let env = Env::new();
    // (the object changed, its key, the new text)
    let cases = [
        ("/results/0/params", "note", "box\u{1b}]0;pwned\u{7}"),
        ("/results/0", "unit", "ns\u{9b}2J"),
        ("/results/0/params", "clock", "mono\rtonic"),
        ("/results/0/params", "a\u{8}b", "x"),
    ];
    let mut d = timers_doc();
    for (object, key, text) in cases {
        d.pointer_mut(object).unwrap()[key] = text.into();
    }
    let f = env.file("controls.json", &d.to_string());
    env.text(&["import", f.to_str().unwrap()]);
    let id = d["run_id"].as_str().unwrap();
    for args in [
        vec!["show", id],
        vec!["history"],
        vec!["compare", id, id],
        vec!["export", id, "--format", "csv"],
        vec!["export", id, "--format", "gobench"],
    ] {
        let out = env.text(&args);
        assert!(
            !out.chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{args:?} sent a control character: {out:?}"
        );
    }
    assert!(env.text(&["history"]).contains("box\\u001b]0;pwned\\u0007"));
    // The stored document is unchanged: exported and imported again, the same bytes.
    let first = env.text(&["export", id]);
    let again = env.file("again.json", &first);
    let other = Env::new();
    other.text(&["import", again.to_str().unwrap()]);
    assert_eq!(other.text(&["export", id]), first);
}

/// A refusal echoed the whole offending value: 100 kB of one tag value on one error line,
/// or a run id's escape sequence sent to the terminal. The line is now at most a few
/// hundred characters, still naming where, with control characters shown escaped.
#[test]
fn error_lines_are_short_and_print_no_control_characters() {
    let env = Env::new();
    let mut d = timers_doc();
    d["tags"] = serde_json::json!({ "k": "v".repeat(100_000) });
    let f = env.file("long.json", &d.to_string());
    let out = import(&env, &f);
    common::assert_refused(&env, &out, &"100 kB tag");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1);
    assert!(err.len() < 1000, "{} bytes", err.len());
    assert!(
        err.contains("'/tags/k'") && err.contains("left out"),
        "{err}"
    );

    let out = env.cmd().args(["show", "ab\u{1b}[2Jcd"]).output().unwrap();
    common::assert_refused(&env, &out, &"show ESC");
    let err = stderr(&out);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains("\\u001b[2J"), "{err:?}");
}

/// A document whose n or confidence interval was tampered with was refused as "median X
/// recorded, X recomputed" with two equal numbers. The refusal names the field that
/// differs.
#[test]
fn a_stats_refusal_names_the_field_that_differs() {
    let env = Env::new();
    for (field, value, says) in [
        ("ci95_low", Value::from(1e9), "ci95_low 1000000000 recorded"),
        ("n", Value::from(7), "n 7 recorded, 3 recomputed"),
        ("median", Value::from(-1.0), "median -1 recorded"),
    ] {
        let mut d = timers_doc();
        d["results"][0]["stats"][field] = value;
        let f = env.file("tampered.json", &d.to_string());
        let out = import(&env, &f);
        common::assert_refused(&env, &out, &field);
        assert!(stderr(&out).contains(says), "{field}: {}", stderr(&out));
    }
}

/// A document holding the same result twice (same benchmark, params and placement) was
/// taken: compare matched one of them and silently dropped the other. Refused, naming
/// both; the same benchmark at another placement is still taken.
#[test]
fn a_result_given_twice_in_one_document_is_refused() {
    let env = Env::new();
    let mut d = timers_doc();
    let first = d["results"][0].clone();
    d["results"].as_array_mut().unwrap().push(first.clone());
    let f = env.file("twice.json", &d.to_string());
    let out = import(&env, &f);
    common::assert_refused(&env, &out, &"twice");
    let n = d["results"].as_array().unwrap().len() - 1;
    assert!(
        stderr(&out).contains(&format!(
            "results[{n}] (timers.clock-read@1) repeats results[0]"
        )),
        "{}",
        stderr(&out)
    );
    let mut elsewhere = first;
    elsewhere["placement"] = serde_json::json!({"name": "cpus", "cpus": [0], "observed": null});
    *d["results"].as_array_mut().unwrap().last_mut().unwrap() = elsewhere;
    let f = env.file("elsewhere.json", &d.to_string());
    env.text(&["import", f.to_str().unwrap()]);
}

/// Files that are empty or start with a byte order mark; an output directory that does not
/// exist (the error named the random temporary file `DIR/.tmpXXXXXX`).
#[test]
fn empty_files_bom_and_missing_output_directories_are_said_plainly() {
    let env = Env::new();
    for text in ["", "  \n"] {
        let f = env.file("empty.json", text);
        let out = import(&env, &f);
        common::assert_refused(&env, &out, &text);
        assert!(stderr(&out).contains("is empty"), "{}", stderr(&out));
    }
    let f = env.file(
        "bom.json",
        &format!(
            "\u{feff}{}",
            serde_json::to_string_pretty(&timers_doc()).unwrap()
        ),
    );
    env.text(&["import", f.to_str().unwrap()]);
    for cmd in ["export", "report"] {
        let out = env
            .cmd()
            .args([cmd, "latest", "-o", "/nonexistent/dir/out"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("cannot write /nonexistent/dir/out (a file in /nonexistent/dir)"),
            "{err}"
        );
        assert!(!err.contains(".tmp"), "{err}");
    }
}

/// A result of the same benchmark in other units (ms against ns) was compared as a ratio
/// of 1.000, "no real difference". The row is now not comparable, saying why.
#[test]
fn results_in_other_units_are_not_compared() {
    let env = Env::new();
    let base = timers_doc();
    let id = base["run_id"].as_str().unwrap().to_string();
    let mut other = base.clone();
    other["run_id"] = "20261123T115646Z-0004".into();
    other["results"][0]["unit"] = "ms/read".into();
    for (name, d) in [("a.json", &base), ("b.json", &other)] {
        let f = env.file(name, &d.to_string());
        env.text(&["import", f.to_str().unwrap()]);
    }
    let text = env.text(&["compare", "-v", &id, "20261123T115646Z-0004"]);
    let row = text
        .lines()
        .find(|l| l.contains("clock=monotonic,path=vdso"))
        .unwrap();
    assert!(
        row.contains("not comparable (units differ: ns/read vs ms/read)"),
        "{row}"
    );
    // Each median is shown in its own run's unit.
    assert!(
        row.contains(" ms/read ") && row.contains(" ns/read "),
        "{row}"
    );
    let j = env.json(&["compare", &id, "20261123T115646Z-0004", "--json"]);
    let r = j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["params"] == "clock=monotonic,path=vdso")
        .unwrap();
    assert_eq!(
        (r["unit"].as_str(), r["unit_b"].as_str()),
        (Some("ns/read"), Some("ms/read"))
    );
    let others = text
        .lines()
        .filter(|l| {
            l.contains("timers.clock-read@1")
                && (l.contains("same within") || l.contains("cannot tell"))
        })
        .count();
    assert_eq!(others, 10, "{text}");
}

/// `report -o /dev/null` (as root) renamed its file over the device: /dev/null became a
/// regular file for every process of the machine; a FIFO or a symbolic link (such as
/// /dev/stdout) was replaced the same way. Only a regular file is ever replaced now.
#[test]
fn an_output_name_that_is_not_a_regular_file_is_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let env = Env::new();
    let doc = env.file("timers.json", &timers_doc().to_string());
    env.text(&["import", doc.to_str().unwrap()]);
    let fifo = env.dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let link = env.dir.path().join("link.html");
    let target = env.dir.path().join("target.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for name in [&fifo, &link] {
        for args in [
            vec!["report", "latest", "-o"],
            vec!["export", "latest", "--format", "openmetrics", "-o"],
        ] {
            let out = env.cmd().args(&args).arg(name).output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(2),
                "{args:?} {name:?}: {}",
                stderr(&out)
            );
            let err = stderr(&out);
            assert!(
                err.starts_with("error: ") && err.contains("never replaced"),
                "{err}"
            );
        }
    }
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!target.exists());
    // A regular file is still replaced when it is a report (tests/cli.rs: never another).
    let html = env.file("r.html", "<title>truebench report: old</title>");
    env.text(&["report", "latest", "-o", html.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
}

/// `import --db /dev/null` (or a FIFO, or any device: a disk's header would have been
/// overwritten) was opened by SQLite, which left a journal and the open lock beside it; a
/// refused database (not SQLite, damaged) kept the `-open.lock` file this call had made.
/// Now a store that is not a regular file is refused before anything is made, and a refused
/// store leaves its directory as it was.
#[test]
fn a_refused_store_leaves_nothing_beside_it() {
    let env = Env::new();
    let doc = env.file("timers.json", &timers_doc().to_string());
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let random = dir.path().join("random.db");
    std::fs::write(&random, vec![0x5a_u8; 8192]).unwrap();
    // An SQLite header on garbage pages: a damaged database.
    let damaged = dir.path().join("damaged.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend([0x10, 0x00, 0x01, 0x01, 0x00, 0x40, 0x20, 0x20]);
    bytes.resize(3 * 4096, 0xa5);
    std::fs::write(&damaged, bytes).unwrap();
    let before = listing(dir.path());
    for (db, why) in [
        (&fifo, "FIFO, not a regular file"),
        (&random, "not an SQLite database"),
        (&damaged, "damaged"),
    ] {
        for args in [vec!["import", doc.to_str().unwrap()], vec!["history"]] {
            let out = env
                .cmd()
                .env("TRUEBENCH_DB", db)
                .args(&args)
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{db:?} {args:?}: {err}");
            assert!(
                err.starts_with("error: ") && err.contains(why),
                "{db:?}: {err}"
            );
            assert_eq!(listing(dir.path()), before, "{db:?} {args:?} left a file");
        }
    }
}

/// Every unit truebench measures is a positive time or rate, and views and exports print
/// the recorded mean, spread and extremes. An imported result of 0 ns/read was compared
/// as "B/A inf, drift", a negative one as "-0.333, no detectable difference"; a load step
/// with a negative rate or latency (or a recorded interval of 0 s or before the start) was
/// shown as measured; stats whose mean or CV did not
/// match the samples were printed as they were. All are refused now.
#[test]
fn figures_that_cannot_be_measured_or_stats_other_than_the_samples_are_refused() {
    let env = Env::new();
    let mut cases: Vec<(String, Value, &str)> = vec![];
    for (v, why) in [
        (0.0, "less than the minimum of 1e-6"),
        (-3.0, "minimum of 1e-6"),
    ] {
        let mut d = timers_doc();
        let r = &mut d["results"][0];
        let n = r["samples"].as_array().unwrap().len();
        r["samples"] = serde_json::json!(vec![v; n]);
        for k in ["median", "ci95_low", "ci95_high", "mean", "min", "max"] {
            r["stats"][k] = serde_json::json!(v);
        }
        r["stats"]["cv"] = serde_json::json!(0.0);
        cases.push((format!("samples of {v}"), d, why));
    }
    for (k, v) in [
        ("mean", serde_json::json!(1.0)),
        ("cv", serde_json::json!(0.5)),
        ("max", serde_json::json!(1e300)),
        ("outliers", serde_json::json!(7)),
    ] {
        let mut d = timers_doc();
        d["results"][0]["stats"][k] = v;
        cases.push((format!("stats.{k}"), d, "stats do not match the samples"));
    }
    let loadstep: Value =
        serde_json::from_slice(&std::fs::read(document("loadstep.json")).unwrap()).unwrap();
    for (k, v) in [("completed_rate", -1000.0), ("cpu_pct", -5.0)] {
        let mut d = loadstep.clone();
        d["loadstep"]["steps"][0][k] = serde_json::json!(v);
        cases.push((format!("loadstep {k}"), d, "less than the minimum of 0"));
    }
    let mut d = loadstep.clone();
    d["loadstep"]["variants"][0]["steps"][0]["latency"]["p99"] = serde_json::json!(-5.0);
    cases.push(("variant p99".into(), d, "less than the minimum of 0"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(document("record.json")).unwrap()).unwrap();
    for (k, v, why) in [
        ("interval_s", 0.0, "less than or equal to the minimum of 0"),
        ("t_s", -5.0, "less than the minimum of 0"),
        ("ctxt_per_s", -1.0, "less than the minimum of 0"),
    ] {
        let mut d = record.clone();
        d["recording"]["rows"][0][k] = serde_json::json!(v);
        cases.push((format!("recording row {k}"), d, why));
    }
    for (what, doc, why) in cases {
        let f = env.file("doc.json", &doc.to_string());
        let out = import(&env, &f);
        common::assert_refused(&env, &out, &what);
        assert!(stderr(&out).contains(why), "{what}: {}", stderr(&out));
    }
    // The documents of earlier versions still import.
    for f in common::documents() {
        let out = import(&env, &f);
        assert!(out.status.success(), "{f:?}: {}", stderr(&out));
    }
}

/// Three runs with no row measured comparably by three hosts printed "score inf--inf" for
/// the hosts "within the fleet's spread" (and null scores in JSON); the view now says no
/// host is scored.
#[test]
fn a_fleet_without_a_common_row_scores_no_host() {
    let env = Env::new();
    let mut ids = vec![];
    for name in ["ctx.json", "c2c.json", "record.json"] {
        let f = document(name);
        env.text(&["import", f.to_str().unwrap()]);
        let doc: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        ids.push(doc["run_id"].as_str().unwrap().to_string());
    }
    let args: Vec<&str> = std::iter::once("compare")
        .chain(ids.iter().map(String::as_str))
        .collect();
    let text = env.text(&args);
    assert!(text.contains("no host is scored or ranked"), "{text}");
    assert!(!text.contains("inf"), "{text}");
    let html = env.dir.path().join("fleet.html");
    let mut report = vec!["report"];
    report.extend(ids.iter().map(String::as_str));
    report.extend(["-o", html.to_str().unwrap()]);
    env.text(&report);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("no host is scored or ranked") && !page.contains("score inf"));
}

/// `import FIFO FILE` (several sources) opened the FIFO blocking and waited for a writer
/// for ever; a directory's FIFO or dangling link called *.json was skipped in silence.
/// Both are now refused by name, and the other documents stored (exit 2).
#[test]
fn a_fifo_or_a_dangling_link_among_many_imports_is_refused_not_waited_for() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(document("ctx.json"), dir.path().join("ctx.json")).unwrap();
    let fifo = dir.path().join("fifo.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    std::os::unix::fs::symlink("gone.json", dir.path().join("dangling.json")).unwrap();
    // Each import must end (exit 2, naming what it refused) well within a minute.
    let import_refusing = |args: &[&Path], names: &[&str]| {
        let out = env
            .cmd()
            .timeout(std::time::Duration::from_secs(60))
            .arg("import")
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(names.iter().all(|n| err.contains(n)), "{args:?}: {err}");
    };
    import_refusing(
        &[&fifo, &document("timers.json")],
        &["fifo.json", "not a regular file"],
    );
    import_refusing(&[dir.path()], &["fifo.json", "dangling.json"]);
    let history = env.text(&["history"]);
    let id = |name: &str| {
        let d: Value = serde_json::from_slice(&std::fs::read(document(name)).unwrap()).unwrap();
        d["run_id"].as_str().unwrap().to_string()
    };
    assert!(history.contains(&id("ctx.json")) && history.contains(&id("timers.json")));
}

/// A 60 MB host name was imported, and `history` then laid out its table for minutes.
/// A host name is at most 253 characters (DNS), and no text of a document more than
/// 1 MiB: both are refused on import.
#[test]
fn texts_longer_than_any_document_holds_are_refused() {
    let env = Env::new();
    let mut d = timers_doc();
    d["host"] = "h".repeat(254).into();
    let f = env.file("host.json", &d.to_string());
    let out = import(&env, &f);
    common::assert_refused(&env, &out, &"a 254-character host");
    assert!(stderr(&out).contains("/host"), "{}", stderr(&out));
    let mut d = timers_doc();
    d["findings"] = serde_json::json!([{"id": "x", "severity": "info",
        "message": "m", "evidence": ["e".repeat((1 << 20) + 1)]}]);
    let f = env.file("evidence.json", &d.to_string());
    let out = import(&env, &f);
    common::assert_refused(&env, &out, &"a 1 MiB evidence line");
    let err = stderr(&out);
    assert!(
        err.contains("'/findings/0/evidence/0'") && err.contains("1048577"),
        "{err}"
    );
}

/// Issue 37 item 3, one rule for text: an identifier (host, tag) holding a control or
/// bidirectional character is refused at import, whichever path (one file, several);
/// data (a command line, a parameter) holding them is stored and every output shows them
/// escaped: the terminal views, JSON, the HTML report and every export format, on standard
/// output and in a file, never raw; a line break in a command line never starts a line.
#[test]
fn hostile_text_is_refused_as_an_identifier_and_escaped_as_data_everywhere() {
    const HOSTILE: [&str; 4] = [
        "h\nNo outlier: every host is within the fleet's spread.",
        "h\u{1b}[2J\u{7}",
        "h\u{202e}gpj.exe",
        "h\u{2067}x",
    ];
    let env = Env::new();
    for (i, text) in HOSTILE.iter().enumerate() {
        for (object, key) in [("", "host"), ("/tags", "rack")] {
            let mut d = timers_doc();
            if object == "/tags" {
                d["tags"] = serde_json::json!({});
            }
            d.pointer_mut(object).unwrap()[key] = (*text).into();
            d["run_id"] = format!("hostile-{i}").into();
            let f = env.file("id.json", &d.to_string());
            let out = import(&env, &f);
            common::assert_refused(&env, &out, &(key, text));
            if key == "host" {
                assert!(stderr(&out).contains("identifier"), "{}", stderr(&out));
            }
            // The same through the bulk path.
            let out = env.cmd().arg("import").arg(&f).arg(&f).output().unwrap();
            assert_eq!(out.status.code(), Some(2));
        }
    }
    // Data: every hostile string in a parameter and in a recorded command line.
    let all = HOSTILE.concat();
    let mut t = timers_doc();
    t["results"][0]["params"]["note"] = all.clone().into();
    let mut r: Value =
        serde_json::from_slice(&std::fs::read(document("record.json")).unwrap()).unwrap();
    r["recording"]["target"]["command"] = format!("sh -c '{all}'").into();
    for (name, d) in [("t.json", &t), ("r.json", &r)] {
        env.text(&["import", env.file(name, &d.to_string()).to_str().unwrap()]);
    }
    let (tid, rid) = (t["run_id"].as_str().unwrap(), r["run_id"].as_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let raw = |what: &str, bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n' && c != '\t')
                    || matches!(c, '\u{202e}' | '\u{2067}')),
            "{what} wrote a raw control or bidirectional character: {text:?}"
        );
    };
    let mut outputs: Vec<Vec<String>> = vec![
        vec!["show".into(), tid.into()],
        vec!["show".into(), rid.into()],
        vec!["show".into(), rid.into(), "--json".into()],
        vec!["history".into()],
        vec!["report".into(), tid.into(), rid.into()],
    ];
    for format in ["json", "ndjson", "csv", "gobench", "openmetrics"] {
        outputs.push(vec![
            "export".into(),
            tid.into(),
            "--format".into(),
            format.into(),
        ]);
    }
    for args in &outputs {
        let out = env.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        raw(&format!("{args:?}"), &out.stdout);
        raw(&format!("{args:?} (stderr)"), &out.stderr);
        // The same into a file.
        if args[0] == "report" || args[0] == "export" {
            let file = dir.path().join(format!("{}.out", args.join("_")));
            let mut to_file = args.clone();
            to_file.extend(["-o".into(), file.display().to_string()]);
            let out = env.cmd().args(&to_file).output().unwrap();
            assert!(out.status.success(), "{to_file:?}: {}", stderr(&out));
            raw(&format!("{to_file:?}"), &std::fs::read(&file).unwrap());
        }
    }
    let shown = env.text(&["show", rid]);
    assert!(
        shown.contains("\\u001b[2J\\u0007") && shown.contains("\\u202egpj"),
        "{shown}"
    );
    assert!(
        !shown.lines().any(|l| l.starts_with("No outlier")),
        "a command line started a line: {shown}"
    );
}

/// Issue 37 items 4 and 5: the same run named twice to `predict` (or `report`) is used
/// once, with a note (it fitted twice the steps and narrowed the interval); a document
/// whose step list is duplicated, or whose capacity setting has a quota period of 0, is
/// refused at import.
#[test]
fn a_run_or_a_step_counted_twice_and_a_period_of_0_are_caught_where_they_are_born() {
    let env = Env::new();
    let doc: Value =
        serde_json::from_slice(&std::fs::read(document("loadstep.json")).unwrap()).unwrap();
    let id = doc["run_id"].as_str().unwrap();
    let f = env.file("ls.json", &doc.to_string());
    env.text(&["import", f.to_str().unwrap()]);
    let once = env.cmd().args(["predict", id, "--json"]).output().unwrap();
    let twice = env
        .cmd()
        .args(["predict", id, id, "--json"])
        .output()
        .unwrap();
    assert_eq!(once.status.code(), twice.status.code());
    assert_eq!(
        String::from_utf8_lossy(&once.stdout),
        String::from_utf8_lossy(&twice.stdout)
    );
    assert!(
        stderr(&twice).contains(&format!(
            "run {id} is named twice ('{id}'): it is used once"
        )),
        "{}",
        stderr(&twice)
    );
    let report = env.cmd().args(["report", id, "latest"]).output().unwrap();
    assert!(report.status.success() && stderr(&report).contains("it is used once"));
    let mut cases: Vec<(&str, Value)> = vec![];
    let mut steps = doc.clone();
    let list = steps["loadstep"]["steps"].as_array().unwrap().clone();
    steps["loadstep"]["steps"] = list.iter().chain(&list).cloned().collect();
    cases.push(("twice the steps", steps));
    let mut variant = doc.clone();
    let list = variant["loadstep"]["variants"][0]["steps"]
        .as_array()
        .unwrap()
        .clone();
    variant["loadstep"]["variants"][0]["steps"] = list.iter().chain(&list).cloned().collect();
    cases.push(("a variant's steps twice", variant));
    let mut period = doc.clone();
    period["loadstep"]["variants"][0]["capacity"] =
        serde_json::json!({"quota": 1.0, "width": 1, "period_us": 0});
    cases.push(("period 0", period));
    for (what, mut d) in cases {
        d["run_id"] = "hostile-steps".into();
        let fresh = Env::new();
        let f = fresh.file("bad.json", &d.to_string());
        let out = import(&fresh, &f);
        common::assert_refused(&fresh, &out, &what);
        let err = stderr(&out);
        assert!(
            err.contains("twice") || err.contains("period of 0 µs"),
            "{what}: {err}"
        );
    }
}

/// Issue 37 item 5: `import DIR` skipped the directories inside it without a word; each is
/// now named as skipped, and the files beside them are imported.
#[test]
fn a_directory_inside_an_imported_directory_is_named_as_skipped() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(document("timers.json"), dir.path().join("a.json")).unwrap();
    std::fs::create_dir(dir.path().join("nested")).unwrap();
    std::fs::copy(
        document("ctx.json"),
        dir.path().join("nested").join("b.json"),
    )
    .unwrap();
    let out = env.cmd().arg("import").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("skipped") && said.contains("nested: a directory inside"),
        "{said}"
    );
}

/// Issue 37 item 6: repeated errors of one kind are summarised with a count. A directory
/// of 40 files of garbage beside a good one printed a line per file (and 100 KB of binary
/// garbage on standard input 401 lines): now the first 3 of each kind, then "and N more
/// of the same kind: ...", and the good one stored (exit 2, as some were refused).
#[test]
fn many_refusals_of_one_kind_are_counted_not_listed() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(document("timers.json"), dir.path().join("a.json")).unwrap();
    for i in 0..40 {
        std::fs::write(
            dir.path().join(format!("bad{i:02}.json")),
            format!("{{\"x\": {i}"),
        )
        .unwrap();
    }
    let out = env.cmd().arg("import").arg(dir.path()).output().unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    let refused: Vec<&str> = said.lines().filter(|l| l.starts_with("refused ")).collect();
    assert_eq!(refused.len(), 3, "{said}");
    assert!(
        said.contains("and 37 more of the same kind: is not valid JSON: EOF while parsing"),
        "{said}"
    );
    assert!(said.lines().count() <= 6, "{said}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported run"));
    // Binary garbage on standard input: a screenful at most, not a line per line of it.
    let garbage: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let out = env
        .cmd()
        .args(["import", "-"])
        .write_stdin(garbage)
        .output()
        .unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.lines().count() <= 30,
        "{} lines: {said}",
        said.lines().count()
    );
    assert!(said.contains("more of the same kind"), "{said}");
}

/// `doc` with each result drawn in one round per sample (a round's median its sample), as
/// a run writes rounds: the rounds agree with the samples.
fn with_rounds(mut doc: Value) -> Value {
    for r in doc["results"].as_array_mut().unwrap() {
        let rounds: Vec<Value> = r["samples"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, s)| serde_json::json!({"seq": i, "at_s": i, "median": s, "samples": 1}))
            .collect();
        r["rounds"] = serde_json::json!({ "rounds": rounds });
    }
    doc
}

/// Figures no measurement makes (a sample of 1e300 or 5e-324, a CPU speed of 1e300 adds per
/// ns) were taken: `compare` printed a ratio of 300 digits or "inf", `show` a speed of 300
/// digits. Rounds that disagree with the samples (medians outside them, more samples drawn
/// than held, a noise on 50 rounds of 3 or with a σ of 1e300) were taken too, and compare
/// tested against that noise ("inf" MDE). All refused at import, nothing written; rounds
/// that agree with the samples import.
#[test]
fn figures_out_of_any_measurable_range_and_rounds_other_than_the_samples_are_refused() {
    let env = Env::new();
    let mut cases: Vec<(&str, Value, &str)> = vec![];
    for (what, v, why) in [
        (
            "huge samples",
            1e300,
            "greater than the maximum of 1000000000000",
        ),
        ("denormal samples", 5e-324, "less than the minimum of 1e-6"),
    ] {
        let mut d = timers_doc();
        let n = d["results"][0]["samples"].as_array().unwrap().len();
        d["results"][0]["samples"] = serde_json::json!(vec![v; n]);
        cases.push((what, d, why));
    }
    let speed = |cycles: f64, pair: Value| {
        let mut d = timers_doc();
        d["cpu_speed"] = serde_json::json!({"method": "chain", "samples": [
            {"suite": "timers", "point": "start", "cpu": 0, "cycles_per_ns": cycles, "elapsed_ns": 2e6}],
            "pair_canaries": [pair]});
        d
    };
    let pair = |cpus: [u32; 2], ns: f64| serde_json::json!({"cpus": cpus, "ns": ns});
    cases.push((
        "speed of 1e300",
        speed(1e300, pair([0, 1], 23.0)),
        "/cpu_speed/samples/0/cycles_per_ns",
    ));
    cases.push((
        "pair canary of 1e-300 ns",
        speed(3.0, pair([0, 1], 1e-300)),
        "/cpu_speed/pair_canaries/0/ns",
    ));
    cases.push((
        "pair canary of one CPU",
        speed(3.0, pair([0, 0], 23.0)),
        "/cpu_speed/pair_canaries/0/cpus",
    ));
    let rounds = with_rounds(timers_doc());
    let mut d = rounds.clone();
    d["results"][0]["rounds"]["rounds"][0]["median"] = serde_json::json!(1e6);
    cases.push((
        "a round far from the samples",
        d,
        "round 0's median 1000000 lies outside its samples",
    ));
    let mut d = rounds.clone();
    d["results"][0]["rounds"]["rounds"][0]["samples"] = serde_json::json!(50);
    cases.push((
        "rounds drawing more",
        d,
        "its rounds drew 52 samples but it holds 3 samples",
    ));
    for (what, noise, why) in [
        (
            "noise of 50 rounds",
            [50.0, 0.01, 0.005, 2.0],
            "rests on 50 rounds but 3",
        ),
        (
            "noise of 1e300",
            [3.0, 1e300, 1e300, 2.0],
            "is wider than its samples",
        ),
        (
            "noise of 1e300 df",
            [3.0, 0.0, 0.0, 1e300],
            "1.000e300 degrees of freedom",
        ),
    ] {
        let mut d = rounds.clone();
        d["results"][0]["rounds"]["noise"] = serde_json::json!(
            {"kept": noise[0] as u64, "sigma": noise[1], "se": noise[2], "df": noise[3]});
        cases.push((what, d, why));
    }
    let mut d: Value =
        serde_json::from_slice(&std::fs::read(document("loadstep.json")).unwrap()).unwrap();
    for s in d["loadstep"]["steps"].as_array_mut().unwrap() {
        s["planned_rate"] = serde_json::json!(1e300);
    }
    cases.push(("steps at 1e300/s", d, "holds the step at 1.000e300/s twice"));
    for (what, doc, why) in cases {
        let f = env.file("doc.json", &doc.to_string());
        let out = import(&env, &f);
        common::assert_refused(&env, &out, &what);
        let err = stderr(&out);
        assert!(err.contains(why), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.len() < 1000, "{what}: {err}");
    }
    // Rounds that agree with the samples, and a speed within range, import.
    let mut d = with_rounds(timers_doc());
    d["cpu_speed"] = speed(3.0, pair([0, 1], 23.0))["cpu_speed"].take();
    let f = env.file("doc.json", &d.to_string());
    let out = import(&env, &f);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `compare` printed its environment and candidate lines unwrapped: an imported run's CPU
/// model and kernel release ran past 100 columns. They wrap as the summary does.
#[test]
fn compare_environment_lines_fit_100_columns() {
    let env = Env::new();
    let a = timers_doc();
    let mut b = a.clone();
    b["run_id"] = "20990101T000000Z-long".into();
    b["env"]["kernel"]["release"] = "6.8.0-1017-azure-fips-debug+".into();
    b["env"]["kernel"]["cpu_model"] = "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz".into();
    for (name, d) in [("a.json", &a), ("b.json", &b)] {
        env.text(&["import", env.file(name, &d.to_string()).to_str().unwrap()]);
    }
    let ids = [&a, &b].map(|d| d["run_id"].as_str().unwrap().to_string());
    let text = env.text(&["compare", &ids[0], &ids[1]]);
    assert!(text.contains("Platinum 8370C"), "{text}");
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 100).collect();
    assert!(wide.is_empty(), "{wide:?}");
}

/// A document dated 9999 imported and was `latest` and the end of every series for ever; a
/// start written with an offset (`23:00-05:00`) was ordered by its text, before a run five
/// hours earlier. A time more than a day after this machine's clock, before 1970, or a
/// finish more than a day before its start is refused naming the field and value; a
/// clock a few hours ahead still imports; every time is stored in UTC.
#[test]
fn times_from_the_future_are_refused_and_offsets_are_ordered_in_time() {
    let env = Env::new();
    let now = chrono::Utc::now();
    let at = |d: chrono::Duration| (now + d).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let cases = [
        (
            "9999-12-31T23:59:59Z".to_string(),
            None,
            "started_at 9999-12-31T23:59:59Z is ",
        ),
        (
            at(chrono::Duration::days(3)),
            None,
            "days after this machine's clock",
        ),
        ("1969-07-20T20:17:00Z".into(), None, "is before 1970-01-01"),
        (
            at(chrono::Duration::days(-1)),
            Some("2026-01-01T00:00:00Z"),
            "finished_at 2026-01-01T00:00:00Z is ",
        ),
        (
            at(chrono::Duration::zero()),
            Some("9999-01-01T00:00:00Z"),
            "finished_at 9999",
        ),
    ];
    for (start, finish, why) in cases {
        let mut d = timers_doc();
        d["started_at"] = start.clone().into();
        d["finished_at"] = finish.map_or(Value::Null, Into::into);
        let out = import(&env, &env.file("doc.json", &d.to_string()));
        common::assert_refused(&env, &out, &start);
        let err = stderr(&out);
        assert!(err.contains(why), "{start} {finish:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // A clock 5 h ahead imports; an offset is stored in UTC and ordered by its instant.
    let runs = [
        ("ahead-run", at(chrono::Duration::hours(5))),
        ("offset-run", "2026-11-23T23:00:00-05:00".to_string()),
        ("utc-run", "2026-11-24T01:00:00Z".to_string()),
    ];
    for (id, start) in &runs {
        let mut d = timers_doc();
        d["run_id"] = (*id).into();
        d["started_at"] = start.clone().into();
        d["finished_at"] = Value::Null;
        env.text(&[
            "import",
            env.file("doc.json", &d.to_string()).to_str().unwrap(),
        ]);
    }
    let history = env.text(&["history"]);
    let order: Vec<usize> = ["ahead-run", "offset-run", "utc-run"]
        .iter()
        .map(|id| history.find(id).unwrap())
        .collect();
    assert!(order[0] < order[1] && order[1] < order[2], "{history}");
    let stored = env.json(&["export", "offset-run"]);
    assert_eq!(stored["started_at"], "2026-11-24T04:00:00Z");
}

/// `truebench help --help` (and `help run -h`) was clap's "unrecognized subcommand
/// '--help'", exit 2: they print the help `help` prints, exit 0.
#[test]
fn help_flags_after_help_print_the_help() {
    let env = Env::new();
    for (args, first) in [
        (
            &["help", "--help"][..],
            "truebench benchmarks a Linux machine",
        ),
        (&["help", "-h"], "truebench benchmarks a Linux machine"),
        (&["help", "import", "--help"], "Add a run document"),
    ] {
        let out = env.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with(first), "{args:?}: {text}");
    }
}

/// `import A B` (or a directory, or `-`) read a pretty-printed document as a stream bounded
/// at 4 GiB: an 80 MB document (over the 64 MiB a file may hold) was parsed into 270 MB of
/// memory and stored. Each document of a stream is bounded as a file is; the others are
/// stored.
#[test]
fn a_document_over_the_limit_is_refused_in_a_stream_too() {
    let env = Env::new();
    let mut d = timers_doc();
    d["run_id"] = "big-document".into();
    let mut text = serde_json::to_string_pretty(&d).unwrap();
    text.truncate(text.trim_end().len() - 1);
    let line = format!("\"{}\"", "a".repeat(1 << 20));
    text += &format!(",\n\"pad\": [\n{}\n]\n}}\n", vec![line; 65].join(",\n"));
    let big = env.file("big.json", &text);
    let small = env.file("small.json", &timers_doc().to_string());
    let out = env
        .cmd()
        .arg("import")
        .arg(&big)
        .arg(&small)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("refused") && err.contains("big.json: holds more than 67108864 bytes"),
        "{err}"
    );
    let history = env.text(&["history"]);
    assert!(
        !history.contains("big-document") && history.contains("results"),
        "{history}"
    );
}

/// A load average of 1e300 (a 32-bit figure) was imported as infinity and stored as null:
/// `show`, `compare` and `export` of that run then failed ("stored run ... is unreadable").
/// A number that does not fit its field is refused naming where; a key no field holds (a
/// newer version's) is imported without it, and named on stderr.
#[test]
fn numbers_that_do_not_fit_are_refused_and_unknown_keys_are_named() {
    let env = Env::new();
    let mut d = timers_doc();
    d["env"]["load"]["one"] = serde_json::json!(1e300);
    let out = import(&env, &env.file("doc.json", &d.to_string()));
    common::assert_refused(&env, &out, &"load 1e300");
    assert!(
        stderr(&out).contains("1e+300 at '/env/load/one' does not fit its field"),
        "{}",
        stderr(&out)
    );
    let mut d = timers_doc();
    d["from_the_future"] = serde_json::json!({"a": 1});
    d["results"][0]["new_stat"] = serde_json::json!(2.5);
    let out = import(&env, &env.file("doc.json", &d.to_string()));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("not stored, as no field of truebench.result/1 holds them")
            && err.contains("/from_the_future, /results/0/new_stat"),
        "{err}"
    );
    let id = d["run_id"].as_str().unwrap();
    assert!(env.text(&["show", id]).contains("Clock read cost"));
    // truebench's own documents lose nothing: no such line.
    let other = Env::new();
    for f in common::documents() {
        let out = import(&other, &f);
        assert!(out.status.success(), "{}: {}", f.display(), stderr(&out));
        assert!(
            !stderr(&out).contains("not stored"),
            "{}: {}",
            f.display(),
            stderr(&out)
        );
    }
}
