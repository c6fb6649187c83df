//! The classic suite's arithmetic: a test's index against its George baseline, the suite
//! index (geometric mean of the test indexes), UnixBench's own pass combination (drop the
//! lowest third of the passes, geometric mean of the rest) and the scaling efficiency of N
//! copies. Pure functions, tested on fixed samples.

use crate::result::BenchResult;
use crate::result::SuiteIndexes;
use std::collections::BTreeMap;

/// A test's index: 10 × rate / baseline (George, a SPARCstation 20-61, scores 10).
pub fn index(rate: f64, baseline: f64) -> f64 {
    10.0 * rate / baseline
}

/// The geometric mean; None for an empty list or a value that is not positive.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || !values.iter().all(|v| v.is_finite() && *v > 0.0) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// UnixBench's combination of passes: sort, drop the lowest ⌊n/3⌋, geometric mean of the
/// rest (7 of 10 passes kept, 2 of 3). It leans upward by construction; it is given beside
/// the median only so the number can be set against published UnixBench scores.
pub fn unixbench_style(passes: &[f64]) -> Option<f64> {
    let mut v = passes.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    geometric_mean(&v[v.len() / 3..])
}

/// The scaling efficiency of `copies` copies: their rate ÷ (copies × the 1-copy rate).
pub fn scaling_efficiency(rate_n: f64, copies: usize, rate_1: f64) -> f64 {
    rate_n / (copies as f64 * rate_1)
}

/// The suite indexes of a run: for each copy count, the geometric mean of the tests' `index`
/// (our median) and of their `unixbench_index`; `partial` when fewer than `tests` ran.
/// Keys are copy counts as strings, and `N` for the full-width count `n`.
pub fn suite_indexes(results: &[BenchResult], tests: usize, n: usize, basis: &str) -> SuiteIndexes {
    let mut counts: Vec<u64> = results.iter().filter_map(copies_of).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut ours = BTreeMap::new();
    let mut theirs = BTreeMap::new();
    let mut ran = BTreeMap::new();
    for c in counts {
        let of = |key: &str| -> Vec<f64> {
            results
                .iter()
                .filter(|r| copies_of(r) == Some(c) && !is_variant(r))
                .filter_map(|r| r.derived.get(key).copied())
                .collect()
        };
        let idx = of("index");
        let keys = if c as usize == n && c != 1 {
            vec![c.to_string(), "N".to_string()]
        } else if c as usize == n {
            vec!["1".to_string(), "N".to_string()]
        } else {
            vec![c.to_string()]
        };
        for k in keys {
            ours.insert(k.clone(), geometric_mean(&idx));
            theirs.insert(k.clone(), geometric_mean(&of("unixbench_index")));
            ran.insert(k, idx.len() as u64);
        }
    }
    let partial = ran.values().any(|v| *v != tests as u64);
    SuiteIndexes {
        by_copies: ours,
        unixbench_style: theirs,
        tests: ran,
        partial,
        n: n as u64,
        n_basis: basis.to_string(),
    }
}

fn copies_of(r: &BenchResult) -> Option<u64> {
    r.benchmark
        .starts_with("classic.")
        .then(|| r.params.get("copies")?.as_u64())
        .flatten()
}

/// A variant that UnixBench does not run (the file copies with fsync) stays out of the index.
fn is_variant(r: &BenchResult) -> bool {
    r.params.get("fsync").and_then(|v| v.as_bool()) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::result;

    #[test]
    fn index_is_ten_times_the_ratio_to_george() {
        // A published 8-CPU result: context switching 137573.5 lps against 4000.
        assert!((index(137573.5, 4000.0) - 343.93375).abs() < 1e-9);
        assert!((index(45448570.8, 116700.0) - 3894.47).abs() < 0.01);
        assert_eq!(index(55.0, 55.0), 10.0);
    }

    #[test]
    fn geometric_mean_is_the_mean_of_the_logs() {
        let g = geometric_mean(&[343.9, 3894.5]).unwrap();
        assert!((g - (343.9f64 * 3894.5).sqrt()).abs() < 1e-9);
        assert!((geometric_mean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert!(geometric_mean(&[]).is_none());
        assert!(geometric_mean(&[1.0, 0.0]).is_none());
        assert!(geometric_mean(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn unixbench_style_drops_the_lowest_third() {
        // 10 passes: the 3 lowest go, the geometric mean of the 7 others stays.
        let passes = [1.0, 2.0, 3.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0];
        assert!((unixbench_style(&passes).unwrap() - 10.0).abs() < 1e-12);
        // 3 passes: 1 dropped, order does not matter.
        assert!((unixbench_style(&[9.0, 1.0, 4.0]).unwrap() - 6.0).abs() < 1e-12);
        // 2 passes: none dropped.
        assert!((unixbench_style(&[1.0, 4.0]).unwrap() - 2.0).abs() < 1e-12);
        // It is never below the plain geometric mean.
        let all = geometric_mean(&passes).unwrap();
        assert!(unixbench_style(&passes).unwrap() >= all);
    }

    #[test]
    fn scaling_efficiency_is_rate_over_n_single_rates() {
        assert!((scaling_efficiency(180.0, 2, 100.0) - 0.9).abs() < 1e-12);
        assert!((scaling_efficiency(400.0, 4, 100.0) - 1.0).abs() < 1e-12);
    }

    fn classic(name: &str, copies: u64, idx: f64, ub: f64, fsync: bool) -> BenchResult {
        let params = if fsync {
            serde_json::json!({"copies": copies, "fsync": true})
        } else {
            serde_json::json!({"copies": copies})
        };
        let mut r = result(&format!("classic.{name}@1"), "os", None, params, 100.0);
        r.derived.insert("index".into(), idx);
        r.derived.insert("unixbench_index".into(), ub);
        r
    }

    #[test]
    fn suite_indexes_per_copy_count() {
        let rs = vec![
            classic("syscall", 1, 100.0, 110.0, false),
            classic("pipe-throughput", 1, 400.0, 440.0, false),
            classic("syscall", 2, 200.0, 220.0, false),
            classic("pipe-throughput", 2, 800.0, 880.0, false),
            // An fsync variant does not enter the index.
            classic("file-copy-1024", 1, 1.0, 1.0, true),
        ];
        let v = suite_indexes(&rs, 2, 2, "2 CPUs");
        let ix = |k: &str| v.by_copies[k].unwrap();
        assert!((ix("1") - 200.0).abs() < 1e-9);
        assert!((ix("N") - 400.0).abs() < 1e-9);
        assert_eq!(ix("2"), ix("N"));
        assert!((v.unixbench_style["1"].unwrap() - 220.0).abs() < 1e-9);
        assert!(!v.partial);
        assert_eq!(v.n, 2);
        // Twelve tests expected, two ran: partial.
        assert!(suite_indexes(&rs, 12, 2, "").partial);
        // On one CPU, N is the 1-copy index.
        let one = suite_indexes(&rs[..2], 2, 1, "1 CPU");
        assert_eq!(one.by_copies["1"], one.by_copies["N"]);
    }
}
