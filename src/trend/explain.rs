//! Each change explained: a typical run before the change against a typical run after it,
//! each changed row through the explained compare's causes (`compare::explain_known`: the
//! change is known to be real from the segments, which two runs alone may not show); the
//! cause most of the changed rows get, with its evidence, and what the two runs' probes say
//! changed (clocksource, kernel, microcode...; `compare::compare`'s environment
//! differences).

use super::changepoint::Kind;
use super::group::{HostChange, RowChange};
use super::series::{HostSeries, RunRef};
use crate::compare::causes::explain::{Claim, Explanation};
use crate::compare::{Comparison, Row};
use crate::result::{BenchResult, RunDocument};
use serde::Serialize;
use serde_json::Value;

/// A side's typical run is chosen among this many runs nearest the change.
const NEAREST: usize = 10;

/// One row of a change.
#[derive(Debug, Clone, Serialize)]
pub struct RowOut {
    /// `benchmark [placement] params`.
    pub row: String,
    pub benchmark: String,
    pub placement: String,
    pub params: String,
    pub unit: String,
    /// Median of the row's run medians before and after.
    pub median_before: f64,
    pub median_after: f64,
    /// After over before (geometric means of the segments) and its 95% interval.
    pub factor: f64,
    pub factor_low: f64,
    pub factor_high: f64,
    /// Welch t-test p-value between the segments.
    pub p: f64,
    /// The smallest relative change the segments' noise lets be detected (0.05 = 5%).
    pub mde: f64,
    pub kind: Kind,
    /// `slower` or `faster` (from the row's direction in the compared runs), else `higher`
    /// or `lower`.
    pub direction: &'static str,
    /// The first run after the change, for this row.
    pub at: String,
}

/// Why a change happened.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// The compare's cause most changed rows get (timer, placement, capacity, noise,
    /// cpu-speed, topology), `environment` when only what the probes recorded changed,
    /// `unexplained` when nothing did; `not compared` without the documents.
    pub cause: String,
    /// In one clause.
    pub because: String,
    pub evidence: Vec<String>,
    /// What the two runs' probes say changed ("clocksource: tsc -> kvm-clock").
    pub changed: Vec<String>,
}

/// One change of one host, explained.
#[derive(Debug, Clone, Serialize)]
pub struct Explained {
    pub host: String,
    pub kind: Kind,
    /// The last run before the change and the first after it.
    pub before: RunRef,
    pub after: RunRef,
    /// Runs in the segments either side.
    pub runs_before: usize,
    pub runs_after: usize,
    /// The typical runs compared (before, after).
    pub compared: Option<[String; 2]>,
    /// The middle row's factor (after over before) and its 95% interval.
    pub factor: f64,
    pub factor_low: f64,
    pub factor_high: f64,
    /// `slower`, `faster`, or `mixed` when rows moved both ways.
    pub direction: &'static str,
    /// The suites of the changed rows.
    pub suites: Vec<String>,
    pub rows: Vec<RowOut>,
    pub cause: Cause,
    /// The change in one line.
    pub summary: String,
}

/// The row's median in run `run`, if it has one.
fn value(s: &super::series::Series, run: usize) -> Option<f64> {
    s.run.binary_search(&run).ok().map(|i| s.median[i])
}

/// The run of [from, to) nearest the change that sits closest to the side's medians of the
/// changed rows (a run missing a row is taken last).
fn typical(h: &HostSeries, c: &HostChange, side: (usize, usize), before: bool) -> usize {
    let runs: Vec<usize> = if before {
        (side.0.max(side.1.saturating_sub(NEAREST))..side.1).collect()
    } else {
        (side.0..side.1.min(side.0 + NEAREST)).collect()
    };
    let cost = |run: usize| -> f64 {
        c.rows
            .iter()
            .map(|r| {
                let m = if before {
                    r.median_before
                } else {
                    r.median_after
                };
                value(&h.rows[r.series], run).map_or(1e9, |v| (v / m).ln().abs())
            })
            .sum()
    };
    runs.into_iter()
        .min_by(|a, b| cost(*a).total_cmp(&cost(*b)))
        .unwrap_or(side.0)
}

/// A JSON fact as text (strings unquoted).
fn fact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "unknown".into(),
        v => v.to_string(),
    }
}

