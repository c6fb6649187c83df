//! The one-way cache-line transfer latency between two CPUs: two threads pinned to CPUs A
//! and B take turns swapping one cache line with compare-and-swap (A: PONG->PING, B:
//! PING->PONG); a round trip is two transfers. `ping_pong` is the shared core: the c2c
//! suite (`bench::c2c`) times it in calibrated batches, and the pair canary read before a
//! round (`session::rounds`, [`canary`]) in a few short batches of a fixed count, to see
//! whether the host placed the two virtual CPUs on one core or apart.

use crate::measure::batch::{time_batch, Batch};
use crate::placement::pin_current_thread;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;

const PING: u64 = 1;
const PONG: u64 = 2;
const STOP: u64 = 3;

/// The pair canary: round trips of warm-up, then [`CANARY_BATCHES`] timed batches of
/// [`CANARY_ROUND_TRIPS`] each; the median batch counts. At 23 ns one way it took
/// 0.2-0.3 ms in all with the two threads' start (2026-11-27); 2,000 round trips at 120 ns
/// one way are 0.5 ms. On a loaded machine waiting for the CPUs dominates.
pub const CANARY_WARMUP: u64 = 1_000;
pub const CANARY_BATCHES: usize = 5;
pub const CANARY_ROUND_TRIPS: u64 = 200;

/// The pair canary gives up after this long (it takes under a millisecond on a quiet host,
/// tens of milliseconds on a loaded one): a round's canary may not hold the run.
pub const CANARY_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);
/// Spins of the waiting thread between two checks of the deadline and the patience.
const PATIENCE_CHECK_SPINS: u64 = 1 << 14;

/// One cache line to itself: no false sharing with anything else.
#[repr(align(128))]
struct Line(AtomicU64);

/// Lines in the pool one is drawn from per call: 256 KiB, which the allocator maps afresh
/// (past its 128 KiB threshold), so each call's line lies on a fresh physical page at a
/// random offset, and which LLC slice or home agent owns it is drawn afresh, as separate
/// runs would draw it (on the stack every call of a run had the same line).
const POOL_LINES: usize = 2048;

/// A fresh pool of lines and the index of the one to use.
fn fresh_line() -> (Vec<Line>, usize) {
    let pool: Vec<Line> = (0..POOL_LINES)
        .map(|_| Line(AtomicU64::new(PONG)))
        .collect();
    use rand::{Rng, SeedableRng};
    let seed = crate::measure::clocks::now_ns() ^ pool.as_ptr() as u64;
    let i = rand::rngs::SmallRng::seed_from_u64(seed).gen_range(0..POOL_LINES);
    (pool, i)
}

/// Run `timed` on a thread pinned to `a` while a thread pinned to `b` answers: `timed` gets
/// `work(n)`, which passes the line to B and back n times. Err when either thread cannot be
/// pinned or panics.
///
/// The two threads make progress only while both run at once: in a cgroup starved of CPU
/// (the lowest weight beside busy groups) that can be never. So the ping thread gives up
/// once the run's deadline passed or Ctrl-C came, or after `patience` when given: the
/// partner is stopped, `work` returns at once from then on, and the second value says the
/// work was cut (the batch timed when it happened is not a batch of its count).
pub fn ping_pong<T: Send>(
    a: u32,
    b: u32,
    patience: Option<std::time::Duration>,
    timed: impl FnOnce(&mut dyn FnMut(u64)) -> T + Send,
) -> anyhow::Result<(T, bool)> {
    let (pool, i) = fresh_line();
    let line = &pool[i];
    let ready = Barrier::new(2);
    let partner_failed = AtomicBool::new(false);
    let gave_up = AtomicBool::new(false);
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        let pong = s.spawn(|| -> Result<(), String> {
            let pinned = pin_current_thread(b);
            // Said before the barrier, so the ping thread never waits for an answer that
            // cannot come.
            partner_failed.store(pinned.is_err(), Ordering::Relaxed);
            ready.wait();
            pinned?;
            loop {
                match line
                    .0
                    .compare_exchange(PING, PONG, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => {}
                    Err(STOP) => return Ok(()),
                    Err(_) => std::hint::spin_loop(),
                }
            }
        });
        let ping = s.spawn(|| -> anyhow::Result<T> {
            let pinned = pin_current_thread(a);
            ready.wait();
            let pinned = pinned.and_then(|()| {
                if partner_failed.load(Ordering::Relaxed) {
                    Err(format!("the partner thread could not be pinned to CPU {b}"))
                } else {
                    Ok(())
                }
            });
            let result = pinned.map_err(anyhow::Error::msg).map(|()| {
                let mut work = |n: u64| {
                    if gave_up.load(Ordering::Relaxed) {
                        return;
                    }
                    let mut spins = 0u64;
                    for _ in 0..n {
                        while line
                            .0
                            .compare_exchange(PONG, PING, Ordering::Relaxed, Ordering::Relaxed)
                            .is_err()
                        {
                            spins += 1;
                            if spins % PATIENCE_CHECK_SPINS == 0
                                && (crate::deadline::stop_requested()
                                    || patience.is_some_and(|p| started.elapsed() > p))
                            {
                                gave_up.store(true, Ordering::Relaxed);
                                return;
                            }
                            std::hint::spin_loop();
                        }
                    }
                };
                timed(&mut work)
            });
            // Let the last PING be answered, then stop the partner (also on failure).
            while line
                .0
                .compare_exchange(PONG, STOP, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                if line.0.load(Ordering::Relaxed) == STOP {
                    break;
                }
                std::hint::spin_loop();
            }
            result
        });
        let out = ping
            .join()
            .map_err(|_| anyhow::anyhow!("ping thread panicked"))?;
        pong.join()
            .map_err(|_| anyhow::anyhow!("pong thread panicked"))?
            .map_err(anyhow::Error::msg)?;
        out.map(|o| (o, gave_up.load(Ordering::Relaxed)))
    })
}

