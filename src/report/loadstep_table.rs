//! A stored load-step experiment as text: per variant (policy × workers × capacity) a table
//! of its steps (rates, latency percentiles corrected and not, queue wait, lag, CPU, cost per
//! message, throttling, validity), its knee and fits; then which variant won each step and
//! whether the difference is real, and what could not be measured. Read from the run
//! document, so `loadstep` and `show` print the same.

use super::units::num;
use serde_json::Value;

fn f(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "-".into())
}

fn variant(v: &Value) -> String {
    let mut t = super::table(&[
        "planned/s",
        "sent/s",
        "completed/s",
        "failed",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "p99 uncorr. µs",
        "queue p99 µs",
        "service µs",
        "lag p99 µs",
        "CPU %",
        "generator CPU %",
        "CPU-µs/tx",
        "cs/tx",
        "migr/tx",
        "syscalls/tx",
        "throttled",
        "valid",
    ]);
    for s in v["steps"].as_array().into_iter().flatten() {
        let l = &s["latency"];
        t.add_row(vec![
            f(s["planned_rate"].as_f64()),
            f(s["sent_rate"].as_f64()),
            f(s["completed_rate"].as_f64()),
            s["failed"].as_u64().unwrap_or(0).to_string(),
            f(l["p50"].as_f64()),
            f(l["p90"].as_f64()),
            f(l["p99"].as_f64()),
            f(l["p999"].as_f64()),
            f(l["max"].as_f64()),
            f(s["latency_uncorrected"]["p99"].as_f64()),
            f(s["queue_wait"]["p99"].as_f64()),
            f(s["service_time"]["mean"].as_f64()),
            f(s["schedule_lag_us"]["p99"].as_f64()),
            f(s["cpu_pct"].as_f64()),
            f(s["generator_cpu_pct"].as_f64()),
            f(s["per_tx"]["cpu_us"].as_f64()),
            f(s["per_tx"]["context_switches"].as_f64()),
            f(s["per_tx"]["migrations"].as_f64()),
            f(s["per_tx"]["syscalls"].as_f64()),
            match (s["throttled_periods"].as_u64(), s["throttled_ms"].as_f64()) {
                (Some(n), Some(ms)) => format!("{n} periods, {} ms", num(ms)),
                _ => "-".into(),
            },
            match s["invalid_reason"].as_str() {
                None => "yes".into(),
                Some(why) => format!("NO: {why}"),
            },
        ]);
    }
    let workers = v["workers"].as_u64().unwrap_or(0);
    let mut out = format!(
        "Policy {} with {} worker{}{}{}\n{t}\n",
        v["policy"].as_str().unwrap_or("?"),
        workers,
        if workers == 1 { "" } else { "s" },
        v["pinned_cpus"]
            .as_array()
            .map(|c| format!(", pinned to CPUs {}", Value::Array(c.clone())))
            .unwrap_or_default(),
        match (v["capacity"].as_object(), v["cpuset"].as_array()) {
            (Some(c), Some(cpus)) => format!(
                ", capacity: quota {} CPUs on a cpuset of {} {} ({})",
                c["quota"],
                c["width"],
                Value::Array(cpus.clone()),
                v["capacity_note"].as_str().unwrap_or("")
            ),
            _ => String::new(),
        }
    );
    let knee = |k: &Value| {
        k["rate"]
            .as_f64()
            .map(|r| format!("{}/s", num(r)))
            .unwrap_or_else(|| "-".into())
    };
    out.push_str(
        &if v["knee_latency"].is_null() && v["knee_cost"].is_null() {
            "Knee: none (latency and cost per transaction grew no faster than load)\n".to_string()
        } else {
            format!(
                "Knee: latency after {}; CPU cost per transaction after {}\n",
                knee(&v["knee_latency"]),
                knee(&v["knee_cost"])
            )
        },
    );
    for (label, key, min) in [("USL", "usl", 4), ("Amdahl", "amdahl", 3)] {
        let u = &v[key];
        if u.is_null() {
            out.push_str(&format!(
                "{label}: not fitted (needs at least {min} intervals of steady steps with work in flight, and a non-singular fit)\n"
            ));
            continue;
        }
        out.push_str(&format!(
            "{label} on completed rate vs Little's-law concurrency ({} intervals of 100 ms in the steady steps): σ {} ± {}, κ {}{}, γ {}/s; {}\n",
            u["points"],
            f(u["sigma"].as_f64()),
            f(u["sigma_se"].as_f64()),
            f(u["kappa"].as_f64()),
            u["kappa_se"].as_f64().map(|s| format!(" ± {}", num(s))).unwrap_or_default(),
            f(u["gamma"].as_f64()),
            match (u["peak_n"].as_f64(), u["peak_x"].as_f64()) {
                (Some(n), Some(x)) => format!("predicted peak {}/s at N = {}", num(x), num(n)),
                (None, Some(x)) => format!("asymptote {}/s", num(x)),
                _ => "no limit within the model".into(),
            }
        ));
    }
    out
}

fn comparison(c: &Value) -> String {
    let mut out = format!(
        "Winner: {} (most steps with the lowest p99; {}). Per step:\n",
        c["winner"].as_str().unwrap_or("none"),
        c["test"].as_str().unwrap_or("")
    );
    for s in c["steps"].as_array().into_iter().flatten() {
        if s["compared"] != true {
            out.push_str(&format!(
                "  {}/s: not compared ({})\n",
                f(s["rate"].as_f64()),
                s["why"].as_str().unwrap_or("")
            ));
            continue;
        }
        let others: Vec<String> = s["others"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| {
                format!(
                    "{k} {} µs ({})",
                    f(v["median_interval_p99_us"].as_f64()),
                    if v["real"] == true {
                        "real difference"
                    } else {
                        "not significant"
                    }
                )
            })
            .collect();
        out.push_str(&format!(
            "  {}/s: {} {} µs; {}\n",
            f(s["rate"].as_f64()),
            s["best"].as_str().unwrap_or(""),
            f(s["best_median_interval_p99_us"].as_f64()),
            others.join("; ")
        ));
    }
    out
}

/// The experiment of a run, when it has one.
pub fn render(ls: &Value) -> String {
    let mut out = String::new();
    for v in ls["variants"].as_array().into_iter().flatten() {
        out.push_str(&variant(v));
        out.push('\n');
    }
    if ls["comparison"].is_object() {
        out.push_str(&comparison(&ls["comparison"]));
    }
    if let Some(sc) = ls["scaling"].as_object() {
        let pts: Vec<String> = sc["points"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                format!(
                    "{} workers {}/s",
                    p["workers"],
                    f(p["max_valid_completed_rate"].as_f64())
                )
            })
            .collect();
        out.push_str(&format!(
            "Scaling (highest valid completed rate per worker count): {}\n",
            pts.join(", ")
        ));
    }
    for (k, why) in ls["unavailable"].as_object().into_iter().flatten() {
        out.push_str(&format!(
            "not measured: {k} per transaction: {}\n",
            why.as_str().unwrap_or("")
        ));
    }
    out
}
