//! A condition of B judged from documents: the noisy hour of 2026-12-07, two runs of
//! `run memory.bandwidth`, B beside a process copying a 256 MiB buffer on CPU 1 for the whole
//! run (tests/fixtures/aa-noisy-hour/neighbour-{A,B}.json). Every round of B had other tasks
//! at 40-43% of CPU 0-1: a condition of B, not a disturbance of some of its rounds. The rows
//! are compared on B's rounds as they are, the neighbour is named on every row as B's
//! condition, and offered as the cause of each 2-thread row it moved, with the share it took
//! in each run; no row says "cannot tell" for B's rounds being disturbed, and no MDE is
//! printed as a number beyond ten times.

mod common;

use common::TestEnv;
use serde_json::Value;

fn judged() -> Value {
    let env = TestEnv::new();
    let mut ids = vec![];
    for side in ["A", "B"] {
        let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "tests/fixtures/aa-noisy-hour/neighbour-{side}.json"
        ));
        env.cmd().arg("import").arg(&f).assert().success();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        ids.push(doc["run_id"].as_str().unwrap().to_string());
    }
    env.json(&["compare", &ids[0], &ids[1], "--json"])
}

#[test]
fn a_neighbour_throughout_b_is_its_condition_named_on_the_rows_it_moved() {
    let c = judged();
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 22);
    for r in rows {
        // B's condition is named, in figures, on every row; A had none.
        let b = r["rounds"][1]["throughout"].to_string();
        assert!(
            b.contains("other tasks took 4") && b.contains("of CPU 0-1"),
            "{r}"
        );
        assert!(r["rounds"][0].get("throughout").is_none(), "{r}");
        // Not "cannot tell" for B's rounds being disturbed by the neighbour: they are B.
        let why = r["why"].as_str().unwrap();
        assert!(!why.contains("of B disturbed"), "{why}");
        // Every call a measured cause claims.
        if matches!(r["verdict"].as_str(), Some("B better" | "B worse")) {
            assert!(r["status"] != "unexplained", "{r}");
        }
    }
    // The 2-thread rows the neighbour moved by more than 15%: each offered (or explained by)
    // the neighbour, with the share it took in each run.
    let moved: Vec<&Value> = rows
        .iter()
        .filter(|r| r["params"].as_str().unwrap().contains("threads=2"))
        .filter(|r| r["ratio"].as_f64().unwrap() < 1.0 / 1.15)
        .collect();
    assert!(moved.len() >= 6, "{moved:?}");
    for r in moved {
        assert!(
            matches!(r["status"].as_str(), Some("offered" | "explained")),
            "{r}"
        );
        let n = r["explanations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["cause"] == "neighbour")
            .unwrap_or_else(|| panic!("no neighbour: {r}"));
        assert_eq!(n["claim"], "explains", "{n}");
        let because = n["because"].as_str().unwrap();
        assert!(
            because.contains("during B's rounds and 1% during A's")
                && because.contains("memory bandwidth"),
            "{because}"
        );
        let ev = n["evidence"].to_string();
        assert!(
            ev.contains("A: other tasks used") && ev.contains("B: other tasks used 4"),
            "{ev}"
        );
    }
    // MDEs as a person reads them: the summary never prints thousands of percent.
    let summary = c["summary"].to_string();
    assert!(summary.contains("more than 10x"), "{summary}");
    let digits_before_percent = summary
        .split('%')
        .map(|part| part.chars().rev().take_while(char::is_ascii_digit).count())
        .max()
        .unwrap();
    assert!(digits_before_percent <= 3, "{summary}");
}
