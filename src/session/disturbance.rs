//! What disturbs a round, judged around it: steal and other tasks' CPU time on the round's
//! CPUs (`Readings`, `judge`), a CPU-speed canary read before it below the run's typical
//! reading on its CPU (`canary_drop`), a pair canary the host's placement of two virtual
//! CPUs moved (`pair_moved`), and which disturbed rounds are worth measuring again. Only
//! other tasks' time and the hypervisor's steal count: truebench's own threads waiting for
//! each other are the row, not a disturbance from outside. (Which of them lasted
//! throughout a row's rounds, a condition of the run, is `result::rounds::persistence`.)

use crate::result::rounds::{self, Cause, Disturbance, Others};
use crate::result::BenchResult;

/// Other tasks using at least this share of the round's CPUs disturb it.
pub const OTHERS_SHARE: f64 = 0.10;
/// ... and at least this many clock ticks of them (the counters' resolution: 10 ms).
pub const OTHERS_MIN_TICKS: u64 = 3;
/// Steal of at least this share of the round's CPUs' time disturbs it.
pub const STEAL_SHARE: f64 = 0.02;
/// ... from at least this many stolen ticks.
pub const STEAL_MIN_TICKS: u64 = 2;
/// A canary at least this much below the run's typical reading on its CPU disturbs the
/// round (or more, where the canary's own readings spread wider: `CANARY_SIGMAS`).
pub const CANARY_DROP: f64 = 0.03;
/// ... and at least this many robust σ of the run's canaries on that CPU below it.
pub const CANARY_SIGMAS: f64 = 4.0;
/// Canary readings on a CPU before the typical one is known well enough to judge by.
pub const CANARY_MIN_READINGS: usize = 3;
/// A pair canary at least `PAIR_RATIO` times the run's typical reading for its CPU pair,
/// or at most its inverse, disturbs the round's rows on two or more CPUs: the host placed
/// the virtual CPUs differently (on one core's SMT siblings a cache line takes about 23 ns
/// on this machine's host, between cores about 120 ns) ...
pub use crate::result::speed::PAIR_RATIO;
/// ... or more, where the pair's readings spread wider: this many robust σ of them.
pub const PAIR_SIGMAS: f64 = 4.0;
/// Whether a round disturbed by `disturbed` is worth measuring again: not when only the
/// host's placement of the CPUs disturbed it. The host keeps a placement for minutes (the
/// rounds it moved came in runs of two to five in the A/A of 2026-11-27), so the round
/// measured again would most likely see the same, and re-measuring bandwidth rounds so
/// disturbed took a default run from about 33 s to 44 s.
pub fn worth_again(disturbed: &[Disturbance]) -> bool {
    disturbed.iter().any(|d| d.cause != Cause::HostPlacement)
}

/// The progress line on a round something disturbed (None for an undisturbed round). A
/// round only the host's placement disturbed is not disturbed as a whole: the line says
/// what the pair canary read and that the round's rows on two or more CPUs are kept out
/// (its rows on one CPU keep it, `uses_two_cpus`); any other cause disturbs the round.
pub fn disturbed_line(
    bench: &str,
    nth: usize,
    disturbed: &[Disturbance],
    pair: Option<&PairCanary>,
) -> Option<String> {
    if disturbed.is_empty() {
        return None;
    }
    if worth_again(disturbed) {
        let causes: Vec<&str> = disturbed.iter().map(|d| d.cause.text()).collect();
        return Some(format!(
            "{bench} round {nth} disturbed: {}",
            causes.join(", ")
        ));
    }
    let seen = match (pair, disturbed.first()) {
        (Some(p), Some(d)) if d.value > 0.0 => format!(
            " (pair canary {:.0} ns against {:.0} ns typical)",
            p.ns,
            p.ns / d.value
        ),
        _ => String::new(),
    };
    Some(format!(
        "{bench} round {nth}: the host placed the CPUs differently{seen}; its rows on two or more CPUs are kept out"
    ))
}

/// Cumulative counters around a round, read from /proc.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readings {
    /// CLOCK_MONOTONIC, ns.
    pub t_ns: u64,
    /// Ticks of the round's CPUs: busy (user, nice, system, irq, softirq), steal, all.
    pub busy_ticks: u64,
    pub steal_ticks: u64,
    pub total_ticks: u64,
    /// This process's own CPU ticks (its threads, and its children once waited for).
    pub own_ticks: u64,
}