fn compare_row<'a>(c: &'a Comparison, r: &RowChange) -> Option<&'a Row> {
    c.rows.iter().find(|x| {
        x.benchmark == r.key.benchmark && x.placement == r.key.placement && x.params == r.key.params
    })
}

fn direction(r: &RowChange, lower_is_better: Option<bool>) -> &'static str {
    let up = r.change.d > 0.0;
    match lower_is_better {
        Some(lib) if up == lib => "slower",
        Some(_) => "faster",
        None if up => "higher",
        None => "lower",
    }
}

/// The row's result in a document.
fn result<'a>(doc: &'a RunDocument, r: &RowChange) -> Option<&'a BenchResult> {
    doc.results.iter().find(|x| {
        x.benchmark == r.key.benchmark
            && x.placement.name == r.key.placement
            && x.params_text() == r.key.params
    })
}

/// The cause most changed rows get (`explained`: each row's explanations): claims that
/// explain come first, then those that explain part, then those that only contribute.
fn cause_of(c: &Comparison, explained: &[Vec<Explanation>]) -> Cause {
    let changed: Vec<String> = c
        .env_differences
        .iter()
        .filter(|d| d.what != "host")
        .map(|d| format!("{}: {} -> {}", d.what, fact(&d.a), fact(&d.b)))
        .collect();
    let rank = |claim: Claim| match claim {
        Claim::Explains => Some(0),
        Claim::Partly => Some(1),
        Claim::Contributes => Some(2),
        _ => None,
    };
    // (cause, best rank, rows, first explanation)
    let mut tally: Vec<(String, usize, usize, &Explanation)> = vec![];
    for e in explained.iter().flatten() {
        let (Some(k), false) = (
            rank(e.claim),
            e.cause == crate::compare::causes::candidates::CANDIDATE,
        ) else {
            continue;
        };
        match tally.iter_mut().find(|t| t.0 == e.cause) {
            Some(t) => {
                t.1 = t.1.min(k);
                t.2 += 1;
            }
            None => tally.push((e.cause.clone(), k, 1, e)),
        }
    }
    tally.sort_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)));
    if let Some((cause, _, _, e)) = tally.first() {
        let mut evidence = e.evidence.clone();
        evidence.dedup();
        return Cause {
            cause: cause.clone(),
            because: e.because.clone(),
            evidence,
            changed,
        };
    }
    if !changed.is_empty() {
        let evidence = c
            .candidates
            .iter()
            .filter(|k| k.status == "differs")
            .map(|k| format!("{}: {} -> {} ({})", k.what, k.a, k.b, k.mechanism))
            .collect();
        return Cause {
            cause: "environment".into(),
            because: format!("the runs differ in {}", changed.join("; ")),
            evidence,
            changed,
        };
    }
    Cause {
        cause: "unexplained".into(),
        because: "nothing the runs recorded changed between them".into(),
        evidence: vec![],
        changed,
    }
}

/// "2026-11-03" of an RFC 3339 time.
pub fn day(t: &str) -> &str {
    t.get(..10).unwrap_or(t)
}

/// "2026-11-03 -> 2026-11-05" of two RFC 3339 times; within one day with the times of day
/// ("2026-11-03 09:12 -> 14:40"), which a day alone would show as no span at all.
pub fn between(from: &str, to: &str) -> String {
    let minute = |t: &str| t.get(11..16).map(str::to_string);
    match (day(from) == day(to), minute(from), minute(to)) {
        (true, Some(a), Some(b)) => format!("{} {a} -> {b}", day(from)),
        _ => format!("{} -> {}", day(from), day(to)),
    }
}

/// A factor as a change in words: "20% slower" or "1.5x slower".
pub fn amount(f: f64, dir: &str) -> String {
    let x = if f >= 1.0 { f } else { 1.0 / f };
    if x < 1.995 {
        format!("{:.0}% {dir}", (x - 1.0) * 100.0)
    } else {
        format!("{x:.1}x {dir}")
    }
}

