//! The classic suite's indexes: per copy count (`"1"`, `"2"`... and `"N"` for the
//! full-width count) the geometric mean of the tests' indexes, the same from UnixBench's
//! own pass combination, how many tests each holds, and whether any test is missing.

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