/// Busy, steal and all ticks of `cpus` from /proc/stat's text.
pub fn stat_ticks(text: &str, cpus: &[u32]) -> (u64, u64, u64) {
    let t = crate::observe::sampler::cpu_ticks(text, cpus);
    (t.busy, t.steal, t.total)
}

/// utime + stime + cutime + cstime of /proc/self/stat's text.
pub fn own_ticks(text: &str) -> Option<u64> {
    let s = crate::observe::process::parse_stat(text)?;
    Some(s.utime + s.stime + s.cutime.max(0) as u64 + s.cstime.max(0) as u64)
}

impl Readings {
    /// Read the counters now for `cpus`.
    pub fn now(cpus: &[u32]) -> Readings {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let (busy_ticks, steal_ticks, total_ticks) = stat_ticks(&stat, cpus);
        Readings {
            t_ns: crate::measure::clocks::now_ns(),
            busy_ticks,
            steal_ticks,
            total_ticks,
            own_ticks: std::fs::read_to_string("/proc/self/stat")
                .ok()
                .and_then(|t| own_ticks(&t))
                .unwrap_or(0),
        }
    }
}

/// Other tasks' ticks on `cpus` between the readings (their busy ticks less this
/// process's own) and their share of those CPUs' time.
fn others_ticks(before: &Readings, after: &Readings, cpus: &[u32], ticks_per_s: f64) -> (u64, f64) {
    let secs = after.t_ns.saturating_sub(before.t_ns) as f64 / 1e9;
    let capacity = secs * ticks_per_s * cpus.len().max(1) as f64;
    let busy = after.busy_ticks.saturating_sub(before.busy_ticks);
    let own = after.own_ticks.saturating_sub(before.own_ticks);
    let others = busy.saturating_sub(own);
    (others, others as f64 / capacity)
}

/// Other tasks' CPU time on `cpus` over a round, below the disturbance limit or past it;
/// None when the round had no length or /proc/stat was not read.
pub fn others(
    before: &Readings,
    after: &Readings,
    cpus: &[u32],
    ticks_per_s: f64,
) -> Option<Others> {
    if after.t_ns <= before.t_ns || after.total_ticks <= before.total_ticks {
        return None;
    }
    let (_, share) = others_ticks(before, after, cpus, ticks_per_s);
    Some(Others {
        cpus: cpus.to_vec(),
        percent: share * 100.0,
    })
}

/// The hypervisor's steal over a round: the share of the round's CPUs' ticks it took, below
/// the disturbance limit or past it, and the stolen ticks; None when the round had no ticks.
fn steal_share(before: &Readings, after: &Readings) -> Option<(f64, u64)> {
    let stolen = after.steal_ticks.saturating_sub(before.steal_ticks);
    let all = after.total_ticks.saturating_sub(before.total_ticks);
    (all > 0).then(|| (stolen as f64 / all as f64, stolen))
}

/// The hypervisor's steal over a round as a percentage of its CPUs' time (`Round::steal`);
/// None when the round had no ticks or /proc/stat was not read.
pub fn steal(before: &Readings, after: &Readings) -> Option<f64> {
    steal_share(before, after).map(|(s, _)| s * 100.0)
}

/// What disturbed a round, from the readings around it on `cpus` (with `ticks_per_s`
/// clock ticks a second).
pub fn judge(
    before: &Readings,
    after: &Readings,
    cpus: &[u32],
    ticks_per_s: f64,
) -> Vec<Disturbance> {
    let mut out = vec![];
    let secs = after.t_ns.saturating_sub(before.t_ns) as f64 / 1e9;
    if secs <= 0.0 {
        return out;
    }
    let (others, share) = others_ticks(before, after, cpus, ticks_per_s);
    if others >= OTHERS_MIN_TICKS && share >= OTHERS_SHARE {
        out.push(Disturbance {
            cause: Cause::OtherTasks,
            value: share * 100.0,
            limit: OTHERS_SHARE * 100.0,
            persistent: false,
        });
    }
    if let Some((s, stolen)) = steal_share(before, after) {
        if stolen >= STEAL_MIN_TICKS && s >= STEAL_SHARE {
            out.push(Disturbance {
                cause: Cause::Steal,
                value: s * 100.0,
                limit: STEAL_SHARE * 100.0,
                persistent: false,
            });
        }
    }
    out
}

