//! The held-out check of `truebench predict` through the binary (root: capacity policies
//! make cgroups): load steps of the mq workload (2 workers, 50 µs of service) under the
//! capacity settings 0.5/1 and 1.0/1, a prediction of the highest rate held below a p99 of
//! 5 ms at 1.8/2, then 1.8/2 measured at rates around the prediction. The predicted rate
//! must be within a factor of 1.5 of the measured one (docs/predict.md records the 20%
//! figures of the bench script; the looser bound holds on a busy shared machine). A try whose
//! load generator fell behind (invalid steps, no prediction) is measured again, three times.

mod common;

use common::TestEnv;
use serde_json::Value;

fn held(doc: &Value) -> (f64, usize) {
    let steps = doc["loadstep"]["variants"][0]["steps"].as_array().unwrap();
    let top = steps
        .iter()
        .filter(|s| {
            s["valid"] == true
                && s["completed_rate"].as_f64().unwrap() >= 0.98 * s["sent_rate"].as_f64().unwrap()
                && s["latency"]["p99"].as_f64().unwrap() <= 5000.0
        })
        .map(|s| s["planned_rate"].as_f64().unwrap())
        .fold(0.0, f64::max);
    (top, steps.iter().filter(|s| s["valid"] != true).count())
}

#[test]
#[ignore = "needs root"]
fn the_prediction_at_a_held_out_setting_matches_its_measurement() {
    let env = TestEnv::new();
    let mut tries = vec![];
    for _ in 0..3 {
        let train = env.json(&[
            "loadstep",
            "--cpu-quota",
            "0.5,1.0",
            "--cpuset-width",
            "1",
            "--workers",
            "2",
            "--rates",
            "3000,6000,8000,9000,10000,12000,15000,17000,19000",
            "--step-duration",
            "0.6",
            "--warmup",
            "0.2",
            "--repeat",
            "1",
            "--json",
        ]);
        let id = train["run_id"].as_str().unwrap().to_string();
        let p = env.json(&[
            "predict",
            &id,
            "--capacity",
            "1.8/2",
            "--p99",
            "5ms",
            "--json",
        ]);
        assert_eq!(p["schema"], "truebench.predict/1");
        let s = &p["settings"][0];
        let Some(pred) = s["max_rate"].as_f64() else {
            // No figure: it must say why (a busy machine: too few valid steps).
            let why = p["why_not"].as_str().or(s["why_not"].as_str()).unwrap();
            assert!(!why.is_empty());
            tries.push(format!("no prediction: {why}"));
            continue;
        };
        assert_eq!(s["capacity"], "1.8/2");
        let [lo, hi] = [0, 1].map(|i| s["interval"][i].as_f64().unwrap());
        assert!(lo <= pred && pred <= hi, "{s}");
        assert!(!s["model"].as_str().unwrap().is_empty());
        let rates: Vec<String> = (0..9)
            .map(|i| format!("{:.0}", pred * (0.6 + 0.1 * i as f64)))
            .collect();
        let measured = env.json(&[
            "loadstep",
            "--cpu-quota",
            "1.8",
            "--cpuset-width",
            "2",
            "--workers",
            "2",
            "--rates",
            &rates.join(","),
            "--step-duration",
            "0.6",
            "--warmup",
            "0.2",
            "--repeat",
            "1",
            "--json",
        ]);
        let (m, invalid) = held(&measured);
        if invalid > 2 || m == 0.0 {
            tries.push(format!(
                "predicted {pred:.0}/s; {invalid} invalid steps, held {m:.0}/s"
            ));
            continue;
        }
        let ratio = pred / m;
        assert!(
            (1.0 / 1.5..=1.5).contains(&ratio),
            "predicted {pred:.0}/s (interval {lo:.0}-{hi:.0}), measured {m:.0}/s held at p99 <= 5 ms: ratio {ratio:.2}; earlier tries: {tries:?}"
        );
        return;
    }
    panic!("the machine was too busy to hold the load steps in three tries: {tries:?}");
}
