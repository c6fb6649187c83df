//! Outliers in groups a person acts on, in the order they are acted on:
//!
//! 1. `uniform`: hosts off on most of their rows by a similar factor, all one way, that no
//!    recorded cause explains (a host 1.35x slower on every row): what makes it so is
//!    something the runs do not record (frequency policy, neighbours, firmware).
//! 2. `explained`: hosts a recorded cause explains, one group per cause and evidence
//!    ("the clock: clocksource kvm-clock (typical host: tsc)"; kernel, CPU model, cgroup
//!    limits...).
//! 3. `few-rows`: hosts off on a few of their rows with no recorded cause, often a run
//!    disturbed on those rows; one group.
//!
//! Each group has its hosts (worst score first), the range of its factor over the rows its
//! hosts are off on, how many rows they cover, and the rows its median host is off on.

use super::baseline::median;
use super::table::Table;
use super::{range, Host};
use crate::compare::stats::verdict::{in_words, speedup};
use crate::units::count;
use serde::Serialize;

/// What a group is, in the order groups are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Uniform,
    Explained,
    FewRows,
}

/// Outliers grouped for action.
#[derive(Debug, Clone, Serialize)]
pub struct CauseGroup {
    pub kind: Kind,
    /// The leading cause (`unexplained` for uniform and few-row groups).
    pub cause: String,
    /// What the group's hosts share, in words: the heading of the group.
    pub label: String,
    pub hosts: Vec<String>,
    pub score_min: f64,
    pub score_max: f64,
    /// The range of the direction-corrected factor (> 1 faster) over the rows the group's
    /// hosts are off on.
    pub factor_min: f64,
    pub factor_max: f64,
    /// Rows any of the group's hosts is off on, of the fleet's rows.
    pub rows_off: usize,
    pub rows_total: usize,
    /// The rows on which the group's median host is beyond the practical floor, with that
    /// median direction-corrected ratio, largest first: "timers.clock-read (...) 31% slower".
    pub rows: Vec<String>,
}

/// A host's direction-corrected factors on the rows it is off on, and its measured rows.
fn off_rows(t: &Table, h: &Host) -> (Vec<f64>, usize) {
    let mut off = vec![];
    let mut measured = 0;
    for (r, def) in t.rows.iter().enumerate() {
        let Some(ratio) = h.ratios.get(r).copied().flatten() else {
            continue;
        };
        measured += 1;
        if h.real.get(r).copied().unwrap_or(false) {
            off.push(speedup(ratio, def.lower_is_better));
        }
    }
    (off, measured)
}

/// Off on more than half its measured rows (two at least), all one way, by factors within
/// 3x of each other in log terms (25% and 30% are similar; 5% and 60% are not).
fn is_uniform(off: &[f64], measured: usize) -> bool {
    let logs: Vec<f64> = off.iter().map(|s| s.ln()).collect();
    let one_way = logs.iter().all(|l| *l < 0.0) || logs.iter().all(|l| *l > 0.0);
    let (lo, hi) = range(logs.iter().map(|l| l.abs()));
    off.len() >= 2 && 2 * off.len() > measured && one_way && hi <= 3.0 * lo
}

/// "slower by 25-30%", "faster by 2.1-2.4x", "off by 8% slower to 12% faster".
pub fn factor_words(lo: f64, hi: f64) -> String {
    let pct = |s: f64| {
        if s >= 1.995 || s <= 0.5 {
            format!("{:.1}x", s.max(1.0 / s))
        } else {
            format!("{:.0}%", ((s - 1.0).abs() * 100.0).round())
        }
    };
    let span = |a: String, b: String| match (a.strip_suffix('%'), b.strip_suffix('%')) {
        _ if a == b => a,
        (Some(x), Some(_)) => format!("{x}-{b}"),
        _ => format!("{a}-{b}"),
    };
    if hi < 1.0 {
        format!("slower by {}", span(pct(hi), pct(lo)))
    } else if lo > 1.0 {
        format!("faster by {}", span(pct(lo), pct(hi)))
    } else {
        format!("off by {} to {}", in_words(lo, false), in_words(hi, false))
    }
}

/// "all 11 rows", "9-11 of 11 rows", "1 of 11 rows", "the only row".
fn rows_words(lo: usize, hi: usize, total: usize) -> String {
    match (lo == hi, lo == total) {
        (true, true) if total == 1 => "the only row".into(),
        (true, true) => format!("all {total} rows"),
        (true, false) => format!("{lo} of {}", count(total, "row")),
        _ => format!("{lo}-{hi} of {}", count(total, "row")),
    }
}

