//! Numbers with their units: byte sizes and durations in the scale a reader expects,
//! counts with their noun ("1 row", "2 rows"): the one place a count's noun is made plural,
//! and figures rounded to the digits they mean (`Digits`).

/// 32768 -> "32 KiB", 503316480 -> "480 MiB".
pub fn bytes(n: u64) -> String {
    const UNITS: &[&str] = &["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// A value with significant digits fitting its size (3 significant digits, at least).
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e15 {
        // Beyond what any measurement here reaches (an imported or hand-edited figure):
        // four significant digits, not a row of hundreds of digits.
        format!("{v:.3e}")
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 1e-3 || a == 0.0 {
        format!("{v:.3}")
    } else {
        // A small figure is never shown as 0.000.
        format!("{v:.2e}")
    }
}

/// A duration given in ns, in the unit that keeps 3-4 significant digits: 850 -> "850.0 ns",
/// 52_300 -> "52.30 µs", 2.5e9 -> "2.500 s".
pub fn duration_ns(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a >= 1e9 {
        (ns / 1e9, "s")
    } else if a >= 1e6 {
        (ns / 1e6, "ms")
    } else if a >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", num(v))
}

/// A rate in MB/s (10^6 B/s) in MB/s or GB/s, 3-4 significant digits.
pub fn mb_per_s(v: f64) -> String {
    if v.abs() >= 1e3 {
        format!("{} GB/s", num(v / 1e3))
    } else {
        format!("{} MB/s", num(v))
    }
}

/// A share (0..1) as a percentage.
pub fn pct(v: f64) -> String {
    if v < 0.0001 {
        format!("{:.4}%", v * 100.0)
    } else {
        format!("{:.2}%", v * 100.0)
    }
}

/// `noun` as a count of `n` needs it: "row" for one, "rows" for any other count (0 too).
/// The plural follows English spelling: "copy" -> "copies", "process" -> "processes",
/// "CPU" -> "CPUs". For a noun after "X of Y" give Y ("1 of 3 rows").
pub fn noun(n: impl TryInto<u64>, noun: &str) -> String {
    if n.try_into().ok() == Some(1) {
        return noun.to_string();
    }
    let consonant_y = noun.ends_with('y')
        && !noun[..noun.len() - 1].ends_with(|c: char| "aeiouAEIOU".contains(c));
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "ch", "sh"].iter().any(|e| noun.ends_with(e)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// A count with its noun: count(1, "row") is "1 row", count(2, "row") "2 rows".
pub fn count<N: TryInto<u64> + std::fmt::Display + Copy>(n: N, what: &str) -> String {
    format!("{n} {}", noun(n, what))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_pick_the_right_unit() {
        assert_eq!(bytes(32 * 1024), "32 KiB");
        assert_eq!(bytes(491_520 * 1024), "480 MiB");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(12), "12 B");
    }

    #[test]
    fn durations_and_rates_pick_their_unit() {
        assert_eq!(duration_ns(850.0), "850.0 ns");
        assert_eq!(duration_ns(52_300.0), "52.30 µs");
        assert_eq!(duration_ns(2_500.0), "2.50 µs");
        assert_eq!(duration_ns(12_345_678.0), "12.35 ms");
        assert_eq!(duration_ns(2.5e9), "2.50 s");
        assert_eq!(mb_per_s(12_345.0), "12.35 GB/s");
        assert_eq!(mb_per_s(950.0), "950.0 MB/s");
    }

    #[test]
    fn a_count_of_one_is_singular_and_any_other_plural() {
        assert_eq!(count(1, "row"), "1 row");
        assert_eq!(count(2, "row"), "2 rows");
        assert_eq!(count(0, "row"), "0 rows");
        assert_eq!(count(1, "CPU"), "1 CPU");
        assert_eq!(count(4, "CPU"), "4 CPUs");
        assert_eq!(count(3, "copy"), "3 copies");
        assert_eq!(count(1, "copy"), "1 copy");
        assert_eq!(count(2, "process"), "2 processes");
        assert_eq!(count(2, "day"), "2 days");
        assert_eq!(noun(1, "round"), "round");
        assert_eq!(noun(5, "round"), "rounds");
        // Any integer type, a negative count plural.
        assert_eq!(count(1u32, "die"), "1 die");
        assert_eq!(count(2u64, "die"), "2 dies");
        assert_eq!(count(-1i64, "step"), "-1 steps");
    }

    #[test]
    fn numbers_keep_three_digits() {
        assert_eq!(num(21.456), "21.46");
        assert_eq!(num(0.1234), "0.123");
        assert_eq!(num(1234.5), "1234");
        assert_eq!(num(0.0), "0.000");
    }

    #[test]
    fn figures_out_of_any_measured_range_stay_short_and_never_read_as_zero() {
        assert_eq!(num(1e300), "1.000e300");
        assert_eq!(num(-2.5e20), "-2.500e20");
        assert_eq!(num(1e-300), "1.00e-300");
        assert_eq!(num(0.0004), "4.00e-4");
        assert_eq!(num(999_999_999_999_999.0), "999999999999999");
    }

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
