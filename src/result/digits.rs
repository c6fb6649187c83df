//! The digits a document writes its figures to: a measured sample to 9 significant digits
//! (a batch of some milliseconds timed to the nanosecond resolves about 7), a round's
//! median to 6, a share or a spread to 4, a time in the run to 10 ms. The 17
//! digits an f64 prints made most of a document's size and said nothing more.

/// Significant digits of a sample (`BenchResult::new` rounds them before computing the
/// statistics, so the statistics are those of the samples as written).
pub const SAMPLE: i32 = 9;
/// Significant digits of a round's median, far below any spread between rounds (the
/// outlier test assumes at least 0.5%).
pub const MEDIAN: i32 = 6;
/// Significant digits of a share, a disturbance's figure, a spread or a clock's cost.
pub const SHARE: i32 = 4;

/// A round's start in the run, seconds: to 10 ms.
pub const ROUND_START: Digits = Digits::Decimals(2);

/// How a figure is written: as it is, to a number of decimals, or to a number of
/// significant digits.
#[derive(Debug, Clone, Copy)]
pub enum Digits {
    Exact,
    Decimals(i32),
    Significant(i32),
}

impl Digits {
    /// `x` rounded to these digits (the nearest f64 to the rounded decimal, which prints
    /// as that decimal); a non-finite or zero `x` as it is.
    pub fn round(self, x: f64) -> f64 {
        if !x.is_finite() || x == 0.0 {
            return x;
        }
        let places = match self {
            Digits::Exact => return x,
            Digits::Decimals(d) => d,
            Digits::Significant(n) => n - 1 - x.abs().log10().floor() as i32,
        };
        // Powers of ten as exact as f64 holds them: dividing for negative places.
        if places >= 0 {
            let s = 10f64.powi(places);
            let r = (x * s).round() / s;
            if r.is_finite() {
                r
            } else {
                x
            }
        } else {
            let s = 10f64.powi(-places);
            (x / s).round() * s
        }
    }

    /// How far a figure written to these digits may lie from the one measured, relative
    /// to it: half a unit of its last digit, a leading 1 (1.00000x) the widest. Zero when
    /// written as it is or to decimals (no relative bound).
    pub fn slack(self) -> f64 {
        match self {
            Digits::Significant(n) => 0.5 * 10f64.powi(1 - n),
            _ => 0.0,
        }
    }
}

/// Serialize an f64 to [`SHARE`] significant digits (`#[serde(serialize_with)]`).
pub fn share<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(Digits::Significant(SHARE).round(*x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_round_as_said() {
        assert_eq!(Digits::Significant(6).round(51406.10778859527), 51406.1);
        assert_eq!(Digits::Significant(6).round(0.0012345678), 0.00123457);
        assert_eq!(Digits::Significant(2).round(123456.0), 120000.0);
        assert_eq!(
            Digits::Significant(9).round(2.0125764994897264e-5),
            2.01257650e-5
        );
        assert_eq!(Digits::Decimals(3).round(14.988703469), 14.989);
        assert_eq!(Digits::Exact.round(1.23456789), 1.23456789);
        assert_eq!(Digits::Significant(4).round(0.0), 0.0);
        assert!(Digits::Significant(4).round(f64::NAN).is_nan());
        let x = 1.0000049;
        let r = Digits::Significant(6).round(x);
        assert!((r / x - 1.0).abs() <= Digits::Significant(6).slack());
    }
}
