//! How long the calling thread sat runnable without a CPU while it did a piece of work: its
//! scheduler run delay (`/proc/thread-self/schedstat`, second field: ns spent on a run queue
//! waiting) over the work's wall time. A thread that wants a CPU all along and waits half of
//! the time got half a CPU. Inside a guest this is the guest's own scheduler: tasks of this
//! machine, and the weight of this cgroup against theirs (a group of the lowest `cpu.shares`
//! beside busy neighbours waits almost all the time); the hypervisor's steal is not in it
//! (the virtual CPU stops, the thread is still "running"), so the two are told apart.

use procfs_core::process::Schedstat;
use procfs_core::FromRead;

/// The calling thread's cumulative run delay, ns; None where schedstat is unreadable (a
/// kernel without CONFIG_SCHEDSTATS' per-task figures, a restricted /proc).
pub fn own_ns() -> Option<u64> {
    let text = std::fs::read("/proc/thread-self/schedstat").ok()?;
    Schedstat::from_read(text.as_slice())
        .ok()
        .map(|s| s.run_delay)
}

/// The calling thread's cumulative time on a CPU and run delay, ns: (run, delay); None
/// where schedstat is unreadable.
pub fn own_times() -> Option<(u64, u64)> {
    let text = std::fs::read("/proc/thread-self/schedstat").ok()?;
    Schedstat::from_read(text.as_slice())
        .ok()
        .map(|s| (s.sum_exec_runtime, s.run_delay))
}

/// The share of the time a thread wanted a CPU that it waited for one, between two
/// `own_times` readings: delay over delay plus run time, 0..=1. Blocked time (sleeping,
/// waiting for a child) is in neither. None without both readings, or when less than
/// `MIN_WANTED_NS` was wanted in all (too little to say).
pub fn wanted_share(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((r0, d0), (r1, d1)) = (before?, after?);
    let (run, delay) = (r1.checked_sub(r0)?, d1.checked_sub(d0)?);
    let wanted = run + delay;
    (wanted >= MIN_WANTED_NS).then(|| delay as f64 / wanted as f64)
}

/// The least time wanted (run plus delay) from which `wanted_share` reads a share: 10 ms.
pub const MIN_WANTED_NS: u64 = 10_000_000;

/// The share of `wall_ns` spent waiting, from the run delays before and after: 0..=1; None
/// without both readings or with no time passed.
pub fn share(before: Option<u64>, after: Option<u64>, wall_ns: u64) -> Option<f64> {
    let waited = after?.checked_sub(before?)?;
    (wall_ns > 0).then(|| (waited as f64 / wall_ns as f64).clamp(0.0, 1.0))
}

/// Run `f` and say the share of its wall time this thread waited for a CPU.
pub fn during<T>(f: impl FnOnce() -> T) -> (T, Option<f64>) {
    let (d0, t0) = (own_ns(), super::clocks::now_ns());
    let out = f();
    let (d1, t1) = (own_ns(), super::clocks::now_ns());
    (out, share(d0, d1, t1.saturating_sub(t0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_the_delay_over_the_wall_time_and_absent_without_readings() {
        assert_eq!(share(Some(100), Some(600), 1000), Some(0.5));
        assert_eq!(share(Some(0), Some(2000), 1000), Some(1.0), "clamped");
        assert_eq!(share(None, Some(600), 1000), None);
        assert_eq!(share(Some(700), Some(600), 1000), None, "went back");
        assert_eq!(share(Some(0), Some(0), 0), None);
    }

    #[test]
    fn the_wanted_share_is_the_delay_over_the_time_wanted() {
        let ms = 1_000_000;
        // 1 ms on a CPU, 99 ms waiting for one: a starved thread.
        let s = wanted_share(Some((0, 0)), Some((ms, 99 * ms))).unwrap();
        assert!((s - 0.99).abs() < 1e-12, "{s}");
        assert_eq!(wanted_share(Some((0, 0)), Some((20 * ms, 0))), Some(0.0));
        assert_eq!(
            wanted_share(Some((0, 0)), Some((ms, ms))),
            None,
            "2 ms: too little"
        );
        assert_eq!(wanted_share(None, Some((ms, 99 * ms))), None);
        assert_eq!(
            wanted_share(Some((5, 5)), Some((4, 99 * ms))),
            None,
            "went back"
        );
    }

    #[test]
    fn a_thread_alone_on_this_machine_reads_its_own_delay() {
        // The schedstat file exists on this kernel; a short spin has a share in 0..=1.
        let (_, s) = during(|| {
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_millis(5) {}
        });
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            let s = s.expect("readable schedstat gives a share");
            assert!((0.0..=1.0).contains(&s), "{s}");
        } else {
            assert!(s.is_none());
        }
    }
}
