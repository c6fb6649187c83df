//! Findings on the classic suite's index: `index-placement-sensitive` when the range of
//! indexes that the context-switch pair's placement can produce on this machine (pair on
//! one CPU vs split over two, both measured in the run) is wider than the index's own 95%
//! CI, so the single index figure belongs to the scheduler as much as to the machine; and
//! `rounds-disagree` on a test whose rounds disagree, so its index is an interval, not one
//! figure.

use crate::finding::{Finding, Severity};
use crate::result::indexes::copies_label;
use crate::result::{figures, BenchResult, PlacementRange};
use crate::units::num;
use std::collections::BTreeMap;

/// The finding on a classic test whose rounds disagree.
pub const ROUNDS_DISAGREE: &str = "rounds-disagree";

/// A classic test's rounds agree when the 95% interval of its median from them lies within
/// this either way: the classic family's precision target (a 5% MDE), what a run's budget
/// spends rounds on.
pub const AGREE_WITHIN: f64 = 0.05;

/// Round medians listed in the evidence at most (then how many more).
const LISTED: usize = 10;

/// `rounds-disagree` on a classic row pooled from its rounds, when the 95% interval of its
/// median from its kept rounds (t with their degrees of freedom times the standard error)
/// reaches further than [`AGREE_WITHIN`] either way: its index is then given as that
/// interval. None for a row without a spread of rounds (fewer than two kept) or an index.
pub fn rounds_disagree(r: &BenchResult) -> Option<Finding> {
    let rs = r.rounds.as_ref()?;
    let n = rs.noise.as_ref()?;
    let index = *r.derived.get(figures::INDEX)?;
    let half = half_width(r)?;
    if half.exp_m1().is_nan() || half.exp_m1() <= AGREE_WITHIN {
        return None;
    }
    let medians: Vec<f64> = rs.pooled().iter().map(|x| x.median).collect();
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(0.0, f64::max);
    let listed: Vec<String> = medians.iter().map(|m| num(*m)).collect();
    Some(Finding::new(
        "rounds-disagree",
        Severity::Warning,
        format!(
            "Its {} rounds disagree (medians {} to {} {}, {:.1}% apart between rounds): its index lies between {} and {} (95% interval from its rounds), not at {}; quote the interval, or measure more rounds.",
            n.kept,
            num(lo),
            num(hi),
            r.unit,
            n.sigma * 100.0,
            num(index * (-half).exp()),
            num(index * half.exp()),
            num(index)
        ),
        vec![
            format!(
                "round medians ({}): {}",
                r.unit,
                crate::finding::first_few_of(&listed, LISTED)
            ),
            format!(
                "between rounds σ {:.1}% (of ln median); standard error of the median {:.1}% with {} degrees of freedom: ±{:.1}% at 95%",
                n.sigma * 100.0,
                n.se * 100.0,
                n.df,
                half.exp_m1() * 100.0
            ),
            format!(
                "rounds agree when that interval lies within ±{:.0}% (the classic suite's precision target)",
                AGREE_WITHIN * 100.0
            ),
        ],
    ))
}

/// A classic row's index as the 95% interval from its rounds, when its `rounds-disagree`
/// finding says one figure would not do: (low, high); None otherwise.
pub fn index_interval(r: &BenchResult) -> Option<(f64, f64)> {
    if !r.findings.iter().any(|f| f.id == ROUNDS_DISAGREE) {
        return None;
    }
    let index = *r.derived.get(figures::INDEX)?;
    let half = half_width(r)?;
    Some((index * (-half).exp(), index * half.exp()))
}

/// Half the 95% interval of a row's ln median from its rounds: t with their degrees of
/// freedom times the standard error; None without a spread of rounds.
fn half_width(r: &BenchResult) -> Option<f64> {
    let n = r.run_noise()?;
    Some(crate::measure::mde::two_sided(Some(n.df)) * n.se)
}

