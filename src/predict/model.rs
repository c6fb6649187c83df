//! The capacity model of a service under a CPU quota Q and a cpuset W CPUs wide, from
//! parameters calibrated on measured load steps (calibrate.rs):
//!
//! - **utilisation law**: the service's CPU = rate × CPU cost per message, so at most
//!   `efficiency × capacity / cost` messages per second;
//! - the capacity in CPUs is the smaller of the quota and what the workers can use: the
//!   parallel CPUs (cpuset width, at most one per worker, less what the load generator takes
//!   of them when it shares them: a line in the rate, and one whole CPU from the rate where
//!   mq's producer spins through every gap) scaled by the **USL** contention across those CPUs
//!   (P / (1 + σ(P−1) + κP(P−1)));
//! - an **M/M/c queue** (c = the parallel servers, their total rate what the service
//!   completes at most at the rate asked: the ceiling there, more below it, where the
//!   generator takes less) for the rise of the p99 latency toward the ceiling, times a
//!   factor calibrated on the measured steps;
//! - **quota throttling**: a period whose demand exceeds the quota waits for the next one:
//!   the messages arriving in its throttled phase (the period less the quota's share of
//!   it) wait up to that phase, a share of late messages added to the queue's (queue.rs),
//!   so the period, not only the quota, sets the p99 near the quota's ceiling.
//!
//! Pure functions; tested on synthetic curves with known parameters (tests.rs).

use super::bisect::{absolute, bisect, relative};
use super::queue;

/// The latency quantile predicted.
pub const QUANTILE: f64 = 0.99;

/// Calibrated parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// The service's CPU per message, µs.
    pub cost_us: f64,
    /// Measured saturated throughput ÷ the utilisation law's (1 when no step saturated).
    pub efficiency: f64,
    /// Measured p99 ÷ the M/M/c p99 of the same step (geometric median).
    pub latency_factor: f64,
    /// The load generator's CPUs at rate r: `generator_base + generator_per_rate × r`, in
    /// [0, generator_max].
    pub generator_base: f64,
    pub generator_per_rate: f64,
    /// The most CPUs the generator can use: its threads that run at once (1 for mq's
    /// producer; the producer and the connections for http), at most the machine's.
    pub generator_max: f64,
    /// From this rate on the generator spins one CPU through every gap between messages
    /// (mq's producer, when they are due every 50 µs or less), whatever its line says.
    pub generator_spins_from: Option<f64>,
    /// USL contention and coherency across the parallel CPUs (0, 0: assumed none).
    pub sigma: f64,
    pub kappa: f64,
}

/// A capacity setting on a machine, for one service.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// CPU quota, CPUs.
    pub quota: f64,
    /// Cpuset width, CPUs.
    pub width: usize,
    /// Worker threads (or connections): at most this many CPUs are used at once.
    pub workers: usize,
    /// The load generator runs inside the quota (else outside, on the machine's CPUs).
    pub generator_in_quota: bool,
    /// CPUs of the machine the process may use.
    pub machine_cpus: usize,
    /// The CFS quota period, seconds: how long a period that ran out of quota waits.
    pub period_s: f64,
}

/// A setting at one rate below its ceiling: what its p99 needs that does not depend on
/// the latency factor (the M/M/c queue and its quantile, quota throttling).
#[derive(Debug, Clone, Copy)]
pub struct AtRate {
    queue: queue::Mmc,
    /// The queue's p99 before the latency factor, seconds.
    quantile: f64,
    /// The throttled phase of a period, seconds.
    phase: f64,
    throttle: queue::Throttle,
}

impl AtRate {
    /// The p99 of the queue alone (M/M/c × `latency_factor`), seconds.
    pub fn queue_p99_s(&self, latency_factor: f64) -> f64 {
        self.quantile * latency_factor
    }

    /// The predicted p99 latency, seconds: where the share of messages later than t, the
    /// queue's (its time scaled by the latency factor) plus quota throttling's (messages
    /// arriving in a throttled phase wait for the next period), falls to 1%.
    pub fn p99_s(&self, latency_factor: f64) -> f64 {
        let queue_p99 = self.queue_p99_s(latency_factor);
        let f = latency_factor.max(1e-9);
        let tail = |t: f64| self.queue.tail(t / f) + self.throttle.share(t);
        // At queue_p99 + phase the throttled share is 0 and the queue's under 1%.
        let (_, hi) = bisect(
            0.0,
            queue_p99 + self.phase,
            relative(queue::QUANTILE_TOLERANCE),
            |t| tail(t) > 1.0 - QUANTILE,
        );
        hi
    }
}

