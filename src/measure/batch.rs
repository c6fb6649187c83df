//! Batch timing (trust contract rule 1): time many iterations per interval, sized so each
//! interval lasts at least 10^4 times the cost of reading the clock, and record the
//! timer's share of the measured time.

use super::clocks::{now_ns, Clock, Path};

/// Each timed interval lasts at least this many clock-read costs.
pub const MIN_INTERVAL_IN_CLOCK_READS: f64 = 1e4;

/// The cost of one CLOCK_MONOTONIC read in ns, measured over batches of 4,000 reads, median
/// of 5.
pub fn timing_clock_cost_ns() -> f64 {
    let mut v: Vec<f64> = (0..5)
        .map(|_| {
            // 4,000 reads: 100 µs at 25 ns a read, far above the clock's resolution.
            let n = 4_000;
            let t0 = now_ns();
            Clock::Monotonic.read_n(Path::Vdso, n);
            (now_ns() - t0) as f64 / n as f64
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v[2]
}

/// One timed batch: the wall time of `iterations` runs of `work`.
#[derive(Debug, Clone, Copy)]
pub struct Batch {
    pub iterations: u64,
    pub elapsed_ns: u64,
}

impl Batch {
    pub fn ns_per_iteration(&self) -> f64 {
        self.elapsed_ns as f64 / self.iterations as f64
    }
}

/// Time one batch of `iterations`; `work(n)` must do n iterations.
pub fn time_batch<F: FnMut(u64) + ?Sized>(work: &mut F, iterations: u64) -> Batch {
    let t0 = now_ns();
    work(iterations);
    let t1 = now_ns();
    Batch {
        iterations,
        elapsed_ns: (t1 - t0).max(1),
    }
}

/// How long calibration may take at most: this, or 200 minimum batches if longer.
pub const CALIBRATION_LIMIT_NS: f64 = 5e9;

/// Find an iteration count whose batch lasts at least `min_ns`: grow by 4x until a batch
/// is long enough to extrapolate from, then verify that the faster of two batches of the
/// chosen count reaches `min_ns` (a preempted calibration batch would otherwise look long
/// and leave the measured batches short), growing again if it does not.
///
/// Bounded: it stops at Ctrl-C/SIGTERM, at the run's deadline (`deadline`), and after [`CALIBRATION_LIMIT_NS`] (200 minimum
/// batches when longer), returning the largest count tried, and a count never grows past
/// what the time left allows: work whose time does not grow with the count (an emulator,
/// a clock that does not move) cannot keep it spinning. The batches measured with a
/// count that fell short show it in their quality (the timer's share).
pub fn calibrate<F: FnMut(u64) + ?Sized>(work: &mut F, min_ns: f64) -> u64 {
    let start = now_ns();
    let limit = CALIBRATION_LIMIT_NS.max(200.0 * min_ns);
    let left = || limit - (now_ns() - start) as f64;
    let mut n = 1u64;
    loop {
        if crate::deadline::stop_requested() || left() <= 0.0 {
            return n;
        }
        let b = time_batch(work, n);
        let t = b.elapsed_ns as f64;
        if t >= min_ns / 16.0 {
            let target = (n as f64 * min_ns / t * 1.2).ceil() as u64;
            n = target.max(n);
            let fastest = time_batch(work, n)
                .elapsed_ns
                .min(time_batch(work, n).elapsed_ns);
            if fastest as f64 >= min_ns {
                return n;
            }
            let grown = (n as f64 * min_ns / fastest as f64 * 1.2).ceil() as u64;
            // Two batches of the grown count must fit in the time left.
            if fastest as f64 * (grown as f64 / n as f64) * 2.0 > left() {
                return n;
            }
            n = grown;
            continue;
        }
        // A batch 4x longer must fit in the time left; u64::MAX iterations never do.
        if t * 4.0 > left() || n >= u64::MAX / 4 {
            return n;
        }
        n *= 4;
    }
}

/// The smallest interval the trust contract allows, given the clock cost, and at least `floor_ns`.
pub fn min_interval_ns(clock_cost_ns: f64, floor_ns: f64) -> f64 {
    (clock_cost_ns * MIN_INTERVAL_IN_CLOCK_READS).max(floor_ns)
}

/// The timer's share of a batch: the two clock reads around it over its duration.
pub fn timer_share(clock_cost_ns: f64, batches: &[Batch]) -> f64 {
    let total: u64 = batches.iter().map(|b| b.elapsed_ns).sum();
    if total == 0 {
        return 0.0;
    }
    clock_cost_ns * 2.0 * batches.len() as f64 / total as f64
}

/// Samples of the cost of one read of `clock` through `path`, in ns, each timed as one batch
/// on CLOCK_MONOTONIC lasting at least `min_interval_ns`. Returns the batches: fewer than
/// `samples` when Ctrl-C arrived or the run's deadline passed meanwhile.
pub fn cost_batches(clock: Clock, path: Path, samples: usize, min_interval_ns: f64) -> Vec<Batch> {
    let mut work = |n: u64| {
        clock.read_n(path, n);
    };
    work(1000); // warm up: fault in the vDSO page, settle the branch predictors
    let n = calibrate(&mut work, min_interval_ns);
    // Stops early (fewer batches) at Ctrl-C or the deadline; the caller drops the result.
    (0..samples)
        .map_while(|_| (!crate::deadline::stop_requested()).then(|| time_batch(&mut work, n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_reaches_the_minimum_interval() {
        let mut work = |n: u64| {
            let mut x = 0u64;
            for i in 0..n {
                x = std::hint::black_box(x.wrapping_add(i));
            }
        };
        let n = calibrate(&mut work, 200_000.0);
        let b = time_batch(&mut work, n);
        // Timing noise can shorten a batch; a tenth of the target would mean no calibration.
        assert!(
            b.elapsed_ns as f64 > 20_000.0,
            "batch of {n} lasted {} ns",
            b.elapsed_ns
        );
    }

    #[test]
    fn calibration_of_work_that_takes_no_time_ends() {
        // Work whose time does not grow with the count (as a read that does nothing, or
        // an emulator's clock that does not move) must not spin until u64 overflows.
        let mut nothing = |_n: u64| {};
        let t0 = now_ns();
        let n = calibrate(&mut nothing, 1e6);
        let took_s = (now_ns() - t0) as f64 / 1e9;
        assert!(n >= 1, "{n}");
        assert!(took_s < CALIBRATION_LIMIT_NS / 1e9 + 5.0, "{took_s} s");
    }

    #[test]
    fn timer_share_counts_two_reads_per_batch() {
        let b = [Batch {
            iterations: 1,
            elapsed_ns: 1_000_000,
        }];
        assert!((timer_share(50.0, &b) - 1e-4).abs() < 1e-12);
    }

    #[test]
    fn min_interval_is_ten_thousand_reads() {
        assert_eq!(min_interval_ns(20.0, 1.0), 200_000.0);
        assert_eq!(min_interval_ns(20.0, 1e6), 1e6);
    }
}
