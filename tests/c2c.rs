//! The c2c suite on this machine: every usable pair measured (this machine is small), with
//! plausible latencies, and the matrix printed.

mod common;

#[test]
fn run_c2c_measures_every_pair_and_prints_the_matrix() {
    let env = common::TestEnv::new();
    let doc = env.run(&["c2c", "--samples", "3"]);
    let n = doc["env"]["cpus"]["usable"].as_array().unwrap().len();
    let results = doc["results"].as_array().unwrap();
    if n > truebench::bench::c2c::ALL_PAIRS_UP_TO {
        assert!(!results.is_empty());
    } else {
        let skipped = doc["skipped"].as_array().unwrap().len();
        assert_eq!(
            results.len() + skipped,
            n * (n - 1) / 2,
            "every pair measured or skipped with a reason"
        );
    }
    for r in results {
        assert_eq!(r["unit"], "ns/one-way");
        let [a, b] = [&r["params"]["cpu_a"], &r["params"]["cpu_b"]];
        assert_eq!(r["placement"]["cpus"], serde_json::json!([a, b]));
        let ns = r["stats"]["median"].as_f64().unwrap();
        assert!((5.0..1e6).contains(&ns), "{ns} ns one-way");
    }
    let text = env.cmd().args(["show", "latest"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    if n >= 2 {
        assert!(text.contains("Cache-line one-way latency, ns"), "{text}");
        assert!(text.contains("median ns"), "{text}");
    }
}
