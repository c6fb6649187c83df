//! One host's change: the rows whose change points lie within a few runs of each other,
//! with the runs either side (the segments between the neighbouring changes).

use super::changepoint::{self, Change, Kind};
use super::series::{HostSeries, RowKey, Series};
use super::Method;
use crate::result::rounds::median;

/// Rows whose change points lie within this many runs are one change.
pub const WITHIN: usize = 2;

/// One row's change, in the host's run indices.
#[derive(Debug, Clone)]
pub struct RowChange {
    pub key: RowKey,
    pub unit: String,
    /// Which of the host's series.
    pub series: usize,
    /// In the series' own indices.
    pub change: Change,
    /// The host's runs: [before.0, before.1) before the change, [after.0, after.1) after.
    pub before: (usize, usize),
    pub after: (usize, usize),
    /// The median of the row's medians either side.
    pub median_before: f64,
    pub median_after: f64,
}

impl RowChange {
    /// After over before, and its 95% interval.
    pub fn factor(&self) -> (f64, f64, f64) {
        self.change.factor()
    }
}

/// Rows of one host that changed together.
#[derive(Debug, Clone)]
pub struct HostChange {
    /// The host's first run after the change.
    pub at: usize,
    /// The runs either side shared by its rows.
    pub before: (usize, usize),
    pub after: (usize, usize),
    pub rows: Vec<RowChange>,
    /// Drift when every row's change is a drift.
    pub kind: Kind,
}

/// The change points of one row, in the host's run indices.
fn row_changes(i: usize, s: &Series, method: &Method) -> Vec<RowChange> {
    let x: Vec<f64> = s.median.iter().map(|m| m.ln()).collect();
    // The least noise per run: the method's floor, and the typical run's own standard
    // error (its rounds, else its samples).
    let floor = if s.se.is_empty() { 0.0 } else { median(&s.se) };
    let params = changepoint::Params {
        sigma_floor: method.params.sigma_floor.max(floor),
        ..method.params
    };
    changepoint::detect(&x, &params)
        .into_iter()
        .map(|c| RowChange {
            key: s.key.clone(),
            unit: s.unit.clone(),
            series: i,
            before: (s.run[c.from], s.run[c.at - 1] + 1),
            after: (s.run[c.at], s.run[c.to - 1] + 1),
            median_before: median(&s.median[c.from..c.at]),
            median_after: median(&s.median[c.at..c.to]),
            change: c,
        })
        .collect()
}

/// A host's changes: every row's change points, those within `WITHIN` runs of the first
/// of a group joined to it; oldest first.
pub fn changes(h: &HostSeries, method: &Method) -> Vec<HostChange> {
    let mut all: Vec<RowChange> = h
        .rows
        .iter()
        .enumerate()
        .flat_map(|(i, s)| row_changes(i, s, method))
        .collect();
    all.sort_by_key(|c| (c.after.0, c.series));
    let mut out: Vec<HostChange> = vec![];
    for c in all {
        match out.last_mut() {
            Some(g) if c.after.0 - g.rows[0].after.0 <= method.group_within => g.rows.push(c),
            _ => out.push(HostChange {
                at: c.after.0,
                before: c.before,
                after: c.after,
                kind: c.change.kind,
                rows: vec![c],
            }),
        }
    }
    for g in &mut out {
        // The change's point: the run most of its rows change at.
        let ats: Vec<f64> = g.rows.iter().map(|r| r.after.0 as f64).collect();
        g.at = median(&ats).floor() as usize;
        let from = g.rows.iter().map(|r| r.before.0).max().unwrap_or(0);
        let to = g.rows.iter().map(|r| r.after.1).min().unwrap_or(g.at + 1);
        g.before = (from.min(g.at.saturating_sub(1)), g.at);
        g.after = (g.at, to.max(g.at + 1));
        g.kind = if g.rows.iter().all(|r| r.change.kind == Kind::Drift) {
            Kind::Drift
        } else {
            Kind::Step
        };
    }
    out
}
