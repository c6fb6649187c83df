//! The classic suite's indexes: per copy count (`"1"`, `"2"`... and `"N"` for the
//! full-width count) the geometric mean of the tests' indexes, the same from UnixBench's
//! own pass combination, how many tests each holds, and whether any test is missing; and
//! how a copy count reads.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteIndexes {
    /// Copy count (`"1"`, `"2"`, `"N"`) -> index; null when a test's index was not positive.
    #[serde(flatten)]
    pub by_copies: BTreeMap<String, Option<f64>>,
    pub unixbench_style: BTreeMap<String, Option<f64>>,
    /// Copy count -> tests in the index.
    pub tests: BTreeMap<String, u64>,
    /// True when fewer tests ran than the index is made of.
    pub partial: bool,
    /// The full-width copy count, and what decided it.
    pub n: u64,
    pub n_basis: String,
    /// Copy count -> how far the pair placement of context-switch moves the index (absent
    /// in documents from before it was measured).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub placement_range: BTreeMap<String, PlacementRange>,
}

impl SuiteIndexes {
    /// The copy-count keys in order: numbers ascending, then `N`.
    pub fn keys(&self) -> Vec<&str> {
        let mut k: Vec<&str> = self.by_copies.keys().map(String::as_str).collect();
        k.sort_by_key(|k| k.parse::<u64>().unwrap_or(u64::MAX));
        k
    }

    /// The numbered copy counts with their index (without the `N` alias).
    pub fn numbered(&self) -> Vec<(u64, Option<f64>)> {
        let mut v: Vec<(u64, Option<f64>)> = self
            .by_copies
            .iter()
            .filter_map(|(k, v)| Some((k.parse().ok()?, *v)))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }
}

/// How far the suite index of one copy count can be trusted: the index as measured (the
/// context-switch pair placed by the scheduler, as UnixBench runs it), the same index with
/// context-switch taken from its pinned runs (pair on one CPU, pair split over two CPUs,
/// both measured in the same run), and the index's own 95% CI (the geometric mean of the
/// tests' CI bounds as indexes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementRange {
    pub observed: f64,
    /// The context-switch pair's observed co-location (0..1), when it was observed.
    pub colocated_fraction: Option<f64>,
    pub same_cpu: Option<f64>,
    pub cross_cpu: Option<f64>,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// The context-switch test's own index, observed, same CPU and cross CPU.
    pub context_switch: [Option<f64>; 3],
}

impl PlacementRange {
    /// The lowest and highest of the three indexes.
    pub fn span(&self) -> (f64, f64) {
        [Some(self.observed), self.same_cpu, self.cross_cpu]
            .into_iter()
            .flatten()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    }
}

/// How a copy count reads: "4 copies (2 per CPU)" when there are more copies than the N
/// usable CPUs, else "1 copy" or "2 copies".
pub fn copies_label(copies: u64, n: u64) -> String {
    let base = crate::units::count(copies, "copy");
    if n > 0 && copies > n {
        let per = copies as f64 / n as f64;
        let per = if per.fract() == 0.0 {
            format!("{per:.0}")
        } else {
            format!("{per:.2}")
        };
        format!("{base} ({per} per CPU)")
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_above_n_are_labelled_per_cpu() {
        assert_eq!(copies_label(1, 2), "1 copy");
        assert_eq!(copies_label(2, 2), "2 copies");
        assert_eq!(copies_label(4, 2), "4 copies (2 per CPU)");
        assert_eq!(copies_label(3, 2), "3 copies (1.50 per CPU)");
    }
}