/// Explain one change of host `h`, reading the runs' documents with `load`.
pub fn explain(
    h: &HostSeries,
    c: &HostChange,
    load: &dyn Fn(&str) -> Option<RunDocument>,
) -> Explained {
    let tb = typical(h, c, c.before, true);
    let ta = typical(h, c, c.after, false);
    let before_doc = load(&h.runs[tb].run_id);
    let after_doc = load(&h.runs[ta].run_id);
    let docs = before_doc.as_ref().zip(after_doc.as_ref());
    let comparison = docs.map(|(a, b)| crate::compare::compare(a, b));
    let explained: Vec<Vec<Explanation>> = match docs {
        Some((a, b)) => c
            .rows
            .iter()
            .filter_map(|r| {
                let (ra, rb) = (result(a, r)?, result(b, r)?);
                Some(crate::compare::explain_known(
                    a,
                    b,
                    ra,
                    rb,
                    r.change.mde.exp() - 1.0,
                ))
            })
            .collect(),
        None => vec![],
    };
    let rows: Vec<RowOut> = c
        .rows
        .iter()
        .map(|r| {
            let lib = comparison
                .as_ref()
                .and_then(|k| compare_row(k, r))
                .map(|x| x.lower_is_better);
            let (f, lo, hi) = r.factor();
            RowOut {
                row: r.key.text(),
                benchmark: r.key.benchmark.clone(),
                placement: r.key.placement.clone(),
                params: r.key.params.clone(),
                unit: r.unit.clone(),
                median_before: r.median_before,
                median_after: r.median_after,
                factor: f,
                factor_low: lo,
                factor_high: hi,
                p: r.change.p,
                mde: r.change.mde.exp() - 1.0,
                kind: r.change.kind,
                direction: direction(r, lib),
                at: h.runs[r.after.0].started_at.clone(),
            }
        })
        .collect();
    let cause = match &comparison {
        Some(k) => cause_of(k, &explained),
        None => Cause {
            cause: "not compared".into(),
            because: "the runs' documents could not be read".into(),
            evidence: vec![],
            changed: vec![],
        },
    };
    let mut dirs: Vec<&str> = rows.iter().map(|r| r.direction).collect();
    dirs.sort();
    dirs.dedup();
    let direction = if dirs.len() == 1 { dirs[0] } else { "mixed" };
    let mut order: Vec<&RowOut> = rows.iter().collect();
    order.sort_by(|a, b| a.factor.total_cmp(&b.factor));
    let mid = order[order.len() / 2];
    let mut suites: Vec<String> = c.rows.iter().map(|r| r.key.suite().to_string()).collect();
    suites.sort();
    suites.dedup();
    let before = h.runs[c.at - 1].clone();
    let after = h.runs[c.at].clone();
    let of_suites: usize = h
        .rows
        .iter()
        .filter(|s| suites.iter().any(|x| x == s.key.suite()))
        .count();
    let how = if direction == "mixed" {
        let slower = rows.iter().filter(|r| r.direction == "slower").count();
        format!("{slower} slower, {} faster", rows.len() - slower)
    } else {
        amount(mid.factor, direction)
    };
    let drift = if c.kind == Kind::Drift {
        " (a drift)"
    } else {
        ""
    };
    let why = if cause.changed.is_empty() {
        cause.because.clone()
    } else {
        cause.changed.join("; ")
    };
    let summary = format!(
        "{}: {} of {} {} {} {how}{drift}; {why}",
        between(&before.started_at, &after.started_at),
        rows.len(),
        of_suites,
        suites.join("+"),
        crate::units::noun(of_suites, "row"),
    );
    Explained {
        host: h.host.clone(),
        kind: c.kind,
        runs_before: c.before.1 - c.before.0,
        runs_after: c.after.1 - c.after.0,
        before,
        after,
        compared: comparison.as_ref().map(|k| k.runs.clone()),
        factor: mid.factor,
        factor_low: mid.factor_low,
        factor_high: mid.factor_high,
        direction,
        suites,
        rows,
        cause,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_within_one_day_gives_its_times_of_day() {
        assert_eq!(
            between("2026-11-27T09:12:03Z", "2026-11-27T14:40:59Z"),
            "2026-11-27 09:12 -> 14:40"
        );
        assert_eq!(
            between("2026-11-27T23:59:00Z", "2026-11-28T00:01:00Z"),
            "2026-11-27 -> 2026-11-28"
        );
    }
}
