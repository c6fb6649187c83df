//! The A/A test of `compare` on real documents of this project's VM (tests/fixtures/aa/:
//! `calibrate --runs 5` of the default suites, then three `run`s back to back, 2026-11-25,
//! other tenants' builds running beside them). Nothing changed between the three runs, so
//! every row called real is a false alarm unless a measured cause (a neighbour's CPU share,
//! a different placement) explains it. The documents predate rounds: each pair is compared
//! with nothing but the pair in the database (no noise to judge by: "cannot tell") and
//! beside the calibration's runs (the host's history); no benchmark runs.

mod common;

use common::TestEnv;
use serde_json::Value;

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/aa/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn id(name: &str) -> String {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    doc["run_id"].as_str().unwrap().to_string()
}

fn import(env: &TestEnv, names: &[&str]) {
    let mut cmd = env.cmd();
    cmd.arg("import");
    for n in names {
        cmd.arg(fixture(n));
    }
    cmd.assert().success();
}

/// The rows called better or worse, and those of them no measured cause explains.
fn alarms(c: &Value) -> (Vec<&Value>, Vec<&Value>) {
    let real: Vec<&Value> = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| matches!(r["verdict"].as_str(), Some("B better" | "B worse")))
        .collect();
    let unexplained = real
        .iter()
        .copied()
        .filter(|r| r["status"] != "explained")
        .collect();
    (real, unexplained)
}

const PAIRS: [(&str, &str); 3] = [("aa-1", "aa-2"), ("aa-1", "aa-3"), ("aa-2", "aa-3")];

#[test]
fn three_earlier_runs_compared_alone_cannot_tell_and_say_they_have_no_rounds() {
    // Documents of an earlier version (no rounds) with nothing measured of their host: no
    // row is tested, none is called, and each says why; no noise is made up for them.
    for (a, b) in PAIRS {
        let env = TestEnv::new();
        import(&env, &[a, b]);
        let c = env.json(&["compare", &id(a), &id(b), "--json"]);
        let rows = c["rows"].as_array().unwrap();
        assert!(rows.len() >= 100, "{a} {b}: {} rows", rows.len());
        for r in rows.iter().filter(|r| r["verdict"] != "not comparable") {
            assert_eq!(r["noise"]["basis"], "none", "{r}");
            assert!(r["mde"].is_null() && r["noise"]["sigma"].is_null(), "{r}");
            assert_eq!(r["verdict"], "cannot tell", "{r}");
            let why = r["why"].as_str().unwrap();
            assert!(
                why.contains("A: no rounds (an earlier version's document)")
                    && why.contains("B: no rounds (an earlier version's document)")
                    && why.contains("no calibration or stored history"),
                "{why}"
            );
        }
        assert_eq!(c["fdr"]["tested"], 0, "{}", c["summary"][0]);
        let line = c["summary"][0].as_str().unwrap();
        assert!(
            line.contains("not tested: no rounds (an earlier version's document)"),
            "{line}"
        );
        // The text report says it too, without panicking on rows with no MDE.
        let text = env
            .cmd()
            .args(["compare", &id(a), &id(b)])
            .assert()
            .success();
        let out = String::from_utf8_lossy(&text.get_output().stdout).to_string();
        assert!(
            out.contains("(no rounds)") && out.contains("cannot tell (not tested, largest B/A"),
            "{out}"
        );
    }
}

#[test]
fn the_same_pairs_beside_the_calibration_call_at_most_one_row() {
    let env = TestEnv::new();
    import(
        &env,
        &[
            "calibration-1",
            "calibration-2",
            "calibration-3",
            "calibration-4",
            "calibration-5",
            "aa-1",
            "aa-2",
            "aa-3",
        ],
    );
    for (a, b) in PAIRS {
        let c = env.json(&["compare", &id(a), &id(b), "--json"]);
        let rows = c["rows"].as_array().unwrap();
        // The calibration's runs were imported: `compare` does not take them for this
        // host's calibration (docs/safety.md, a calibration is whole or it is not one).
        assert!(
            rows.iter().all(|r| r["noise"]["basis"] != "calibration"),
            "{a} {b}: an imported calibration was used"
        );
        let (real, _) = alarms(&c);
        eprintln!("{a} vs {b} beside the calibration: {} real", real.len());
        assert!(real.len() <= 1, "{a} vs {b}: {real:?}");
    }
}
