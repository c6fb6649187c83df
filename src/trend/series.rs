//! A host's runs and its rows' series, from the store's points (`store::Point`, ordered by
//! host, then oldest run first). A row is one measurement: benchmark, placement, params.

use crate::result::Params;
use crate::store::Point;
use std::collections::{BTreeMap, HashMap};

/// One stored run of a host.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRef {
    pub run_id: String,
    pub started_at: String,
}

/// What identifies a row across runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct RowKey {
    pub benchmark: String,
    pub placement: String,
    /// `k=v,k=v`.
    pub params: String,
}

impl RowKey {
    /// `timers.clock-read@1 [os] clock=monotonic,path=vdso`.
    pub fn text(&self) -> String {
        format!("{} [{}] {}", self.benchmark, self.placement, self.params)
    }

    /// The suite: the benchmark id's first part.
    pub fn suite(&self) -> &str {
        self.benchmark.split('.').next().unwrap_or(&self.benchmark)
    }
}

/// One row's series over a host's runs.
#[derive(Debug, Clone)]
pub struct Series {
    pub key: RowKey,
    pub unit: String,
    /// Index into the host's runs, per point (increasing).
    pub run: Vec<usize>,
    pub median: Vec<f64>,
    /// Standard error of ln(median) per point: the run's rounds, else its samples' 95%
    /// interval.
    pub se: Vec<f64>,
}

/// A host's runs, oldest first, and its rows' series.
#[derive(Debug, Clone)]
pub struct HostSeries {
    pub host: String,
    pub runs: Vec<RunRef>,
    pub rows: Vec<Series>,
}

/// The standard error of ln(median) a row's 95% interval implies (None when it holds none).
fn ci_se(p: &Point) -> Option<f64> {
    let se = (p.ci95_high / p.ci95_low).ln() / (2.0 * 1.96);
    (se.is_finite() && se > 0.0).then_some(se)
}

/// Group the points (host by host, oldest run first) into each host's series. `keep`
/// narrows the rows (by their key).
pub fn hosts(points: &[Point], keep: &dyn Fn(&RowKey) -> bool) -> Vec<HostSeries> {
    // Params as stored differ in spelling between backends: one parse per distinct text.
    let mut params: HashMap<&str, String> = HashMap::new();
    let mut out: Vec<HostSeries> = vec![];
    let mut rows: BTreeMap<RowKey, Series> = BTreeMap::new();
    let flush = |out: &mut Vec<HostSeries>, rows: &mut BTreeMap<RowKey, Series>| {
        if let Some(h) = out.last_mut() {
            h.rows = std::mem::take(rows).into_values().collect();
        }
    };
    for p in points {
        if out.last().is_none_or(|h| h.host != p.host) {
            flush(&mut out, &mut rows);
            out.push(HostSeries {
                host: p.host.clone(),
                runs: vec![],
                rows: vec![],
            });
        }
        let h = out.last_mut().expect("pushed above");
        if h.runs.last().is_none_or(|r| r.run_id != p.run_id) {
            h.runs.push(RunRef {
                run_id: p.run_id.clone(),
                started_at: p.started_at.clone(),
            });
        }
        let run = h.runs.len() - 1;
        if !(p.median.is_finite() && p.median > 0.0) {
            continue;
        }
        let text = params
            .entry(p.params.as_str())
            .or_insert_with(|| {
                serde_json::from_str::<Params>(&p.params)
                    .map(|x| x.text())
                    .unwrap_or_else(|_| p.params.clone())
            })
            .clone();
        let key = RowKey {
            benchmark: p.benchmark.clone(),
            placement: p.placement.clone(),
            params: text,
        };
        if !keep(&key) {
            continue;
        }
        let s = rows.entry(key.clone()).or_insert_with(|| Series {
            key,
            unit: p.unit.clone(),
            run: vec![],
            median: vec![],
            se: vec![],
        });
        // A run holding the same row twice (parallel copies by role) keeps its first.
        if s.run.last() == Some(&run) || s.unit != p.unit {
            continue;
        }
        s.run.push(run);
        s.median.push(p.median);
        s.se.push(p.se.or_else(|| ci_se(p)).unwrap_or(0.0));
    }
    flush(&mut out, &mut rows);
    out
}
