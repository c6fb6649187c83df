//! `compare A B --precision P --budget T`: two short runs of this host get rounds added to
//! their rows above P, stored as runs tagged adds-to=RUN, each row saying what it reached
//! or why not; runs of another host are refused with each side's reason, nothing written.

mod common;

use common::{documents, TestEnv};
use serde_json::Value;

fn id(doc: &Value) -> &str {
    doc["run_id"].as_str().unwrap()
}

/// The runs in the database, with their tags.
fn stored(env: &TestEnv) -> Vec<Value> {
    env.json(&["history", "--json"])
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn two_runs_of_this_host_get_rounds_added_and_every_row_says_what_it_reached() {
    let env = TestEnv::new();
    let a = env.run(&["timers", "--rounds", "2", "--samples", "4"]);
    let b = env.run(&["timers", "--rounds", "2", "--samples", "4"]);
    let out = env
        .cmd()
        .args(["compare", id(&a), id(&b), "--json"])
        .args(["--precision", "50%", "--budget", "5s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let c: Value = serde_json::from_slice(&out.stdout).expect("the comparison is JSON");
    assert_eq!(c["runs"][0], id(&a));
    assert!(!c["rows"].as_array().unwrap().is_empty());
    let head = err
        .lines()
        .find(|l| l.starts_with("truebench: --precision 50.0%: "))
        .unwrap_or_else(|| panic!("no --precision line: {err}"));
    // One line per row above 50% before: what it reached, or why not.
    let rows: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("  timers.") && l.contains(": MDE "))
        .collect();
    let above: usize = head
        .split(": ")
        .nth(2)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{head}"));
    assert_eq!(rows.len(), above, "{err}");
    for r in &rows {
        assert!(r.contains(" rounds"), "{r}");
        if let Some(why) = r.split("short of 50.0%: ").nth(1) {
            assert!(!why.trim().is_empty(), "{r}");
        }
    }
    // Rounds added: stored as runs saying which run they add to, holding only rows asked.
    let added: Vec<Value> = stored(&env)
        .into_iter()
        .filter(|s| s["tags"].get("adds-to").is_some())
        .collect();
    if head.contains("adding 0 rounds") {
        assert!(added.is_empty(), "{added:?}");
    } else {
        assert!(!added.is_empty(), "{err}");
        for s in &added {
            let to = s["tags"]["adds-to"].as_str().unwrap();
            assert!(to == id(&a) || to == id(&b), "{s}");
        }
    }
}

#[test]
fn runs_of_another_host_are_refused_with_each_sides_reason_and_nothing_written() {
    let env = TestEnv::new();
    let timers = documents()
        .into_iter()
        .find(|p| p.ends_with("timers.json"))
        .unwrap();
    let text = std::fs::read_to_string(timers).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["host"] = "db1.elsewhere".into();
    doc["env"]["hostname"] = "db1.elsewhere".into();
    let mut ids = vec![];
    for (i, suffix) in ["aaaa", "bbbb"].iter().enumerate() {
        let run_id = format!("20261123T11564{i}Z-{suffix}");
        doc["run_id"] = run_id.clone().into();
        let f = env.file(&format!("{suffix}.json"), &doc.to_string());
        env.cmd().arg("import").arg(&f).assert().success();
        ids.push(run_id);
    }
    let before = stored(&env).len();
    let out = env
        .cmd()
        .args(["compare", &ids[0], &ids[1], "--precision", "50%"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap();
    assert!(
        first.starts_with("error: --precision cannot add rounds to either run"),
        "{err}"
    );
    for id in &ids {
        assert!(
            first.contains(&format!(
                "({id}) was measured on host db1.elsewhere, this is "
            )),
            "{err}"
        );
    }
    assert_eq!(stored(&env).len(), before);
}
