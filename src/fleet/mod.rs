//! The fleet view: many runs (hosts) judged against the fleet itself. `table` pairs the
//! hosts' results into rows; `baseline` takes each row's fleet median, every host's log
//! ratio to it and the fleet's robust spread, and the typical host (medoid); `outliers`
//! tests every host x row, and every host's shift over its rows, against that spread and
//! the host's own noise with a false discovery rate and a practical floor; `ranks` ranks
//! hosts by score without chained ties; `causes` explains each outlier against the typical
//! host with the explained compare; `groups` puts outliers in groups a person acts on
//! (uniformly off, explained by a recorded cause, off on a few rows). `reduce` says what
//! is kept of each document while ranking, so that a fleet read from the store holds only
//! that and reads the whole documents of the outliers afterwards. The result is one line
//! per host, outliers first, typical hosts summarised. `ranking` is the other view of
//! several runs: each against one baseline run (`compare --baseline`).
//!
//! The fleet sits above the two-run comparison (`crate::compare`) and uses it, its
//! statistics and its causes; nothing in `compare` imports the fleet.

pub mod baseline;
pub mod causes;
pub mod consistency;
pub mod groups;
pub mod hardware;
pub mod missing;
pub mod noise;
pub mod outliers;
pub mod ranking;
pub mod ranks;
pub mod reduce;
pub mod table;

use crate::compare::stats::verdict::speedup;
use crate::fleet::ranking::group_of;
use crate::result::RunDocument;
use serde::Serialize;
use std::collections::BTreeMap;

pub use groups::CauseGroup;
pub use outliers::RowNoise;

/// How the view is asked for.
#[derive(Default)]
pub struct Options<'a> {
    /// At most this many hosts per cause group, and the N best and N worst typical hosts in
    /// `hosts[]`.
    pub top: Option<usize>,
    /// Group hosts by this tag.
    pub by: Option<&'a str>,
    /// The per-row noise of each host, from its calibration or stored history (`noise`).
    pub noise: Option<&'a dyn RowNoise>,
    /// Explain every host against the typical one, not only the outliers.
    pub explain_all: bool,
}

/// A row of the fleet, written once.
#[derive(Debug, Clone, Serialize)]
pub struct FleetRow {
    #[serde(flatten)]
    pub def: table::RowDef,
    /// Hosts that measured it comparably.
    pub hosts: usize,
    /// The fleet's median of the hosts' medians, in `unit`.
    pub fleet_median: f64,
    /// The fleet's robust spread: the standard deviation of ln(host / fleet), 1.4826 x MAD.
    pub spread: f64,
    /// Hosts that are outliers on this row.
    pub outliers: usize,
    /// The factor the hosts' own noise on this row was taken at (`outliers::own_scale`):
    /// below 1 where the hosts' medians agree more tightly than their rounds say.
    pub own_noise_scale: f64,
}

/// One of a host's rows against the fleet.
#[derive(Debug, Clone, Serialize)]
pub struct HostRow {
    /// The row's key (`rows[].key`).
    pub row: String,
    /// Host median / fleet median.
    pub ratio: f64,
    /// Direction-corrected: > 1 is better than the fleet.
    pub speed: f64,
    pub z: f64,
    pub p: f64,
    /// Called real (FDR) and beyond the practical floor.
    pub real: bool,
}

/// One host.
#[derive(Debug, Clone, Serialize)]
pub struct Host {
    pub run: String,
    pub host: Option<String>,
    pub tags: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// 1 = best; a host ties with the leader of its tie group only when their score
    /// intervals overlap.
    pub rank: usize,
    /// Share of hosts (%) not better than this one.
    pub percentile: f64,
    /// Geometric mean over rows of the direction-corrected ratio to the fleet median
    /// (> 1 better), with its 95% interval from the host's own CIs.
    pub score: f64,
    pub score_ci95: [f64; 2],
    pub outlier: bool,
    /// Its rows farthest from the fleet (the real ones first), at most 3.
    pub worst: Vec<HostRow>,
    /// Its shift over all its rows against the fleet's (`outliers::Shift`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shift: Option<outliers::Shift>,
    /// Why, against the typical host (outliers, or every host when asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<causes::Cause>,
    /// Host / fleet median per row, in the order of `rows[]` (null: not measured).
    pub ratios: Vec<Option<f64>>,
    /// Per row, whether the host is an outlier on it.
    #[serde(skip)]
    pub real: Vec<bool>,
    /// An outlier run of a host with other runs in the fleet: how many of the host's runs
    /// are off as this one is (`consistency`: the host, or a fluke of this run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_off: Option<consistency::Runs>,
}

