//! The held-out checks of `truebench predict` through the binary (root: capacity policies
//! make cgroups): load steps under two capacity settings of one cpuset CPU, a prediction of
//! the highest rate held below a p99 of 5 ms at a setting on 2 CPUs, then that setting
//! measured at rates from 60% to 140% of the prediction.
//! - mq (2 workers, 50 µs of service): learn 0.5/1 and 1.0/1, predict 1.8/2;
//! - nginx (2 worker processes, started by truebench inside the capacity group, 4
//!   connections), its quotas on a 5 ms CFS period (a throttled request waits at most
//!   3-4 ms, under the 5 ms target): learn 0.2/1 and 0.4/1, predict 0.6/2 (two widths).
//!
//! The measured rate must be within a factor of 1.5 of the prediction, widened by how far
//! the host moved the prediction meanwhile: the training is measured again after the
//! held-out run, and the bound spans both predictions (one run of a shared host is not
//! held against another alone). docs/predict.md records the 20% figures of
//! bench/predict_holdout.sh (1 s steps 5% apart); here the steps are 0.6 s and 10% apart (a
//! measured figure is only known to ±10%), so 1.5 is what holds. A try whose load generator fell behind (invalid steps, or no
//! prediction) is measured again, three times; a held-out run outside the bound must be
//! outvoted by two within it (one disturbed run fails no check; a biased model fails all).

mod common;

use common::TestEnv;
use serde_json::Value;

/// Both checks load this machine's CPUs (the held-out setting takes 2 CPUs): one at a time,
/// or each measures the other's load (CI saw both fail together, ratios 1.67 beside 1.11).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The highest planned rate held below a p99 of 5 ms (a valid steady step), and the count
/// of invalid steps.
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

/// Learn `train_quotas` at width 1 with `workload` arguments, predict `held_quota`/2,
/// measure it, learn again, up to three tries: the measured rate must be within 1.5 of the
/// predictions on either side of it in more tries than it is outside (a first try within passes; one disturbed held-out run is outvoted by two within
/// it, a model off by more fails every try). Panics after three tries the machine was too
/// busy for.
fn check(workload: &[&str], train_quotas: &str, train_rates: &str, held_quota: &str, period: &str) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    let run = |quota: &str, width: &str, rates: &str| {
        let mut a: Vec<&str> = vec!["loadstep"];
        a.extend_from_slice(workload);
        a.extend_from_slice(&[
            "--cpu-quota",
            quota,
            "--cpuset-width",
            width,
            "--quota-period",
            period,
            "--rates",
            rates,
            "--step-duration",
            "0.6",
            "--warmup",
            "0.2",
            "--repeat",
            "1",
            "--json",
        ]);
        env.json(&a)
    };
    let capacity = format!("{held_quota}/2");
    let mut tries = vec![];
    let (mut within, mut outside) = (0, 0);
    // The prediction from a training run, or why there is none.
    let predict = |train: &Value| -> Result<(f64, [f64; 2]), String> {
        let id = train["run_id"].as_str().unwrap().to_string();
        let p = env.json(&[
            "predict",
            &id,
            "--capacity",
            &capacity,
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
            return Err(format!("no prediction: {why}"));
        };
        // Named with the runs' period when it is not the default 100 ms.
        let named = match period {
            "100ms" => capacity.clone(),
            p => format!("{capacity}@{p}"),
        };
        assert_eq!(s["capacity"], named.as_str());
        let [lo, hi] = [0, 1].map(|i| s["interval"][i].as_f64().unwrap());
        assert!(lo <= pred && pred <= hi, "{s}");
        assert!(!s["model"].as_str().unwrap().is_empty());
        Ok((pred, [lo, hi]))
    };
    for _ in 0..3 {
        let (pred, [lo, hi]) = match predict(&run(train_quotas, "1", train_rates)) {
            Ok(p) => p,
            Err(why) => {
                tries.push(why);
                continue;
            }
        };
        let rates: Vec<String> = (0..9)
            .map(|i| format!("{:.0}", pred * (0.6 + 0.1 * i as f64)))
            .collect();
        let measured = run(held_quota, "2", &rates.join(","));
        let (m, invalid) = held(&measured);
        if invalid > 2 || m == 0.0 {
            tries.push(format!(
                "predicted {pred:.0}/s; {invalid} invalid steps, held {m:.0}/s"
            ));
            continue;
        }
        // The training measured again after the held-out run: the same prediction made on
        // either side of it says how far the host moved the model's figure meanwhile, and
        // the held-out figure is held against that, not against one run of a shared host.
        let again = match predict(&run(train_quotas, "1", train_rates)) {
            Ok((p, _)) => p,
            Err(why) => {
                tries.push(format!(
                    "predicted {pred:.0}/s, measured {m:.0}/s; again: {why}"
                ));
                continue;
            }
        };
        let (low, high) = (pred.min(again) / 1.5, pred.max(again) * 1.5);
        tries.push(format!(
            "predicted {pred:.0}/s (interval {lo:.0}-{hi:.0}), {again:.0}/s from the training measured again, measured {m:.0}/s held at p99 <= 5 ms: allowed {low:.0}-{high:.0}/s"
        ));
        if (low..=high).contains(&m) {
            within += 1;
        } else {
            outside += 1;
        }
        if within > outside {
            return;
        }
        assert!(
            outside < 2,
            "the prediction is off by more than 1.5x in two tries: {tries:?}"
        );
    }
    assert_eq!(
        outside, 0,
        "the prediction is off by more than 1.5x in more tries than not: {tries:?}"
    );
    panic!("the machine was too busy to hold the load steps in three tries: {tries:?}");
}

#[test]
#[ignore = "needs root"]
fn the_prediction_at_a_held_out_setting_matches_its_measurement() {
    common::needs_root();
    check(
        &["--workers", "2", "--service-us", "50"],
        "0.5,1.0",
        "3000,6000,8000,9000,10000,12000,15000,17000,19000",
        "1.8",
        "100ms",
    );
}

#[test]
#[ignore = "needs root"]
fn the_nginx_prediction_at_a_held_out_width_matches_its_measurement() {
    common::needs_root();
    let dir = tempfile::tempdir().unwrap();
    let (port, server) = common::nginx_config(dir.path());
    let url = format!("http://127.0.0.1:{port}/");
    check(
        &["--http", &url, "--server", &server, "--workers", "4"],
        "0.2,0.4",
        "2000,4000,6000,8000,10000,12000,14000,16000,18000,20000,24000",
        "0.6",
        "5ms",
    );
}