/// A batch's one-way latency: half its round trip, ns.
pub fn one_way_ns(b: &Batch) -> f64 {
    b.ns_per_iteration() / 2.0
}

/// The pair canary between CPUs `a` and `b`: the median one-way latency of a few short
/// batches, ns. Err(reason) when a thread cannot be pinned.
pub fn canary(a: u32, b: u32) -> Result<f64, String> {
    canary_within(a, b, CANARY_PATIENCE)
}

/// The pair canary, giving up after `patience`.
fn canary_within(a: u32, b: u32, patience: std::time::Duration) -> Result<f64, String> {
    ping_pong(a, b, Some(patience), |work| {
        work(CANARY_WARMUP);
        let one_way: Vec<f64> = (0..CANARY_BATCHES)
            .map(|_| one_way_ns(&time_batch(work, CANARY_ROUND_TRIPS)))
            .collect();
        crate::result::rounds::median(&one_way)
    })
    .map_err(|e| format!("{e:#}"))
    .and_then(|(ns, cut)| match cut {
        false => Ok(ns),
        true => Err(format!(
            "the two threads did not run at once within {:.1} s (or the run's deadline passed): no reading",
            patience.as_secs_f64()
        )),
    })
}

/// The first two CPUs this process may run on, for the tests that measure a real pair;
/// None, said on stderr, with fewer than two.
#[cfg(test)]
pub fn two_usable_cpus() -> Option<[u32; 2]> {
    let usable = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    let cpus: Vec<u32> = (0..1024)
        .filter(|&c| usable.is_set(c).unwrap_or(false))
        .map(|c| c as u32)
        .take(2)
        .collect();
    if cpus.len() < 2 {
        eprintln!("skipped: one usable CPU, a pair needs two");
        return None;
    }
    Some([cpus[0], cpus[1]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pair_canary_reads_a_plausible_latency_quickly() {
        let Some(cpus) = two_usable_cpus() else {
            return;
        };
        // The run's patience of 500 ms is for a run that owns the machine: beside this
        // binary's sibling tests spinning on both CPUs the two threads may wait longer than
        // that to run at once, so the reading is given the patience such a host needs (the
        // giving up itself is the next test's).
        let t0 = std::time::Instant::now();
        let ns = canary_within(cpus[0], cpus[1], std::time::Duration::from_secs(30)).unwrap();
        let took = t0.elapsed();
        // A cache line hand-off: tens of ns on bare metal or between SMT siblings, about
        // 120 ns between cores of this VM's host; never sub-ns, never microseconds.
        assert!((5.0..1000.0).contains(&ns), "{ns} ns one-way");
        eprintln!(
            "pair canary CPU {},{}: {ns:.1} ns in {took:?}",
            cpus[0], cpus[1]
        );
        // A CPU that does not exist is refused with the reason, on either side.
        let e = canary(cpus[0], 4000).unwrap_err();
        assert!(e.contains("could not pin"), "{e}");
        let e = canary(4000, cpus[1]).unwrap_err();
        assert!(e.contains("could not pin"), "{e}");
    }

    #[test]
    fn a_pair_whose_threads_cannot_run_at_once_gives_up_within_its_patience() {
        let Some(cpus) = two_usable_cpus() else {
            return;
        };
        // Both threads on one CPU: each hand-off waits for the scheduler to switch them (a
        // few ms each), as in a starved cgroup; 1,000 round trips would take seconds.
        let t0 = std::time::Instant::now();
        let patience = std::time::Duration::from_millis(50);
        let (done, cut) = ping_pong(cpus[0], cpus[0], Some(patience), |work| {
            work(1_000_000);
            work(10); // returns at once once cut
            true
        })
        .unwrap();
        assert!(done && cut, "the work was cut");
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            t0.elapsed()
        );
        // With all the patience it needs, the same pair is not cut.
        let (_, cut) = ping_pong(
            cpus[0],
            cpus[1],
            Some(std::time::Duration::from_secs(30)),
            |work| work(1_000),
        )
        .unwrap();
        assert!(!cut);
    }
}
