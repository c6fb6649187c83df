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

/// The change points of one row, in the host's run indices; `family` is how many rows of
/// the host are searched (each row's test at `max_p / family`).
fn row_changes(i: usize, s: &Series, method: &Method, family: usize) -> Vec<RowChange> {
    let x: Vec<f64> = s.median.iter().map(|m| m.ln()).collect();
    // The least noise per run: the method's floor, and the typical run's own standard
    // error (its rounds, else its samples).
    let floor = if s.se.is_empty() { 0.0 } else { median(&s.se) };
    let params = changepoint::Params {
        sigma_floor: method.params.sigma_floor.max(floor),
        max_p: method.params.max_p / family.max(1) as f64,
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

/// Rows of `h` with enough runs for a change (`min_segment` each side).
pub fn searched(h: &HostSeries, method: &Method) -> usize {
    h.rows
        .iter()
        .filter(|s| s.median.len() >= 2 * method.params.min_segment)
        .count()
}

/// A host's changes: every row's change points, those within `WITHIN` runs of the first
/// of a group joined to it; oldest first. The host's rows are one family: `max_p` is the
/// host's (Bonferroni: each row at `max_p` over the rows searched). Each row's own test at
/// `max_p`, after the search for its best split, called a change in a fifth of stationary
/// histories of 40 runs over 100 rows (those of the unit test below; of real runs of this
/// VM drawn at random, 5 of 16), each a 2-3% step at p 1e-5 to 1e-4.
pub fn changes(h: &HostSeries, method: &Method) -> Vec<HostChange> {
    let family = searched(h, method);
    let mut all: Vec<RowChange> = h
        .rows
        .iter()
        .enumerate()
        .flat_map(|(i, s)| row_changes(i, s, method, family))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trend::series::RunRef;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// A host of `rows` rows over `runs` runs of stationary noise: per run a level shared by
    /// its rows (the run's placement, its neighbours: σ 1%, and one run in five 3% slower,
    /// as the real runs of this VM split), and per row σ 1%; each run's own standard error
    /// 0.5% (its rounds, which do not see the run's level).
    fn stationary(rows: usize, runs: usize, seed: u64) -> HostSeries {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut normal = move || {
            let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
            let mode = if u < 0.2 { 3.0 } else { 0.0 };
            (-2.0 * rng.gen_range(1e-12..1.0f64).ln()).sqrt() * (std::f64::consts::TAU * v).cos()
                + mode
        };
        let level: Vec<f64> = (0..runs).map(|_| 0.01 * normal()).collect();
        HostSeries {
            host: "h".into(),
            runs: (0..runs)
                .map(|i| RunRef {
                    run_id: format!("r{i}"),
                    started_at: format!("2026-01-01T00:{:02}:00Z", i % 60),
                })
                .collect(),
            rows: (0..rows)
                .map(|r| Series {
                    key: RowKey {
                        benchmark: "b@1".into(),
                        placement: "os".into(),
                        params: format!("row={r}"),
                    },
                    unit: "ns".into(),
                    run: (0..runs).collect(),
                    median: level
                        .iter()
                        .map(|l| 100.0 * (l + 0.01 * normal()).exp())
                        .collect(),
                    se: vec![0.005; runs],
                })
                .collect(),
        }
    }

    #[test]
    fn a_host_of_many_stationary_rows_calls_no_change_in_most_histories() {
        // Each row's test at p <= 0.0001 alone, over 100 rows, called a change in 4 of 20
        // histories of 40 runs: the host's rows are one family.
        let m = Method::default();
        let called = (0..20)
            .filter(|seed| !changes(&stationary(100, 40, *seed), &m).is_empty())
            .count();
        assert!(called <= 1, "{called} of 20 stationary hosts had a change");
    }
}
