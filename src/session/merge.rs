//! A benchmark's rounds merged into one result per row: the rounds as measured
//! (`Measured`), the causes present throughout them, and the row's samples, statistics and
//! noise from its kept rounds (`merge`).

use super::disturbance::{uses_two_cpus, waited, Canary, PairCanary};
use crate::result::rounds::{self, Cause, Disturbance, Others, Round, Rounds};
use crate::result::BenchResult;

/// Findings a single round's results carry about how that round was measured: the merged
/// row keeps them whichever round it is based on.
pub const ROUND_FINDINGS: &[&str] = &["round-in-process"];
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
        let with: Vec<&crate::finding::Finding> = pool
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
