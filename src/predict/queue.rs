//! The queueing pieces of a prediction, as pure functions: Erlang C (the chance a message
//! waits in an M/M/c queue), the p99 of the time in system (wait + service) of that queue,
//! and the share of messages a CFS quota delays past a latency target (a period whose
//! demand exceeds the quota runs out of it and waits for the next period). `Mmc` and
//! `Throttle` hold what does not change at one arrival rate (Erlang C, the chance a period
//! runs out of quota), so the p99 searches compute it once, not at every step. Tested on
//! textbook values.

use super::bisect::{bisect, relative};
use statrs::distribution::{ContinuousCDF, Normal};

/// How close a quantile of the time in system is found: to 1e-7 of itself (a p99 of 5 ms to
/// half a nanosecond, far below what a load step measures).
pub const QUANTILE_TOLERANCE: f64 = 1e-7;

/// Erlang C: the probability that an arrival waits, with `servers` servers, offered load
/// `a` = λ/μ (in servers); 1 when the queue is unstable (a ≥ servers).
pub fn erlang_c(servers: usize, a: f64) -> f64 {
    let n = servers.max(1);
    if a >= n as f64 {
        return 1.0;
    }
    if a <= 0.0 {
        return 0.0;
    }
    // Erlang B by its recursion, then C from B.
    let mut b = 1.0;
    for k in 1..=n {
        b = a * b / (k as f64 + a * b);
    }
    let rho = a / n as f64;
    b / (1.0 - rho * (1.0 - b))
}

/// An M/M/c queue: `servers` servers, arrival rate `lambda`, per-server rate `mu` (per
/// second), its Erlang C computed once (a quantile and the p99 searches ask its tail many
/// times at one rate).
#[derive(Debug, Clone, Copy)]
pub struct Mmc {
    servers: usize,
    lambda: f64,
    mu: f64,
    c: f64,
}

impl Mmc {
    pub fn new(servers: usize, lambda: f64, mu: f64) -> Mmc {
        Mmc {
            servers,
            lambda,
            mu,
            c: erlang_c(servers, lambda / mu),
        }
    }

    /// P(time in system > t), `t` in seconds. The wait is 0 with probability 1 − C, else
    /// exponential with rate cμ − λ; the service is exponential with rate μ.
    pub fn tail(&self, t: f64) -> f64 {
        let (lambda, mu) = (self.lambda, self.mu);
        let n = self.servers.max(1) as f64;
        if lambda >= n * mu {
            return 1.0;
        }
        let c = self.c;
        let theta = n * mu - lambda;
        let both = if (theta - mu).abs() < 1e-9 * mu {
            (1.0 + mu * t) * (-mu * t).exp()
        } else {
            (theta * (-mu * t).exp() - mu * (-theta * t).exp()) / (theta - mu)
        };
        ((1.0 - c) * (-mu * t).exp() + c * both).clamp(0.0, 1.0)
    }

    /// The `q` quantile (0.99 for p99) of the time in system, seconds; None when the queue
    /// is unstable.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let (lambda, mu) = (self.lambda, self.mu);
        let n = self.servers.max(1) as f64;
        if lambda.is_nan() || lambda >= n * mu || mu <= 0.0 || !(0.0..1.0).contains(&q) {
            return None;
        }
        let tail = 1.0 - q;
        let mut hi = 1.0 / mu;
        while self.tail(hi) > tail {
            hi *= 2.0;
            if hi > 1e9 {
                return None;
            }
        }
        let (_, hi) = bisect(0.0, hi, relative(QUANTILE_TOLERANCE), |t| {
            self.tail(t) > tail
        });
        Some(hi)
    }
}

/// P(time in system > t) of an M/M/c queue: arrival rate `lambda`, per-server rate `mu`
/// (per second), `t` in seconds ([`Mmc::tail`]).
pub fn sojourn_tail(servers: usize, lambda: f64, mu: f64, t: f64) -> f64 {
    Mmc::new(servers, lambda, mu).tail(t)
}

/// The `q` quantile (0.99 for p99) of the time in system of an M/M/c queue, seconds; None
/// when the queue is unstable ([`Mmc::quantile`]).
pub fn sojourn_quantile(servers: usize, lambda: f64, mu: f64, q: f64) -> Option<f64> {
    Mmc::new(servers, lambda, mu).quantile(q)
}

/// CFS bandwidth control: a group may run `quota_cpus` × period of CPU time per period;
/// when its work in a period needs more, the rest waits for the next period. With the group
/// able to run on `parallel` CPUs at once, it spends its quota in period × quota/parallel
/// and then waits period × (1 − quota/parallel): the throttled phase, a latency floor for
/// everything arriving in it. Its length, seconds (0 when the quota covers every CPU the
/// group can use).
pub fn throttled_phase_s(period_s: f64, quota_cpus: f64, parallel: f64) -> f64 {
    if parallel <= quota_cpus || parallel <= 0.0 {
        0.0
    } else {
        period_s * (1.0 - quota_cpus / parallel)
    }
}

