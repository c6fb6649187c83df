//! Rounds: how `run` draws each benchmark's samples. Every benchmark runs k times (its
//! rounds), each time with k-th of the samples, in an order shuffled afresh for every round
//! and interleaved between benchmarks, so a row's rounds are spread across the run and each
//! draws afresh what separate runs would (allocation, forked processes, the placement of
//! unpinned tasks). Around every round the session reads what could disturb it
//! (`Readings`: steal and other tasks' CPU time on the round's CPUs, and a short CPU-speed
//! canary before it); a disturbed round is flagged (`judge`), re-measured within a bounded
//! budget, and kept out of the row's figures when the rounds of a row are merged into one
//! result (`merge`), unless what disturbed it was present throughout the row's rounds (a
//! condition of the run: `result::rounds::persistence`). Only other tasks' time and the
//! hypervisor's steal count: truebench's own threads waiting for each other (the two ends
//! of a ping-pong sharing a CPU, the sampler beside them in a cpuset of one CPU) are the
//! row, not a disturbance from outside.

use crate::bench::Benchmark;
use crate::result::rounds::{self, Cause, Disturbance, Others, Round, Rounds};
use crate::result::BenchResult;
use rand::seq::SliceRandom;

/// Rounds per benchmark in a default run.
pub const DEFAULT_ROUNDS: usize = 5;
pub use crate::bench::MIN_SAMPLES_PER_ROUND;
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
/// Findings a single round's results carry about how that round was measured: the merged
/// row keeps them whichever round it is based on.
pub const ROUND_FINDINGS: &[&str] = &["round-in-process"];
/// Re-measured rounds per benchmark at most, as a share of its rounds (rounded up).
pub const REMEASURE_SHARE: f64 = 0.6;

/// One benchmark's place in the schedule: which benchmark (index into the run's list) and
/// which of its rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub bench: usize,
    pub round: usize,
}

/// The rounds benchmark `b` draws in a run of `k` rounds: `k` times its weight
/// (`Benchmark::round_weight`), one for a run measured in one piece (`k` of 1).
pub fn rounds_of(b: &dyn Benchmark, k: usize) -> usize {
    if k <= 1 {
        1
    } else {
        k * b.round_weight().max(1)
    }
}

