//! The effective CPU speed every `run` records: a sample at the start and end of each suite
//! on this machine's first usable CPU (one kind here), plausible as a clock, the drop
//! finding consistent with the figures, and the
//! text report showing it; `record` samples it after its window, `experiment` around its
//! runs. (The measurement itself: src/measure/speed.rs unit tests.)

mod common;

use common::TestEnv;
use serde_json::Value;

fn samples(doc: &Value) -> &Vec<Value> {
    doc["cpu_speed"]["samples"]
        .as_array()
        .expect("cpu_speed.samples")
}

#[test]
fn run_samples_the_speed_at_the_start_and_end_of_each_suite() {
    let env = TestEnv::new();
    let doc = env.run(&["timers,memory.per-event", "--samples", "3"]);
    let speed = &doc["cpu_speed"];
    assert!(speed["method"].as_str().unwrap().contains("dependent"));
    let s = samples(&doc);
    let got: Vec<(&str, &str)> = s
        .iter()
        .map(|x| (x["suite"].as_str().unwrap(), x["point"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("timers", "start"),
            ("timers", "end"),
            ("memory", "start"),
            ("memory", "end")
        ]
    );
    let first_usable = doc["env"]["cpus"]["usable"][0].as_u64().unwrap();
    for x in s {
        let ghz = x["cycles_per_ns"].as_f64().unwrap();
        assert!((0.2..8.0).contains(&ghz), "{x}");
        assert_eq!(x["cpu"].as_u64(), Some(first_usable));
        assert!(x.get("cpu_kind").is_none(), "one kind here: {x}");
    }
    // The drop finding fires exactly when a suite's end fell more than 10% below its start.
    // Whether the two readings agree is the host's to decide (a shared host may slow a CPU
    // between them: that is what the finding is for), so no bound between them is assumed.
    let ids = common::finding_ids(&doc["findings"]);
    let fell = s.chunks(2).any(|p| {
        p[1]["cycles_per_ns"].as_f64().unwrap() < 0.9 * p[0]["cycles_per_ns"].as_f64().unwrap()
    });
    assert_eq!(ids.contains(&"cpu-speed-dropped"), fell, "{ids:?} {s:?}");

    // The text report says it in one line per CPU.
    let text = env.text(&["show", doc["run_id"].as_str().unwrap()]);
    let line = text
        .lines()
        .find(|l| l.starts_with("CPU speed, CPU "))
        .unwrap_or_else(|| panic!("no CPU speed line:\n{text}"));
    assert!(
        line.contains("timers ") && line.contains(" GHz effective at start, "),
        "{line}"
    );
}

/// (suite, point) of each speed sample of a document.
fn points(doc: &Value) -> Vec<(String, String)> {
    samples(doc)
        .iter()
        .map(|x| {
            let ghz = x["cycles_per_ns"].as_f64().unwrap();
            assert!((0.2..8.0).contains(&ghz), "{x}");
            (
                x["suite"].as_str().unwrap().to_string(),
                x["point"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn record_samples_it_after_its_window_and_experiment_around_its_runs() {
    let env = TestEnv::new();
    let rec = env.json(&[
        "record",
        "--interval",
        "0.2",
        "--json",
        "--",
        "sleep",
        "0.5",
    ]);
    assert_eq!(points(&rec), [("record".into(), "end".into())]);
    let exp = env.json(&["experiment", "--runs", "2", "--json", "--", "true"]);
    assert_eq!(
        points(&exp),
        [
            ("experiment".into(), "start".into()),
            ("experiment".into(), "end".into())
        ]
    );
}