/// What bounds a prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// The quota is the ceiling.
    Quota,
    /// The parallel CPUs (width, workers, contention) are the ceiling.
    Cpus,
    /// The p99 target is reached below the ceiling by queueing.
    Latency,
    /// Throttled periods delay more than 1% of the messages past the target.
    Throttling,
}

impl Limit {
    pub fn words(&self) -> &'static str {
        match self {
            Limit::Quota => "the quota's ceiling",
            Limit::Cpus => "the CPUs the workers can use",
            Limit::Latency => "queueing toward the ceiling (M/M/c)",
            Limit::Throttling => "quota throttling (periods that run out of quota)",
        }
    }
}

impl Params {
    /// The load generator's CPUs at `rate`.
    pub fn generator(&self, rate: f64) -> f64 {
        let line =
            (self.generator_base + self.generator_per_rate * rate).clamp(0.0, self.generator_max);
        match self.generator_spins_from {
            Some(from) if rate >= from => line.max(self.generator_max.min(1.0)),
            _ => line,
        }
    }

    /// The messages per second the service completes at most while `rate` arrive:
    /// efficiency × capacity(rate) / cost (the generator's share of the CPUs depends on
    /// the rate, so below the ceiling the service has more than at it).
    pub fn throughput(&self, s: &Setting, rate: f64) -> f64 {
        self.efficiency * self.capacity(s, rate).0 / (self.cost_us * 1e-6)
    }

    /// The CPUs the service can use in parallel at `rate`: width, at most one per worker,
    /// less what the generator takes of them (when it runs outside the quota, it takes the
    /// CPUs outside the cpuset first).
    pub fn parallel(&self, s: &Setting, rate: f64) -> f64 {
        let servers = s.width.min(s.workers).max(1) as f64;
        let overlap = if s.generator_in_quota {
            0.0
        } else {
            (self.generator(rate) - s.machine_cpus.saturating_sub(s.width) as f64).max(0.0)
        };
        (servers - overlap).max(0.05)
    }

    /// The quota left to the service at `rate` (less the generator's CPU when it runs
    /// inside the quota), CPUs.
    fn quota(&self, s: &Setting, rate: f64) -> f64 {
        if s.generator_in_quota {
            (s.quota - self.generator(rate)).max(0.01)
        } else {
            s.quota
        }
    }

    /// The capacity in CPUs at `rate` and what bounds it.
    pub fn capacity(&self, s: &Setting, rate: f64) -> (f64, Limit) {
        let p = self.parallel(s, rate);
        let usl = p / (1.0 + self.sigma * (p - 1.0).max(0.0) + self.kappa * p * (p - 1.0).max(0.0));
        let quota = self.quota(s, rate);
        if quota <= usl {
            (quota, Limit::Quota)
        } else {
            (usl, Limit::Cpus)
        }
    }

    /// The throughput ceiling, messages/s: the rate r where r × cost = efficiency ×
    /// capacity(r) (the generator's share grows with the rate, so it is solved for).
    pub fn ceiling(&self, s: &Setting) -> (f64, Limit) {
        let c = self.cost_us * 1e-6;
        let f = |r: f64| r * c - self.efficiency * self.capacity(s, r).0;
        let hi = self.efficiency * s.quota.max(s.width as f64) / c + 1.0;
        let (lo, _) = bisect(0.0, hi, relative(1e-10), |r| f(r) < 0.0);
        (lo, self.capacity(s, lo).1)
    }

    /// The pieces of the p99 at `rate` that do not depend on the latency factor (the p99
    /// searches and the latency factor's fit ask for many); None at or past the ceiling.
    pub fn at_rate(&self, s: &Setting, rate: f64) -> Option<AtRate> {
        self.at_rate_below(s, rate, self.ceiling(s).0)
    }