/// The order of a run's rounds: the run is cut into as many positions as the most rounds
/// any benchmark draws (`rounds_of`), a benchmark's rounds spread evenly over them (one of
/// twice the rounds has one at every position, the others at every second), every
/// benchmark's rounds at a position before any at the next, the benchmarks at a position
/// shuffled afresh, a benchmark that feeds its suite (the latency sweep whose measured LLC
/// sizes the bandwidth arrays) ahead of the rest of its suite at the first position.
/// Benchmarks measured in one piece (`in_rounds` false) run once, after.
pub fn schedule(
    benches: &[&'static dyn Benchmark],
    k: usize,
    rng: &mut impl rand::Rng,
) -> Vec<Slot> {
    let mut out = vec![];
    let in_rounds: Vec<usize> = (0..benches.len())
        .filter(|i| benches[*i].in_rounds())
        .collect();
    let positions = in_rounds
        .iter()
        .map(|i| rounds_of(benches[*i], k))
        .max()
        .unwrap_or(1);
    for at in 0..positions {
        // Benchmark i's round j sits at position j·positions/k_i.
        let mut here: Vec<Slot> = in_rounds
            .iter()
            .filter_map(|&bench| {
                let n = rounds_of(benches[bench], k);
                (0..n)
                    .find(|j| j * positions / n == at)
                    .map(|round| Slot { bench, round })
            })
            .collect();
        // One round keeps the benchmarks in run order, as a run measured in one piece did.
        if k > 1 {
            here.shuffle(rng);
        }
        if at == 0 {
            let mut order: Vec<usize> = here.iter().map(|s| s.bench).collect();
            feeders_first(&mut order, benches);
            here = order
                .into_iter()
                .map(|bench| Slot { bench, round: 0 })
                .collect();
        }
        out.extend(here);
    }
    out.extend(
        (0..benches.len())
            .filter(|i| !benches[*i].in_rounds())
            .map(|bench| Slot { bench, round: 0 }),
    );
    out
}

/// Move each benchmark that feeds its suite ahead of the first of its suite in `order`.
pub fn feeders_first(order: &mut Vec<usize>, benches: &[&'static dyn Benchmark]) {
    for i in 0..order.len() {
        let b = benches[order[i]];
        if !b.feeds_its_suite() {
            continue;
        }
        if let Some(first) = order[..i]
            .iter()
            .position(|j| benches[*j].suite() == b.suite())
        {
            let x = order.remove(i);
            order.insert(first, x);
        }
    }
}

/// Samples per round of benchmark `b` in a run of `samples` over `k` rounds: the run's
/// samples over the benchmark's own rounds (`rounds_of`), at least its fewest
/// (`Benchmark::min_samples_per_round`); all of them for a benchmark measured in one piece.
pub fn samples_in_round(b: &dyn Benchmark, samples: usize, k: usize) -> usize {
    if !b.in_rounds() || k <= 1 {
        return samples;
    }
    samples
        .div_ceil(rounds_of(b, k))
        .max(b.min_samples_per_round())
}

/// The re-measured rounds a benchmark of `k` rounds may get (none for one round: a run
/// measured in one piece keeps what it measured, its disturbances said).
pub fn remeasure_budget(k: usize) -> usize {
    if k <= 1 {
        return 0;
    }
    (k as f64 * REMEASURE_SHARE).ceil() as usize
}

/// Whether a round disturbed by `disturbed` is worth measuring again: not when only the
/// host's placement of the CPUs disturbed it. The host keeps a placement for minutes (the
/// rounds it moved came in runs of two to five in the A/A of 2026-11-27), so the round
/// measured again would most likely see the same, and re-measuring bandwidth rounds so
/// disturbed took a default run from about 33 s to 44 s.
pub fn worth_again(disturbed: &[Disturbance]) -> bool {
    disturbed.iter().any(|d| d.cause != Cause::HostPlacement)
}

/// The causes present throughout a benchmark's rounds so far (`result::rounds::
/// persistence`, over its rounds as measured): the rounds they disturbed are not measured
/// again, as the round measured again would see them too.
pub fn persistent_in(measured: &[Measured]) -> Vec<Cause> {
    let rs: Vec<Round> = measured
        .iter()
        .map(|m| Round {
            disturbed: m.disturbed.clone(),
            others: m.others.clone(),
            steal: m.steal,
            ..Round::default()
        })
        .collect();
    rounds::persistence::persistent_causes(&rs)
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
/// (`measure::pair::canary`), ns.
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

/// One round of one benchmark as measured: when, what disturbed it, its results.
#[derive(Debug, Clone)]
pub struct Measured {
    pub seq: usize,
    /// When the round ran, on CLOCK_MONOTONIC (ns).
    pub window_ns: (u64, u64),
    pub at_s: f64,
    /// The canaries read before it (judged against the run's typical reading at the end).
    pub canaries: Vec<Canary>,
    /// The pair canary read before it, for a benchmark with a case pinned to two or more
    /// CPUs (judged, too, against the run's typical reading for the pair at the end).
    pub pair: Option<PairCanary>,
    /// What disturbed it; a `HostPlacement` disturbance only its rows on two or more CPUs.
    pub disturbed: Vec<Disturbance>,
    /// Other tasks' CPU time on its CPUs, whether or not it disturbed the round.
    pub others: Option<Others>,
    /// The hypervisor's steal, % of its CPUs' time, whether or not it disturbed the round.
    pub steal: Option<f64>,
    pub results: Vec<BenchResult>,
}

/// Merge one benchmark's rounds into one result per row (rows in the order their first
/// round emitted them). A row's samples are those of its kept rounds (all its rounds when
/// fewer than one is kept, said by its `rounds`), its statistics recomputed from them,
/// its other fields from its most typical kept round (median closest to the pooled one);
/// `refresh` recomputes what the benchmark derives from the median.
/// With `stage1`, the first that many rounds were the first stage of `run --precision`.
pub fn merge(
    rounds: &[Measured],
    stage1: Option<usize>,
    refresh: &dyn Fn(&mut BenchResult),
) -> Vec<BenchResult> {
    let mut keys: Vec<String> = vec![];
    for m in rounds {
        for r in &m.results {
            let k = r.key();
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.iter()
        .filter_map(|k| merge_row(rounds, k, stage1, refresh))
        .collect()
}

/// The first stage a row's noise takes σ from (Stein's rule): its `rounds` first-stage
/// rounds, `kept` of them kept; None with fewer than two kept (no spread to plan from: the
/// rounds after it were not chosen by one, and all of them give the noise).
pub fn row_stage1(rounds: usize, kept: usize) -> Option<usize> {
    (kept >= 2).then_some(rounds)
}

/// A row's noise from its rounds about its reported log median `center`; with `stage1`
/// (the row's first-stage rounds, `row_stage1`) σ and its degrees of freedom come from that
/// stage, and the noise says so whether or not rounds were added after it: the rule that
/// decided to add none looked at that stage's spread too, so `compare` tests every row of
/// such a run with the first stage's degrees of freedom (the smaller side's; Welch's
/// pooled ones called up to 8% of simulated A/A rows of five rounds, `session::allocate`).
pub fn row_noise(rs: &[Round], center: f64, stage1: Option<usize>) -> Option<rounds::RoundNoise> {
    let mut n = rounds::noise_of(rs, Some(center), stage1)?;
    if n.stage1.is_none() && !n.includes_disturbed {
        n.stage1 = stage1;
    }
    Some(n)
}

fn merge_row(
    rounds: &[Measured],
    key: &str,
    stage1: Option<usize>,
    refresh: &dyn Fn(&mut BenchResult),
) -> Option<BenchResult> {
    // The row's rounds among the first stage's (and how many of them were kept, below).
    let stage1 = stage1.map(|n| {
        rounds[..n.min(rounds.len())]
            .iter()
            .filter(|m| m.results.iter().any(|r| r.key() == key))
            .count()
    });
    let mut entries: Vec<(Round, &BenchResult)> = rounds
        .iter()
        .filter_map(|m| {
            let r = m.results.iter().find(|r| r.key() == key)?;
            Some((
                Round {
                    seq: m.seq,
                    at_s: m.at_s,
                    median: r.stats.median,
                    samples: r.samples.len(),
                    disturbed: m
                        .disturbed
                        .iter()
                        .filter(|d| d.cause != Cause::HostPlacement || uses_two_cpus(r))
                        .cloned()
                        .collect(),
                    others: m.others.clone(),
                    steal: m.steal,
                    waited: waited(&m.canaries),
                },
                r,
            ))
        })
        .collect();
    let mut rs: Vec<Round> = entries.iter().map(|(r, _)| r.clone()).collect();
    // A condition present throughout the rounds (a neighbour, a loud host) is what the
    // run measured, not a disturbance of some rounds: its rounds are kept.
    rounds::persistence::mark(&mut rs);
    rounds::flag_outliers(&mut rs);
    let stage1 = stage1.and_then(|n| row_stage1(n, rs[..n].iter().filter(|r| r.kept()).count()));
    for (e, r) in entries.iter_mut().zip(&rs) {
        e.0 = r.clone();
    }
    let kept: Vec<&(Round, &BenchResult)> = entries.iter().filter(|(r, _)| r.kept()).collect();
    // Fewer than two undisturbed rounds: every round counts (`RoundNoise::includes_disturbed`).
    let pool: Vec<&(Round, &BenchResult)> = if kept.len() < 2 {
        entries.iter().collect()
    } else {
        kept
    };
    let samples: Vec<f64> = pool.iter().flat_map(|(_, r)| r.samples.clone()).collect();
    let stats = crate::measure::stats::Stats::of(&samples)?;
    let base = pool
        .iter()
        .min_by(|a, b| {
            let d = |x: &&(Round, &BenchResult)| (x.1.stats.median / stats.median).ln().abs();
            d(a).total_cmp(&d(b))
        })?
        .1;
    let mut out = base.clone();
    // Figures derived from the median scale with it (the DRAM estimate of a bandwidth
    // row); a benchmark whose figure is not proportional recomputes it in `refresh`.
    let scale = stats.median / base.stats.median;
    for v in out.derived.values_mut() {
        *v *= scale;
    }
    out.samples = samples;
    out.stats = stats;
    // Pages drawn afresh only when every round the figures rest on drew them.
    out.quality.pages_per_round = pool.iter().all(|(_, r)| r.quality.pages_per_round);
    if let Some(obs) = merged_observed(pool.iter().map(|(_, r)| r)) {
        out.placement.observed = Some(obs);
    }
    out.rounds = Some(Rounds {
        noise: row_noise(&rs, out.stats.median.ln(), stage1),
        rounds: rs,
    });
    // How a round the figures rest on was measured (in truebench's own process, say) stays
    // with the row, once per id, whichever round the base is, with how many such rounds.
    out.findings
        .retain(|f| !ROUND_FINDINGS.contains(&f.id.as_str()));
    for id in ROUND_FINDINGS {
        let with: Vec<&crate::findings::Finding> = pool
            .iter()
            .filter_map(|(_, r)| r.findings.iter().find(|f| f.id == *id))
            .collect();
        if let Some(f) = with.first() {
            let mut f = (*f).clone();
            f.evidence.push(format!(
                "{} of the {} the row's figures rest on",
                crate::units::count(with.len(), "round"),
                crate::units::count(pool.len(), "round")
            ));
            out.findings.push(f);
        }
    }
    // What depends on the statistics is judged again on the pooled samples.
    out.findings
        .retain(|f| !crate::findings::results::SAMPLE_FINDINGS.contains(&f.id.as_str()));
    crate::findings::results::annotate(&mut out);
    refresh(&mut out);
    Some(out)
}

/// What was seen of an unpinned pair over several rounds: observations and round trips
/// added, the shared-CPU share weighted by observations, the CPUs each task was seen on
/// joined, scheduler counters added (absent when any round lacks them). Of a classic test's
/// copies: `CopiesSeen::merged`. None when the rounds saw neither.
fn merged_observed<'a>(
    results: impl Iterator<Item = &'a &'a BenchResult>,
) -> Option<crate::result::Observed> {
    use crate::result::Observed;
    let seen: Vec<&Observed> = results
        .filter_map(|r| r.placement.observed.as_ref())
        .collect();
    let copies: Vec<&crate::result::observed::CopiesSeen> = seen
        .iter()
        .filter_map(|o| match o {
            Observed::Copies(c) => Some(c),
            _ => None,
        })
        .collect();
    if !copies.is_empty() {
        return crate::result::observed::CopiesSeen::merged(&copies).map(Observed::Copies);
    }
    let pairs: Vec<&crate::result::observed::PairSeen> = seen
        .iter()
        .filter_map(|o| match o {
            Observed::Pair(p) => Some(p),
            _ => None,
        })
        .collect();
    let first = *pairs.first()?;
    if pairs.len() == 1 {
        return Some(Observed::Pair(first.clone()));
    }
    let mut out = first.clone();
    let observations: u64 = pairs.iter().map(|p| p.observations).sum();
    out.observations = observations;
    out.round_trips = pairs.iter().map(|p| p.round_trips).sum();
    out.colocated_fraction = if observations > 0 {
        pairs
            .iter()
            .map(|p| p.colocated_fraction * p.observations as f64)
            .sum::<f64>()
            / observations as f64
    } else {
        pairs.iter().map(|p| p.colocated_fraction).sum::<f64>() / pairs.len() as f64
    };
    for side in [0, 1] {
        let task = |p: &crate::result::observed::PairSeen| {
            if side == 0 {
                p.tasks.a.clone()
            } else {
                p.tasks.b.clone()
            }
        };
        let mut t = task(first);
        let all: Vec<_> = pairs.iter().map(|p| task(p)).collect();
        let mut cpus: Vec<u32> = all.iter().flat_map(|x| x.cpus_seen.clone()).collect();
        cpus.sort_unstable();
        cpus.dedup();
        t.cpus_seen = cpus;
        let add = |f: fn(&crate::result::observed::TaskSeen) -> Option<u64>| {
            all.iter().map(f).sum::<Option<u64>>()
        };
        t.migrations = add(|x| x.migrations);
        t.voluntary_switches = add(|x| x.voluntary_switches);
        t.involuntary_switches = add(|x| x.involuntary_switches);
        if side == 0 {
            out.tasks.a = t;
        } else {
            out.tasks.b = t;
        }
    }
    Some(Observed::Pair(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use rand::SeedableRng;
    use serde_json::json;

    #[test]
    fn every_round_of_every_benchmark_runs_once_and_rounds_do_not_overlap() {
        let benches: Vec<&'static dyn Benchmark> = crate::bench::REGISTRY.to_vec();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let s = schedule(&benches, 5, &mut rng);
        let rounded: Vec<usize> = (0..benches.len())
            .filter(|i| benches[*i].in_rounds())
            .collect();
        let once = benches.len() - rounded.len();
        assert_eq!(
            once, 0,
            "every benchmark is measured in rounds, classic too"
        );
        let each: Vec<usize> = rounded.iter().map(|b| rounds_of(benches[*b], 5)).collect();
        assert_eq!(s.len(), each.iter().sum::<usize>() + once);
        // Benchmarks whose rows' noise lies between cheap or whole rounds draw more of them
        // (timers 5x, c2c and bandwidth 2x), the others the run's.
        let of = |id: &str| {
            rounded
                .iter()
                .zip(&each)
                .find(|(b, _)| benches[**b].id().starts_with(id))
                .map(|(_, n)| *n)
                .unwrap()
        };
        assert_eq!(
            (of("timers"), of("c2c"), of("memory.bandwidth")),
            (25, 10, 10)
        );
        assert_eq!(of("memory.latency"), 5);
        for (b, n) in rounded.iter().zip(&each) {
            let mine: Vec<usize> = s
                .iter()
                .filter(|x| x.bench == *b)
                .map(|x| x.round)
                .collect();
            assert_eq!(mine, (0..*n).collect::<Vec<_>>());
        }
        // A benchmark of five rounds has no two of them without a round of every other
        // benchmark of five between them, and one of twenty-five has a round in each fifth
        // of the space between two rounds of five.
        let at = |b: usize, j: usize| s.iter().position(|x| x.bench == b && x.round == j).unwrap();
        let five: Vec<usize> = rounded
            .iter()
            .copied()
            .filter(|b| rounds_of(benches[*b], 5) == 5)
            .collect();
        for j in 0..4 {
            let end = five.iter().map(|b| at(*b, j)).max().unwrap();
            let next = five.iter().map(|b| at(*b, j + 1)).min().unwrap();
            assert!(
                end < next,
                "round {j} of every benchmark before round {} of any",
                j + 1
            );
        }
        let timers = rounded
            .iter()
            .copied()
            .find(|b| benches[*b].id().starts_with("timers"))
            .unwrap();
        let latency = rounded
            .iter()
            .copied()
            .find(|b| benches[*b].id().starts_with("memory.latency"))
            .unwrap();
        for j in 0..4 {
            for t in 5 * j + 1..5 * j + 5 {
                assert!(at(timers, t) < at(latency, j + 1), "{s:?}");
                assert!(at(timers, t) > at(latency, j), "{s:?}");
            }
        }
        // The latency sweep is ahead of the bandwidth arrays it sizes in the first round.
        let pos = |id: &str| {
            s.iter()
                .position(|x| benches[x.bench].id().starts_with(id))
                .unwrap()
        };
        assert!(pos("memory.latency") < pos("memory.bandwidth"));
    }

    #[test]
    fn a_round_only_the_hosts_placement_disturbed_is_not_measured_again() {
        let d = |cause| Disturbance {
            cause,
            value: 5.0,
            limit: 1.5,
            persistent: false,
        };
        assert!(!worth_again(&[]));
        assert!(!worth_again(&[d(Cause::HostPlacement)]));
        assert!(worth_again(&[d(Cause::HostPlacement), d(Cause::Steal)]));
        assert!(worth_again(&[d(Cause::OtherTasks)]));
    }

    #[test]
    fn a_run_in_one_piece_draws_one_round_of_everything() {
        let benches: Vec<&'static dyn Benchmark> = crate::bench::REGISTRY.to_vec();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let s = schedule(&benches, 1, &mut rng);
        assert_eq!(s.len(), benches.len());
        assert!(s.iter().all(|x| x.round == 0));
    }

    #[test]
    fn the_order_is_shuffled_between_rounds() {
        let benches: Vec<&'static dyn Benchmark> = crate::bench::REGISTRY
            .iter()
            .copied()
            .filter(|b| b.in_rounds())
            .collect();
        let n = benches.len();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let s = schedule(&benches, 8, &mut rng);
        let orders: Vec<Vec<usize>> = s
            .chunks(n)
            .map(|c| c.iter().map(|x| x.bench).collect())
            .collect();
        let distinct: std::collections::BTreeSet<&Vec<usize>> = orders.iter().collect();
        assert!(distinct.len() >= 6, "{orders:?}");
        // Over many rounds each benchmark is seen first at least once.
        let firsts: std::collections::BTreeSet<usize> = schedule(&benches, 200, &mut rng)
            .chunks(n)
            .map(|c| c[0].bench)
            .collect();
        assert_eq!(firsts.len(), n);
    }

    #[test]
    fn samples_are_spread_over_the_rounds() {
        let bench = |base: &str| {
            *crate::bench::REGISTRY
                .iter()
                .find(|b| b.id().split('@').next() == Some(base))
                .unwrap()
        };
        let (latency, timers) = (bench("memory.latency"), bench("timers.clock-read"));
        let (bandwidth, c2c) = (bench("memory.bandwidth"), bench("c2c.cacheline"));
        // The run's samples over the benchmark's own rounds, at least two in each ...
        assert_eq!(samples_in_round(latency, 10, 5), 2);
        assert_eq!(samples_in_round(latency, 11, 5), 3);
        assert_eq!(samples_in_round(latency, 3, 5), 2);
        assert_eq!(samples_in_round(c2c, 10, 5), 2, "10 rounds, at least two");
        // ... one where a sample is a whole measurement: more rounds, not more samples.
        assert_eq!(rounds_of(timers, 5), 25);
        assert_eq!(samples_in_round(timers, 10, 5), 1);
        assert_eq!(samples_in_round(timers, 100, 5), 4);
        assert_eq!(rounds_of(bandwidth, 5), 10);
        assert_eq!(samples_in_round(bandwidth, 10, 5), 1);
        // One round, or a benchmark measured in one piece: every sample.
        assert_eq!(samples_in_round(timers, 40, 1), 40);
        // A classic round is one pass of each case: the run's rounds, a pass a round.
        let classic = bench("classic.syscall");
        assert_eq!(rounds_of(classic, 5), 5);
        assert_eq!(classic.min_samples_per_round(), 1);
        assert_eq!(remeasure_budget(5), 3);
        assert_eq!(remeasure_budget(1), 0);
    }

    fn readings(t_ms: u64, busy: u64, steal: u64, total: u64, own: u64) -> Readings {
        Readings {
            t_ns: t_ms * 1_000_000,
            busy_ticks: busy,
            steal_ticks: steal,
            total_ticks: total,
            own_ticks: own,
        }
    }

    #[test]
    fn a_hog_beside_the_round_disturbs_it_and_the_round_itself_does_not() {
        // 1 s on CPUs 0-1 (200 ticks): truebench busy 100 ticks, nothing else.
        let a = readings(0, 0, 0, 0, 0);
        let quiet = readings(1000, 101, 0, 200, 100);
        assert!(judge(&a, &quiet, &[0, 1], 100.0).is_empty());
        // Another task took 48 ticks of CPU 1's 100.
        let hog = readings(1000, 148, 0, 200, 100);
        let d = judge(&a, &hog, &[0, 1], 100.0);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].cause, Cause::OtherTasks);
        let words = d[0].text(Some(&[0, 1]));
        assert!(
            words.starts_with("other tasks used 24% of CPU 0-1"),
            "{words}"
        );
        // The figure is kept below the limit as past it.
        let pct = |r: &Readings| others(&a, r, &[0, 1], 100.0).map(|o| o.percent);
        assert_eq!(pct(&quiet), Some(0.5));
        assert_eq!(pct(&hog), Some(24.0));
        assert_eq!(others(&a, &a, &[0, 1], 100.0), None, "no length, no figure");
        // Two ticks of others in a short round are below what the counters resolve.
        let short = readings(30, 5, 0, 6, 3);
        assert!(judge(&a, &short, &[0, 1], 100.0).is_empty());
    }

    #[test]
    fn steal_disturbs_a_round_past_its_limit_and_our_own_waiting_does_not() {
        let a = readings(0, 0, 0, 0, 0);
        let stolen = readings(1000, 100, 10, 200, 100);
        let d = judge(&a, &stolen, &[0, 1], 100.0);
        assert_eq!(
            d.iter().map(|x| x.cause).collect::<Vec<_>>(),
            vec![Cause::Steal]
        );
        let one_tick = readings(1000, 100, 1, 200, 100);
        assert!(judge(&a, &one_tick, &[0, 1], 100.0).is_empty());
        // The share is recorded below the limit as past it, and not without ticks.
        assert_eq!(steal(&a, &one_tick), Some(0.5));
        assert_eq!(steal(&a, &stolen), Some(5.0));
        assert_eq!(steal(&a, &a), None);
        // truebench's own threads keeping the round's one CPU busy all along (the two ends
        // of a ping-pong in a cpuset of one CPU, the sampler beside them): busy is ours, so
        // nothing disturbed the round however long they waited for each other.
        let own = readings(1000, 100, 0, 100, 100);
        assert!(judge(&a, &own, &[0], 100.0).is_empty());
    }

    #[test]
    fn a_slow_canary_disturbs_and_a_typical_one_does_not() {
        let c = |s| Canary {
            cpu: 1,
            speed: s,
            waited: None,
        };
        let quiet = Typical::of(&[3.0, 3.01, 2.99, 3.02, 2.98]);
        assert!(canary_drop(&c(2.95), quiet).is_none());
        let d = canary_drop(&c(2.7), quiet).unwrap();
        assert_eq!(d.cause, Cause::CpuSpeed);
        assert!((d.value - 10.0).abs() < 0.5, "{d:?}");
        assert!(canary_drop(&c(0.0), quiet).is_none());
        // Too few readings to know the typical one: nothing judged yet.
        assert!(Typical::of(&[3.0, 3.0]).is_none());
        assert!(canary_drop(&c(1.0), None).is_none());
    }

    #[test]
    fn a_run_whose_fastest_canary_was_lucky_flags_no_round() {
        // A quiet run as measured (2026-11-27): most readings 4.13-4.19 GHz, one at 4.32.
        // Against the fastest, 17 of its 40 rounds were "3-5% below"; against the median
        // none of the ordinary readings is, and a reading 6% down still is.
        let mut r: Vec<f64> = (0..39)
            .map(|i| 4.13 + 0.06 * (i % 7) as f64 / 6.0)
            .collect();
        r.push(4.32);
        let t = Typical::of(&r);
        let c = |s| Canary {
            cpu: 0,
            speed: s,
            waited: None,
        };
        assert!(r.iter().all(|s| canary_drop(&c(*s), t).is_none()));
        assert!(canary_drop(&c(3.90), t).is_some());
    }

    #[test]
    fn canaries_that_spread_wide_raise_the_limit() {
        // Readings spread ±4% on a busy host: a reading 5% down is within 4 robust σ.
        let wide: Vec<f64> = (0..20)
            .map(|i| 3.0 * (1.0 + 0.04 * ((i % 5) as f64 - 2.0) / 2.0))
            .collect();
        let t = Typical::of(&wide).unwrap();
        assert!(t.sigma > 0.02, "{t:?}");
        assert!(canary_drop(
            &Canary {
                cpu: 0,
                speed: 2.85,
                waited: None,
            },
            Some(t)
        )
        .is_none());
        assert!(canary_drop(
            &Canary {
                cpu: 0,
                speed: 2.2,
                waited: None
            },
            Some(t)
        )
        .is_some());
    }

    #[test]
    fn a_pair_canary_five_times_the_typical_disturbs_and_one_ten_percent_off_does_not() {
        // Five runs' rounds as measured (2026-11-27 11:59): 22-24 ns on one core's
        // siblings, 119-120 ns in the rounds the host placed the CPUs apart.
        let seen = [23.1, 22.4, 24.0, 23.5, 21.8, 119.0, 22.9, 23.8, 120.1, 23.0];
        let t = Typical::of(&seen);
        let c = |ns| PairCanary { cpus: [0, 1], ns };
        let d = pair_moved(&c(119.0), t).expect("a 5x round is disturbed");
        assert_eq!(d.cause, Cause::HostPlacement);
        let words = d.text(Some(&[0, 1]));
        assert!(
            words.starts_with("a cache line between its CPUs took 5.1x the run's typical time"),
            "{words}"
        );
        assert!(pair_moved(&c(23.1 * 1.1), t).is_none(), "10% off is not");
        // Closer than the run's typical (apart for most of the run) counts too.
        let apart = Typical::of(&[120.0, 119.0, 121.0, 118.5, 24.0]);
        assert!(pair_moved(&c(24.0), apart).is_some());
        assert!(pair_moved(&c(100.0), apart).is_none());
        // Too few readings to know the typical one: nothing judged yet.
        assert!(pair_moved(&c(119.0), Typical::of(&[23.0, 23.0])).is_none());
        // Readings that spread wide raise the limit past 1.5x.
        let wide: Vec<f64> = (0..20)
            .map(|i| 40.0 * (1.0 + 0.15 * ((i % 5) as f64 - 2.0)))
            .collect();
        let t = Typical::of(&wide).unwrap();
        assert!(PAIR_SIGMAS * t.sigma > PAIR_RATIO.ln(), "{t:?}");
        assert!(pair_moved(&c(62.0), Some(t)).is_none());
        assert!(pair_moved(&c(200.0), Some(t)).is_some());
    }

    #[test]
    fn the_progress_line_on_a_host_placement_says_only_the_rows_on_two_cpus_are_kept_out() {
        let t = Typical::of(&[23.1, 22.4, 24.0, 23.5, 21.8, 22.9, 23.8, 23.0]);
        let pair = PairCanary {
            cpus: [0, 1],
            ns: 119.0,
        };
        let moved = pair_moved(&pair, t).expect("a 5x round is disturbed");
        assert_eq!(
            disturbed_line("ctx", 3, std::slice::from_ref(&moved), Some(&pair)).unwrap(),
            "ctx round 3: the host placed the CPUs differently (pair canary 119 ns against 23 ns typical); its rows on two or more CPUs are kept out"
        );
        // Any other cause disturbs the whole round, and the line says so.
        let steal = Disturbance {
            cause: Cause::Steal,
            value: 5.0,
            limit: 2.0,
            persistent: false,
        };
        let line = disturbed_line("ctx", 4, &[steal.clone(), moved], Some(&pair)).unwrap();
        assert_eq!(line, "ctx round 4 disturbed: steal, host-placement");
        assert_eq!(
            disturbed_line("ctx", 5, &[steal], None).unwrap(),
            "ctx round 5 disturbed: steal"
        );
        assert!(disturbed_line("ctx", 6, &[], Some(&pair)).is_none());
    }

    /// A row of c2c (CPUs 0,1) or ctx on one CPU (0,0) with median `m`.
    fn pinned(bench: &str, cpus: Vec<u32>, m: f64) -> BenchResult {
        let mut r = testing::result(bench, "pinned", Some(cpus), json!({}), m);
        r.samples = vec![m * 0.99, m * 1.01];
        r.stats = crate::measure::stats::Stats::of(&r.samples).unwrap();
        r
    }

    #[test]
    fn a_host_placement_round_is_kept_out_of_rows_on_two_cpus_only() {
        let moved = Disturbance {
            cause: Cause::HostPlacement,
            value: 5.2,
            limit: 1.5,
            persistent: false,
        };
        let rounds: Vec<Measured> = [23.0, 119.0, 24.0, 23.5]
            .iter()
            .enumerate()
            .map(|(i, c2c)| {
                let mut m = measured(
                    i,
                    vec![
                        pinned("c2c.cacheline@1", vec![0, 1], *c2c),
                        pinned("ctx.pipe@1", vec![0, 0], 2000.0),
                    ],
                    false,
                );
                if i == 1 {
                    m.disturbed.push(moved.clone());
                }
                m
            })
            .collect();
        let rows = merge(&rounds, None, &|_| {});
        let pair = rows
            .iter()
            .find(|r| r.benchmark.starts_with("c2c"))
            .unwrap();
        let one = rows
            .iter()
            .find(|r| r.benchmark.starts_with("ctx"))
            .unwrap();
        let rs = pair.rounds.as_ref().unwrap();
        assert_eq!((rs.kept(), rs.disturbed()), (3, 1));
        assert_eq!(rs.rounds[1].disturbed[0].cause, Cause::HostPlacement);
        assert!(pair.stats.median < 25.0, "{}", pair.stats.median);
        let rs = one.rounds.as_ref().unwrap();
        assert_eq!(
            (rs.kept(), rs.disturbed()),
            (4, 0),
            "a row on one CPU is untouched"
        );
    }

    #[test]
    fn the_proc_texts_are_read() {
        let stat = "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 10 1 5 100 2 1 1 3 0 0\ncpu1 20 0 0 50 0 0 0 0 0 0\ncpu2 99 99 99 99 0 0 0 9\n";
        assert_eq!(stat_ticks(stat, &[0, 1]), (18 + 20, 3, 123 + 70));
    }

    fn lat(median: f64, spread: f64) -> BenchResult {
        let mut r = testing::result(
            "memory.latency@1",
            "cpus",
            Some(vec![0]),
            json!({"size_bytes": 4096, "pages": "4k"}),
            median,
        );
        r.samples = vec![median * (1.0 - spread), median * (1.0 + spread)];
        r.stats = crate::measure::stats::Stats::of(&r.samples).unwrap();
        r
    }

    fn measured(seq: usize, results: Vec<BenchResult>, disturbed: bool) -> Measured {
        Measured {
            seq,
            window_ns: (0, 0),
            at_s: seq as f64,
            canaries: vec![],
            pair: None,
            disturbed: if disturbed {
                vec![Disturbance {
                    cause: Cause::OtherTasks,
                    value: 40.0,
                    limit: 10.0,
                    persistent: false,
                }]
            } else {
                vec![]
            },
            others: None,
            steal: None,
            results,
        }
    }

    #[test]
    fn rounds_merge_into_one_row_without_the_disturbed_round() {
        let rounds = vec![
            measured(0, vec![lat(10.0, 0.01)], false),
            measured(3, vec![lat(10.1, 0.01)], false),
            measured(6, vec![lat(15.0, 0.01)], true),
            measured(9, vec![lat(9.9, 0.01)], false),
        ];
        let rows = merge(&rounds, None, &|_| {});
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.samples.len(), 6, "the disturbed round's samples are out");
        assert!((r.stats.median - 10.0).abs() < 0.2, "{}", r.stats.median);
        let rs = r.rounds.as_ref().unwrap();
        assert_eq!((rs.rounds.len(), rs.kept(), rs.disturbed()), (4, 3, 1));
        assert_eq!(
            rs.rounds.iter().map(|x| x.seq).collect::<Vec<_>>(),
            vec![0, 3, 6, 9]
        );
        let n = rs.noise.as_ref().unwrap();
        assert_eq!((n.kept, n.df), (3, 2.0));
        // Kept out of the figures: the row's rounds say so, no finding of its own repeats
        // it; the run counts it once.
        assert!(
            !r.findings.iter().any(|f| f.id == "disturbed-rounds"),
            "{:?}",
            r.findings
        );
        let run = crate::findings::results::disturbed_rounds(&rows).unwrap();
        assert!(
            run.message.starts_with("1 of 4 rounds were disturbed"),
            "{}",
            run.message
        );
        // Every round beside a neighbour at a steady share: a condition of the run, kept in
        // its figures (persistent), not a disturbance that leaves nothing to rest on.
        let all: Vec<Measured> = (0..3)
            .map(|i| measured(i, vec![lat(10.0, 0.01)], true))
            .collect();
        let r = &merge(&all, None, &|_| {})[0];
        assert_eq!(r.samples.len(), 6);
        let rs = r.rounds.as_ref().unwrap();
        assert_eq!(rs.kept(), 3);
        assert!(!rs.noise.as_ref().unwrap().includes_disturbed);
        assert!(rs.rounds.iter().all(|x| x.disturbed[0].persistent));
        assert!(crate::findings::results::disturbed_rounds(std::slice::from_ref(r)).is_none());
        // Every round disturbed by bursts of other sizes (12%, 60%, 15%): transient, and
        // with none left the figures and the noise rest on all of them, and say so.
        let all: Vec<Measured> = [12.0, 60.0, 15.0]
            .iter()
            .enumerate()
            .map(|(i, share)| {
                let mut m = measured(i, vec![lat(10.0, 0.01)], true);
                m.disturbed[0].value = *share;
                m
            })
            .collect();
        let r = &merge(&all, None, &|_| {})[0];
        assert_eq!(r.samples.len(), 6);
        assert!(
            r.rounds
                .as_ref()
                .unwrap()
                .noise
                .as_ref()
                .unwrap()
                .includes_disturbed
        );
        assert!(!r.findings.iter().any(|f| f.id == "disturbed-rounds"));
        let run = crate::findings::results::disturbed_rounds(std::slice::from_ref(r)).unwrap();
        assert_eq!(run.severity, crate::findings::Severity::Warning);
        assert!(
            run.message.contains("their figures rest on every round")
                || run.message.contains("its figures rest on every round"),
            "{}",
            run.message
        );
    }

    #[test]
    fn a_finding_of_one_round_stays_with_the_merged_row() {
        let mut odd = lat(10.1, 0.01);
        odd.findings.push(crate::findings::Finding::new(
            "round-in-process",
            crate::findings::Severity::Info,
            "measured in-process",
            vec![],
        ));
        // The round carrying it is not the one nearest the pooled median.
        let rounds = vec![
            measured(0, vec![lat(10.0, 0.01)], false),
            measured(1, vec![odd.clone()], false),
            measured(2, vec![lat(10.0, 0.01)], false),
        ];
        let r = &merge(&rounds, None, &|_| {})[0];
        let f: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.id == "round-in-process")
            .collect();
        assert_eq!(f.len(), 1, "{:?}", r.findings);
        assert_eq!(
            f[0].evidence.last().unwrap(),
            "1 round of the 3 rounds the row's figures rest on"
        );
        // Kept out (disturbed), its round says nothing of the row's figures.
        let rounds = vec![
            measured(0, vec![lat(10.0, 0.01)], false),
            measured(1, vec![odd], true),
            measured(2, vec![lat(10.0, 0.01)], false),
        ];
        let r = &merge(&rounds, None, &|_| {})[0];
        assert!(
            r.findings.iter().all(|f| f.id != "round-in-process"),
            "{:?}",
            r.findings
        );
    }

    #[test]
    fn a_row_some_rounds_lack_is_merged_from_those_that_have_it() {
        let mut other = lat(20.0, 0.01);
        other.params.insert("size_bytes", 8192u64);
        let rounds = vec![
            measured(0, vec![lat(10.0, 0.01), other.clone()], false),
            measured(1, vec![lat(10.0, 0.01)], false),
        ];
        let rows = merge(&rounds, None, &|r| {
            r.derived.insert("x".into(), 1.0 / r.stats.median);
        });
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].rounds.as_ref().unwrap().rounds.len(), 1);
        assert!(rows[1].rounds.as_ref().unwrap().noise.is_none());
        assert_eq!(rows[0].derived["x"], 1.0 / rows[0].stats.median);
    }
}
