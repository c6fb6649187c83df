//! The classic suite's arithmetic: a test's index against its George baseline, the suite
//! index (geometric mean of the test indexes), UnixBench's own pass combination (drop the
//! lowest third of the passes, geometric mean of the rest) and the scaling efficiency of N
//! copies. Pure functions, tested on fixed samples.

use crate::result::params::key;
use crate::result::BenchResult;
use crate::result::{PlacementRange, SuiteIndexes};
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
        placement_range: BTreeMap::new(),
    }
}

/// The placement range of the index for every copy count whose context-switch test ran,
/// keyed like the indexes (copy counts, and `N`).
pub fn placement_ranges(results: &[BenchResult], n: usize) -> BTreeMap<String, PlacementRange> {
    let mut counts: Vec<u64> = results.iter().filter_map(copies_of).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut out = BTreeMap::new();
    for c in counts {
        let at = |r: &&BenchResult| copies_of(r) == Some(c);
        let is_ctx = |r: &BenchResult| r.benchmark.starts_with("classic.context-switch@");
        let pair = |r: &BenchResult| r.params.pair().map(String::from);
        let plain: Vec<&BenchResult> = results
            .iter()
            .filter(at)
            .filter(|r| !is_variant(r))
            .collect();
        let Some(ctx) = plain.iter().find(|r| is_ctx(r)) else {
            continue;
        };
        let pinned = |name: &str| {
            results
                .iter()
                .filter(at)
                .filter(|r| is_ctx(r))
                .find(|r| pair(r).as_deref() == Some(name))
                .and_then(|r| r.derived.get("index").copied())
        };
        let others: Vec<f64> = plain
            .iter()
            .filter(|r| !is_ctx(r))
            .filter_map(|r| r.derived.get("index").copied())
            .collect();
        let with = |ctx_index: Option<f64>| {
            let mut v = others.clone();
            v.push(ctx_index?);
            geometric_mean(&v)
        };
        let bound = |pick: fn(&BenchResult) -> f64| -> Option<f64> {
            let v: Option<Vec<f64>> = plain
                .iter()
                .map(|r| Some(index(pick(r), *r.derived.get("baseline")?)))
                .collect();
            geometric_mean(&v?)
        };
        let observed_ctx = ctx.derived.get("index").copied();
        let (Some(observed), Some(lo), Some(hi)) = (
            with(observed_ctx),
            bound(|r| r.stats.ci95_low),
            bound(|r| r.stats.ci95_high),
        ) else {
            continue;
        };
        let range = PlacementRange {
            observed,
            colocated_fraction: ctx
                .placement
                .observed
                .as_ref()
                .and_then(|o| o.colocated_fraction()),
            same_cpu: with(pinned("same-cpu")),
            cross_cpu: with(pinned("cross-cpu")),
            ci95_low: lo,
            ci95_high: hi,
            context_switch: [observed_ctx, pinned("same-cpu"), pinned("cross-cpu")],
        };
        if c as usize == n {
            out.insert("N".to_string(), range.clone());
        }
        out.insert(c.to_string(), range);
    }
    out
}

fn copies_of(r: &BenchResult) -> Option<u64> {
    r.benchmark
        .starts_with("classic.")
        .then(|| r.params.copies())
        .flatten()
}

/// A variant that UnixBench does not run (the file copies with fsync, the context-switch
/// pair pinned, Whetstone's all-modules work) stays out of the index.
pub fn is_variant(r: &BenchResult) -> bool {
    r.params.fsync() == Some(true)
        || r.params.contains_key(key::PAIR)
        || r.params.work() == Some("all-modules")
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

    fn with_ci(mut r: BenchResult, lo: f64, hi: f64) -> BenchResult {
        r.stats.ci95_low = lo;
        r.stats.ci95_high = hi;
        r.derived.insert("baseline".into(), 100.0);
        r
    }

    /// Context-switch at 1 copy: the scheduler's figure, and its two pinned runs.
    fn swing(observed: f64, same: f64, cross: f64) -> Vec<BenchResult> {
        let ctx = |pair: Option<&str>, idx: f64| {
            let mut params = serde_json::json!({"copies": 1});
            if let Some(p) = pair {
                params["pair"] = serde_json::json!(p);
            }
            let mut r = result("classic.context-switch@1", "os", None, params, 100.0);
            r.derived.insert("index".into(), idx);
            // Rates 10 index points either side (baseline 100: index = rate / 10).
            with_ci(r, idx * 10.0 - 100.0, idx * 10.0 + 100.0)
        };
        let mut sys = classic("syscall", 1, 100.0, 100.0, false);
        sys = with_ci(sys, 900.0, 1100.0);
        vec![
            sys,
            ctx(None, observed),
            ctx(Some("same-cpu"), same),
            ctx(Some("cross-cpu"), cross),
        ]
    }

    #[test]
    fn the_placement_range_replaces_context_switch_by_its_pinned_runs() {
        let r = &placement_ranges(&swing(838.0, 900.0, 44.0), 2)["1"];
        assert!((r.observed - (100.0f64 * 838.0).sqrt()).abs() < 1e-9);
        assert!((r.same_cpu.unwrap() - (100.0f64 * 900.0).sqrt()).abs() < 1e-9);
        assert!((r.cross_cpu.unwrap() - (100.0f64 * 44.0).sqrt()).abs() < 1e-9);
        assert_eq!(r.context_switch, [Some(838.0), Some(900.0), Some(44.0)]);
        // The CI: geometric mean of the bounds as indexes (90 and 828 / 110 and 848).
        assert!((r.ci95_low - (90.0f64 * 828.0).sqrt()).abs() < 1e-9);
        assert!((r.ci95_high - (110.0f64 * 848.0).sqrt()).abs() < 1e-9);
        let (lo, hi) = r.span();
        assert_eq!((lo, hi), (r.cross_cpu.unwrap(), r.same_cpu.unwrap()));
        // The pinned runs do not enter the suite index itself.
        let ix = suite_indexes(&swing(838.0, 900.0, 44.0), 2, 2, "");
        assert!((ix.by_copies["1"].unwrap() - r.observed).abs() < 1e-9);
        // N is keyed too when the copy count is N; without context-switch there is no range.
        assert!(placement_ranges(&swing(838.0, 900.0, 44.0), 1).contains_key("N"));
        assert!(placement_ranges(&swing(838.0, 900.0, 44.0)[..1], 2).is_empty());
    }

    /// Whetstone's UnixBench work enters the index; its all-modules work stays beside it.
    #[test]
    fn only_the_unixbench_work_enters_the_index() {
        let whet = |work: &str, idx: f64| {
            let params = serde_json::json!({"copies": 1, "work": work});
            let mut r = result("classic.whetstone@3", "os", None, params, 100.0);
            r.derived.insert("index".into(), idx);
            r.derived.insert("unixbench_index".into(), idx);
            r
        };
        let (ub, all) = (whet("unixbench", 400.0), whet("all-modules", 100.0));
        assert!(!is_variant(&ub));
        assert!(is_variant(&all));
        let rs = vec![classic("syscall", 1, 100.0, 100.0, false), ub, all];
        let v = suite_indexes(&rs, 2, 1, "1 CPU");
        // The geometric mean of 100 and 400, not of 100, 400 and 100.
        assert!((v.by_copies["1"].unwrap() - 200.0).abs() < 1e-9);
        assert!(!v.partial);
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
