//! One step's figures from its raw records: planned, sent and completed rates; late and
//! dropped sends and the schedule lag; latency percentiles from the due time (corrected for
//! coordinated omission) and from the send time (uncorrected); queue wait and service time;
//! Little's law; the system's cost per transaction; and whether the step is valid (the
//! load generator kept its schedule). Pure: tested on synthetic records.

use super::mq::{Outcome, Record};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A send more than this late is counted late.
pub const LATE_NS: u64 = 1_000_000;
/// The shortest sent/planned ratio of a valid step.
pub const MIN_SENT_SHARE: f64 = 0.99;
/// A schedule lag p99 above this means the generator stalled: the step is invalid.
pub const MAX_LAG_P99_NS: u64 = 10_000_000;
/// A step where more than this share of the sends failed measures nothing: invalid.
pub const MAX_FAILED_SHARE: f64 = 0.01;
/// Width of the intervals whose p99 latencies are the samples of rank tests.
pub const INTERVAL_NS: u64 = 100_000_000;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// System counters over a step's measured window (deltas).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SysDelta {
    /// CPU time of the service (the process without the load generator's thread, or the
    /// `--pid` server), s; None when no service process is watched.
    pub cpu_s: Option<f64>,
    /// CPU time of the load generator's thread, s.
    pub generator_cpu_s: f64,
    pub voluntary: Option<u64>,
    pub involuntary: Option<u64>,
    pub migrations: Option<u64>,
    /// perf_event counts (syscalls, cycles...) by name.
    pub events: BTreeMap<String, u64>,
    /// The capacity policy's cgroup: quota periods throttled and time throttled (µs).
    pub throttled_periods: Option<u64>,
    pub throttled_us: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    pub planned_rate: f64,
    pub sent_rate: f64,
    pub completed_rate: f64,
    pub late_sends: u64,
    pub dropped: u64,
    pub unfinished: u64,
    /// Measured messages that failed (HTTP errors, and those not answered by the step's
    /// end: `unfinished`), the first error, and connections the server closed that were
    /// opened again.
    #[serde(default)]
    pub failed: u64,
    pub first_failure: Option<String>,
    #[serde(default)]
    pub reconnects: u64,
    /// Schedule lag (sent − due), µs.
    pub schedule_lag_us: Option<Percentiles>,
    /// Latency from the due time (coordinated omission corrected), µs.
    pub latency: Option<Percentiles>,
    /// Latency from the actual send, µs (what a closed-loop tool would report).
    pub latency_uncorrected: Option<Percentiles>,
    pub queue_wait: Option<Percentiles>,
    pub service_time: Option<Percentiles>,
    /// Mean in-flight count sampled by the producer, and X·R from Little's law.
    pub mean_in_flight: Option<f64>,
    pub little_n: Option<f64>,
    pub little_mismatch: Option<f64>,
    /// The service's CPU over the window (the process without the load generator's
    /// thread), % of one CPU; and the generator's own.
    pub cpu_pct: Option<f64>,
    pub generator_cpu_pct: f64,
    /// Cost per completed transaction: CPU-µs, switches, migrations, syscalls, cycles.
    pub per_tx: BTreeMap<String, f64>,
    /// Under a capacity policy: quota periods in which the service was throttled, and the
    /// time throttled, over the window.
    pub throttled_periods: Option<u64>,
    pub throttled_ms: Option<f64>,
    /// p99 latency (µs) of each 100 ms interval of the window, by due time.
    pub interval_p99_us: Vec<f64>,
    /// [N, X] of each whole 100 ms interval: Little's-law concurrency and completed rate,
    /// the points of the USL fit.
    #[serde(default)]
    pub interval_points: Vec<[f64; 2]>,
    pub valid: bool,
    pub invalid_reason: Option<String>,
}

fn histogram(values: impl Iterator<Item = u64>) -> Option<Histogram<u64>> {
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).ok()?;
    let mut any = false;
    for v in values {
        h.saturating_record(v.max(1));
        any = true;
    }
    any.then_some(h)
}

