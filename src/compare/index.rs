//! The classic suite's index ratio split over its tests: the index is a geometric mean, so
//! the log of B's index over A's is the mean of the tests' log ratios, and each test's share
//! of the log ratio says how much of the difference it makes ("2.36x: 41% from shell-8").

use super::matching::{roles, MatchIndex, Role};
use crate::result::{figures, RunDocument};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestShare {
    pub test: String,
    pub a_index: f64,
    pub b_index: f64,
    pub ratio: f64,
    /// The test's share of the log of the index ratio (shares add up to 1).
    pub share: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexShares {
    /// The copy-count key of both runs' indexes (`1`, `N`).
    pub copies: String,
    pub a: f64,
    pub b: f64,
    pub ratio: f64,
    pub tests: Vec<TestShare>,
    pub sentence: String,
}

/// The test part of a classic benchmark id (`classic.shell-8@1` -> `shell-8`).
fn test_name(id: &str) -> String {
    let base = id.split('@').next().unwrap_or(id);
    base.strip_prefix(crate::bench::classic::SUITE)
        .and_then(|t| t.strip_prefix('.'))
        .unwrap_or(base)
        .to_string()
}

pub fn shares(a: &RunDocument, b: &RunDocument) -> Vec<IndexShares> {
    let (Some(ia), Some(ib)) = (&a.indexes, &b.indexes) else {
        return vec![];
    };
    let mut out = vec![];
    let in_b = MatchIndex::new(b);
    for (key, role) in [("1", Role::One), ("N", Role::All)] {
        let (Some(Some(xa)), Some(Some(xb))) = (ia.by_copies.get(key), ib.by_copies.get(key))
        else {
            continue;
        };
        let mut tests = vec![];
        for ra in a.results.iter().filter(|r| {
            r.placement.name == "os"
                && !crate::bench::classic::score::is_variant(r)
                && roles(a, r).contains(&role)
        }) {
            let Some((rb, _)) = in_b.find(a, ra) else {
                continue;
            };
            let (Some(x), Some(y)) = (
                ra.derived.get(figures::INDEX),
                rb.derived.get(figures::INDEX),
            ) else {
                continue;
            };
            if *x > 0.0 && *y > 0.0 {
                tests.push(TestShare {
                    test: test_name(&ra.benchmark),
                    a_index: *x,
                    b_index: *y,
                    ratio: y / x,
                    share: 0.0,
                });
            }
        }
        let total: f64 = tests.iter().map(|t| t.ratio.ln()).sum();
        if total.abs() > 1e-12 {
            for t in &mut tests {
                t.share = t.ratio.ln() / total;
            }
        }
        tests.sort_by(|p, q| q.share.total_cmp(&p.share));
        let ratio = xb / xa;
        let top: Vec<String> = tests
            .iter()
            .filter(|t| t.share > 0.0)
            .take(3)
            .map(|t| format!("{:.0}% from {} ({:.2}x)", t.share * 100.0, t.test, t.ratio))
            .collect();
        let sentence = format!(
            "index {key}: B/A {ratio:.2}x ({} vs {}){}",
            crate::units::num(*xb),
            crate::units::num(*xa),
            if top.is_empty() {
                String::new()
            } else {
                format!(": {}", top.join(", "))
            }
        );
        out.push(IndexShares {
            copies: key.into(),
            a: *xa,
            b: *xb,
            ratio,
            tests,
            sentence,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::testing::index_run;

    #[test]
    fn the_log_ratio_is_shared_out_over_the_tests() {
        // Two tests; B doubles one and leaves the other: the index grows sqrt(2), all of it
        // from the first test.
        let a = index_run("a", &[("dhrystone", 1000.0), ("shell-8", 2000.0)]);
        let b = index_run("b", &[("dhrystone", 1000.0), ("shell-8", 4000.0)]);
        let s = shares(&a, &b);
        assert_eq!(s.len(), 1);
        assert!((s[0].ratio - 2f64.sqrt()).abs() < 1e-9, "{s:?}");
        assert_eq!(s[0].tests[0].test, "shell-8");
        assert!((s[0].tests[0].share - 1.0).abs() < 1e-9);
        assert!(
            s[0].sentence.contains("100% from shell-8"),
            "{}",
            s[0].sentence
        );
        // Equal indexes: no shares claimed.
        let s = shares(&a, &a);
        assert!(s[0].tests.iter().all(|t| t.share == 0.0));
    }
}