    /// `at_rate` with the setting's ceiling already known.
    fn at_rate_below(&self, s: &Setting, rate: f64, ceiling: f64) -> Option<AtRate> {
        if rate >= ceiling {
            return None;
        }
        // The servers of the M/M/c queue, each at the service's throughput at that rate
        // shared among them.
        let servers = s.width.min(s.workers).max(1);
        let mu = self.throughput(s, rate) / servers as f64;
        let queue = queue::Mmc::new(servers, rate, mu);
        let quantile = queue.quantile(QUANTILE)?;
        let q = self.quota(s, rate);
        let phase = queue::throttled_phase_s(s.period_s, q, self.parallel(s, rate));
        let cost_s = self.cost_us * 1e-6 / self.efficiency;
        Some(AtRate {
            queue,
            quantile,
            phase,
            throttle: queue::Throttle::new(rate, cost_s, q, s.period_s, phase),
        })
    }

    /// The p99 of the queue alone at `rate` (M/M/c × the latency factor), seconds; None at
    /// or past the ceiling.
    pub fn queue_p99_s(&self, s: &Setting, rate: f64) -> Option<f64> {
        Some(self.at_rate(s, rate)?.queue_p99_s(self.latency_factor))
    }

    /// The predicted p99 latency at `rate`, seconds ([`AtRate::p99_s`]). None at or past
    /// the ceiling.
    pub fn p99_s(&self, s: &Setting, rate: f64) -> Option<f64> {
        Some(self.at_rate(s, rate)?.p99_s(self.latency_factor))
    }

    /// The share of messages quota throttling delays past `target_s` at `rate`.
    pub fn throttled_share(&self, s: &Setting, rate: f64, target_s: f64) -> f64 {
        let q = self.quota(s, rate);
        let phase = queue::throttled_phase_s(s.period_s, q, self.parallel(s, rate));
        queue::throttled_share(
            rate,
            self.cost_us * 1e-6 / self.efficiency,
            q,
            s.period_s,
            phase,
            target_s,
        )
    }

    /// Whether `rate` is held: the p99, queueing and throttling together, at most the
    /// target. When the queue alone would hold it, throttling is what does not. `ceiling`:
    /// the setting's.
    fn holds(&self, s: &Setting, rate: f64, target_s: f64, ceiling: f64) -> Result<(), Limit> {
        let Some(a) = self.at_rate_below(s, rate, ceiling) else {
            return Err(Limit::Latency);
        };
        if a.p99_s(self.latency_factor) <= target_s {
            Ok(())
        } else if a.queue_p99_s(self.latency_factor) <= target_s {
            Err(Limit::Throttling)
        } else {
            Err(Limit::Latency)
        }
    }

    /// The highest rate held below the p99 target, messages/s, and what bounds it; None
    /// when not even a trickle is (the target is below the service's own p99).
    pub fn max_rate(&self, s: &Setting, target_s: f64) -> Option<(f64, Limit)> {
        let (x, ceiling_limit) = self.ceiling(s);
        let floor = x * 1e-4;
        if x <= 0.0 || self.holds(s, floor, target_s, x).is_err() {
            return None;
        }
        let mut why = Limit::Latency;
        // To 1e-6 of the rate: a rate is measured to a few percent.
        let (lo, _) = bisect(floor, x, relative(1e-6), |r| {
            match self.holds(s, r, target_s, x) {
                Ok(()) => true,
                Err(l) => {
                    why = l;
                    false
                }
            }
        });
        // Within 1% of the ceiling the ceiling is what bounds it.
        let why = if lo >= 0.99 * x { ceiling_limit } else { why };
        Some((lo, why))
    }

    /// The smallest quota (CPUs, to 0.01) at `width` that holds `rate` below the target;
    /// None when not even the whole width does.
    pub fn needed_quota(&self, s: &Setting, rate: f64, target_s: f64) -> Option<f64> {
        let at = |q: f64| {
            let t = Setting { quota: q, ..*s };
            self.max_rate(&t, target_s).is_some_and(|(r, _)| r >= rate)
        };
        let top = s.width as f64;
        if !at(top) {
            return None;
        }
        // The kernel's smallest quota, 1 ms per period (0.01 CPU at 100 ms, 0.2 at 5 ms).
        let (lo, hi) = ((1e-3 / s.period_s).max(0.01), top);
        if at(lo) {
            return Some(lo);
        }
        // To 1e-5 CPU: the answer is rounded up to 0.01.
        let (_, hi) = bisect(lo, hi, absolute(1e-5), |q| !at(q));
        Some((hi * 100.0).ceil() / 100.0)
    }
}