/// Percentiles in µs of ns values.
pub fn percentiles(values: impl Iterator<Item = u64>) -> Option<Percentiles> {
    let h = histogram(values)?;
    let us = |v: u64| v as f64 / 1e3;
    Some(Percentiles {
        p50: us(h.value_at_quantile(0.5)),
        p90: us(h.value_at_quantile(0.9)),
        p99: us(h.value_at_quantile(0.99)),
        p999: us(h.value_at_quantile(0.999)),
        max: us(h.max()),
        mean: h.mean() / 1e3,
    })
}

pub fn summarize(planned_rate: f64, o: &Outcome, sys: &SysDelta) -> StepSummary {
    let secs = (o.window_end - o.window_start) as f64 / 1e9;
    let rs: &[Record] = &o.records;
    let sent_in_window = o
        .lags
        .iter()
        .zip(0..)
        .filter(|(lag, k)| {
            // The k-th measured send was due at window_start + k/rate.
            let due = o.window_start as f64 + *k as f64 * 1e9 / planned_rate;
            (due + **lag as f64) < o.window_end as f64
        })
        .count();
    let completed = rs.iter().filter(|r| r.done < o.window_end).count();
    let completed_rate = completed as f64 / secs;
    let latency = percentiles(rs.iter().map(|r| r.done - r.due));
    let lag = percentiles(o.lags.iter().copied());
    let mean_in_flight = (!o.in_flight.is_empty())
        .then(|| o.in_flight.iter().sum::<i64>() as f64 / o.in_flight.len() as f64);
    let little_n = latency.as_ref().map(|l| completed_rate * l.mean / 1e6);
    let little_mismatch = mean_in_flight.zip(little_n).map(|(m, n)| {
        super::model::little_mismatch(m, completed_rate, n / completed_rate.max(1e-12))
    });
    let mut per_tx = BTreeMap::new();
    if completed > 0 {
        let n = completed as f64;
        if let Some(cpu) = sys.cpu_s {
            per_tx.insert("cpu_us".into(), cpu * 1e6 / n);
        }
        if let (Some(v), Some(i)) = (sys.voluntary, sys.involuntary) {
            per_tx.insert("context_switches".into(), (v + i) as f64 / n);
            per_tx.insert("involuntary_switches".into(), i as f64 / n);
        }
        if let Some(m) = sys.migrations {
            per_tx.insert("migrations".into(), m as f64 / n);
        }
        for (k, v) in &sys.events {
            per_tx.insert(k.clone(), *v as f64 / n);
        }
    }
    let mut by_interval: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in rs {
        by_interval
            .entry((r.due - o.window_start) / INTERVAL_NS)
            .or_default()
            .push(r.done - r.due);
    }
    let interval_p99_us = by_interval
        .values()
        .filter_map(|v| percentiles(v.iter().copied()).map(|p| p.p99))
        .collect();
    // Little's law per whole interval of the window: X = messages due in it that completed
    // per second, N = X × their mean latency.
    let whole = ((o.window_end - o.window_start) / INTERVAL_NS) as usize;
    let interval_points = by_interval
        .iter()
        .filter(|(k, _)| (**k as usize) < whole)
        .map(|(_, v)| {
            let x = v.len() as f64 / (INTERVAL_NS as f64 / 1e9);
            let r = v.iter().sum::<u64>() as f64 / v.len() as f64 / 1e9;
            [x * r, x]
        })
        .collect();
    let sent_rate = sent_in_window as f64 / secs;
    // A request not answered by the step's end (its drain) failed: its latency is unknown.
    let failed = o.failed + o.unfinished;
    let sent = o.due_in_window.saturating_sub(o.dropped);
    let first_failure = o
        .first_failure
        .clone()
        .or_else(|| (o.unfinished > 0).then(|| "no answer by the step's end".to_string()));
    let invalid_reason = if o.interrupted {
        Some("interrupted (Ctrl-C)".to_string())
    } else if let Some(e) = &o.setup_error {
        Some(format!("a worker could not be set up: {e}"))
    } else if rs.is_empty() && sent > 0 {
        Some(format!(
            "no request completed: {sent} sent, {} failed, {} not answered by the step's end",
            o.failed, o.unfinished
        ))
    } else if failed as f64 > MAX_FAILED_SHARE * sent.max(1) as f64 {
        Some(format!(
            "{:.1}% of the requests failed or were not answered by the step's end \
             ({} failed, {} unanswered; first: {}): their latency is not measured",
            100.0 * failed as f64 / sent.max(1) as f64,
            o.failed,
            o.unfinished,
            first_failure.as_deref().unwrap_or("?")
        ))
    } else if sent_rate < MIN_SENT_SHARE * planned_rate {
        Some(format!(
            "the load generator sent {:.1}% of the plan in the window: it fell behind, so this is not the system's limit",
            100.0 * sent_rate / planned_rate
        ))
    } else {
        lag.as_ref()
            .filter(|l| l.p99 * 1e3 > MAX_LAG_P99_NS as f64)
            .map(|l| {
                format!(
                    "the load generator's schedule lag p99 was {:.1} ms: it stalled",
                    l.p99 / 1e3
                )
            })
    };
    StepSummary {
        planned_rate,
        sent_rate,
        completed_rate,
        late_sends: o.lags.iter().filter(|l| **l > LATE_NS).count() as u64,
        dropped: o.dropped,
        unfinished: o.unfinished,
        failed,
        first_failure,
        reconnects: o.reconnects,
        schedule_lag_us: lag,
        latency_uncorrected: percentiles(rs.iter().map(|r| r.done - r.sent)),
        latency,
        queue_wait: percentiles(rs.iter().map(|r| r.started - r.sent)),
        service_time: percentiles(rs.iter().map(|r| r.done - r.started)),
        mean_in_flight,
        little_n,
        little_mismatch,
        cpu_pct: sys.cpu_s.map(|c| c / secs * 100.0),
        generator_cpu_pct: sys.generator_cpu_s / secs * 100.0,
        throttled_periods: sys.throttled_periods,
        throttled_ms: sys.throttled_us.map(|us| us as f64 / 1e3),
        per_tx,
        interval_p99_us,
        interval_points,
        valid: invalid_reason.is_none(),
        invalid_reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step at 1000/s for 1 s whose generator stalled 200 ms at t = 0.5 s: the messages
    /// due in the stall were sent at its end. Service is 100 µs.
    fn stalled() -> Outcome {
        let start = 1_000_000_000u64;
        let mut o = Outcome {
            window_start: start,
            window_end: start + 1_000_000_000,
            ..Default::default()
        };
        for k in 0..1000u64 {
            let due = start + k * 1_000_000;
            let sent = if (500..700).contains(&k) {
                start + 700_000_000
            } else {
                due
            };
            o.lags.push(sent - due);
            o.records.push(Record {
                due,
                sent,
                started: sent,
                done: sent + 100_000,
            });
            o.due_in_window += 1;
        }
        o
    }

    #[test]
    fn coordinated_omission_is_corrected_and_the_uncorrected_figure_kept() {
        let s = summarize(1000.0, &stalled(), &SysDelta::default());
        let c = s.latency.unwrap();
        let u = s.latency_uncorrected.unwrap();
        // Uncorrected, every message took its 100 µs of service: the stall is invisible.
        assert!((u.p99 - 100.0).abs() < 1.0, "{u:?}");
        // Corrected, a fifth of the messages waited up to 200 ms from their due time.
        assert!(c.p90 > 50_000.0 && c.max > 190_000.0, "{c:?}");
        assert_eq!(s.late_sends, 199);
        // The generator stalled: the step is not valid.
        assert!(!s.valid);
        assert!(s.invalid_reason.unwrap().contains("stalled"));
    }

    #[test]
    fn a_kept_schedule_is_valid_with_per_transaction_costs() {
        let mut o = stalled();
        for (r, l) in o.records.iter_mut().zip(o.lags.iter_mut()) {
            r.sent = r.due;
            r.started = r.due;
            r.done = r.due + 100_000;
            *l = 0;
        }
        o.in_flight = vec![0, 0, 1, 0];
        let sys = SysDelta {
            cpu_s: Some(0.2),
            generator_cpu_s: 0.05,
            voluntary: Some(1500),
            involuntary: Some(500),
            migrations: Some(10),
            events: [("syscalls".to_string(), 5000)].into(),
            throttled_periods: Some(3),
            throttled_us: Some(4500),
        };
        let s = summarize(1000.0, &o, &sys);
        assert!(s.valid, "{:?}", s.invalid_reason);
        assert!((s.sent_rate - 1000.0).abs() < 1.0);
        assert!((s.completed_rate - 1000.0).abs() < 1.0);
        assert!((s.per_tx["cpu_us"] - 200.0).abs() < 1e-9);
        assert!((s.per_tx["context_switches"] - 2.0).abs() < 1e-12);
        assert!((s.per_tx["syscalls"] - 5.0).abs() < 1e-12);
        assert!((s.cpu_pct.unwrap() - 20.0).abs() < 1e-9);
        assert!((s.generator_cpu_pct - 5.0).abs() < 1e-9);
        assert_eq!(s.throttled_periods, Some(3));
        assert_eq!(s.throttled_ms, Some(4.5));
        // X·R = 1000/s × 100 µs = 0.1 in flight.
        assert!((s.little_n.unwrap() - 0.1).abs() < 0.01);
        assert_eq!(s.interval_p99_us.len(), 10);
        // 100 messages of 100 µs per 100 ms: X = 1000/s, N = 0.1.
        assert_eq!(s.interval_points.len(), 10);
        for [n, x] in &s.interval_points {
            assert!(
                (x - 1000.0).abs() < 1e-9 && (n - 0.1).abs() < 1e-9,
                "{n} {x}"
            );
        }
    }

    #[test]
    fn failed_requests_make_the_step_invalid_with_the_first_error() {
        let mut o = stalled();
        for l in o.lags.iter_mut() {
            *l = 0;
        }
        o.records.truncate(900);
        o.failed = 100;
        o.first_failure = Some("HTTP 403".into());
        let s = summarize(1000.0, &o, &SysDelta::default());
        assert!(!s.valid);
        assert!(s.invalid_reason.unwrap().contains("HTTP 403"));
        assert_eq!(s.failed, 100);
    }

    #[test]
    fn requests_unanswered_at_the_steps_end_count_as_failed() {
        let mut o = stalled();
        for l in o.lags.iter_mut() {
            *l = 0;
        }
        // 30 of the 1000 never answered by the end of the drain: 3% failed.
        o.records.truncate(970);
        o.unfinished = 30;
        let s = summarize(1000.0, &o, &SysDelta::default());
        assert!(!s.valid);
        assert_eq!(s.failed, 30);
        let why = s.invalid_reason.unwrap();
        assert!(
            why.contains("3.0%") && why.contains("30 unanswered"),
            "{why}"
        );
        // A few unanswered of many stay under the 1% bound: still valid, and counted.
        o.records = stalled().records;
        o.records.truncate(995);
        o.unfinished = 5;
        let s = summarize(1000.0, &o, &SysDelta::default());
        assert!(s.valid, "{:?}", s.invalid_reason);
        assert_eq!(s.failed, 5);
    }

    #[test]
    fn a_step_where_no_request_completed_is_invalid_whatever_else_held() {
        let mut o = stalled();
        for l in o.lags.iter_mut() {
            *l = 0;
        }
        o.records.clear();
        o.unfinished = 1000;
        let s = summarize(1000.0, &o, &SysDelta::default());
        assert!(!s.valid);
        assert_eq!(s.completed_rate, 0.0);
        assert_eq!(s.failed, 1000);
        assert!(s.latency.is_none());
        let why = s.invalid_reason.unwrap();
        assert!(why.contains("no request completed: 1000 sent"), "{why}");
    }

    #[test]
    fn a_generator_that_sent_too_little_makes_the_step_invalid() {
        let mut o = stalled();
        // Only the first half was sent in time; the rest after the window.
        for (k, l) in o.lags.iter_mut().enumerate() {
            *l = if k < 500 { 0 } else { 600_000_000 };
        }
        let s = summarize(1000.0, &o, &SysDelta::default());
        assert!(!s.valid);
        assert!(s.invalid_reason.unwrap().contains("fell behind"));
    }
}
