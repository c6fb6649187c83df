//! The built-in `mq` workload: a message-processing service in miniature, driven open-loop.
//! A producer sends messages on a fixed schedule (message i is due at start + i/rate) into
//! one queue, whether or not earlier ones finished; a pool of worker threads takes them,
//! does `service_us` of CPU work (touching `footprint_kb` of its own memory), and completes
//! them. Each measured message keeps four timestamps on CLOCK_MONOTONIC: due, sent,
//! started, done; latency is done − due (corrected for coordinated omission: a late send
//! counts against the system as the user would see it) with done − sent kept beside it.

use crate::measure::clocks::now_ns;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// One measured message's life, ns on CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record {
    pub due: u64,
    pub sent: u64,
    pub started: u64,
    pub done: u64,
}

/// How the service is built for a step.
#[derive(Debug, Clone)]
pub struct Service {
    pub workers: usize,
    /// CPU work per message, µs.
    pub service_us: f64,
    /// Memory each worker touches per message, KiB.
    pub footprint_kb: usize,
    /// CPU of worker i (round robin), or None for the scheduler's choice.
    pub pins: Option<Vec<u32>>,
    /// Messages the queue holds before a send is dropped.
    pub queue_limit: usize,
    /// Spin iterations per µs of work (from `calibrate_spin`).
    pub spins_per_us: f64,
    /// cgroup v1 `tasks` files each worker thread joins before it works (capacity policies).
    pub join_files: Vec<std::path::PathBuf>,
    /// The `per-node` policy: worker i is confined to the CPUs of node groups[i % len] and
    /// its memory bound to that node.
    pub nodes: Option<Vec<(u32, Vec<u32>)>>,
    /// The policy: its class and memory policy apply to each worker thread.
    pub policy: crate::policy::Policy,
    /// `--http`: each worker is a keep-alive connection and a message is a GET to this
    /// target, instead of spinning `service_us`.
    pub http: Option<super::http::Target>,
}

impl Service {
    /// `workers` unpinned workers spinning `service_us` per message (calibrated here), an
    /// unbounded queue, no footprint: the plainest service, for tests and checks.
    pub fn spinning(workers: usize, service_us: f64) -> Service {
        Service {
            workers,
            service_us,
            footprint_kb: 0,
            pins: None,
            queue_limit: 1_000_000,
            spins_per_us: calibrate_spin(),
            join_files: vec![],
            nodes: None,
            policy: crate::policy::Policy::OS,
            http: None,
        }
    }
}

/// One step's plan.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub rate: f64,
    pub warmup: Duration,
    pub measure: Duration,
}

/// What a step produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Measured messages that completed (due inside the measured window).
    pub records: Vec<Record>,
    /// Sends due inside the measured window (sent or dropped).
    pub due_in_window: u64,
    pub dropped: u64,
    /// Measured messages not done when the drain timed out.
    pub unfinished: u64,
    /// Schedule lag (sent − due) of each measured send, ns.
    pub lags: Vec<u64>,
    /// Messages in the system (queued or in service), sampled at random instants between
    /// sends during the measured window: a time average, for Little's law.
    pub in_flight: Vec<i64>,
    pub window_start: u64,
    pub window_end: u64,
    /// True when Ctrl-C stopped the step.
    pub interrupted: bool,
    /// Why a worker could not be set up (join its cgroup), when one could not.
    pub setup_error: Option<String>,
    /// Measured messages whose work failed (an HTTP error), not counted as completed; the
    /// first failure's text; connections the server closed and that were opened again.
    pub failed: u64,
    pub first_failure: Option<String>,
    pub reconnects: u64,
}

/// What a worker hands back.
struct WorkerOut {
    records: Vec<Record>,
    failed: u64,
    first_failure: Option<String>,
    reconnects: u64,
}

