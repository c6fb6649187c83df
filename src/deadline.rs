//! The run's time budget as a ceiling (`run --budget`): one deadline for the whole process,
//! on CLOCK_MONOTONIC (system-wide, so a child process given the same instant through
//! [`ENV`] keeps the same deadline). The session sets it when a measuring command starts
//! measuring; benchmarks check [`expired`] where they check `interrupt::requested` (between
//! results) and inside long loops of batches, and end their round early with what they
//! finished, so a round on a starved CPU (a cgroup given a fraction of a percent of a CPU)
//! cannot hold the run past its budget. Unlike Ctrl-C, an expired deadline is not an
//! interruption: the run is stored whole, its rows saying what the budget left them.

use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that hands the deadline (CLOCK_MONOTONIC ns) to a child
/// process of truebench (a round measured in a fresh process).
pub const ENV: &str = "TRUEBENCH_DEADLINE_NS";

/// The deadline, CLOCK_MONOTONIC ns; 0 for none.
static AT_NS: AtomicU64 = AtomicU64::new(0);

/// CLOCK_MONOTONIC now, ns.
fn now_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// When this process started, as an instant of `Instant`'s clock: its start since boot
/// (`/proc/self/stat`, in clock ticks) against CLOCK_BOOTTIME now. What a budget counts
/// from: the loader, the arguments, opening the database, all before `main` sees the
/// command, take seconds in a cgroup given a fraction of a CPU. None where unreadable.
pub fn process_start() -> Option<std::time::Instant> {
    use procfs_core::FromRead;
    let stat = procfs_core::process::Stat::from_file("/proc/self/stat").ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz <= 0 {
        return None;
    }
    let booted = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME).ok()?;
    let now_s = booted.tv_sec() as f64 + booted.tv_nsec() as f64 * 1e-9;
    let age_s = now_s - stat.starttime as f64 / hz as f64;
    // An age below 0 or above a day is a clock that is not what this expects.
    if !(0.0..86_400.0).contains(&age_s) {
        return None;
    }
    std::time::Instant::now().checked_sub(std::time::Duration::from_secs_f64(age_s))
}

/// Set the deadline `budget_s` seconds from now (replacing any earlier one).
pub fn set_in(budget_s: f64) {
    let ns = (budget_s.max(0.0) * 1e9) as u64;
    set_at(now_ns().saturating_add(ns).max(1));
}

/// Set the deadline at an instant of CLOCK_MONOTONIC (ns); 0 clears it.
pub fn set_at(at_ns: u64) {
    AT_NS.store(at_ns, Ordering::Relaxed);
}

/// Clear the deadline.
pub fn clear() {
    set_at(0);
}

/// The deadline (CLOCK_MONOTONIC ns), if one is set.
pub fn at_ns() -> Option<u64> {
    match AT_NS.load(Ordering::Relaxed) {
        0 => None,
        at => Some(at),
    }
}

/// Take the deadline a parent process handed over in [`ENV`] (a malformed value is no
/// deadline: the parent still ends the child at its own).
pub fn inherit() {
    if let Some(at) = std::env::var(ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        set_at(at);
    }
}

/// Whether the deadline has passed.
pub fn expired() -> bool {
    at_ns().is_some_and(|at| now_ns() >= at)
}

/// Whether the deadline passed at least `by_s` seconds ago (false without one).
pub fn overdue(by_s: f64) -> bool {
    at_ns().is_some_and(|at| now_ns() >= at.saturating_add((by_s.max(0.0) * 1e9) as u64))
}

/// Seconds left before the deadline (0 once it passed); None without one.
pub fn remaining_s() -> Option<f64> {
    at_ns().map(|at| at.saturating_sub(now_ns()) as f64 / 1e9)
}

/// Whether a piece of work expected to take `expected_s` seconds would end past the
/// deadline (false without one).
pub fn would_overrun(expected_s: f64) -> bool {
    remaining_s().is_some_and(|left| expected_s > left)
}

/// Whether to stop between results: Ctrl-C, or the deadline passed.
pub fn stop_requested() -> bool {
    crate::interrupt::requested() || expired()
}

/// What a benchmark returns once it stopped between results ([`stop_requested`]):
/// `Err(Interrupted)` at Ctrl-C (the run ends, marked interrupted); `Ok` at the deadline
/// (the round ends with the results it finished, and the run goes on to store them).
pub fn stopped() -> anyhow::Result<()> {
    if crate::interrupt::requested() {
        Err(crate::error::Interrupted.into())
    } else {
        Ok(())
    }
}

/// Run `f` under a deadline at most `cap_s` seconds from now (the run's own when that is
/// sooner), the run's deadline restored after: one round may not take the whole budget.
pub fn within<T>(cap_s: f64, f: impl FnOnce() -> T) -> T {
    let outer = at_ns();
    let cap = now_ns()
        .saturating_add((cap_s.max(0.0) * 1e9) as u64)
        .max(1);
    set_at(outer.map_or(cap, |o| o.min(cap)));
    let out = f();
    set_at(outer.unwrap_or(0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_started_before_this_test_and_not_long_ago() {
        let test_began = std::time::Instant::now();
        let p = process_start().expect("/proc/self/stat and CLOCK_BOOTTIME are readable here");
        // The start is known to a clock tick (10 ms at 100 Hz).
        assert!(p <= test_began + std::time::Duration::from_millis(20));
        assert!(
            p.elapsed() < std::time::Duration::from_secs(3600),
            "{:?}",
            p.elapsed()
        );
    }

    // One test: the deadline is process-wide state.
    #[test]
    fn a_deadline_expires_once_passed_and_clears() {
        clear();
        assert!(!expired());
        assert_eq!(remaining_s(), None);
        assert!(!would_overrun(1e9));
        set_in(3600.0);
        assert!(!expired());
        let left = remaining_s().unwrap();
        assert!(left > 3590.0 && left <= 3600.0, "{left}");
        assert!(would_overrun(4000.0));
        assert!(!would_overrun(10.0));
        set_at(1);
        assert!(expired());
        assert_eq!(remaining_s(), Some(0.0));
        assert!(
            stop_requested() && stopped().is_ok(),
            "a deadline is no interruption"
        );
        assert!(overdue(0.0) && !overdue(1e9));
        // A round's cap: sooner than the run's deadline, restored after.
        set_in(3600.0);
        let run = at_ns();
        let inner = within(10.0, || remaining_s().unwrap());
        assert!(inner > 9.0 && inner <= 10.0, "{inner}");
        assert_eq!(at_ns(), run);
        // Never later than the run's own.
        set_in(1.0);
        let inner = within(100.0, || remaining_s().unwrap());
        assert!(inner <= 1.0, "{inner}");
        clear();
        assert!(within(5.0, at_ns).is_some());
        assert_eq!(at_ns(), None, "no deadline before, none after");
        std::env::set_var(ENV, "not a number");
        clear();
        inherit();
        assert_eq!(at_ns(), None, "a malformed value is no deadline");
        std::env::set_var(ENV, "123");
        inherit();
        assert_eq!(at_ns(), Some(123));
        std::env::remove_var(ENV);
        clear();
    }
}
