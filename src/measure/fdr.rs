//! Many tests, one error rate: the Benjamini-Hochberg procedure, used wherever truebench
//! tests many rows (or many host x row pairs) at once and must not call about 5% of them
//! real by chance. It controls the expected share of false discoveries among the rows
//! called real at `q`, and holds under the positive dependence rows of one run share.

/// Which of `p_values` are discoveries at false discovery rate `q` (Benjamini and
/// Hochberg, 1995): sort ascending, find the largest k with p(k) <= k q / m, and call the
/// k smallest real. `None` is a row without a p-value: it is never a discovery and does
/// not count in m. The result is in the input's order.
pub fn benjamini_hochberg(p_values: &[Option<f64>], q: f64) -> Vec<bool> {
    let mut tested: Vec<(usize, f64)> = p_values
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.filter(|p| p.is_finite()).map(|p| (i, p)))
        .collect();
    let m = tested.len();
    let mut real = vec![false; p_values.len()];
    if m == 0 || !(q > 0.0) {
        return real;
    }
    tested.sort_by(|a, b| a.1.total_cmp(&b.1));
    let k = tested
        .iter()
        .enumerate()
        .rev()
        .find(|(rank, (_, p))| *p <= (*rank + 1) as f64 * q / m as f64)
        .map(|(rank, _)| rank + 1)
        .unwrap_or(0);
    for (i, _) in &tested[..k] {
        real[*i] = true;
    }
    real
}

#[cfg(test)]
mod tests {
    use super::benjamini_hochberg;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn some(p: &[f64]) -> Vec<Option<f64>> {
        p.iter().map(|p| Some(*p)).collect()
    }

    #[test]
    fn the_step_up_rule_on_a_textbook_set() {
        // m = 10, q = 0.05: thresholds 0.005, 0.010, ..., 0.050. p(4) = 0.019 <= 0.020 is
        // the largest passing rank, so the four smallest are real although p(3) = 0.016
        // alone would also pass and p(5) = 0.03 does not.
        let p = [0.001, 0.008, 0.016, 0.019, 0.03, 0.2, 0.5, 0.6, 0.8, 0.9];
        let real = benjamini_hochberg(&some(&p), 0.05);
        assert_eq!(real.iter().filter(|r| **r).count(), 4);
        assert!(real[..4].iter().all(|r| *r) && real[4..].iter().all(|r| !*r));
    }

    #[test]
    fn order_is_kept_and_missing_p_values_are_never_real() {
        let p = [Some(0.9), None, Some(0.0001), Some(f64::NAN), Some(0.004)];
        assert_eq!(
            benjamini_hochberg(&p, 0.05),
            vec![false, false, true, false, true]
        );
        assert!(benjamini_hochberg(&[None, None], 0.05).iter().all(|r| !r));
        assert!(benjamini_hochberg(&some(&[0.0]), 0.0).iter().all(|r| !r));
    }

    #[test]
    fn under_the_null_it_rarely_calls_anything_while_raw_p_calls_five_percent() {
        // 200 comparisons of 100 null rows (uniform p): raw p < 0.05 calls ~5 rows each;
        // BH at q = 0.05 calls any row in at most ~5% of the comparisons.
        let mut rng = SmallRng::seed_from_u64(7);
        let (mut raw, mut with_any) = (0usize, 0usize);
        for _ in 0..200 {
            let p: Vec<f64> = (0..100).map(|_| rng.gen::<f64>()).collect();
            raw += p.iter().filter(|p| **p < 0.05).count();
            with_any += benjamini_hochberg(&some(&p), 0.05).iter().any(|r| *r) as usize;
        }
        assert!(raw > 200 * 3, "raw p-values called {raw}");
        assert!(
            with_any <= 200 / 10,
            "BH called something in {with_any} of 200"
        );
    }

    #[test]
    fn real_effects_are_kept_among_many_nulls() {
        let mut p: Vec<f64> = (1..=95).map(|i| i as f64 / 96.0).collect();
        p.extend([1e-6, 2e-6, 1e-5, 1e-4, 2e-4]);
        let real = benjamini_hochberg(&some(&p), 0.05);
        assert!(real[95..].iter().all(|r| *r));
        assert!(real[..95].iter().all(|r| !*r));
    }
}