/// A loop of integer work that the compiler cannot drop.
fn spin(iters: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..iters {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
    black_box(x)
}

/// Spin iterations per µs on this CPU: the best of five 5 ms rounds.
pub fn calibrate_spin() -> f64 {
    let n = 200_000;
    (0..5)
        .map(|_| {
            let t0 = now_ns();
            spin(n);
            n as f64 / ((now_ns() - t0).max(1) as f64 / 1e3)
        })
        .fold(0.0, f64::max)
}

struct Shared {
    queue: Mutex<VecDeque<(u64, u64, bool)>>,
    ready: Condvar,
    stop: AtomicBool,
    abort: AtomicBool,
    in_flight: AtomicI64,
}

fn worker(shared: Arc<Shared>, svc: Service, index: usize) -> Result<WorkerOut, String> {
    if let Some(p) = svc.pins.as_ref().filter(|p| !p.is_empty()) {
        crate::placement::pin_current_thread(p[index % p.len()])?;
    }
    let mut node = None;
    if let Some(groups) = svc.nodes.as_ref().filter(|g| !g.is_empty()) {
        let (n, cpus) = &groups[index % groups.len()];
        crate::placement::confine_current_thread(cpus)?;
        node = Some(vec![*n]);
    }
    crate::policy::apply::current_thread(&svc.policy, node.as_deref())?;
    super::capacity::join_thread(&svc.join_files)?;
    let iters = (svc.service_us * svc.spins_per_us).round() as u64;
    let mut memory = vec![0u8; svc.footprint_kb * 1024];
    let mut client = match &svc.http {
        Some(t) => {
            let mut c = super::http::Client::new(t);
            c.open()?;
            Some(c)
        }
        None => None,
    };
    let mut out = WorkerOut {
        records: Vec::new(),
        failed: 0,
        first_failure: None,
        reconnects: 0,
    };
    let finish = |mut out: WorkerOut, client: &Option<super::http::Client>| {
        out.reconnects = client.as_ref().map(|c| c.reconnects()).unwrap_or(0);
        Ok(out)
    };
    loop {
        let msg = {
            let mut q = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if shared.abort.load(Ordering::Relaxed) {
                    return finish(out, &client);
                }
                if let Some(m) = q.pop_front() {
                    break Some(m);
                }
                if shared.stop.load(Ordering::Acquire) {
                    break None;
                }
                q = shared
                    .ready
                    .wait_timeout(q, Duration::from_millis(5))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        };
        let Some((due, sent, measured)) = msg else {
            return finish(out, &client);
        };
        let started = now_ns();
        let result = match client.as_mut() {
            Some(c) => c.get().map(|_| ()),
            None => {
                spin(iters);
                for b in memory.iter_mut().step_by(64) {
                    *b = b.wrapping_add(1);
                }
                Ok(())
            }
        };
        let done = now_ns();
        shared.in_flight.fetch_sub(1, Ordering::Relaxed);
        if measured {
            match result {
                Ok(()) => out.records.push(Record {
                    due,
                    sent,
                    started,
                    done,
                }),
                Err(e) => {
                    out.failed += 1;
                    out.first_failure.get_or_insert(e);
                }
            }
        }
    }
}

/// A wait longer than this sleeps, all but its last `SPIN_NS`; a shorter one is spun
/// through, for precision.
pub const SLEEP_ABOVE_NS: u64 = 50_000;
const SPIN_NS: u64 = 20_000;

/// The rate from which every gap between the producer's messages is spun through: from
/// there on its thread takes a whole CPU, whatever the service does (the step's
/// `generator_cpu_pct` shows it: about 60% just below, 90-100% just above, here).
pub fn producer_spins_from() -> f64 {
    1e9 / SLEEP_ABOVE_NS as f64
}

/// Sleep until `t` on CLOCK_MONOTONIC (the last `SPIN_NS` spun, for precision); the time
/// then.
fn wait_until(t: u64) -> u64 {
    let mut now = now_ns();
    if t > now + SLEEP_ABOVE_NS {
        std::thread::sleep(Duration::from_nanos(t - now - SPIN_NS));
    }
    while now < t {
        std::hint::spin_loop();
        now = now_ns();
    }
    now
}

/// Run one step: warm-up, then the measured window, then drain (at most `drain` long).
/// `edge` is called as the measured window opens and as it closes (to read the system's
/// counters over exactly that span).
pub fn run_step(plan: Plan, svc: &Service, drain: Duration, edge: &mut dyn FnMut()) -> Outcome {
    let shared = Arc::new(Shared {
        queue: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
        stop: AtomicBool::new(false),
        abort: AtomicBool::new(false),
        in_flight: AtomicI64::new(0),
    });
    let handles: Vec<_> = (0..svc.workers.max(1))
        .map(|i| {
            let (s, v) = (shared.clone(), svc.clone());
            std::thread::spawn(move || worker(s, v, i))
        })
        .collect();
    let period = 1e9 / plan.rate;
    // Sleep precisely: the default 50 µs timer slack would make every short sleep late.
    // SAFETY: a prctl on this thread's own timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    let start = now_ns() + 1_000_000;
    let window_start = start + plan.warmup.as_nanos() as u64;
    let window_end = window_start + plan.measure.as_nanos() as u64;
    let mut out = Outcome {
        window_start,
        window_end,
        ..Default::default()
    };
    let mut i: u64 = 0;
    let mut opened = false;
    let mut phase = rand::rngs::SmallRng::seed_from_u64(start);
    loop {
        let due = start + (i as f64 * period) as u64;
        if due >= window_end {
            break;
        }
        if !opened && due >= window_start {
            edge();
            opened = true;
        }
        let mut now = now_ns();
        let measured = due >= window_start;
        // Messages in the system, sampled every 8th send at a uniformly random instant
        // of the gap before it: a time average. (Sampled right after a send, it always
        // counted the message just sent: 0.98 in flight where Little's law gave 0.18.)
        let sample_at = (measured && i % 8 == 0)
            .then(|| now + (phase.gen::<f64>() * due.saturating_sub(now) as f64) as u64);
        if now < due {
            if crate::interrupt::requested() {
                out.interrupted = true;
                break;
            }
            if let Some(t) = sample_at {
                wait_until(t);
                out.in_flight.push(shared.in_flight.load(Ordering::Relaxed));
            }
            now = wait_until(due);
        } else if sample_at.is_some() {
            out.in_flight.push(shared.in_flight.load(Ordering::Relaxed));
        }
        {
            let mut q = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
            if q.len() >= svc.queue_limit {
                if measured {
                    out.dropped += 1;
                }
            } else {
                q.push_back((due, now, measured));
                shared.in_flight.fetch_add(1, Ordering::Relaxed);
            }
        }
        shared.ready.notify_one();
        if measured {
            out.due_in_window += 1;
            out.lags.push(now - due);
        }
        i += 1;
    }
    if opened {
        edge();
    }
    shared.stop.store(true, Ordering::Release);
    shared.ready.notify_all();
    let deadline = now_ns() + drain.as_nanos() as u64;
    while shared.queue.lock().map(|q| !q.is_empty()).unwrap_or(false) {
        if now_ns() > deadline || crate::interrupt::requested() {
            shared.abort.store(true, Ordering::Release);
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for h in handles {
        match h.join() {
            Ok(Ok(mut w)) => {
                out.records.append(&mut w.records);
                out.failed += w.failed;
                out.reconnects += w.reconnects;
                if out.first_failure.is_none() {
                    out.first_failure = w.first_failure;
                }
            }
            Ok(Err(e)) => out.setup_error = Some(e),
            Err(_) => out.setup_error = Some("a worker thread panicked".into()),
        }
    }
    let sent_measured = out.due_in_window - out.dropped;
    out.unfinished = sent_measured.saturating_sub(out.records.len() as u64 + out.failed);
    out.interrupted |= crate::interrupt::requested();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(workers: usize) -> Service {
        Service {
            footprint_kb: 4,
            ..Service::spinning(workers, 1.0)
        }
    }

    /// The pacer sends on schedule: at 20,000/s for 0.4 s every due message is sent, and
    /// the typical send is within a millisecond of its due time. Whether it keeps time
    /// depends on getting a CPU: on a machine busy enough to starve it (the lag says so),
    /// the step is measured again, up to three times; what it records is checked every time.
    #[test]
    fn the_schedule_is_kept() {
        let plan = Plan {
            rate: 20_000.0,
            warmup: Duration::from_millis(100),
            measure: Duration::from_millis(400),
        };
        let mut late = vec![];
        loop {
            let mut edges = 0;
            let o = run_step(plan, &service(1), Duration::from_secs(2), &mut || {
                edges += 1
            });
            assert_eq!(edges, 2);
            assert!(
                (7_900..=8_100).contains(&o.due_in_window),
                "{}",
                o.due_in_window
            );
            assert_eq!(o.unfinished, 0);
            assert_eq!(
                o.records.len() as u64 + o.dropped,
                o.due_in_window,
                "every due message is either measured or counted as dropped"
            );
            for r in &o.records {
                assert!(
                    r.due <= r.sent && r.sent <= r.started && r.started <= r.done,
                    "{r:?}"
                );
                assert!(r.due >= o.window_start && r.due < o.window_end);
            }
            let mut lags = o.lags.clone();
            lags.sort_unstable();
            let median = lags[lags.len() / 2];
            if median < 1_000_000 && o.dropped == 0 {
                return;
            }
            late.push(format!("median lag {median} ns, {} dropped", o.dropped));
            assert!(
                late.len() < 3,
                "the pacer never kept its schedule: {late:?}"
            );
        }
    }

    #[test]
    fn a_full_queue_drops_and_counts() {
        let mut svc = service(1);
        svc.queue_limit = 1;
        svc.service_us = 2000.0;
        let plan = Plan {
            rate: 5_000.0,
            warmup: Duration::from_millis(10),
            measure: Duration::from_millis(100),
        };
        let o = run_step(plan, &svc, Duration::from_secs(2), &mut || {});
        assert!(o.dropped > 100, "{} dropped", o.dropped);
        assert_eq!(
            o.records.len() as u64 + o.dropped + o.unfinished,
            o.due_in_window
        );
    }

    #[test]
    fn spin_calibration_is_plausible() {
        let s = calibrate_spin();
        // An LCG step takes ~1 ns: between 10 and 10,000 per µs on any CPU.
        assert!((10.0..10_000.0).contains(&s), "{s} per µs");
    }
}
