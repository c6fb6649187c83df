//! Comparability: two matched results whose benchmark definition versions, settings
//! (window, plan, array size...), units or sample counts differ are not the same
//! experiment (a ratio of ns to ms would be a wrong figure), nor are two results one of
//! which has no positive median (no ratio exists);
//! this is said first, and such a row gets no verdict.

use super::matching::SETTINGS;
use crate::result::BenchResult;

/// What makes two matched results not comparable, in words; empty when nothing does.
pub fn problems(a: &BenchResult, b: &BenchResult) -> Vec<String> {
    let mut v = vec![];
    if a.benchmark != b.benchmark {
        v.push(format!(
            "definitions differ ({} vs {}): not comparable",
            a.benchmark, b.benchmark
        ));
    }
    for k in SETTINGS {
        let (x, y) = (a.params.get(k), b.params.get(k));
        if x != y {
            let show = |p: Option<&crate::result::ParamValue>| {
                p.map(|p| p.to_string()).unwrap_or_else(|| "absent".into())
            };
            v.push(format!("params differ: {k} {} vs {}", show(x), show(y)));
        }
    }
    if a.unit != b.unit {
        v.push(format!("units differ: {} vs {}", a.unit, b.unit));
    }
    // A ratio needs two positive medians: a zero, negative or infinite one (a store written
    // by an earlier version, whose import took any number) would read as "inf" or a
    // negative speedup.
    for (side, r) in [("A", a), ("B", b)] {
        let m = r.stats.median;
        if !(m.is_finite() && m > 0.0) {
            v.push(format!(
                "{side}'s median is {m} {}: no ratio can be taken",
                r.unit
            ));
        }
    }
    // Results drawn in rounds are compared whatever each round drew: each side's noise is
    // its own rounds' spread, and the median of its batches estimates the same figure (the
    // clock reads drew two samples a round before 2026-11-27, one since, in more rounds).
    // Results measured in one piece, by their sample counts.
    let in_rounds = |r: &BenchResult| r.rounds.as_ref().is_some_and(|x| !x.rounds.is_empty());
    if !(in_rounds(a) && in_rounds(b)) && a.stats.n != b.stats.n {
        v.push(format!(
            "sample counts differ: {} vs {}",
            a.stats.n, b.stats.n
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    #[test]
    fn version_settings_and_sample_count_are_said_and_equal_ones_are_not() {
        let a = testing::result("x.rate@1", "os", None, json!({"window_s": 0.5}), 10.0);
        assert!(problems(&a, &a).is_empty());
        let mut b = testing::result("x.rate@2", "os", None, json!({"window_s": 10.0}), 10.0);
        b.samples.truncate(5);
        b.stats = crate::measure::stats::Stats::of(&b.samples).unwrap();
        let p = problems(&a, &b);
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("not comparable") && p[1].contains("window_s 0.5 vs 10"));
        assert!(p[2].contains("10 vs 5"));
        let mut c = a.clone();
        c.unit = "ms".into();
        assert_eq!(
            problems(&a, &c),
            [format!("units differ: {} vs ms", a.unit)]
        );
    }

    #[test]
    fn rows_in_rounds_compare_whatever_each_round_drew() {
        use crate::result::rounds::{noise_of, quiet_rounds, Rounds};
        let with_rounds = |per_round: usize, n: usize| {
            let mut r = testing::result("x.rate@1", "os", None, json!({}), 10.0);
            let mut rounds = quiet_rounds(&vec![10f64.ln(); n]);
            for x in &mut rounds {
                x.samples = per_round;
            }
            r.rounds = Some(Rounds {
                noise: noise_of(&rounds, None, None),
                rounds,
            });
            r
        };
        // Five rounds of two against ten of one: the same figure, each with its own noise.
        assert!(problems(&with_rounds(2, 5), &with_rounds(1, 10)).is_empty());
        // Measured in one piece on one side: the sample counts must agree.
        let mut one_piece = testing::result("x.rate@1", "os", None, json!({}), 10.0);
        one_piece.samples.truncate(3);
        one_piece.stats = crate::measure::stats::Stats::of(&one_piece.samples).unwrap();
        let p = problems(&with_rounds(2, 5), &one_piece);
        assert!(
            p.iter().any(|x| x.starts_with("sample counts differ")),
            "{p:?}"
        );
    }

    #[test]
    fn a_median_that_is_not_positive_gives_no_ratio() {
        let a = testing::result("x.rate@1", "os", None, json!({}), 10.0);
        for m in [0.0, -3.0, f64::INFINITY] {
            let mut b = a.clone();
            b.stats.median = m;
            assert_eq!(
                problems(&a, &b),
                [format!("B's median is {m} ns: no ratio can be taken")]
            );
            assert_eq!(problems(&b, &a).len(), 1);
        }
    }
}
