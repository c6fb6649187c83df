//! The fleet's table: which benchmark rows the hosts share and each host's median with its
//! 95% interval on each. Rows are paired with the run that has the most results (the
//! reference) by the same matching as a two-run compare (same benchmark, placement,
//! identifying params, and role for parallel copies); a host's result that is not
//! comparable with the reference's (another definition version, settings, sample count or
//! unit) is left out of that row, and a row fewer than `MIN_HOSTS` hosts measured is left
//! out of the fleet, with the reason.

use crate::compare::matching::{label, pair_up};
use crate::result::RunDocument;
use serde::Serialize;

/// A row needs this many hosts for a spread to be estimated.
pub const MIN_HOSTS: usize = 3;

/// One benchmark row of the fleet.
#[derive(Debug, Clone, Serialize)]
pub struct RowDef {
    /// `benchmark [placement] params`, as `compare` names a row.
    pub key: String,
    pub benchmark: String,
    pub placement: String,
    pub params: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub unit: String,
    pub lower_is_better: bool,
}

impl RowDef {
    /// The row's name in a line of text: the benchmark without its version, its params.
    pub fn short(&self) -> String {
        let bench = self.benchmark.split('@').next().unwrap_or(&self.benchmark);
        let place = if self.placement == "os" {
            String::new()
        } else {
            format!(" [{}]", self.placement)
        };
        let role = self
            .role
            .as_ref()
            .map(|r| format!("; {r}"))
            .unwrap_or_default();
        // The params' values only ("clock=monotonic,path=vdso" reads "monotonic,vdso").
        let values: Vec<&str> = self
            .params
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').map_or(p, |(_, v)| v))
            .collect();
        if values.is_empty() {
            format!("{bench}{place}{role}")
        } else {
            format!("{bench} ({}{role}){place}", values.join(","))
        }
    }
}

/// One host's figure on one row.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Cell {
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// The result's own run noise from its rounds (`BenchResult::run_noise`): the standard
    /// error of ln(median) and its degrees of freedom; None for documents without rounds.
    #[serde(skip)]
    pub run_noise: Option<RunNoise>,
}

/// A cell's run noise: the standard error of ln(median) and its degrees of freedom.
#[derive(Debug, Clone, Copy)]
pub struct RunNoise {
    pub se: f64,
    pub df: f64,
}

/// Rows x hosts.
#[derive(Debug, Clone)]
pub struct Table {
    pub rows: Vec<RowDef>,
    /// `cells[host][row]`, hosts in the order of the documents.
    pub cells: Vec<Vec<Option<Cell>>>,
    /// Rows left out of the fleet, each with why.
    pub left_out: Vec<String>,
}

impl Table {
    /// The hosts that measured row `r`.
    pub fn measured(&self, r: usize) -> usize {
        self.cells.iter().filter(|c| c[r].is_some()).count()
    }
}

fn usable(c: &Cell) -> bool {
    c.median.is_finite() && c.median > 0.0
}

/// The table of `docs`.
pub fn build(docs: &[RunDocument]) -> Table {
    let reference = docs
        .iter()
        .enumerate()
        .max_by_key(|(i, d)| (d.results.len(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
        .unwrap_or(0);
    let Some(rd) = docs.get(reference) else {
        return Table {
            rows: vec![],
            cells: vec![],
            left_out: vec![],
        };
    };
    let mut rows: Vec<RowDef> = rd
        .results
        .iter()
        .map(|r| RowDef {
            key: label(r),
            benchmark: r.benchmark.clone(),
            placement: r.placement.name.clone(),
            params: r.params_text(),
            role: None,
            unit: r.unit.clone(),
            lower_is_better: r.lower_is_better,
        })
        .collect();
    let mut cells = vec![vec![None; rows.len()]; docs.len()];
    for (h, d) in docs.iter().enumerate() {
        for m in pair_up(rd, d).matched {
            let Some(i) = rd.results.iter().position(|r| std::ptr::eq(r, m.a)) else {
                continue;
            };
            if m.b.unit != m.a.unit || !crate::compare::comparability::problems(m.a, m.b).is_empty()
            {
                continue;
            }
            if rows[i].role.is_none() {
                rows[i].role = m.role.map(|r| r.to_string());
            }
            let c = Cell {
                median: m.b.stats.median,
                ci95_low: m.b.stats.ci95_low,
                ci95_high: m.b.stats.ci95_high,
                run_noise: m.b.run_noise().map(|n| RunNoise { se: n.se, df: n.df }),
            };
            if usable(&c) {
                cells[h][i] = Some(c);
            }
        }
    }
    let mut t = Table {
        rows,
        cells,
        left_out: vec![],
    };
    let keep: Vec<bool> = (0..t.rows.len())
        .map(|r| t.measured(r) >= MIN_HOSTS)
        .collect();
    for (r, k) in keep.iter().enumerate() {
        if !k {
            t.left_out.push(format!(
                "{}: measured comparably by {}, fewer than {MIN_HOSTS}",
                t.rows[r].key,
                crate::units::count(t.measured(r), "host")
            ));
        }
    }
    let mut i = 0;
    t.rows.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    for c in &mut t.cells {
        let mut i = 0;
        c.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }
    t
}

/// A one-row table of `cells` (ns, lower is better), for the fleet modules' tests.
#[cfg(test)]
pub fn one_row(cells: Vec<Cell>) -> Table {
    Table {
        rows: vec![RowDef {
            key: "r".into(),
            benchmark: "b@1".into(),
            placement: "os".into(),
            params: String::new(),
            role: None,
            unit: "ns".into(),
            lower_is_better: true,
        }],
        cells: cells.into_iter().map(|c| vec![Some(c)]).collect(),
        left_out: vec![],
    }
}