impl Host {
    /// The host as a person knows it: its host name (else its run), and the value of the
    /// `--by` tag beside it when that says more (hosts sharing one host name, or a group).
    pub fn name(&self) -> String {
        let host = self.host.as_deref().unwrap_or(&self.run);
        match self.group.as_deref() {
            Some(g) if g != host => format!("{host} [{g}]"),
            _ => host.to_string(),
        }
    }
}

/// How many host x row tests had each source of the host's own noise.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NoiseUse {
    /// The rounds of the host's run.
    pub rounds: usize,
    /// The host's calibration or stored history (documents without rounds).
    pub model: usize,
    /// Neither: tested against the fleet's spread alone.
    pub fleet_only: usize,
}

/// The hosts within the fleet's spread, in one line.
#[derive(Debug, Clone, Serialize)]
pub struct Typical {
    pub hosts: usize,
    pub score_min: f64,
    pub score_max: f64,
}

/// A group of hosts sharing a tag value.
#[derive(Debug, Clone, Serialize)]
pub struct TagGroup {
    pub group: String,
    pub hosts: usize,
    pub outliers: usize,
    pub score_median: f64,
    pub score_min: f64,
    pub score_max: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetView {
    pub schema: &'static str,
    /// `fleet`.
    pub view: &'static str,
    /// What each host is compared with.
    pub baseline: String,
    pub runs: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The typical host's run (the medoid), against which outliers are explained.
    pub typical_host: Option<String>,
    pub fdr_q: f64,
    /// How many tests the false discovery rate was held over, in each of its two families:
    /// the hosts' shifts, and the host x rows of the hosts whose shift is not called.
    pub fdr_tests: outliers::Families,
    pub floor: f64,
    /// The fewest hosts on a row for outlier calls (`outliers::MIN_FLEET`).
    pub min_fleet: usize,
    /// Distinct hosts among the runs (fewer than `runs` when runs of one host are compared
    /// together: each run is then judged as a member, and `runs_off` of its host says
    /// whether an outlier run is the host or a fluke).
    pub distinct_hosts: usize,
    /// The runs' hardware classes, the most common first (`hardware`): with two or more,
    /// hosts of a class other than the typical host's are outliers by their hardware.
    pub hardware: Vec<hardware::Class>,
    /// Runs that did not measure every row, most missing first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<missing::Incomplete>,
    /// Why no outlier is called (a fleet smaller than `min_fleet` hosts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlier_calls: Option<String>,
    /// Whose noise the host x row tests used besides the fleet's spread.
    pub noise: NoiseUse,
    pub rows: Vec<FleetRow>,
    /// Rows left out, each with why.
    pub rows_left_out: Vec<String>,
    /// Outliers first (by group in the order of `groups`, worst score first), then the
    /// others best first.
    pub hosts: Vec<Host>,
    /// Hosts left out of `hosts[]` by --top.
    pub hosts_omitted: usize,
    pub cause_groups: Vec<CauseGroup>,
    pub typical: Typical,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tag_groups: Vec<TagGroup>,
}

fn range(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    })
}

