//! The memory suite on this machine: short runs with plausibility bounds, the validated
//! bandwidth kernels, the latency curve's findings, and the refusal of impossible sizes.

mod common;

use common::TestEnv;
use serde_json::Value;

fn results<'a>(doc: &'a Value, bench: &str) -> Vec<&'a Value> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["benchmark"] == bench)
        .collect()
}

#[test]
fn bandwidth_kernels_report_plausible_rates_and_their_counting() {
    let env = TestEnv::new();
    let doc = env.run(&["memory.bandwidth", "--samples", "3", "--array-size", "64M"]);
    let rs = results(&doc, "memory.bandwidth@1");
    assert!(!rs.is_empty());
    for r in &rs {
        assert_eq!(r["unit"], "MB/s");
        let mbs = r["stats"]["median"].as_f64().unwrap();
        // 64 MiB arrays: from a slow VM's DRAM to a fast machine's caches.
        assert!(
            (200.0..2_000_000.0).contains(&mbs),
            "{}: {mbs} MB/s",
            r["params"]
        );
        if r["params"]["stores"] == "regular" && r["params"]["kernel"] == "triad" {
            let est = r["derived"]["est_dram_mb_s"].as_f64().unwrap();
            assert!(
                (est / mbs - 4.0 / 3.0).abs() < 1e-9,
                "write-allocate factor for triad"
            );
        }
    }
    let kernels: std::collections::BTreeSet<&str> = rs
        .iter()
        .map(|r| r["params"]["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels.len(), 6, "{kernels:?}");
    let first = &rs[0]["findings"];
    assert!(
        first.to_string().contains("as asked (--array-size)"),
        "{first}"
    );
}

#[test]
fn latency_and_per_event_run_and_explain_themselves() {
    let env = TestEnv::new();
    let doc = env.run(&["memory.latency,memory.per-event", "--samples", "3"]);
    let lat = results(&doc, "memory.latency@1");
    let l1 = lat
        .iter()
        .find(|r| r["params"]["size_bytes"] == 4096)
        .unwrap()["stats"]["median"]
        .as_f64()
        .unwrap();
    let big = lat.iter().rfind(|r| r["params"]["pages"] == "4k").unwrap()["stats"]["median"]
        .as_f64()
        .unwrap();
    assert!(
        (0.2..20.0).contains(&l1),
        "4 KiB working set: {l1} ns per load"
    );
    assert!(
        big > 4.0 * l1,
        "largest working set {big} ns vs 4 KiB {l1} ns"
    );
    let findings: Vec<&str> = lat
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(findings.contains(&"cache-levels"), "{findings:?}");
    let pe = results(&doc, "memory.per-event@1");
    assert_eq!(pe.len(), 2);
    let per_event = pe
        .iter()
        .find(|r| r["params"]["timing"] == "per-event")
        .unwrap();
    assert!(per_event["findings"]
        .to_string()
        .contains("per-event-timing"));
}

#[test]
fn impossible_sizes_are_refused_before_anything_is_written() {
    let env = TestEnv::new();
    for size in ["64T", "1P", "12", "lots"] {
        let out = env
            .cmd()
            .args(["run", "memory.bandwidth", "--array-size", size])
            .output()
            .unwrap();
        common::assert_refused(&env, &out, &size);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("array-size"),
            "{size}"
        );
    }
}
