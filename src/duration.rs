//! Durations as users write them (`5ms`, `800us`, `800µs`, `0.5s`): the one parser behind
//! every flag and spec that takes a time (`--step-duration`, `--p99`, `--quota-period`,
//! `cap:Q/W@PERIOD`, `record --interval`). Each caller says which unit a bare number is in
//! (or that a unit is required) and keeps its own range and wording.

/// The unit a bare number is read in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bare {
    /// A unit is required: a bare number is refused.
    Refused,
    Micros,
    Seconds,
}

/// The duration in µs, or None when `s` is not a number with an optional `s`, `ms`, `us`
/// or `µs` suffix (or has no unit where one is required). Not range-checked: NaN and
/// infinities pass through for the caller's range to refuse.
pub fn micros(s: &str, bare: Bare) -> Option<f64> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("us").or_else(|| t.strip_suffix("µs")) {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e6)
    } else {
        match bare {
            Bare::Refused => return None,
            Bare::Micros => (t, 1.0),
            Bare::Seconds => (t, 1e6),
        }
    };
    let v: f64 = num.trim().parse().ok()?;
    Some(v * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_bare_numbers() {
        assert_eq!(micros("5ms", Bare::Refused), Some(5000.0));
        assert_eq!(micros(" 2500us ", Bare::Refused), Some(2500.0));
        assert_eq!(micros("2500µs", Bare::Refused), Some(2500.0));
        assert_eq!(micros("0.5s", Bare::Refused), Some(500_000.0));
        assert_eq!(micros("250", Bare::Refused), None);
        assert_eq!(micros("250", Bare::Micros), Some(250.0));
        assert_eq!(micros("3", Bare::Seconds), Some(3e6));
        assert_eq!(micros("500ms", Bare::Seconds), Some(500_000.0));
    }

    #[test]
    fn what_is_not_a_duration() {
        for s in ["", "ms", "fast", "5 m", "5min", "1e", "s5"] {
            assert_eq!(micros(s, Bare::Seconds), None, "{s}");
        }
        assert!(micros("NaN", Bare::Seconds).unwrap().is_nan());
    }
}