/// A canary reading before a round: the effective speed on one CPU (adds per ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Canary {
    pub cpu: u32,
    pub speed: f64,
    /// The share (0..=1) of the canary's wall time its thread waited for a CPU
    /// (`measure::run_delay`); None where schedstat is unreadable.
    pub waited: Option<f64>,
}

/// The share (%) of their wall time a round's canaries waited for a CPU, on average
/// (`Round::waited`); None without a canary that read it.
pub fn waited(canaries: &[Canary]) -> Option<f64> {
    let w: Vec<f64> = canaries.iter().filter_map(|c| c.waited).collect();
    (!w.is_empty()).then(|| 100.0 * w.iter().sum::<f64>() / w.len() as f64)
}

/// The typical canary reading on one CPU (or pair canary reading for one pair of CPUs) over
/// a run and how far its readings spread: the median and the robust σ (relative), from
/// every reading so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Typical {
    pub median: f64,
    pub sigma: f64,
}

impl Typical {
    /// From the readings on one CPU (or pair); None before `CANARY_MIN_READINGS` of them
    /// (the first readings of a run are judged at its end, against all of them).
    pub fn of(readings: &[f64]) -> Option<Typical> {
        let ok: Vec<f64> = readings
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        if ok.len() < CANARY_MIN_READINGS {
            return None;
        }
        let median = rounds::median(&ok);
        let logs: Vec<f64> = ok.iter().map(|v| (v / median).ln()).collect();
        Some(Typical {
            median,
            sigma: rounds::robust_sigma(&logs),
        })
    }
}

/// The canary's disturbance against the run's typical reading on its CPU. Judged against
/// the median, not the fastest: the fastest of forty short readings is the luckiest one,
/// and most rounds of a quiet run read a few percent below it.
pub fn canary_drop(c: &Canary, typical: Option<Typical>) -> Option<Disturbance> {
    let t = typical?;
    if !(t.median > 0.0 && c.speed > 0.0) {
        return None;
    }
    let drop = 1.0 - c.speed / t.median;
    let limit = CANARY_DROP.max(-(-CANARY_SIGMAS * t.sigma).exp_m1());
    (drop >= limit).then_some(Disturbance {
        cause: Cause::CpuSpeed,
        value: drop * 100.0,
        limit: limit * 100.0,
        persistent: false,
    })
}

/// A pair canary reading before a round: the one-way cache-line latency between two CPUs
/// (`bench::pair::canary`), ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairCanary {
    pub cpus: [u32; 2],
    pub ns: f64,
}

/// The pair canary's disturbance against the run's typical reading for its pair (the
/// median of its readings, `Typical::of` on the latencies): a reading `PAIR_RATIO` times
/// the typical one or more, or that much below it (or further than `PAIR_SIGMAS` robust σ
/// out, whichever is wider). Either way the host placed the CPUs differently from most of
/// the run; only the round's rows on two or more CPUs are disturbed by it
/// (`uses_two_cpus`).
pub fn pair_moved(c: &PairCanary, typical: Option<Typical>) -> Option<Disturbance> {
    let t = typical?;
    if !(t.median > 0.0 && c.ns > 0.0 && c.ns.is_finite()) {
        return None;
    }
    let ratio = c.ns / t.median;
    let limit = PAIR_RATIO.ln().max(PAIR_SIGMAS * t.sigma);
    (ratio.ln().abs() >= limit).then(|| Disturbance {
        cause: Cause::HostPlacement,
        value: ratio,
        limit: limit.exp(),
        persistent: false,
    })
}

/// Whether a row runs pinned on two or more distinct CPUs (a pair pinned to one CPU, or an
/// unpinned row, does not: the host's placement of two CPUs is not what it measures).
pub fn uses_two_cpus(r: &BenchResult) -> bool {
    r.pinned_cpus().len() >= 2
}
