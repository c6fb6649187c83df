//! The one search of the prediction: bisection of an interval on a monotone predicate,
//! stopped when the interval is as narrow as its caller needs (a p99 to 1e-7 of itself, a
//! quota to 1e-5 CPU) rather than after a fixed count of halvings. The searches nest (a
//! quota's search asks for the highest rate held, which asks for a p99, which asks for the
//! queue's quantile), so halvings past what a figure means multiply: 60 where 24 do.

/// Narrows `[lo, hi]` while `goes_up(mid)` says the answer lies above `mid` (then `lo` moves
/// up) or not (`hi` moves down), until `hi - lo` is at most `tol(hi)`, or after 200 halvings.
/// Returns the final `(lo, hi)`.
pub fn bisect(
    mut lo: f64,
    mut hi: f64,
    tol: impl Fn(f64) -> f64,
    mut goes_up: impl FnMut(f64) -> bool,
) -> (f64, f64) {
    for _ in 0..200 {
        if hi - lo <= tol(hi) {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if goes_up(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo, hi)
}

/// A tolerance of `r` of the upper end (a figure to `r` of itself).
pub fn relative(r: f64) -> impl Fn(f64) -> f64 {
    move |hi: f64| r * hi.abs()
}

/// A tolerance of `a` in the figure's own unit.
pub fn absolute(a: f64) -> impl Fn(f64) -> f64 {
    move |_| a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_is_found_to_the_tolerance_asked_in_few_halvings() {
        let mut asked = 0;
        let (lo, hi) = bisect(0.0, 4.0, relative(1e-7), |x| {
            asked += 1;
            x * x < 2.0
        });
        assert!(lo <= 2f64.sqrt() && 2f64.sqrt() <= hi, "{lo} {hi}");
        assert!(hi - lo <= 1e-7 * hi);
        // log2(4 / (1e-7 * 1.41)) is 25: not the 60 of a fixed count.
        assert!((24..=26).contains(&asked), "{asked}");
        let (lo, hi) = bisect(-6.0, 6.0, absolute(1e-3), |x| x < -1.0);
        assert!(lo <= -1.0 && -1.0 <= hi && hi - lo <= 1e-3, "{lo} {hi}");
    }

    #[test]
    fn an_interval_already_narrow_is_left_as_it_is() {
        let (lo, hi) = bisect(1.0, 1.0, relative(1e-9), |_| panic!("asked"));
        assert_eq!((lo, hi), (1.0, 1.0));
    }
}
