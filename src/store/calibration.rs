//! Which calibration of a host `compare` rests on: the newest one that is whole. A
//! calibration is whole when it has every run `calibrate` was asked for (tag
//! [`RUNS_TAG`]), at least `MIN_RUNS`, none interrupted; when none of its runs was
//! imported (tag [`IMPORTED_TAG`], set by `import`); and when none is dated more than
//! [`SKEW`] in the future. A newer calibration passed over is named with its reason, so
//! an interrupted `calibrate` never silently switches off the last good one, and runs made
//! elsewhere never silently become this host's noise.

use crate::compare::stats::noise_model::{CALIBRATION_TAG, MIN_RUNS};
use crate::store::RunSummary;
use chrono::{DateTime, Utc};

/// How many of the newest stored runs are searched for calibrations and history.
pub const SCAN: usize = 1000;
/// The tag holding how many runs `calibrate` was asked for.
pub const RUNS_TAG: &str = "calibration.runs";
/// The tag `import` sets on a calibration run it stores (the time of the import).
pub const IMPORTED_TAG: &str = "calibration.imported";
/// How far in the future a run may be dated before it is not believed (clock skew).
pub const SKEW: chrono::Duration = chrono::Duration::minutes(10);

/// Why a calibration is not used.
#[derive(Debug, Clone, PartialEq)]
pub enum Unusable {
    /// Fewer runs than asked (or than `MIN_RUNS`).
    Incomplete { runs: usize, asked: usize },
    /// A run was interrupted.
    Interrupted,
    /// Its runs were imported, not measured here.
    Imported,
    /// A run is dated in the future beyond the clock skew.
    Future(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Incomplete { runs, asked } => {
                write!(
                    f,
                    "it has {runs} of the {} asked for",
                    crate::units::count(*asked, "run")
                )
            }
            Unusable::Interrupted => write!(f, "a run of it was interrupted"),
            Unusable::Imported => write!(f, "its runs were imported (tag {IMPORTED_TAG})"),
            Unusable::Future(at) => write!(
                f,
                "a run of it is dated {at}, more than {} min in the future",
                SKEW.num_minutes()
            ),
        }
    }
}

/// One calibration of a host: its id, its runs' ids (newest first), and why it cannot be
/// used (None: whole).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub id: String,
    pub runs: Vec<String>,
    pub unusable: Option<Unusable>,
}

/// The calibrations of `host` among `list` (newest first), newest first, each judged at
/// `now`.
pub fn of_host<'a>(
    list: impl IntoIterator<Item = &'a RunSummary>,
    host: &str,
    now: DateTime<Utc>,
) -> Vec<Found> {
    let mut out: Vec<(Found, Vec<&RunSummary>)> = vec![];
    for s in list.into_iter().filter(|s| s.host.as_deref() == Some(host)) {
        let Some(id) = s.tags.get(CALIBRATION_TAG) else {
            continue;
        };
        match out.iter_mut().find(|(f, _)| &f.id == id) {
            Some((f, runs)) => {
                f.runs.push(s.run_id.clone());
                runs.push(s);
            }
            None => out.push((
                Found {
                    id: id.clone(),
                    runs: vec![s.run_id.clone()],
                    unusable: None,
                },
                vec![s],
            )),
        }
    }
    out.into_iter()
        .map(|(mut f, runs)| {
            f.unusable = judge(&runs, now);
            f
        })
        .collect()
}

fn judge(runs: &[&RunSummary], now: DateTime<Utc>) -> Option<Unusable> {
    if runs.iter().any(|s| s.tags.contains_key(IMPORTED_TAG)) {
        return Some(Unusable::Imported);
    }
    if let Some(s) = runs.iter().find(|s| {
        DateTime::parse_from_rfc3339(&s.started_at)
            .is_ok_and(|t| t.with_timezone(&Utc) > now + SKEW)
    }) {
        return Some(Unusable::Future(s.started_at.clone()));
    }
    if runs.iter().any(|s| s.interrupted) {
        return Some(Unusable::Interrupted);
    }
    let asked = runs
        .iter()
        .filter_map(|s| s.tags.get(RUNS_TAG)?.parse::<usize>().ok())
        .max()
        .unwrap_or(0)
        .max(MIN_RUNS);
    (runs.len() < asked).then_some(Unusable::Incomplete {
        runs: runs.len(),
        asked,
    })
}