/// The outliers of `hosts` in groups, in the order of the module doc.
pub fn of(t: &Table, hosts: &[Host]) -> Vec<CauseGroup> {
    struct Member<'a> {
        host: &'a Host,
        off: Vec<f64>,
        key: (Kind, String),
    }
    let mut members: Vec<Member> = vec![];
    for h in hosts.iter().filter(|x| x.outlier) {
        let (off, measured) = off_rows(t, h);
        let cause = h.cause.as_ref();
        // Unexplained with nothing recorded differing: a recorded fact that differs (a
        // clocksource no measured cause tied to the rows) still names the group.
        let unexplained = cause.is_none_or(|c| c.cause == "unexplained" && c.differs.is_empty());
        let label = cause.map_or("no typical host to compare with".to_string(), |c| {
            c.label.clone()
        });
        let key = if unexplained && is_uniform(&off, measured) {
            let way = if off[0] < 1.0 { "slower" } else { "faster" };
            (Kind::Uniform, format!("{way}\u{0}{label}"))
        } else if unexplained {
            (Kind::FewRows, String::new())
        } else {
            (Kind::Explained, label)
        };
        members.push(Member { host: h, off, key });
    }
    let mut keys: Vec<(Kind, String)> = members.iter().map(|m| m.key.clone()).collect();
    keys.sort();
    keys.dedup();
    let mut groups: Vec<CauseGroup> = keys
        .into_iter()
        .map(|key| {
            // `hosts` is best first: the group's worst score first.
            let ms: Vec<&Member> = members.iter().rev().filter(|m| m.key == key).collect();
            let hs: Vec<&Host> = ms.iter().map(|m| m.host).collect();
            let (score_min, score_max) = range(hs.iter().map(|x| x.score));
            let (factor_min, factor_max) = range(ms.iter().flat_map(|m| m.off.iter().copied()));
            let per_host: Vec<usize> = ms.iter().map(|m| m.off.len()).collect();
            let (lo, hi) = (
                per_host.iter().copied().min().unwrap_or(0),
                per_host.iter().copied().max().unwrap_or(0),
            );
            let total = t.rows.len();
            let rows_off = (0..total)
                .filter(|r| hs.iter().any(|h| h.real.get(*r).copied().unwrap_or(false)))
                .count();
            let first = hs[0].cause.as_ref();
            let label = match key.0 {
                Kind::Uniform => {
                    let why = if first.is_some() {
                        "same CPU model, clocksource, kernel, governor, CPU limits; look at \
                         what the runs do not record: frequency policy, neighbours, firmware"
                    } else {
                        "no typical host to compare with"
                    };
                    format!(
                        "{} on {} by {}: {why}",
                        if factor_max < 1.0 { "slower" } else { "faster" },
                        rows_words(lo, hi, total),
                        factor_words(factor_min, factor_max)
                            .trim_start_matches("slower by ")
                            .trim_start_matches("faster by ")
                    )
                }
                Kind::Explained => format!(
                    "{}; {}: {}",
                    key.1,
                    rows_words(lo, hi, total),
                    factor_words(factor_min, factor_max)
                ),
                Kind::FewRows => format!(
                    "off on {}: {}; no recorded cause: often a run disturbed on those rows \
                     (rerun to confirm)",
                    rows_words(lo, hi, total),
                    factor_words(factor_min, factor_max)
                ),
            };
            CauseGroup {
                kind: key.0,
                cause: first.map_or("unexplained".into(), |c| c.cause.clone()),
                label,
                hosts: hs.iter().map(|x| x.run.clone()).collect(),
                score_min,
                score_max,
                factor_min,
                factor_max,
                rows_off,
                rows_total: total,
                rows: group_rows(t, &hs),
            }
        })
        .collect();
    groups.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then(b.hosts.len().cmp(&a.hosts.len()))
            .then(a.score_min.total_cmp(&b.score_min))
    });
    groups
}

/// The rows on which the group's median host is beyond the practical floor, with that
/// median direction-corrected ratio, largest first.
fn group_rows(t: &Table, members: &[&Host]) -> Vec<String> {
    let mut out: Vec<(f64, String)> = vec![];
    for (r, def) in t.rows.iter().enumerate() {
        let mut speeds: Vec<f64> = members
            .iter()
            .filter_map(|x| x.ratios.get(r).copied().flatten())
            .map(|ratio| speedup(ratio, def.lower_is_better))
            .collect();
        let Some(s) = median(&mut speeds) else {
            continue;
        };
        if s.ln().abs() >= super::outliers::FLOOR.ln_1p() {
            out.push((
                s.ln().abs(),
                format!("{} {}", def.short(), in_words(s, false)),
            ));
        }
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.into_iter().map(|x| x.1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_means_most_rows_one_way_by_a_similar_factor() {
        assert!(is_uniform(&[0.74, 0.75, 0.72, 0.76], 4));
        assert!(is_uniform(&[0.74, 0.75, 0.72], 5));
        assert!(
            !is_uniform(&[0.74, 0.75], 5),
            "two of five rows is not most"
        );
        assert!(!is_uniform(&[0.74, 1.3, 0.72], 3), "both ways");
        assert!(
            !is_uniform(&[0.95, 0.4, 0.9], 3),
            "5% and 2.5x are not similar"
        );
        assert!(!is_uniform(&[0.7], 1), "one row");
        assert_eq!(factor_words(0.70, 0.75), "slower by 25-30%");
        assert_eq!(factor_words(2.1, 2.4), "faster by 2.1x-2.4x");
        assert_eq!(factor_words(0.9, 1.1), "off by 10% slower to 10% faster");
        assert_eq!(rows_words(11, 11, 11), "all 11 rows");
        assert_eq!(rows_words(1, 3, 11), "1-3 of 11 rows");
        assert_eq!(rows_words(1, 1, 1), "the only row");
        assert_eq!(rows_words(1, 1, 11), "1 of 11 rows");
    }
}
