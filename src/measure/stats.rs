//! Statistics reported for every result (trust contract rule 4): median, a distribution-free
//! 95% confidence interval of the median (binomial order statistics), CV, n, outliers; and
//! the Mann-Whitney rank test used to decide whether two results really differ.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// The statistics of a result. A document writes each to [`DIGITS`] significant digits:
/// its check recomputes them from the samples to 1e-9 (relative), and the last digits of a
/// mean or a spread (`45.043065299999995`) say nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    #[serde(serialize_with = "written")]
    pub median: f64,
    #[serde(serialize_with = "written")]
    pub ci95_low: f64,
    #[serde(serialize_with = "written")]
    pub ci95_high: f64,
    /// The coverage actually achieved by [ci95_low, ci95_high]: order statistics give
    /// discrete levels; with fewer than 6 samples it is below 0.95 (min..max).
    #[serde(serialize_with = "written")]
    pub ci_level: f64,
    /// Coefficient of variation: standard deviation / mean.
    #[serde(serialize_with = "written")]
    pub cv: f64,
    pub n: usize,
    #[serde(serialize_with = "written")]
    pub mean: f64,
    #[serde(serialize_with = "written")]
    pub min: f64,
    #[serde(serialize_with = "written")]
    pub max: f64,
    /// Samples outside Tukey's fences (1.5 IQR beyond the quartiles). Kept, only counted.
    pub outliers: usize,
}

/// Significant digits a document writes a statistic to.
pub const DIGITS: i32 = 10;

fn written<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(crate::units::Digits::Significant(DIGITS).round(*x))
}

fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Order-statistic ranks (1-based) l such that [x(l), x(n+1-l)] covers the median with
/// probability >= 0.95, and that probability. Falls back to (1, level of min..max).
pub fn median_ci_rank(n: usize) -> (usize, f64) {
    let b = Binomial::new(0.5, n as u64).expect("valid binomial");
    let mut best = (1, 1.0 - 2.0 * b.cdf(0));
    for l in 1..=n / 2 {
        let level = 1.0 - 2.0 * b.cdf(l as u64 - 1);
        if level >= 0.95 {
            best = (l, level);
        } else {
            break;
        }
    }
    best
}

impl Stats {
    /// Statistics of a non-empty sample set; None when empty.
    /// Standard error of ln(median) from the samples alone: the median CI's width in logs
    /// over the normal quantile of the CI's level; 0 when it cannot be read.
    pub fn log_se(&self) -> f64 {
        if !(self.ci95_low > 0.0
            && self.ci95_high >= self.ci95_low
            && self.ci_level > 0.0
            && self.ci_level < 1.0)
        {
            return 0.0;
        }
        let z = statrs::distribution::ContinuousCDF::inverse_cdf(
            &statrs::distribution::Normal::new(0.0, 1.0).expect("standard normal"),
            0.5 + self.ci_level / 2.0,
        );
        (self.ci95_high.ln() - self.ci95_low.ln()) / (2.0 * z)
    }

    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let v = sorted(samples);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let (l, level) = median_ci_rank(n);
        let (q1, q3) = (quantile(&v, 0.25), quantile(&v, 0.75));
        let iqr = q3 - q1;
        let outliers = v
            .iter()
            .filter(|x| **x < q1 - 1.5 * iqr || **x > q3 + 1.5 * iqr)
            .count();
        Some(Stats {
            median: quantile(&v, 0.5),
            ci95_low: v[l - 1],
            ci95_high: v[n - l],
            ci_level: level,
            cv: if mean != 0.0 {
                var.sqrt() / mean.abs()
            } else {
                0.0
            },
            n,
            mean,
            min: v[0],
            max: v[n - 1],
            outliers,
        })
    }
}

