//! The test every verdict on a log ratio uses, in one place: two-sided p of a difference
//! against its standard error (t with its degrees of freedom, normal without), the minimum
//! detectable effect at α 0.05 and power 0.8, and Welch-Satterthwaite's degrees of freedom
//! for a difference of two estimates.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Two-sided error rate and power the MDE is stated at.
pub const ALPHA: f64 = 0.05;
pub const POWER: f64 = 0.80;

fn std_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("standard normal")
}

fn t(df: Option<f64>) -> Option<StudentsT> {
    df.filter(|d| d.is_finite() && *d > 0.0)
        .and_then(|d| StudentsT::new(0.0, 1.0, d).ok())
}

/// The quantiles (two-sided α, power) for `df` degrees of freedom (None: normal).
pub fn quantiles(df: Option<f64>) -> (f64, f64) {
    match t(df) {
        Some(t) => (t.inverse_cdf(1.0 - ALPHA / 2.0), t.inverse_cdf(POWER)),
        None => {
            let n = std_normal();
            (n.inverse_cdf(1.0 - ALPHA / 2.0), n.inverse_cdf(POWER))
        }
    }
}

/// The sum of `quantiles(df)`, which an MDE multiplies its standard error by; whole
/// degrees of freedom up to `TABLED` are read from a table made once (a plan asks for
/// them thousands of times).
pub fn quantile_sum(df: Option<f64>) -> f64 {
    const TABLED: usize = 512;
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let sum = |df: Option<f64>| {
        let (a, b) = quantiles(df);
        a + b
    };
    match df {
        Some(d) if d >= 1.0 && d.fract() == 0.0 && d as usize <= TABLED => {
            TABLE.get_or_init(|| (0..=TABLED).map(|d| sum(Some(d as f64))).collect())[d as usize]
        }
        _ => sum(df),
    }
}

/// The two-sided 95% quantile for `df` (None: normal).
pub fn two_sided(df: Option<f64>) -> f64 {
    quantiles(df).0
}

/// The MDE (in logs) of a difference whose standard error is `se` with `df`.
pub fn mde_log(se: f64, df: Option<f64>) -> f64 {
    quantile_sum(df) * se
}

/// The MDE (relative) of a row against an identical run, the one formula every MDE of a
/// row is: its log median's variance `var` (its rounds' se²) with `df` degrees of freedom
/// (None: normal), and `run`, a σ per run that only separate runs sample, on both sides of
/// the difference. `noise_model::row_mde` gives it a row's measured rounds, the run's
/// allocation its projection (`allocate::projected_mde`) and its floor (`allocate::
/// run_floor`: no rounds' error left).
pub fn relative_mde(var: f64, df: Option<f64>, run: f64) -> f64 {
    mde_log((2.0 * (var + run * run)).sqrt(), df).exp_m1()
}

/// Two-sided p of `d` against 0 with standard error `se` and `df` (None: normal); 1 when
/// it cannot be read.
pub fn p_value(d: f64, se: f64, df: Option<f64>) -> f64 {
    if !(se > 0.0 && d.is_finite()) {
        return 1.0;
    }
    let z = d.abs() / se;
    let tail = match t(df) {
        Some(t) => 1.0 - t.cdf(z),
        None => 1.0 - std_normal().cdf(z),
    };
    (2.0 * tail).clamp(0.0, 1.0)
}

/// Welch-Satterthwaite degrees of freedom of a sum of variances, each with its degrees of
/// freedom (None: known, infinite); None when every part is known.
pub fn welch_df(parts: &[(f64, Option<f64>)]) -> Option<f64> {
    let total: f64 = parts.iter().map(|(v, _)| v).sum();
    let denom: f64 = parts
        .iter()
        .filter_map(|(v, df)| df.map(|d| v * v / d.max(1.0)))
        .sum();
    if denom.is_nan() || denom <= 0.0 || total.is_nan() || total <= 0.0 {
        return None;
    }
    Some(total * total / denom)
}

/// The largest MDE said as a figure: ten times. Beyond it a row's rounds say only that it
/// cannot be told ("more than 10x"); the JSON keeps the number.
pub const MDE_WORDS_MAX: f64 = 9.0;

/// An MDE in words as a person reads it: "38%" below 100%, a factor ("2.4x") up to ten
/// times, "more than 10x" beyond (never "18837%").
pub fn mde_text(mde: f64) -> String {
    if mde < 0.995 {
        format!("{:.0}%", mde * 100.0)
    } else {
        mde_factor(mde)
    }
}

/// As [`mde_text`], to a tenth of a percent below 100% ("4.1%"): the MDEs a run aims at.
pub fn mde_text_fine(mde: f64) -> String {
    if mde < 0.9995 {
        format!("{:.1}%", mde * 100.0)
    } else {
        mde_factor(mde)
    }
}

fn mde_factor(mde: f64) -> String {
    if mde > MDE_WORDS_MAX || !mde.is_finite() {
        "more than 10x".into()
    } else {
        format!("{:.1}x", 1.0 + mde)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_gives_the_sum_of_dfs_for_equal_variances_and_the_smaller_for_one_dominant() {
        let df = welch_df(&[(1.0, Some(4.0)), (1.0, Some(4.0))]).unwrap();
        assert!((df - 8.0).abs() < 1e-9);
        let df = welch_df(&[(100.0, Some(4.0)), (0.01, Some(40.0))]).unwrap();
        assert!((df - 4.0).abs() < 0.01, "{df}");
        assert_eq!(welch_df(&[(1.0, None), (1.0, None)]), None);
    }

    #[test]
    fn p_and_mde_follow_the_quantiles() {
        assert!((p_value(1.96, 1.0, None) - 0.05).abs() < 0.001);
        assert!((p_value(2.776, 1.0, Some(4.0)) - 0.05).abs() < 0.001);
        assert_eq!(p_value(f64::NAN, 1.0, None), 1.0);
        assert!((mde_log(1.0, None) - 2.8016).abs() < 0.001);
    }
}