/// The share of messages a quota delays past `target_s`: the probability that a period's
/// demand (its arrivals × `cost_s`, arrivals counted as Poisson: mean and variance λ ×
/// period, a normal approximation) exceeds the quota, times the share of a throttled
/// period's arrivals that wait longer than the target (those arriving more than the target
/// before the throttled phase ends).
pub fn throttled_share(
    lambda: f64,
    cost_s: f64,
    quota_cpus: f64,
    period_s: f64,
    phase_s: f64,
    target_s: f64,
) -> f64 {
    Throttle::new(lambda, cost_s, quota_cpus, period_s, phase_s).share(target_s)
}

/// Quota throttling at one arrival rate: [`throttled_share`] for any target, the chance
/// that a period runs out of quota computed once.
#[derive(Debug, Clone, Copy)]
pub struct Throttle {
    lambda: f64,
    period_s: f64,
    phase_s: f64,
    /// The chance that a period's demand exceeds the quota (None: no normal distribution).
    chance: Option<f64>,
}

impl Throttle {
    pub fn new(lambda: f64, cost_s: f64, quota_cpus: f64, period_s: f64, phase_s: f64) -> Self {
        let mean = lambda * period_s;
        let limit = quota_cpus * period_s / cost_s;
        // Read only at a positive rate (`share`).
        let chance = match Normal::new(0.0, 1.0) {
            Ok(normal) if lambda > 0.0 => Some(1.0 - normal.cdf((limit - mean) / mean.sqrt())),
            _ => None,
        };
        Throttle {
            lambda,
            period_s,
            phase_s,
            chance,
        }
    }

    /// The share of messages delayed past `target_s`.
    pub fn share(&self, target_s: f64) -> f64 {
        if self.phase_s <= target_s || self.lambda <= 0.0 {
            return 0.0;
        }
        match self.chance {
            Some(p_throttled) => p_throttled * (self.phase_s - target_s) / self.period_s,
            None => 1.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_c_matches_textbook_values() {
        // One server: C = ρ.
        assert!((erlang_c(1, 0.7) - 0.7).abs() < 1e-12);
        // Two servers, a = 1 (ρ = 0.5): C = a²/(2(2−a) + a²)... = 1/3.
        assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
        // A classic call-centre figure: 10 agents, 8 Erlangs: C ≈ 0.409.
        assert!(
            (erlang_c(10, 8.0) - 0.409).abs() < 0.002,
            "{}",
            erlang_c(10, 8.0)
        );
        assert_eq!(erlang_c(2, 2.0), 1.0);
        assert_eq!(erlang_c(2, 0.0), 0.0);
    }

    #[test]
    fn the_mm1_sojourn_is_exponential_and_its_p99_known() {
        // M/M/1: T ~ Exp(μ − λ), so p99 = ln(100)/(μ − λ).
        let (lambda, mu) = (800.0, 1000.0);
        let p99 = sojourn_quantile(1, lambda, mu, 0.99).unwrap();
        let want = 100f64.ln() / (mu - lambda);
        assert!((p99 - want).abs() / want < 1e-6, "{p99} {want}");
        for t in [0.001, 0.01, 0.03] {
            let s = sojourn_tail(1, lambda, mu, t);
            assert!((s - (-(mu - lambda) * t).exp()).abs() < 1e-9);
        }
        // Unstable: no quantile.
        assert!(sojourn_quantile(1, 1000.0, 1000.0, 0.99).is_none());
    }

    #[test]
    fn more_servers_at_the_same_utilisation_queue_less() {
        let one = sojourn_quantile(1, 900.0, 1000.0, 0.99).unwrap();
        let two = sojourn_quantile(2, 1800.0, 1000.0, 0.99).unwrap();
        assert!(two < one, "{two} {one}");
        // The p99 rises steeply toward the capacity.
        let near = sojourn_quantile(2, 1990.0, 1000.0, 0.99).unwrap();
        assert!(near > 10.0 * two);
        // θ = μ exactly (n μ − λ = μ) is handled.
        assert!(sojourn_quantile(2, 1000.0, 1000.0, 0.99).is_some());
    }

    #[test]
    fn the_quota_delays_only_past_its_ceiling_and_with_a_long_throttled_phase() {
        // Half a CPU on one: 50 ms of each 100 ms period throttled.
        let phase = throttled_phase_s(0.1, 0.5, 1.0);
        assert!((phase - 0.05).abs() < 1e-12);
        assert_eq!(throttled_phase_s(0.1, 2.0, 2.0), 0.0);
        // 50 µs per message: the quota holds 10,000/s.
        let low = throttled_share(5000.0, 50e-6, 0.5, 0.1, phase, 0.005);
        let near = throttled_share(9900.0, 50e-6, 0.5, 0.1, phase, 0.005);
        let over = throttled_share(11000.0, 50e-6, 0.5, 0.1, phase, 0.005);
        assert!(low < 1e-9, "{low}");
        assert!(near > 0.01 && near < over, "{near} {over}");
        assert!((over - 0.45).abs() < 0.01, "{over}");
        // A throttled phase shorter than the target delays nothing past it.
        assert_eq!(throttled_share(11000.0, 50e-6, 0.5, 0.1, 0.004, 0.005), 0.0);
    }
}