/// The score of one host: exp(mean of direction-corrected log ratios), its interval from
/// the host's own CIs (half-widths combined in quadrature over the mean).
fn score(t: &table::Table, b: &baseline::Baseline, h: usize) -> ranks::Figure {
    let mut sum = 0.0;
    let mut var = 0.0;
    let mut n = 0.0;
    for (r, def) in t.rows.iter().enumerate() {
        let (Some(d), Some(c)) = (b.dev[h][r], t.cells[h][r]) else {
            continue;
        };
        sum += if def.lower_is_better { -d } else { d };
        let hw = if c.ci95_low > 0.0 && c.ci95_high >= c.ci95_low {
            (c.ci95_high / c.ci95_low).ln() / 2.0
        } else {
            0.0
        };
        var += hw * hw;
        n += 1.0;
    }
    if n == 0.0 {
        return ranks::Figure {
            value: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let (m, hw) = (sum / n, var.sqrt() / n);
    ranks::Figure {
        value: m,
        low: m - hw,
        high: m + hw,
    }
}

/// The fleet view of `docs` (at least 3 runs, one per host), whole in memory.
pub fn view(docs: &[RunDocument], o: &Options) -> FleetView {
    let mut whole = |hs: &[usize]| -> anyhow::Result<Vec<RunDocument>> {
        Ok(hs.iter().map(|h| docs[*h].clone()).collect())
    };
    match view_reduced(docs, o, &mut whole) {
        Ok(v) => v,
        Err(_) => unreachable!("documents in memory are always read"),
    }
}

/// Whole documents read at a time for the explanations (a few tens of MB).
const WHOLE_CHUNK: usize = 200;

/// The fleet view of `docs` reduced as `reduce::reduce` leaves them; `whole` reads the
/// whole documents of these hosts (indices into `docs`, in that order) for the
/// explanations: the typical host's and the outliers', a chunk at a time.
pub fn view_reduced(
    docs: &[RunDocument],
    o: &Options,
    whole: &mut dyn FnMut(&[usize]) -> anyhow::Result<Vec<RunDocument>>,
) -> anyhow::Result<FleetView> {
    let t = table::build(docs);
    let b = baseline::of(&t);
    let tests = outliers::test(docs, &t.rows, &t.cells, &b, o.noise);
    let medoid = b.medoid();
    let mut causes: Vec<Option<causes::Cause>> = vec![None; docs.len()];
    if let Some(m) = medoid {
        let explain: Vec<usize> = (0..docs.len())
            .filter(|h| {
                *h != m
                    && (o.explain_all
                        || tests.rows[*h].iter().any(|x| x.is_some_and(|x| x.real))
                        || tests.shifts[*h].is_some_and(|s| s.real))
            })
            .collect();
        if !explain.is_empty() {
            let typical = whole(&[m])?.pop();
            for chunk in explain.chunks(WHOLE_CHUNK) {
                for (h, d) in chunk.iter().zip(whole(chunk)?) {
                    causes[*h] = typical.as_ref().map(|ty| causes::of(ty, &d));
                }
            }
        }
    }
    let figs: Vec<ranks::Figure> = (0..docs.len()).map(|h| score(&t, &b, h)).collect();
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by(|x, y| figs[*y].value.total_cmp(&figs[*x].value));
    let sorted: Vec<ranks::Figure> = order.iter().map(|h| figs[*h]).collect();
    let (rank, pct) = (ranks::tie_ranks(&sorted), ranks::percentiles(&sorted));
    let mut hosts: Vec<Host> = vec![];
    for (pos, &h) in order.iter().enumerate() {
        let d = &docs[h];
        let mut rows: Vec<HostRow> = t
            .rows
            .iter()
            .enumerate()
            .filter_map(|(r, def)| {
                let x = tests.rows[h][r]?;
                Some(HostRow {
                    row: def.key.clone(),
                    ratio: x.dev.exp(),
                    speed: speedup(x.dev.exp(), def.lower_is_better),
                    z: x.z,
                    p: x.p,
                    real: x.real,
                })
            })
            .collect();
        rows.sort_by(|x, y| {
            y.real
                .cmp(&x.real)
                .then(x.speed.ln().abs().total_cmp(&y.speed.ln().abs()).reverse())
        });
        let shift = tests.shifts[h];
        let outlier = rows.iter().any(|r| r.real) || shift.is_some_and(|s| s.real);
        rows.truncate(3);
        hosts.push(Host {
            run: d.run_id.clone(),
            host: d.host.clone(),
            tags: d.tags.clone(),
            group: group_of(d, o.by),
            rank: rank[pos],
            percentile: pct[pos],
            score: figs[h].value.exp(),
            score_ci95: [figs[h].low.exp(), figs[h].high.exp()],
            outlier,
            worst: rows,
            cause: causes[h].take(),
            ratios: b.dev[h].iter().map(|x| x.map(f64::exp)).collect(),
            real: tests.rows[h]
                .iter()
                .map(|x| x.is_some_and(|x| x.real))
                .collect(),
            shift,
            runs_off: None,
        });
    }
    let distinct_hosts = runs_off(&t, &mut hosts);
    let incomplete = missing::of(&t, &hosts);
    let groups = groups::of(&t, &hosts);
    let typical_hosts: Vec<&Host> = hosts.iter().filter(|x| !x.outlier).collect();
    let (lo, hi) = range(typical_hosts.iter().map(|x| x.score));
    let typical = Typical {
        hosts: typical_hosts.len(),
        score_min: lo,
        score_max: hi,
    };
    let tag_groups = tag_groups(&hosts, o.by.is_some());
    let rows = t
        .rows
        .iter()
        .enumerate()
        .map(|(r, def)| FleetRow {
            def: def.clone(),
            hosts: t.measured(r),
            fleet_median: b.median[r],
            spread: b.scale[r],
            outliers: tests
                .rows
                .iter()
                .filter(|x| x[r].is_some_and(|x| x.real))
                .count(),
            own_noise_scale: tests.own_scale[r],
        })
        .collect();
    // Outliers by group, then the others best first; --top trims each part.
    let mut out: Vec<Host> = vec![];
    let mut omitted = 0;
    for g in &groups {
        for (i, run) in g.hosts.iter().enumerate() {
            if o.top.is_some_and(|n| i >= n) {
                omitted += 1;
                continue;
            }
            if let Some(x) = hosts.iter().find(|x| &x.run == run) {
                out.push(x.clone());
            }
        }
    }
    let others: Vec<Host> = hosts.into_iter().filter(|x| !x.outlier).collect();
    match o.top {
        Some(n) if others.len() > 2 * n => {
            omitted += others.len() - 2 * n;
            out.extend(others[..n].iter().cloned());
            out.extend(others[others.len() - n..].iter().cloned());
        }
        _ => out.extend(others),
    }
    Ok(FleetView {
        schema: crate::compare::SCHEMA,
        view: "fleet",
        baseline: "the fleet: the median over hosts of each row".into(),
        runs: docs.iter().map(|d| d.run_id.clone()).collect(),
        by: o.by.map(|k| format!("tag:{k}")),
        typical_host: medoid.map(|m| docs[m].run_id.clone()),
        distinct_hosts,
        hardware: hardware::classes(docs.iter().map(|d| &d.env)),
        incomplete,
        fdr_q: outliers::FDR_Q,
        fdr_tests: tests.families,
        floor: outliers::FLOOR,
        min_fleet: outliers::MIN_FLEET,
        noise: noise_use(&tests.rows),
        outlier_calls: outliers::refusal(
            (0..t.rows.len()).map(|r| t.measured(r)).max().unwrap_or(0),
        ),
        rows,
        rows_left_out: t.left_out,
        hosts: out,
        hosts_omitted: omitted,
        cause_groups: groups,
        typical,
        tag_groups,
    })
}

/// Sets each outlier run's `runs_off` against the other runs of its host in the fleet;
/// returns how many distinct hosts the runs are of.
fn runs_off(t: &table::Table, hosts: &mut [Host]) -> usize {
    let names: Vec<String> = hosts.iter().map(Host::name).collect();
    let facts: Vec<consistency::RunFacts> = hosts
        .iter()
        .zip(&names)
        .map(|(h, name)| consistency::RunFacts {
            host: name,
            speed: h
                .ratios
                .iter()
                .zip(&t.rows)
                .map(|(r, def)| r.map(|r| speedup(r, def.lower_is_better).ln()))
                .collect(),
            real: h.real.clone(),
            shift: h.shift.map(|s| (s.dev, s.real)),
        })
        .collect();
    let outlier: Vec<bool> = hosts.iter().map(|h| h.outlier).collect();
    let found = consistency::of(&facts, &outlier);
    drop(facts);
    for (h, r) in hosts.iter_mut().zip(found) {
        h.runs_off = r;
    }
    names.iter().collect::<std::collections::HashSet<_>>().len()
}

fn noise_use(tests: &[Vec<Option<outliers::Test>>]) -> NoiseUse {
    let mut u = NoiseUse::default();
    for t in tests.iter().flatten().flatten() {
        match t.own {
            outliers::NoiseSource::Rounds => u.rounds += 1,
            outliers::NoiseSource::Model => u.model += 1,
            outliers::NoiseSource::None => u.fleet_only += 1,
        }
    }
    u
}

/// Per tag value, the hosts' scores; nothing when no value has two hosts (grouping by a
/// per-host tag such as `host` adds nothing to the host lines).
fn tag_groups(hosts: &[Host], by: bool) -> Vec<TagGroup> {
    if !by {
        return vec![];
    }
    let mut names: Vec<String> = hosts.iter().filter_map(|x| x.group.clone()).collect();
    names.sort();
    names.dedup();
    let mut out: Vec<TagGroup> = names
        .into_iter()
        .map(|g| {
            let members: Vec<&Host> = hosts
                .iter()
                .filter(|x| x.group.as_deref() == Some(&g))
                .collect();
            let mut s: Vec<f64> = members.iter().map(|x| x.score).collect();
            let (lo, hi) = range(s.iter().copied());
            TagGroup {
                hosts: members.len(),
                outliers: members.iter().filter(|x| x.outlier).count(),
                score_median: baseline::median(&mut s).unwrap_or(f64::NAN),
                score_min: lo,
                score_max: hi,
                group: g,
            }
        })
        .collect();
    if out.iter().all(|g| g.hosts < 2) {
        return vec![];
    }
    out.sort_by(|a, b| b.score_median.total_cmp(&a.score_median));
    out
}