/// The calibration `compare` uses for `host`: the newest whole one (its id and runs), and
/// the newer ones passed over, for a note each.
pub fn choose<'a>(
    list: impl IntoIterator<Item = &'a RunSummary>,
    host: &str,
    now: DateTime<Utc>,
) -> (Option<Found>, Vec<Found>) {
    let mut passed = vec![];
    for f in of_host(list, host, now) {
        if f.unusable.is_none() {
            return (Some(f), passed);
        }
        passed.push(f);
    }
    (None, passed)
}

/// The note for a calibration passed over.
pub fn passed_over(f: &Found, host: &str) -> String {
    format!(
        "calibration {} of host {host} is not used: {}",
        f.id,
        f.unusable
            .as_ref()
            .map(|u| u.to_string())
            .unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn s(id: &str, host: &str, cal: &str, extra: &[(&str, &str)]) -> RunSummary {
        let mut tags = BTreeMap::from([(CALIBRATION_TAG.to_string(), cal.to_string())]);
        for (k, v) in extra {
            tags.insert(k.to_string(), v.to_string());
        }
        RunSummary {
            run_id: id.into(),
            started_at: "2026-11-27T03:00:00Z".into(),
            host: Some(host.into()),
            suites: vec!["timers".into()],
            results: 1,
            interrupted: false,
            headline: String::new(),
            tags,
        }
    }

    fn now() -> DateTime<Utc> {
        "2026-11-27T04:00:00Z".parse().unwrap()
    }

    #[test]
    fn an_interrupted_calibration_never_replaces_a_whole_one() {
        let three = [(RUNS_TAG, "3")];
        let mut cut = s("r7", "h", "c2", &three);
        cut.interrupted = true;
        let list = vec![
            cut,
            s("r6", "h", "c2", &three),
            s("r5", "other", "c1", &three),
            s("r3", "h", "c1", &three),
            s("r2", "h", "c1", &three),
            s("r1", "h", "c1", &three),
        ];
        let (used, passed) = choose(&list, "h", now());
        let used = used.unwrap();
        assert_eq!((used.id.as_str(), used.runs.len()), ("c1", 3));
        assert_eq!(passed.len(), 1);
        assert_eq!(passed[0].unusable, Some(Unusable::Interrupted));
        // Without the interrupted run: one of three.
        let (used, passed) = choose(list[1..].iter(), "h", now());
        assert_eq!(used.unwrap().id, "c1");
        assert_eq!(
            passed[0].unusable,
            Some(Unusable::Incomplete { runs: 1, asked: 3 })
        );
        assert!(passed_over(&passed[0], "h").contains("it has 1 of the 3 runs asked for"));
        // Fewer than MIN_RUNS when the asked count is missing (runs of an older version).
        let old = [s("a", "h", "c0", &[]), s("b", "h", "c0", &[])];
        assert!(choose(&old, "h", now()).0.is_none());
    }

    #[test]
    fn imported_or_future_runs_are_named_not_used() {
        let imported = [(RUNS_TAG, "3"), (IMPORTED_TAG, "2026-11-27T03:30:00Z")];
        let list: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|r| s(r, "h", "x", &imported))
            .collect();
        let (used, passed) = choose(&list, "h", now());
        assert!(used.is_none());
        assert_eq!(passed[0].unusable, Some(Unusable::Imported));
        let mut list: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|r| s(r, "h", "y", &[(RUNS_TAG, "3")]))
            .collect();
        list[1].started_at = "2099-01-01T00:00:00Z".into();
        let (used, passed) = choose(&list, "h", now());
        assert!(used.is_none());
        assert!(passed_over(&passed[0], "h").contains("2099-01-01"));
        // Within the clock skew: believed.
        list[1].started_at = "2026-11-27T04:05:00Z".into();
        assert_eq!(choose(&list, "h", now()).0.unwrap().id, "y");
    }
}