/// Two-sided Mann-Whitney U test (normal approximation with tie and continuity
/// correction). Returns the p-value; None when either side has fewer than 3 samples.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 < 3 || n2 < 3 {
        return None;
    }
    let mut all: Vec<(f64, usize)> = a
        .iter()
        .map(|x| (*x, 0))
        .chain(b.iter().map(|x| (*x, 1)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut ranks = vec![0.0; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for rank in ranks.iter_mut().take(j + 1).skip(i) {
            *rank = r;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let r1: f64 = all
        .iter()
        .zip(&ranks)
        .filter(|((_, g), _)| *g == 0)
        .map(|(_, r)| r)
        .sum();
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let mu = n1f * n2f / 2.0;
    let sigma = (n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)))).sqrt();
    if sigma == 0.0 {
        return Some(1.0);
    }
    let z = ((u1 - mu).abs() - 0.5).max(0.0) / sigma;
    let normal = Normal::new(0.0, 1.0).expect("standard normal");
    Some((2.0 * (1.0 - normal.cdf(z))).min(1.0))
}

/// A standard normal draw (Box-Muller), for the simulations of the tests.
#[cfg(test)]
pub fn standard_normal(rng: &mut impl rand::Rng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen::<f64>().max(1e-300), rng.gen());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn median_of_odd_and_even_sets() {
        assert_eq!(Stats::of(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(Stats::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert!(Stats::of(&[]).is_none());
        assert!(Stats::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn ci_ranks_match_the_binomial_table() {
        // Known distribution-free ranks: n=10 -> x(2)..x(9) (97.9%), n=20 -> x(6)..x(15) (95.9%).
        assert_eq!(median_ci_rank(10).0, 2);
        assert!((median_ci_rank(10).1 - 0.9785).abs() < 1e-3);
        assert_eq!(median_ci_rank(20).0, 6);
        // n=5: no pair reaches 95%; min..max covers 93.75%.
        let (l, level) = median_ci_rank(5);
        assert_eq!(l, 1);
        assert!((level - 0.9375).abs() < 1e-9);
    }

    #[test]
    fn cv_and_outliers() {
        let s = Stats::of(&[10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 100.0]).unwrap();
        assert_eq!(s.outliers, 1);
        assert_eq!(s.median, 10.0);
        let flat = Stats::of(&[5.0; 6]).unwrap();
        assert_eq!(flat.cv, 0.0);
    }

    #[test]
    fn rank_test_separates_shifted_sets_and_not_equal_ones() {
        let a: Vec<f64> = (0..10).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = (0..10).map(|i| 200.0 + i as f64).collect();
        assert!(mann_whitney_p(&a, &b).unwrap() < 0.001);
        let c: Vec<f64> = (0..10).map(|i| 100.5 + i as f64).collect();
        assert!(mann_whitney_p(&a, &c).unwrap() > 0.5);
        assert!(mann_whitney_p(&a[..2], &b).is_none());
    }

    proptest! {
        #[test]
        fn ci_brackets_the_median(v in proptest::collection::vec(0.0f64..1e6, 1..60)) {
            let s = Stats::of(&v).unwrap();
            prop_assert!(s.ci95_low <= s.median && s.median <= s.ci95_high);
            prop_assert!(s.min <= s.ci95_low && s.ci95_high <= s.max);
        }
    }
}

/// Pearson correlation of two equally long series; None when either is constant or they
/// have fewer than 3 points.
pub fn correlation(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 3 {
        return None;
    }
    let (mx, my) = (
        x[..n].iter().sum::<f64>() / n as f64,
        y[..n].iter().sum::<f64>() / n as f64,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod correlation_tests {
    use super::correlation;

    #[test]
    fn perfect_inverse_and_undefined_correlations() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((correlation(&x, &[2.0, 4.0, 6.0, 8.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((correlation(&x, &[8.0, 6.0, 4.0, 2.0]).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(correlation(&x, &[5.0; 4]), None);
        assert_eq!(correlation(&x[..2], &x[..2]), None);
    }
}

/// The sample standard deviation of the logarithms of the positive, finite `values`; None
/// with fewer than `min` of them.
pub fn log_sd(values: &[f64], min: usize) -> Option<f64> {
    let v: Vec<f64> = values
        .iter()
        .filter(|m| m.is_finite() && **m > 0.0)
        .map(|m| m.ln())
        .collect();
    if v.len() < min.max(2) {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Some((v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt())
}
