//! Slow host or fluke: when the fleet holds several runs of one host (runs compared together
//! with `--by tag:host`, a tag selection over many days), each outlier run is held against
//! the host's other runs. The view's tests judge one run at a time, and a run's own rounds
//! do not hold what changes between runs (where the hypervisor placed the vCPUs, a
//! neighbour for the length of the run): a host off in one run of three is a fluke of that
//! run, one off in every run is the host. A run of the host is "off alike" when on the
//! outlier run's rows called real, most of its own ratios to the fleet median lie beyond
//! the practical floor in the same direction (for an outlier called on its shift alone: its
//! own shift beyond the floor the same way).

use super::outliers::FLOOR;
use serde::Serialize;

/// Of a host's runs in the fleet, how many are off as this outlier run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Runs {
    /// The host's runs in the fleet (this one included).
    pub runs: usize,
    /// Of them, the runs off alike (this one included).
    pub off: usize,
}

impl Runs {
    /// The host is off in most of its runs: the host, not the run.
    pub fn consistent(&self) -> bool {
        2 * self.off > self.runs
    }

    /// Off in this run only, of three or more: a fluke of the run.
    pub fn fluke(&self) -> bool {
        self.off == 1 && self.runs >= 3
    }

    /// "3 of 3 runs", for a host line.
    pub fn words(&self) -> String {
        format!("off in {} of {} runs", self.off, self.runs)
    }
}

/// One run as the consistency check sees it.
pub struct RunFacts<'a> {
    /// The host it is a run of (its name, with the `--by` tag's value when that differs).
    pub host: &'a str,
    /// Direction-corrected log ratio to the fleet median per row (> 0 better).
    pub speed: Vec<Option<f64>>,
    /// Per row, called real.
    pub real: Vec<bool>,
    /// Mean direction-corrected log ratio over its rows, and whether that shift was called.
    pub shift: Option<(f64, bool)>,
}

/// Whether `other` is off as `outlier` is.
fn off_alike(outlier: &RunFacts, other: &RunFacts) -> bool {
    let floor = FLOOR.ln_1p();
    let rows: Vec<(f64, Option<f64>)> = outlier
        .real
        .iter()
        .zip(&outlier.speed)
        .zip(&other.speed)
        .filter(|((real, _), _)| **real)
        .filter_map(|((_, s), o)| Some((*s.as_ref()?, *o)))
        .collect();
    if rows.is_empty() {
        return match (outlier.shift, other.shift) {
            (Some((s, true)), Some((o, _))) => s.signum() == o.signum() && o.abs() >= floor,
            _ => false,
        };
    }
    let alike = rows
        .iter()
        .filter(|(s, o)| o.is_some_and(|o| o.signum() == s.signum() && o.abs() >= floor))
        .count();
    2 * alike > rows.len()
}

/// Per run, for outlier runs of a host with two runs or more in the fleet: how many of the
/// host's runs are off alike. `outlier[i]` says whether run i is an outlier.
pub fn of(runs: &[RunFacts], outlier: &[bool]) -> Vec<Option<Runs>> {
    let mut by_host: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, r) in runs.iter().enumerate() {
        by_host.entry(r.host).or_default().push(i);
    }
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let same = &by_host[r.host];
            if !outlier[i] || same.len() < 2 {
                return None;
            }
            let off = same
                .iter()
                .filter(|j| **j == i || off_alike(r, &runs[**j]))
                .count();
            Some(Runs {
                runs: same.len(),
                off,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(host: &str, speed: f64, real: bool) -> RunFacts<'_> {
        RunFacts {
            host,
            speed: vec![Some(speed), Some(0.0)],
            real: vec![real, false],
            shift: Some((speed / 2.0, false)),
        }
    }

    #[test]
    fn a_host_slow_in_every_run_is_consistent_and_one_slow_in_one_run_of_three_a_fluke() {
        let slow = (0.3f64).ln_1p();
        let runs = vec![
            run("a", -slow, true),
            run("a", -slow, true),
            run("a", -slow * 0.9, false),
            run("b", -slow, true),
            run("b", 0.01, false),
            run("b", -0.01, false),
            run("c", -slow, true),
        ];
        let outlier = [true, true, false, true, false, false, true];
        let c = of(&runs, &outlier);
        let a = c[0].unwrap();
        assert_eq!((a.runs, a.off), (3, 3));
        assert!(a.consistent() && !a.fluke());
        // The third run of a is no outlier (not called) but off alike all the same.
        assert_eq!(c[2], None);
        let b = c[3].unwrap();
        assert_eq!((b.runs, b.off), (3, 1));
        assert!(b.fluke() && !b.consistent());
        // A host with one run in the fleet: nothing to hold it against.
        assert_eq!(c[6], None);
    }

    #[test]
    fn a_run_off_the_other_way_or_within_the_floor_is_not_off_alike() {
        let slow = (0.3f64).ln_1p();
        let runs = vec![
            run("a", -slow, true),
            run("a", slow, false),
            run("a", -0.02, false),
        ];
        let c = of(&runs, &[true, false, false]);
        assert_eq!(c[0].map(|x| x.off), Some(1));
    }
}

#[cfg(test)]
pub(crate) mod view_tests {
    use crate::compare::testing::timers_run;
    use crate::fleet::{view, Options};
    use crate::result::RunDocument;

    /// 12 hosts x 3 runs within 1%; h2 1.5x slower in every run, h5 in its first run only
    /// (also the fixture of `report::fleet_text`'s test of the words it gets).
    pub(crate) fn fleet() -> Vec<RunDocument> {
        let mut docs = vec![];
        for h in 0..12 {
            for k in 0..3 {
                let f = match (h, k) {
                    (2, _) | (5, 0) => 1.5,
                    _ => 1.0 + 0.001 * ((h * 3 + k) % 7) as f64,
                };
                let mut d = timers_run(&format!("r{h}-{k}"), 20.0 * f, None);
                d.host = Some(format!("h{h}"));
                docs.push(d);
            }
        }
        docs
    }

    #[test]
    fn the_view_tells_a_host_slow_in_every_run_from_one_slow_in_one_run() {
        let v = view(&fleet(), &Options::default());
        assert_eq!(v.distinct_hosts, 12);
        let runs_off = |run: &str| v.hosts.iter().find(|h| h.run == run).unwrap().runs_off;
        for k in 0..3 {
            let r = runs_off(&format!("r2-{k}")).expect("h2's runs are outliers");
            assert_eq!((r.off, r.runs), (3, 3));
            assert!(r.consistent());
        }
        let r = runs_off("r5-0").expect("h5's slow run is an outlier");
        assert_eq!((r.off, r.runs), (1, 3));
        assert!(r.fluke());
        assert_eq!(runs_off("r5-1"), None);
    }
}
