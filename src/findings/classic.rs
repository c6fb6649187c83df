//! Findings on the classic suite's index: `index-placement-sensitive` when the range of
//! indexes that the context-switch pair's placement can produce on this machine (pair on
//! one CPU vs split over two, both measured in the run) is wider than the index's own 95%
//! CI, so the single index figure belongs to the scheduler as much as to the machine.

use super::{Finding, Severity};
use crate::result::indexes::copies_label;
use crate::result::PlacementRange;
use crate::units::num;
use std::collections::BTreeMap;

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
