//! Run documents written by earlier versions (tests/fixtures/documents, exported by the
//! version before the run document was typed: one per kind of run) keep loading: each is
//! imported, shown (summary and full), compared, reported, and exported; the export holds
//! everything the original held, and export -> import -> export gives the same bytes.

mod common;

use common::{documents as fixtures, TestEnv};
use serde_json::Value;

/// Equal as JSON, numbers to f32 precision (probe loads are f32), every key on both sides.
fn is_empty_default(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) | Value::Bool(true) => false,
    }
}

fn same(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() <= 1e-6 * x.abs().max(y.abs()) {
                Ok(())
            } else {
                Err(format!("{at}: {x} became {y}"))
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            // Every key kept; a key added by a later version holds only its empty default
            // (a field the old document could not have had).
            let lost: Vec<_> = x.keys().filter(|k| !y.contains_key(*k)).collect();
            let added: Vec<_> = y
                .iter()
                .filter(|(k, v)| !x.contains_key(*k) && !is_empty_default(v))
                .map(|(k, _)| k)
                .collect();
            if !lost.is_empty() || !added.is_empty() {
                return Err(format!(
                    "{at}: keys lost {lost:?}, added with values {added:?}"
                ));
            }
            x.iter()
                .try_for_each(|(k, v)| same(v, &y[k], &format!("{at}.{k}")))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .try_for_each(|(i, (p, q))| same(p, q, &format!("{at}[{i}]"))),
        _ if a == b => Ok(()),
        _ => Err(format!("{at}: {a} became {b}")),
    }
}

#[test]
fn documents_of_every_kind_of_run_load_show_compare_report_and_export_unchanged() {
    let env = TestEnv::new();
    let mut ids = Vec::new();
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let original: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let id = original["run_id"].as_str().unwrap().to_string();
        env.cmd().arg("import").arg(&path).assert().success();

        let summary = env.text(&["show", &id]);
        assert!(summary.contains(&id), "{name}: {summary}");
        let wide: Vec<&str> = summary
            .lines()
            .filter(|l| l.chars().count() > 100)
            .collect();
        assert!(
            wide.is_empty(),
            "{name}: lines wider than 100 columns: {wide:#?}"
        );
        let full = env.text(&["show", &id, "--all"]);
        assert!(full.len() >= summary.len() / 2, "{name}: {full}");

        let exported = env.text(&["export", &id]);
        let back: Value = serde_json::from_str(&exported).unwrap();
        same(&original, &back, &name).unwrap_or_else(|e| panic!("{e}"));

        // export -> import -> export: the same bytes.
        let again = TestEnv::new();
        let file = again.file("doc.json", &exported);
        again.cmd().arg("import").arg(&file).assert().success();
        assert_eq!(again.text(&["export", &id]), exported, "{name}");
        ids.push((name, id));
    }
    assert!(ids.len() >= 8, "fixtures: {ids:?}");
    let id = |n: &str| ids.iter().find(|(f, _)| f == n).unwrap().1.as_str();

    // Each kind of run shows its own summary.
    for (file, want) in [
        ("timers.json", "Clock read cost"),
        ("ctx.json", "Pipe round trip per placement"),
        ("c2c.json", "median ns"),
        ("memory.json", "Measured levels"),
        ("classic.json", "Index, 1 copy"),
        ("record.json", "command: sleep 1"),
        ("record-numa.json", "home node 0"),
        ("loadstep.json", "Knee"),
        ("loadstep-variants.json", "Winner:"),
    ] {
        let text = env.text(&["show", id(file)]);
        assert!(text.contains(want), "{file}: no '{want}' in\n{text}");
    }

    let cmp = env.text(&["compare", id("timers.json"), id("timers.json")]);
    assert!(cmp.contains("no real difference"), "{cmp}");
    let cmp = env.json(&["compare", id("ctx.json"), id("c2c.json"), "--json"]);
    assert_eq!(cmp["rows"].as_array().unwrap().len(), 0, "{cmp}");

    let all: Vec<&str> = ids.iter().map(|(_, id)| id.as_str()).collect();
    let html = env.text(&[&["report"], all.as_slice()].concat());
    for want in [
        "Clock read cost",
        "Recording: CPU use",
        "Latency against load",
        "sleep 1",
    ] {
        assert!(html.contains(want), "report: no {want}");
    }
}
