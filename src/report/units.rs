//! Numbers with their units: byte sizes and durations in the scale a reader expects.

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
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
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
    fn numbers_keep_three_digits() {
        assert_eq!(num(21.456), "21.46");
        assert_eq!(num(0.1234), "0.123");
        assert_eq!(num(1234.5), "1234");
    }
}