/// One finding per copy count whose index the pair's placement moves by more than its CI.
/// `n` is the full-width copy count (for the per-CPU label).
pub fn index_placement_sensitive(
    ranges: &BTreeMap<String, PlacementRange>,
    n: u64,
) -> Vec<Finding> {
    ranges
        .iter()
        .filter(|(k, _)| k.as_str() != "N")
        .filter_map(|(k, r)| {
            let copies: u64 = k.parse().ok()?;
            let (lo, hi) = r.span();
            // NaN compares false: no claim without a real, wider range.
            let wider = hi - lo > r.ci95_high - r.ci95_low;
            if !wider {
                return None;
            }
            let label = copies_label(copies, n);
            let mut evidence = vec![format!(
                "index with {label}: {} as measured (the scheduler placed the context-switch pair{}), 95% CI {} – {}",
                num(r.observed),
                r.colocated_fraction
                    .map(|f| format!(", together on one CPU in {:.0}% of observations", f * 100.0))
                    .unwrap_or_default(),
                num(r.ci95_low),
                num(r.ci95_high)
            )];
            let [ctx_obs, ctx_same, ctx_cross] = r.context_switch;
            for (what, index, ctx) in [
                ("pair pinned to one CPU", r.same_cpu, ctx_same),
                ("pair split over two CPUs", r.cross_cpu, ctx_cross),
            ] {
                if let (Some(i), Some(c)) = (index, ctx) {
                    evidence.push(format!(
                        "with context-switch's {what} (its index {}): suite index {}",
                        num(c),
                        num(i)
                    ));
                }
            }
            if let Some(c) = ctx_obs {
                evidence.push(format!("context-switch's own index as measured: {}", num(c)));
            }
            evidence.push(
                "`truebench run ctx` measures each placement (same CPU, same LLC, ...) on its own".into(),
            );
            Some(Finding::new(
                "index-placement-sensitive",
                Severity::Warning,
                format!(
                    "The classic index with {label} ranges from {} to {} ({:.1}x) depending only on where the scheduler puts the context-switch pair, wider than its own 95% CI: quote the range, not the single figure.",
                    num(lo),
                    num(hi),
                    hi / lo
                ),
                evidence,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(observed: f64, same: f64, cross: f64, ci: (f64, f64)) -> PlacementRange {
        PlacementRange {
            observed,
            colocated_fraction: Some(0.7),
            same_cpu: Some(same),
            cross_cpu: Some(cross),
            ci95_low: ci.0,
            ci95_high: ci.1,
            context_switch: [Some(838.0), Some(900.0), Some(44.0)],
        }
    }

    /// A syscall row pooled from one-pass rounds with these medians, its index set, its
    /// noise as `run` pools it.
    fn pooled(medians: &[f64]) -> BenchResult {
        use crate::result::rounds::{noise_of, quiet_rounds, Rounds};
        let mut r = crate::result::testing::result(
            "classic.syscall@1",
            "os",
            None,
            serde_json::json!({"copies": 1}),
            1.0,
        );
        r.unit = "lps".into();
        r.samples = medians.to_vec();
        r.stats = crate::measure::stats::Stats::of(&r.samples).unwrap();
        let mut rounds = quiet_rounds(&medians.iter().map(|m| m.ln()).collect::<Vec<_>>());
        for x in &mut rounds {
            x.samples = 1;
        }
        r.rounds = Some(Rounds {
            noise: noise_of(&rounds, Some(r.stats.median.ln()), None),
            rounds,
        });
        r.derived
            .insert(figures::INDEX.into(), 10.0 * r.stats.median / 15000.0);
        r
    }

    #[test]
    fn rounds_that_disagree_make_the_index_an_interval_and_rounds_that_agree_do_not() {
        // Five passes within 1%: the interval is about ±1%, one figure will do.
        let quiet = pooled(&[2.00e6, 2.01e6, 1.99e6, 2.005e6, 1.995e6]);
        assert!(rounds_disagree(&quiet).is_none());
        assert!(index_interval(&quiet).is_none());
        // A loud hour's rounds (15% apart): the interval reaches past ±5%.
        let mut loud = pooled(&[2.00e6, 1.60e6, 2.30e6, 1.80e6, 2.10e6]);
        let f = rounds_disagree(&loud).expect("rounds 15% apart disagree");
        assert_eq!(
            (f.id.as_str(), f.severity),
            (ROUNDS_DISAGREE, Severity::Warning)
        );
        assert!(
            f.message
                .starts_with("Its 5 rounds disagree (medians 1600000 to 2300000 lps"),
            "{}",
            f.message
        );
        assert!(
            f.evidence[0].contains("2000000, 1600000, 2300000"),
            "{:?}",
            f.evidence
        );
        assert!(
            f.evidence[1].contains("4 degrees of freedom"),
            "{:?}",
            f.evidence
        );
        // The table's interval is read from the finding the row carries, about its index.
        assert!(index_interval(&loud).is_none(), "no finding on the row yet");
        loud.findings.push(f);
        let (lo, hi) = index_interval(&loud).unwrap();
        let index = loud.derived[figures::INDEX];
        assert!(lo < index / 1.05 && hi > index * 1.05, "{lo} {index} {hi}");
        assert!(((lo * hi).sqrt() - index).abs() < 1e-9 * index);
        // One round: no spread to read, nothing said.
        assert!(rounds_disagree(&pooled(&[2.0e6])).is_none());
    }

    #[test]
    fn fires_when_the_pair_placement_moves_the_index_more_than_its_ci() {
        // A 19x swing of one test of twelve moves the index by 28%: 1.0 vs 1.28, CI ±2%.
        let ranges = BTreeMap::from([
            (
                "1".to_string(),
                range(1250.0, 1280.0, 1000.0, (1225.0, 1275.0)),
            ),
            (
                "N".to_string(),
                range(1250.0, 1280.0, 1000.0, (1225.0, 1275.0)),
            ),
        ]);
        let f = index_placement_sensitive(&ranges, 2);
        assert_eq!(f.len(), 1, "one per copy count, N not twice: {f:?}");
        assert_eq!(f[0].id, "index-placement-sensitive");
        assert!(
            f[0].message.contains("1000") && f[0].message.contains("1280"),
            "{}",
            f[0].message
        );
        assert!(f[0].evidence[0].contains("70%"), "{:?}", f[0].evidence);
        assert!(f[0]
            .evidence
            .iter()
            .any(|e| e.contains("one CPU") && e.contains("900")));
        assert!(f[0]
            .evidence
            .iter()
            .any(|e| e.contains("two CPUs") && e.contains("44")));
    }

    #[test]
    fn silent_when_the_range_is_within_the_ci_or_not_measured() {
        // Pinned runs within the index's own CI: nothing to say.
        let quiet = BTreeMap::from([(
            "1".to_string(),
            range(1000.0, 1010.0, 995.0, (980.0, 1020.0)),
        )]);
        assert!(index_placement_sensitive(&quiet, 2).is_empty());
        // Only the observed figure (no pinned runs, e.g. one CPU): no range at all.
        let mut alone = range(1000.0, 0.0, 0.0, (990.0, 1010.0));
        alone.same_cpu = None;
        alone.cross_cpu = None;
        let only = BTreeMap::from([("1".to_string(), alone)]);
        assert!(index_placement_sensitive(&only, 1).is_empty());
    }
}
