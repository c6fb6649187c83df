//! `export --format`: each format read by its real consumer. benchstat (built by
//! scripts/test with `go install`) compares two gobench exports of short real runs;
//! `promtool check metrics` (Debian package prometheus) accepts the openmetrics export of
//! every fixture document and of a run whose host, tags, params and placement hold quotes,
//! newlines and unicode; every ndjson line parses and its samples are the run's; the CSV
//! has one row per result. Documents come from tests/fixtures/documents or short runs.

mod common;

use common::{documents, tool, TestEnv};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

const NASTY: &str = "r\"1\\ x\nnew line, ☃ é=1/2 # EOF";

/// Import every fixture document and a hostile copy of timers.json; their run ids.
fn import_all(env: &TestEnv) -> Vec<String> {
    let mut ids = vec![];
    for path in documents() {
        env.cmd().arg("import").arg(&path).assert().success();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        ids.push(doc["run_id"].as_str().unwrap().to_string());
    }
    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string(
            documents()
                .into_iter()
                .find(|p| p.ends_with("timers.json"))
                .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    doc["run_id"] = "20261123T000000Z-bad1".into();
    // A host is an identifier: import refuses control characters in it (the params and
    // the placement name below carry them as data).
    doc["host"] = NASTY.replace('\n', " ").into();
    // Tag keys are names and tag values have no control characters (import refuses
    // others), so the tags carry every other hostile character.
    doc["tags"] = json!({"nasty.key-1": NASTY.replace('\n', " "), "rack": "r\"1", "Rack": "upper"});
    doc["results"][0]["params"]["note"] = NASTY.into();
    doc["results"][1]["placement"]["name"] = NASTY.into();
    let file = env.file("hostile.json", &doc.to_string());
    env.cmd().arg("import").arg(&file).assert().success();
    ids.push("20261123T000000Z-bad1".into());
    ids
}

fn export(env: &TestEnv, ids: &[String], format: &str) -> String {
    let mut args = vec!["export", "--format", format];
    args.extend(ids.iter().map(String::as_str));
    env.text(&args)
}

#[test]
fn benchstat_compares_the_gobench_exports_of_two_short_runs() {
    let env = TestEnv::new();
    let mut files = vec![];
    let mut results = 0;
    for name in ["old.txt", "new.txt"] {
        let doc = env.run(&["timers", "--samples", "6"]);
        results = doc["results"].as_array().unwrap().len();
        let file = env.dir.path().join(name);
        env.cmd()
            .args([
                "export",
                doc["run_id"].as_str().unwrap(),
                "--format",
                "gobench",
                "-o",
            ])
            .arg(&file)
            .assert()
            .success();
        files.push(file);
    }
    let out = Command::new(tool("benchstat"))
        .args(&files)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One table comparing the two files: both named in its header, `vs base` column,
    // every result a row (with p-values), the unit tidied to seconds per read.
    let header = text.lines().find(|l| l.contains("old.txt")).unwrap();
    assert!(header.contains("new.txt"), "{text}");
    assert_eq!(text.matches("old.txt").count(), 1, "one table: {text}");
    assert!(
        text.contains("vs base") && text.contains("sec/read"),
        "{text}"
    );
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Timers.clock-read@1/clock="))
        .collect();
    assert_eq!(rows.len(), results, "{text}");
    assert!(
        rows.iter().all(|r| r.contains("(p=") && r.contains("n=6")),
        "{text}"
    );
    assert!(
        text.contains("host: ") && text.contains("clocksource: "),
        "{text}"
    );
}

#[test]
fn benchstat_reads_every_fixture_and_hostile_run_in_one_stream_without_error() {
    let env = TestEnv::new();
    let ids = import_all(&env);
    let file = env.file("all.txt", &export(&env, &ids, "gobench"));
    let out = Command::new(tool("benchstat"))
        .args(["-col", "run"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && err.is_empty(), "{err}");
    // Runs that have results are columns; the hostile host stays one config value.
    for id in [
        "20261123T115646Z-ac1d",
        "20261123T115647Z-85ac",
        "20261123T000000Z-bad1",
    ] {
        assert!(text.contains(id), "{id}: {text}");
    }
    assert!(text.contains("Classic.dhrystone@1/copies=1"), "{text}");
    assert!(
        text.contains("host: r\"1\\ x new line, ☃ é=1/2 # EOF"),
        "{text}"
    );
}

#[test]
fn promtool_accepts_the_openmetrics_export_which_replaces_its_file_atomically() {
    let env = TestEnv::new();
    let ids = import_all(&env);
    let dir = env.dir.path().join("textfile");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("truebench.prom");
    for round in 0..2 {
        // The second export replaces the first (the textfile collector rereads the file).
        let out = env
            .cmd()
            .args(["export", "--format", "openmetrics", "-o"])
            .arg(&file)
            .args(&ids[..ids.len() - round])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["truebench.prom"], "no temporary file is left");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with("\n# EOF\n"));
    assert!(
        !text.contains("20261123T000000Z-bad1"),
        "the second export replaced the first"
    );

    let everything = export(&env, &ids, "openmetrics");
    for exposition in [&text, &everything] {
        let mut child = Command::new(tool("promtool"))
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(exposition.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success() && said.trim().is_empty(), "{said}");
    }
    // The hostile run's labels, escaped on one line each.
    let hostile: Vec<&str> = everything
        .lines()
        .filter(|l| l.contains("run_id=\"20261123T000000Z-bad1\""))
        .collect();
    assert!(!hostile.is_empty());
    let escaped = r#"host="r\"1\\ x new line, ☃ é=1/2 # EOF""#;
    assert!(hostile.iter().all(|l| l.contains(escaped)), "{hostile:?}");
    assert!(hostile
        .iter()
        .any(|l| l.contains(r#"tag_rack="r\"1""#) && l.contains(r#"tag_Rack="upper""#)));
    // Three gauges (median, CI bounds) per result, one start time per run with results or not.
    let results: usize = ids
        .iter()
        .map(|id| {
            env.json(&["export", id])["results"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    let samples = everything
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("truebench_run_start"))
        .count();
    assert_eq!(samples, 3 * results);
    assert_eq!(
        everything
            .lines()
            .filter(|l| l.starts_with("truebench_run_start_timestamp_seconds{"))
            .count(),
        ids.len()
    );
}

#[test]
fn ndjson_lines_parse_and_their_samples_are_the_runs() {
    let env = TestEnv::new();
    let ids = import_all(&env);
    let text = export(&env, &ids, "ndjson");
    let mut got: BTreeMap<(String, usize), Vec<(usize, f64)>> = BTreeMap::new();
    let mut keys: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let run = v["run_id"].as_str().unwrap().to_string();
        // The result a line belongs to: its place among the run's (benchmark, params,
        // placement) keys, in order of appearance.
        let key = format!("{} {} {}", v["benchmark"], v["params"], v["placement"]);
        let seen = keys.entry(run.clone()).or_default();
        let n = seen.len();
        let index = *seen.entry(key).or_insert(n);
        got.entry((run, index)).or_default().push((
            v["sample_index"].as_u64().unwrap() as usize,
            v["value"].as_f64().unwrap(),
        ));
        assert!(v["timestamp"].as_str().unwrap().ends_with('Z'), "{line}");
    }
    let mut total = 0;
    for id in &ids {
        let doc = env.json(&["export", id]);
        for (i, r) in doc["results"].as_array().unwrap().iter().enumerate() {
            let want: Vec<(usize, f64)> = r["samples"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(j, x)| (j, x.as_f64().unwrap()))
                .collect();
            assert_eq!(got.get(&(id.clone(), i)), Some(&want), "{id} result {i}");
            total += want.len();
        }
    }
    assert_eq!(text.lines().count(), total);
    let hostile = text
        .lines()
        .find(|l| l.contains("20261123T000000Z-bad1"))
        .unwrap();
    let v: Value = serde_json::from_str(hostile).unwrap();
    assert_eq!(
        (v["host"].as_str(), v["tags"]["nasty.key-1"].as_str()),
        (
            Some(NASTY.replace('\n', " ").as_str()),
            Some(NASTY.replace('\n', " ").as_str())
        )
    );
}

#[test]
fn csv_has_one_row_per_result_with_its_stats() {
    let env = TestEnv::new();
    let ids = import_all(&env);
    let text = export(&env, &ids, "csv");
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let head = rd.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let mut expected = vec![];
    for id in &ids {
        let doc = env.json(&["export", id]);
        for r in doc["results"].as_array().unwrap() {
            expected.push((
                id.clone(),
                r["stats"]["median"].as_f64().unwrap(),
                r["stats"]["n"].as_u64().unwrap(),
            ));
        }
    }
    assert_eq!(rows.len(), expected.len());
    for (row, (id, median, n)) in rows.iter().zip(&expected) {
        assert_eq!(&row[col("run_id")], id);
        assert_eq!(row[col("median")].parse::<f64>().unwrap(), *median);
        assert_eq!(row[col("n")].parse::<u64>().unwrap(), *n);
    }
    let hostile = rows
        .iter()
        .find(|r| &r[col("run_id")] == "20261123T000000Z-bad1")
        .unwrap();
    assert_eq!(&hostile[col("host")], NASTY.replace('\n', " "));
    let tags: Value = serde_json::from_str(&hostile[col("tags")]).unwrap();
    assert_eq!(tags["nasty.key-1"], NASTY.replace('\n', " "));
}

#[test]
fn bad_export_requests_exit_2_and_write_nothing() {
    let env = TestEnv::new();
    let ids = import_all(&env);
    let (a, b) = (ids[0].as_str(), ids[1].as_str());
    let existing = env.file("exists.csv", "keep");
    let cases: Vec<Vec<&str>> = vec![
        vec!["export", a, b],
        vec!["export", a, b, "--format", "json"],
        vec!["export", a, "latest", "latest", "--format", "csv"],
        vec!["export", a, a, "--format", "ndjson"],
        vec!["export", a, "--format", "xml"],
        vec!["export", a, "nosuchrun", "--format", "gobench"],
        vec!["export", "--format", "csv"],
        vec![
            "export",
            a,
            "--format",
            "csv",
            "-o",
            existing.to_str().unwrap(),
        ],
    ];
    for args in cases {
        let out = env.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
}
