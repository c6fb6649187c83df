//! Rules over a single result: a timer that eats the measurement, samples too spread to
//! trust; and over the rounds of all the run's results: which were disturbed, said once.

use crate::finding::{Finding, Severity};
use crate::result::rounds::Cause;
use crate::result::BenchResult;

/// A result whose timer share exceeds this is timer-bound.
pub const TIMER_BOUND_SHARE: f64 = 0.01;
/// A result whose CV exceeds this is flagged as noisy.
pub const NOISY_CV: f64 = 0.10;

/// The ids `annotate` judges from the samples: a result whose samples change (rounds
/// pooled) has them judged again.
pub const SAMPLE_FINDINGS: &[&str] = &["timer-bound", "high-variation"];

/// Causes and their counts in words: "5 other-tasks, 2 cpu-speed".
fn causes_text(causes: &[(Cause, usize)]) -> String {
    causes
        .iter()
        .map(|(c, k)| format!("{k} {}", c.text()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The run's `disturbed-rounds`: how many rounds of how many rows were disturbed, per cause
/// the rounds and the rows they were on, the first few rows named (`findings::first_few`).
/// Once for the run, not on each row: each row's `rounds.disturbed` holds which of its
/// rounds and every figure (a loud run repeated them on every row, a third of a quiet
/// run's document). A warning when some row had fewer than two undisturbed rounds, so its
/// figures rest on every round, disturbance included (its `rounds.noise` says
/// `includes_disturbed`): those rows are named first. None when no round was disturbed.
pub fn disturbed_rounds(results: &[BenchResult]) -> Option<Finding> {
    let measured: Vec<&BenchResult> = results.iter().filter(|r| r.rounds.is_some()).collect();
    let rounds_of = |r: &&BenchResult| r.rounds.as_ref().map_or(0, |x| x.rounds.len());
    let all_rounds: usize = measured.iter().map(rounds_of).sum();
    let hit: Vec<(&BenchResult, Vec<(Cause, usize)>)> = measured
        .iter()
        .filter_map(|r| {
            let causes = r.rounds.as_ref()?.causes();
            (!causes.is_empty()).then_some((*r, causes))
        })
        .collect();
    if hit.is_empty() {
        return None;
    }
    let disturbed: usize = hit
        .iter()
        .filter_map(|(r, _)| r.rounds.as_ref())
        .map(|x| x.disturbed())
        .sum();
    // Per cause, in the order of the most rounds: its rounds and the rows they are on.
    let mut per: Vec<(Cause, usize, Vec<String>)> = vec![];
    for (r, causes) in &hit {
        for (c, k) in causes {
            let row = format!("{} ({k})", r.label());
            match per.iter_mut().find(|(x, _, _)| x == c) {
                Some((_, n, rows)) => {
                    *n += k;
                    rows.push(row);
                }
                None => per.push((*c, *k, vec![row])),
            }
        }
    }
    per.sort_by_key(|(_, n, _)| std::cmp::Reverse(*n));
    // Rows whose figures rest on every round, with how many of their rounds were disturbed.
    let all_in: Vec<String> = hit
        .iter()
        .filter_map(|(r, _)| {
            let rs = r.rounds.as_ref()?;
            (rs.kept() < 2)
                .then(|| format!("{} ({} of {})", r.label(), rs.disturbed(), rs.rounds.len()))
        })
        .collect();
    let (severity, rest) = match all_in.len() {
        0 => (Severity::Info, String::new()),
        n => (
            Severity::Warning,
            format!(
                ", except on {} with fewer than two undisturbed rounds: {} figures rest on every round, disturbance included",
                crate::units::count(n, "row"),
                if n == 1 { "its" } else { "their" }
            ),
        ),
    };
    let counted: Vec<(Cause, usize)> = per.iter().map(|(c, n, _)| (*c, *n)).collect();
    let mut evidence = vec![];
    if !all_in.is_empty() {
        evidence.push(format!(
            "figures resting on disturbed rounds: {}",
            crate::finding::first_few(&all_in)
        ));
    }
    evidence.extend(per.into_iter().map(|(c, n, rows)| {
        format!(
            "{}: {} on {}: {}",
            c.text(),
            crate::units::count(n, "round"),
            crate::units::count(rows.len(), "row"),
            crate::finding::first_few(&rows)
        )
    }));
    Some(Finding::new(
        "disturbed-rounds",
        severity,
        format!(
            "{disturbed} of {all_rounds} rounds were disturbed ({}), on {} of {}: kept out of their rows' figures{rest}. Each row's rounds say which were and by how much (rounds.disturbed).",
            causes_text(&counted),
            hit.len(),
            crate::units::count(measured.len(), "row"),
        ),
        evidence,
    ))
}

/// The run's `condition-throughout`: a condition present throughout rows' rounds (other
/// tasks or steal past their limits in at least 80% of a row's rounds at a steady share:
/// `result::rounds::persistence`), per cause the rows and the mean share it took. Those
/// rounds are kept: the figures are what the run measured beside it, and `compare` names
/// it as a difference. A warning, since every such row's figure includes it. None when no
/// row had one.
pub fn condition_throughout(results: &[BenchResult]) -> Option<Finding> {
    let mut per: Vec<(Cause, Vec<f64>, Vec<String>)> = vec![];
    for r in results {
        let Some(rs) = &r.rounds else { continue };
        for c in rs.persistent() {
            let row = format!("{} ({:.0}%)", r.label(), c.mean);
            match per.iter_mut().find(|(x, _, _)| *x == c.cause) {
                Some((_, shares, rows)) => {
                    shares.push(c.mean);
                    rows.push(row);
                }
                None => per.push((c.cause, vec![c.mean], vec![row])),
            }
        }
    }
    if per.is_empty() {
        return None;
    }
    let who = |c: Cause| match c {
        Cause::Steal => "the hypervisor's steal",
        _ => "other tasks",
    };
    let said: Vec<String> = per
        .iter()
        .map(|(c, shares, rows)| {
            let lo = shares.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = shares.iter().copied().fold(0.0, f64::max);
            format!(
                "{} took {lo:.0}-{hi:.0}% of the rows' CPUs in every round of {}",
                who(*c),
                crate::units::count(rows.len(), "row")
            )
        })
        .collect();
    Some(Finding::new(
        "condition-throughout",
        Severity::Warning,
        format!(
            "A condition was present throughout this run's rounds: {}. Those rounds are kept: the figures are what this machine gave beside it (a neighbour or a loud host for the whole run), not a disturbance set aside, and compare names it as a difference.",
            said.join("; ")
        ),
        per.iter()
            .map(|(c, _, rows)| format!("{}: {}", c.text(), crate::finding::first_few(rows)))
            .collect(),
    ))
}

/// Attach the result rules' findings to `r`.
pub fn annotate(r: &mut BenchResult) {
    if r.quality.timer_share > TIMER_BOUND_SHARE {
        r.findings.push(Finding::new(
            "timer-bound",
            Severity::Warning,
            format!(
                "Reading the clock is {:.2}% of the measured time: the result measures the timer as much as the work.",
                r.quality.timer_share * 100.0
            ),
            vec![format!(
                "clock read {:.1} ns, batch {:.0} ns of {} iterations",
                r.quality.clock_cost_ns, r.quality.batch_ns, r.quality.batch_iterations
            )],
        ));
    }
    if r.stats.cv > NOISY_CV {
        r.findings.push(Finding::new(
            "high-variation",
            Severity::Info,
            format!(
                "Samples vary by {:.0}% (CV): compare medians with their confidence intervals, not single figures.",
                r.stats.cv * 100.0
            ),
            vec![format!(
                "n={}, min {:.3}, median {:.3}, max {:.3} {}",
                r.stats.n, r.stats.min, r.stats.median, r.stats.max, r.unit
            )],
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::result;
    use serde_json::json;

    fn ids(r: &BenchResult) -> Vec<&str> {
        r.findings.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn timer_bound_above_one_percent_only() {
        let mut r = result("x.y@1", "os", None, json!({}), 1000.0);
        r.quality.timer_share = 0.009;
        annotate(&mut r);
        assert!(!ids(&r).contains(&"timer-bound"));
        let mut r = result("x.y@1", "os", None, json!({}), 1000.0);
        r.quality.timer_share = 0.55;
        annotate(&mut r);
        let f = r.findings.iter().find(|f| f.id == "timer-bound").unwrap();
        assert!(f.message.contains("55.00%"), "{}", f.message);
    }

    /// A row of `n` rounds, those in `hit` disturbed by `cause`.
    fn in_rounds(clock: &str, n: usize, hit: &[usize], cause: Cause) -> BenchResult {
        use crate::result::rounds::{quiet_rounds, Disturbance, Rounds};
        let mut r = result(
            "timers.clock@1",
            "os",
            None,
            json!({ "clock": clock }),
            10.0,
        );
        let mut rs = quiet_rounds(&vec![0.0; n]);
        for i in hit {
            rs[*i].disturbed.push(Disturbance {
                cause,
                value: 30.0,
                limit: 10.0,
                persistent: false,
            });
        }
        r.rounds = Some(Rounds {
            rounds: rs,
            noise: None,
        });
        r
    }

    #[test]
    fn rounds_kept_out_are_counted_once_for_the_run_not_on_each_row() {
        let rows: Vec<BenchResult> = (0..6)
            .map(|i| in_rounds(&format!("c{i}"), 10, &[1, 2], Cause::OtherTasks))
            .chain([
                in_rounds("s", 10, &[3], Cause::Steal),
                in_rounds("quiet", 10, &[], Cause::Steal),
            ])
            .collect();
        let f = disturbed_rounds(&rows).unwrap();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(
            f.message,
            "13 of 80 rounds were disturbed (12 other-tasks, 1 steal), on 7 of 8 rows: kept out of their rows' figures. Each row's rounds say which were and by how much (rounds.disturbed)."
        );
        // A line per cause, the first few rows named and the rest counted.
        assert_eq!(f.evidence.len(), 2, "{:?}", f.evidence);
        assert_eq!(
            f.evidence[0],
            "other-tasks: 12 rounds on 6 rows: timers.clock@1 [os] clock=c0 (2), timers.clock@1 [os] clock=c1 (2), timers.clock@1 [os] clock=c2 (2) and 3 more"
        );
        assert_eq!(
            f.evidence[1],
            "steal: 1 round on 1 row: timers.clock@1 [os] clock=s (1)"
        );
        // Nothing disturbed: no finding.
        assert!(disturbed_rounds(&rows[7..]).is_none());
    }

    #[test]
    fn rows_whose_figures_rest_on_disturbed_rounds_make_it_a_warning_naming_them() {
        let rows = [
            in_rounds("x", 3, &[0, 1, 2], Cause::Steal),
            in_rounds("y", 3, &[0, 1], Cause::Steal),
            in_rounds("z", 4, &[0], Cause::Steal),
        ];
        let f = disturbed_rounds(&rows).unwrap();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.message,
            "6 of 10 rounds were disturbed (6 steal), on 3 of 3 rows: kept out of their rows' figures, except on 2 rows with fewer than two undisturbed rounds: their figures rest on every round, disturbance included. Each row's rounds say which were and by how much (rounds.disturbed)."
        );
        assert_eq!(
            f.evidence,
            [
                "figures resting on disturbed rounds: timers.clock@1 [os] clock=x (3 of 3) and timers.clock@1 [os] clock=y (2 of 3)",
                "steal: 6 rounds on 3 rows: timers.clock@1 [os] clock=x (3), timers.clock@1 [os] clock=y (2) and timers.clock@1 [os] clock=z (1)"
            ]
        );
    }

    #[test]
    fn high_variation_cites_the_spread() {
        let mut r = result("x.y@1", "os", None, json!({}), 10.0); // samples 5.5..14.5
        annotate(&mut r);
        let f = r
            .findings
            .iter()
            .find(|f| f.id == "high-variation")
            .unwrap();
        assert!(f.evidence[0].contains("min 5.500"), "{:?}", f.evidence);
    }
}
