//! The digits a document writes its figures to: a measured sample to 9 significant digits
//! (a batch of some milliseconds timed to the nanosecond resolves about 7), a round's
//! median to 6, a share or a spread to 4, a round's start in the run to 0.1 s (and the
//! statistics to 10, `measure::stats::DIGITS`). The 17 digits an f64 prints made most of a
//! document's size and said nothing more.

pub use crate::units::Digits;

/// Significant digits of a sample (`BenchResult::new` rounds them before computing the
/// statistics, so the statistics are those of the samples as written).
pub const SAMPLE: i32 = 9;
/// Significant digits of a round's median, far below any spread between rounds (the
/// outlier test assumes at least 0.5%).
pub const MEDIAN: i32 = 6;
/// Significant digits of a share, a disturbance's figure, a spread or a clock's cost.
pub const SHARE: i32 = 4;

/// A round's start in the run, seconds: to 0.1 s (the words of a round say "at 7.5 s").
pub const ROUND_START: Digits = Digits::Decimals(1);

/// Serialize an f64 to [`SHARE`] significant digits (`#[serde(serialize_with)]`).
pub fn share<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(Digits::Significant(SHARE).round(*x))
}
