//! A row's rounds: a run draws each benchmark's samples in several rounds spread across the
//! run (`session::rounds` schedules them), each drawing afresh what separate runs would
//! (process, allocation, placement of unpinned tasks). Per round the document keeps its
//! median, its sample count, when it ran and what disturbed it; a disturbed round is kept
//! out of the row's samples and figures. From the kept rounds comes the row's own noise
//! (`RoundNoise`): the spread of the round medians, the standard error of the row's median
//! and its degrees of freedom, which `compare`, the fleet view and `trend` test against.

pub mod persistence;
mod store;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What may disturb a round, each read over the round's own window. Not a cause of
/// `compare` (`compare::causes`, why two runs differ) although some names are the same
/// (`cpu-speed`, `steal`, `host-placement`): this says why one round of one run was kept
/// out of its row's figures (`session::disturbance`). The names are the JSON's and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The effective CPU speed canary at the round's start was below the run's typical.
    CpuSpeed,
    /// The hypervisor ran something else on our virtual CPUs (steal).
    Steal,
    /// truebench's own threads waited for a CPU (schedstat run delay).
    RunDelay,
    /// Other tasks used the CPUs the round ran on.
    OtherTasks,
    /// CPU pressure (PSI `some`) over the round.
    Pressure,
    /// The round's median lies far from the others' and nothing recorded says why.
    Outlier,
    /// The pair canary before the round read a cache line between two CPUs far from the
    /// run's typical latency for them: the host placed the virtual CPUs differently (on
    /// one core's SMT siblings, or apart). Only rows on two or more CPUs carry it.
    HostPlacement,
}

impl Cause {
    pub fn text(self) -> &'static str {
        match self {
            Cause::CpuSpeed => "cpu-speed",
            Cause::Steal => "steal",
            Cause::RunDelay => "run-delay",
            Cause::OtherTasks => "other-tasks",
            Cause::Pressure => "cpu-pressure",
            Cause::Outlier => "outlier",
            Cause::HostPlacement => "host-placement",
        }
    }
}

/// One reason a round was disturbed: the figure read and the limit it passed. Its words
/// are made from them ([`Disturbance::text`]), the same for a round just measured and one
/// read back from a document (which stores the figures, not the words).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    pub cause: Cause,
    /// The figure read: a percentage (of the round's CPU time, of the CPU's speed, of the
    /// other rounds' median), or for `host-placement` the pair canary over its typical
    /// reading (x).
    pub value: f64,
    /// The limit it passed, in the unit of `value`.
    pub limit: f64,
    /// Its cause was present throughout the row's rounds at a steady size
    /// ([`persistent_causes`]): a condition of the run, not a disturbance of some of its
    /// rounds. The round is kept (the row is measured as the run is), and `compare` names
    /// the condition as a difference. Absent (false) in documents of earlier versions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
}

impl Disturbance {
    /// In words, with its figures: "other tasks used 48% of CPU 1 (limit 10%)". `cpus`: the
    /// round's CPUs, where known.
    pub fn text(&self, cpus: Option<&[u32]>) -> String {
        let figure = |v| self.cause.figure(v);
        words(self.cause, &figure(self.value), &figure(self.limit), cpus)
    }
}

impl Cause {
    /// A figure of this cause as its words show it: a ratio to one decimal (`1.6`), an
    /// outlier's distance to one decimal, a share of time whole; from the figure as a
    /// document stores it (`digits::SHARE`), so its words read the same before and after.
    fn figure(self, v: f64) -> String {
        let v = super::digits::Digits::Significant(super::digits::SHARE).round(v);
        match self {
            Cause::Outlier | Cause::HostPlacement => format!("{v:.1}"),
            _ => format!("{v:.0}"),
        }
    }
}

/// A cause's disturbance in words, its figure and limit (each one, or a range "15-62")
/// given as text.
fn words(cause: Cause, v: &str, l: &str, cpus: Option<&[u32]>) -> String {
    let on = match cpus {
        Some(c) if !c.is_empty() => format!("CPU {}", crate::probe::cpulist::format_list(c)),
        _ => "the round's CPUs".into(),
    };
    match cause {
        Cause::CpuSpeed => {
            format!("the CPU ran {v}% below the run's typical speed before the round (limit {l}%)")
        }
        Cause::Steal => format!("the hypervisor stole {v}% of {on} (limit {l}%)"),
        Cause::RunDelay => {
            format!("truebench's threads waited for a CPU {v}% of the round (limit {l}%)")
        }
        Cause::OtherTasks => format!("other tasks used {v}% of {on} (limit {l}%)"),
        Cause::Pressure => {
            format!("some task waited for a CPU {v}% of the round (PSI cpu some, limit {l}%)")
        }
        Cause::Outlier => format!(
            "median {v}% from the other rounds' (limit {l}%: {OUTLIER_SIGMAS} robust σ), nothing recorded disturbed it"
        ),
        Cause::HostPlacement => format!(
            "a cache line between its CPUs took {v}x the run's typical time before the round (limit {l}x or 1/{l}): the host placed the CPUs differently"
        ),
    }
}

/// Other tasks' CPU time on the CPUs a round ran on, over the round, recorded whether or
/// not it passed the limit that disturbs the round (a neighbour present all along may stay
/// below it, or pass it in every round; `compare`'s neighbour cause reads it either way).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Others {
    /// The round's CPUs (its planned CPUs; every usable CPU for an unpinned case).
    pub cpus: Vec<u32>,
    /// Their busy time less truebench's own, as a percentage of their time over the round.
    pub percent: f64,
}

/// Declares [`Round`] from its figures, and the columns a document stores them in
/// (`Columns`): each entry is a field of `Round` and a column holding its value in every
/// round (one value when every round has the same), written to its [`store::Digits`]. A
/// figure added to a round is one entry here; an `Option` one may be absent (documents
/// written before it have no column).
macro_rules! round_figures {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $digits:expr;)*) => {
        /// One round of a row.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Round {
            /// Its place among all the rounds of the run (0-based): when it ran relative to
            /// the rounds of other benchmarks. Its column, a value per round, counts them.
            pub seq: usize,
            $($(#[$doc])* pub $name: $ty,)*
            /// What disturbed it; empty when nothing did. A disturbed round is kept out of
            /// the row's samples, statistics and noise.
            pub disturbed: Vec<Disturbance>,
            /// Other tasks' CPU time on the round's CPUs; absent in documents of earlier
            /// versions and where /proc/stat could not be read.
            pub others: Option<Others>,
        }

        /// A row's rounds as stored: a column per figure, then what is not a plain figure.
        #[derive(Debug, Serialize, Deserialize)]
        struct Columns {
            #[serde(default)]
            seq: Vec<usize>,
            $(
                #[serde(default, skip_serializing_if = "store::Column::is_absent")]
                $name: store::Column<$ty>,
            )*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            others: Option<store::OthersColumns>,
            #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
            disturbed: BTreeMap<Cause, store::CauseColumn>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            noise: Option<RoundNoise>,
            /// The object per round of earlier versions' documents: read, never written.
            #[serde(default, skip_serializing)]
            rounds: Option<Vec<store::RowRound>>,
        }

        impl Columns {
            /// Each figure of `rounds` in its column, written to its digits.
            fn figures(rounds: &[Round]) -> Columns {
                Columns {
                    seq: rounds.iter().map(|r| r.seq).collect(),
                    $($name: store::column(rounds.iter().map(|r| r.$name), $digits),)*
                    others: None,
                    disturbed: BTreeMap::new(),
                    noise: None,
                    rounds: None,
                }
            }

            /// Every figure of `rounds` set from its column (of one value per round).
            fn set_figures(&self, rounds: &mut [Round]) -> Result<(), String> {
                for (r, seq) in rounds.iter_mut().zip(&self.seq) {
                    r.seq = *seq;
                }
                $(store::set_column(&self.$name, rounds, stringify!($name), |r, v| r.$name = v)?;)*
                Ok(())
            }
        }
    };
}

round_figures! {
    /// Seconds from the run's first round to this round's start.
    at_s: f64 = super::digits::ROUND_START;
    /// The median of the round's samples, in the row's unit.
    median: f64 = store::Digits::Significant(store::MEDIAN_DIGITS);
    /// Samples (timed batches) the round drew.
    samples: usize = store::Digits::Exact;
    /// The hypervisor's steal: the share (%) of the round's CPUs' time (those of `others`)
    /// it gave to something else, recorded below the disturbance limit as past it (`compare`'s
    /// steal cause reads it either way). Absent in documents of earlier versions and where
    /// /proc/stat could not be read.
    steal: Option<f64> = store::Digits::Significant(super::digits::SHARE);
    /// The share (%) of their wall time the canaries before the round waited for a CPU on
    /// this machine's own run queues (schedstat run delay, `measure::run_delay`): what the
    /// round's cgroup got of a busy CPU against the tasks beside it (its weight), apart from
    /// the hypervisor's steal. Absent in documents of earlier versions and where schedstat
    /// is unreadable.
    waited: Option<f64> = store::Digits::Significant(super::digits::SHARE);
}

impl Round {
    /// Whether the row's figures rest on this round: nothing disturbed it but the
    /// conditions present throughout the row's rounds (`Disturbance::persistent`).
    pub fn kept(&self) -> bool {
        self.disturbed.iter().all(|d| d.persistent)
    }

    /// What set this round aside: its disturbances but the persistent ones.
    pub fn transient(&self) -> impl Iterator<Item = &Disturbance> {
        self.disturbed.iter().filter(|d| !d.persistent)
    }

    /// A figure the round recorded below its disturbance limit as past it (`others`,
    /// `steal`), else the value of its disturbance by `cause`: documents of earlier
    /// versions kept the figure only for rounds past the limit.
    pub fn figure_or_disturbance(&self, recorded: Option<f64>, cause: Cause) -> Option<f64> {
        recorded.or_else(|| {
            self.disturbed
                .iter()
                .find(|d| d.cause == cause)
                .map(|d| d.value)
        })
    }

    /// A disturbance of this round in words, on its CPUs where they are known.
    pub fn text(&self, d: &Disturbance) -> String {
        d.text(self.others.as_ref().map(|o| o.cpus.as_slice()))
    }
}

/// What disturbed a row's rounds, a line per cause: the round it disturbed, numbered among
/// the row's (`round 2 of 5 at 1.9 s: ...`, as the finding counts them and progress names
/// them; `seq`, 0-based across the run, read "round 0" beside "2 of 2 rounds"), or the
/// first few of the rounds it disturbed (or `all 40 rounds`) and the range of its figures
/// (`rounds 1, 2, 4 and 37 more of 40: other tasks used 15-62% of CPU 0-1 (limit 10%)`);
/// the rounds themselves hold every figure.
pub fn disturbed_evidence(rounds: &[Round]) -> Vec<String> {
    let total = rounds.len();
    let mut causes: Vec<Cause> = vec![];
    for d in rounds.iter().flat_map(|r| &r.disturbed) {
        if !causes.contains(&d.cause) {
            causes.push(d.cause);
        }
    }
    causes
        .into_iter()
        .map(|cause| {
            // The rounds it disturbed, and its disturbances in them (a round can hold two:
            // the speed canaries of two CPUs).
            let hit: Vec<(usize, &Round)> = rounds
                .iter()
                .enumerate()
                .filter(|(_, r)| r.disturbed.iter().any(|d| d.cause == cause))
                .collect();
            let all: Vec<&Disturbance> = hit
                .iter()
                .flat_map(|(_, r)| r.disturbed.iter().filter(|d| d.cause == cause))
                .collect();
            let (i, r) = hit[0];
            let which = if hit.len() == 1 {
                // As stored, so its words read the same before and after.
                let at = super::digits::ROUND_START.round(r.at_s);
                format!("round {} of {total} at {at:.1} s", i + 1)
            } else if hit.len() == total {
                format!("all {total} rounds")
            } else {
                let numbers: Vec<usize> = hit.iter().map(|(i, _)| i + 1).collect();
                format!("rounds {} of {total}", crate::finding::first_few(&numbers))
            };
            // The figures (and limits) as one, or their range.
            let range = |f: fn(&Disturbance) -> f64| {
                let v = all.iter().map(|d| f(d));
                let lo = cause.figure(v.clone().fold(f64::INFINITY, f64::min));
                let hi = cause.figure(v.fold(f64::NEG_INFINITY, f64::max));
                if lo == hi {
                    lo
                } else {
                    format!("{lo}-{hi}")
                }
            };
            let cpus = r.others.as_ref().map(|o| o.cpus.as_slice());
            let said = words(cause, &range(|d| d.value), &range(|d| d.limit), cpus);
            format!("{which}: {said}")
        })
        .collect()
}

/// The row's own noise from its kept rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundNoise {
    /// Rounds the figures rest on (undisturbed).
    pub kept: usize,
    /// Standard deviation of ln(round median) between the kept rounds (written to
    /// `digits::SHARE` significant digits, as is `se`).
    #[serde(serialize_with = "super::digits::share")]
    pub sigma: f64,
    /// Standard error of ln(the row's median): σ/√kept, at least what the pooled samples'
    /// own confidence interval gives.
    #[serde(serialize_with = "super::digits::share")]
    pub se: f64,
    /// Degrees of freedom of `se` (kept − 1; with `stage1`, the kept rounds of the stage σ
    /// comes from, less one: `sigma_stage`).
    pub df: f64,
    /// The row's rounds were chosen in two stages (the run's allocation, `--precision`):
    /// the first this many were measured before any was added, and σ with its degrees of
    /// freedom come from one stage alone (`sigma_stage`), so the test keeps its error rate
    /// although the number of rounds was chosen from the data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage1: Option<usize>,
    /// Fewer than two rounds were undisturbed, so the figures and this noise rest on every
    /// round, disturbed ones included (the disturbance is then in the figures).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub includes_disturbed: bool,
}

/// Every round of a row and the noise of its kept ones. Stored as columns (`store`); the
/// object per round of earlier versions' documents reads too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Columns", try_from = "Columns")]
pub struct Rounds {
    pub rounds: Vec<Round>,
    /// Absent with fewer than two kept rounds (no spread to read).
    pub noise: Option<RoundNoise>,
}

impl Rounds {
    pub fn kept(&self) -> usize {
        self.rounds.iter().filter(|r| r.kept()).count()
    }

    pub fn disturbed(&self) -> usize {
        self.rounds.len() - self.kept()
    }

    /// The causes present throughout these rounds (`persistence`), as the document marks
    /// them, in figures: what each took over the rounds the figures rest on.
    pub fn persistent(&self) -> Vec<persistence::Condition> {
        let mut causes: Vec<Cause> = self
            .rounds
            .iter()
            .flat_map(|r| r.disturbed.iter().filter(|d| d.persistent).map(|d| d.cause))
            .collect();
        causes.sort();
        causes.dedup();
        let pooled = self.pooled();
        causes
            .into_iter()
            .filter_map(|c| persistence::took(&pooled, c))
            .collect()
    }

    /// The row's level as its rounds give it, for a test between runs: the mean of the log
    /// medians of the rounds its figures rest on (`pooled`), with the row's stored noise (σ
    /// about the pooled median, at least the spread about the mean, so the test keeps to
    /// the safe side of its error rate). None without a spread of rounds.
    ///
    /// The mean, not the pooled median, because a round is the unit drawn afresh: where the
    /// rounds fall in two modes (a fresh process's syscalls at 250 or 300 ns), the pooled
    /// median jumps from one mode to the other as their shares cross a half, far more than
    /// σ/√n says, while the mean moves with the shares. On three A/A sets of 2026-11-29
    /// (docs/measurements.md) the calls no measured cause claimed fell from 8, 17 and 25 to
    /// 2, 8 and 11 over 10 pairs each, at the same MDEs.
    pub fn level(&self) -> Option<(f64, RoundNoise)> {
        let noise = self.noise.as_ref()?;
        let logs = self.pooled_logs();
        if logs.len() < 2 {
            return None;
        }
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        // A two-stage row's σ comes from one stage (`sigma_stage`); where its stages sit
        // apart (a host state that changed between them, a row at a cache's edge in one
        // mode and then the other) that σ misses the distance the mean spans, and the test
        // would call it: σ is at least the pooled rounds' spread about their mean.
        let spread = sd(&logs);
        let mut noise = noise.clone();
        if spread > noise.sigma {
            noise.sigma = spread;
            noise.se = spread / (logs.len() as f64).sqrt();
        }
        Some((mean, noise))
    }

    /// The log medians of the rounds the row's figures rest on (`pooled`), in their order.
    pub fn pooled_logs(&self) -> Vec<f64> {
        self.pooled()
            .into_iter()
            .filter(|r| r.median > 0.0 && r.median.is_finite())
            .map(|r| r.median.ln())
            .collect()
    }

    /// The rounds the row's figures rest on: the kept ones, every round when fewer than two
    /// were kept (as `run` pools them).
    pub fn pooled(&self) -> Vec<&Round> {
        let all_count = self.kept() < 2;
        self.rounds
            .iter()
            .filter(|r| all_count || r.kept())
            .collect()
    }

    /// Whether these can be the rounds `samples` were drawn in, as `run` writes them: the
    /// pooled rounds drew every sample (their counts add up to the samples'), each pooled
    /// round's median lies among the samples, and the noise rests on the pooled rounds with
    /// a spread no wider than the samples'. Why not, otherwise: an imported document whose
    /// rounds disagree with its samples gave `compare` a noise of its own making (a σ of
    /// 1e300 printed an infinite MDE).
    pub fn check(&self, samples: &[f64]) -> Result<(), String> {
        use crate::units::num;
        let pooled = self.pooled();
        let drawn: usize = pooled.iter().map(|r| r.samples).sum();
        if drawn != samples.len() {
            return Err(format!(
                "its rounds drew {} but it holds {}",
                crate::units::count(drawn, "sample"),
                crate::units::count(samples.len(), "sample")
            ));
        }
        let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = samples.iter().copied().fold(0.0, f64::max);
        // A stored median is rounded to `MEDIAN_DIGITS` significant digits.
        let slack = store::median_slack() * hi;
        if let Some(r) = pooled
            .iter()
            .find(|r| r.median < lo - slack || r.median > hi + slack)
        {
            return Err(format!(
                "round {}'s median {} lies outside its samples ({} to {})",
                r.seq,
                num(r.median),
                num(lo),
                num(hi)
            ));
        }
        let Some(n) = &self.noise else {
            return Ok(());
        };
        // Every pooled median and the row's median lie within [lo, hi]: no log deviation
        // exceeds ln(hi/lo), and σ (over n - 1 >= n/2) at most √2 times it.
        // (σ and se are written to `digits::SHARE` significant digits.)
        let written = super::digits::Digits::Significant(super::digits::SHARE).slack();
        let widest = std::f64::consts::SQRT_2 * (hi / lo).ln() * (1.0 + 1e-9 + written) + 1e-12;
        if n.kept != pooled.len() {
            Err(format!(
                "its noise rests on {} but {} of its rounds are pooled",
                crate::units::count(n.kept, "round"),
                pooled.len()
            ))
        } else if n.df > (n.kept - 1) as f64 {
            Err(format!(
                "its noise has {} degrees of freedom from {}",
                num(n.df),
                crate::units::count(n.kept, "round")
            ))
        } else if n.sigma > widest || n.se > widest {
            Err(format!(
                "its noise (sigma {}, se {}) is wider than its samples spread (at most {})",
                num(n.sigma),
                num(n.se),
                num(widest)
            ))
        } else {
            Ok(())
        }
    }

    /// How many rounds each transient cause set aside, most first ("3 cpu-speed, 1
    /// steal"); a round a cause disturbed twice (the speed canaries of two CPUs) counts
    /// once. A persistent cause sets no round aside: [`Rounds::persistent`].
    pub fn causes(&self) -> Vec<(Cause, usize)> {
        let mut out: Vec<(Cause, usize)> = vec![];
        for r in &self.rounds {
            for (i, d) in r.disturbed.iter().enumerate() {
                if d.persistent || r.disturbed[..i].iter().any(|e| e.cause == d.cause) {
                    continue;
                }
                match out.iter_mut().find(|(c, _)| *c == d.cause) {
                    Some((_, n)) => *n += 1,
                    None => out.push((d.cause, 1)),
                }
            }
        }
        out.sort_by_key(|x| std::cmp::Reverse(x.1));
        out
    }
}

/// Fewest rounds whose spread is read; a round far from these many others is an outlier.
pub const MIN_FOR_OUTLIERS: usize = 5;
/// A round further than this many robust σ from the median of the rounds is an outlier.
pub const OUTLIER_SIGMAS: f64 = 4.0;
/// The smallest robust σ the outlier test assumes (1.4826·MAD of a few quiet rounds can be
/// near zero): 0.5% per round.
pub const OUTLIER_MIN_SIGMA: f64 = 0.005;

/// 1.4826·MAD of `x`: the standard deviation of normal data, robust to a few far points.
pub fn robust_sigma(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let med = median(x);
    let dev: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
    1.4826 * median(&dev)
}

/// The median of `x` (NaN-free; the mean of the middle two for an even count).
pub fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Flag, among the rounds nothing else disturbed, those whose log median lies more than
/// OUTLIER_SIGMAS robust σ from the others' median (with at least MIN_FOR_OUTLIERS of
/// them, and fewer than a third of them: a row whose rounds split in two is noisy, not
/// disturbed).
pub fn flag_outliers(rounds: &mut [Round]) {
    let idx: Vec<usize> = (0..rounds.len()).filter(|i| rounds[*i].kept()).collect();
    if idx.len() < MIN_FOR_OUTLIERS {
        return;
    }
    let x: Vec<f64> = idx.iter().map(|i| rounds[*i].median.ln()).collect();
    let med = median(&x);
    let s = robust_sigma(&x).max(OUTLIER_MIN_SIGMA);
    let limit = OUTLIER_SIGMAS * s;
    let far: Vec<(usize, f64)> = idx
        .iter()
        .zip(&x)
        .map(|(i, v)| (*i, (v - med).abs()))
        .filter(|(_, d)| *d > limit)
        .collect();
    if far.len() * 3 >= idx.len() {
        return;
    }
    for (i, d) in far {
        rounds[i].disturbed.push(Disturbance {
            cause: Cause::Outlier,
            value: d.exp_m1() * 100.0,
            limit: limit.exp_m1() * 100.0,
            persistent: false,
        });
    }
}

/// The log medians of the kept rounds among `rounds`.
fn kept_logs<'a>(rounds: impl Iterator<Item = &'a Round>) -> Vec<f64> {
    rounds
        .filter(|r| r.kept() && r.median > 0.0 && r.median.is_finite())
        .map(|r| r.median.ln())
        .collect()
}

/// Sample standard deviation (n − 1).
fn sd(x: &[f64]) -> f64 {
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// Which stage of a two-stage row σ comes from, given the kept rounds of its first stage
/// and of the rounds added after it: the one with more (ties: the first), whose count less
/// one is the test's degrees of freedom. The number of rounds added was decided from the
/// first stage alone, so the added rounds are independent of it: σ from the first stage
/// with every round's mean is Stein's two-stage rule (t with the first stage's degrees of
/// freedom), σ from the added rounds alone is a plain t on rounds the data did not choose.
/// Taking whichever has more kept rounds lets a row given many rounds be judged by them
/// (a first stage of three leaves two degrees of freedom: t quantiles 4.30 + 1.06 against
/// 2.09 + 0.86 at twenty); the choice depends on the first stage through the number added,
/// which keeps the A/A rate at 5% in simulation (`session::allocate`'s and
/// `session::precision`'s tests, σ 0.5-30% with bursts).
pub fn sigma_stage(first_kept: usize, added_kept: usize) -> Stage {
    if added_kept > first_kept {
        Stage::Added
    } else {
        Stage::First
    }
}

/// A stage of a two-stage row (`sigma_stage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    First,
    Added,
}

/// The degrees of freedom the test of a two-stage row will have with `kept` kept rounds
/// in all, `first_kept` of them in its first stage (`sigma_stage`).
pub fn two_stage_df(first_kept: usize, kept: usize) -> f64 {
    let added = kept.saturating_sub(first_kept);
    match sigma_stage(first_kept, added) {
        Stage::First => first_kept.saturating_sub(1) as f64,
        Stage::Added => (added - 1) as f64,
    }
}

/// The noise of the kept rounds: the spread of their log medians about the row's reported
/// log median `center` (the pooled samples' median; about the rounds' own mean without one),
/// and the standard error of that median, σ/√kept. The spread about the reported median
/// holds the pooled median's own instability: when the samples are bimodal (a quota
/// throttles some of them) and the pooled median falls in one mode while the rounds sit
/// between the modes, the rounds disagree with it and σ says so. With `stage1` (rounds in
/// measured order, the first `stage1` chosen before any was added), σ and df come from the
/// kept rounds of one stage (`sigma_stage`). None with fewer than two kept rounds (in the
/// first stage, with `stage1`).
///
/// With fewer than two undisturbed rounds, every round counts (`includes_disturbed`).
pub fn noise_of(
    rounds: &[Round],
    center: Option<f64>,
    stage1: Option<usize>,
) -> Option<RoundNoise> {
    let includes_disturbed = kept_logs(rounds.iter()).len() < 2;
    let logs = |rs: &[Round]| {
        if includes_disturbed {
            rs.iter()
                .filter(|r| r.median > 0.0 && r.median.is_finite())
                .map(|r| r.median.ln())
                .collect()
        } else {
            kept_logs(rs.iter())
        }
    };
    let all: Vec<f64> = logs(rounds);
    let basis: Vec<f64> = match stage1 {
        Some(n) => {
            let (first, added) = rounds.split_at(n.min(rounds.len()));
            let (first, added) = (logs(first), logs(added));
            if first.len() < 2 {
                return None;
            }
            match sigma_stage(first.len(), added.len()) {
                Stage::First => first,
                Stage::Added => added,
            }
        }
        None => all.clone(),
    };
    if basis.len() < 2 {
        return None;
    }
    let sigma = match center.filter(|c| c.is_finite()) {
        Some(c) => {
            (basis.iter().map(|v| (v - c).powi(2)).sum::<f64>() / (basis.len() - 1) as f64).sqrt()
        }
        None => sd(&basis),
    };
    Some(RoundNoise {
        kept: all.len(),
        sigma,
        se: sigma / (all.len() as f64).sqrt(),
        df: (basis.len() - 1) as f64,
        stage1: stage1.filter(|n| *n < rounds.len()),
        includes_disturbed,
    })
}

/// Undisturbed rounds of two samples each whose medians have these logs, for tests.
#[cfg(test)]
pub fn quiet_rounds(logs: &[f64]) -> Vec<Round> {
    logs.iter()
        .enumerate()
        .map(|(i, x)| Round {
            seq: i,
            waited: None,
            at_s: i as f64,
            median: x.exp(),
            samples: 2,
            disturbed: vec![],
            others: None,
            steal: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disturbed_rounds_are_numbered_among_the_rows_from_1() {
        let mut r = rounds(&[1.0, 2.0]);
        r[0].seq = 7;
        r[0].disturbed.push(Disturbance {
            cause: Cause::OtherTasks,
            value: 74.0,
            limit: 20.0,
            persistent: false,
        });
        r[0].others = Some(Others {
            cpus: vec![0, 1],
            percent: 74.0,
        });
        let lines: Vec<String> = disturbed_evidence(&r);
        assert_eq!(
            lines,
            ["round 1 of 2 at 0.0 s: other tasks used 74% of CPU 0-1 (limit 20%)"]
        );
    }

    #[test]
    fn many_disturbed_rounds_make_a_line_per_cause_with_the_range_of_its_figures() {
        // Forty rounds beside a build: other tasks in each, PSI pressure in every other.
        let mut r = rounds(&[1.0; 40]);
        for (i, x) in r.iter_mut().enumerate() {
            x.others = Some(Others {
                cpus: vec![0, 1],
                percent: 15.0 + i as f64,
            });
            x.disturbed.push(Disturbance {
                cause: Cause::OtherTasks,
                value: 15.0 + i as f64,
                limit: 10.0,
                persistent: false,
            });
            if i % 2 == 1 {
                x.disturbed.push(Disturbance {
                    cause: Cause::Outlier,
                    value: 8.21,
                    limit: 4.0 + i as f64 / 10.0,
                    persistent: false,
                });
            }
        }
        assert_eq!(
            disturbed_evidence(&r),
            [
                "all 40 rounds: other tasks used 15-54% of CPU 0-1 (limit 10%)",
                "rounds 2, 4, 6 and 17 more of 40: median 8.2% from the other rounds' (limit 4.1-7.9%: 4 robust σ), nothing recorded disturbed it",
            ]
        );
        // Two rounds of a cause: both named.
        assert!(disturbed_evidence(&r[..4])[1].starts_with("rounds 2 and 4 of 4: median 8.2%"));
        // One cause twice in a round (two CPUs' speed canaries): one round, both figures.
        let mut two = rounds(&[1.0, 1.0]);
        for v in [4.0, 6.0] {
            two[1].disturbed.push(Disturbance {
                cause: Cause::CpuSpeed,
                value: v,
                limit: 3.0,
                persistent: false,
            });
        }
        assert_eq!(
            disturbed_evidence(&two),
            ["round 2 of 2 at 1.0 s: the CPU ran 4-6% below the run's typical speed before the round (limit 3%)"]
        );
        let counted = Rounds {
            rounds: two,
            noise: None,
        };
        assert_eq!(counted.causes(), [(Cause::CpuSpeed, 1)]);
    }

    fn rounds(medians: &[f64]) -> Vec<Round> {
        medians
            .iter()
            .enumerate()
            .map(|(i, m)| Round {
                seq: i,
                waited: None,
                at_s: i as f64,
                median: *m,
                samples: 4,
                disturbed: vec![],
                others: None,
                steal: None,
            })
            .collect()
    }

    #[test]
    fn a_lone_far_round_is_an_outlier_and_quiet_rounds_are_not() {
        let mut r = rounds(&[100.0, 100.4, 99.8, 100.1, 112.0, 99.9]);
        flag_outliers(&mut r);
        let flagged: Vec<usize> = (0..r.len()).filter(|i| !r[*i].kept()).collect();
        assert_eq!(flagged, vec![4]);
        assert_eq!(r[4].disturbed[0].cause, Cause::Outlier);
        // Rounds within a few tenths of a percent: the 0.5% minimum σ keeps them all.
        let mut q = rounds(&[100.0, 100.0, 100.0, 100.0, 101.5]);
        flag_outliers(&mut q);
        assert!(q.iter().all(Round::kept), "{q:?}");
        // Too few rounds to judge: nothing flagged.
        let mut few = rounds(&[100.0, 100.0, 150.0]);
        flag_outliers(&mut few);
        assert!(few.iter().all(Round::kept));
    }

    #[test]
    fn rounds_split_in_two_are_noise_not_outliers() {
        let mut r = rounds(&[100.0, 100.0, 100.0, 130.0, 131.0, 100.0]);
        flag_outliers(&mut r);
        assert!(r.iter().all(Round::kept), "{r:?}");
    }

    #[test]
    fn the_noise_uses_the_kept_rounds_about_the_reported_median() {
        let mut r = rounds(&[100.0, 102.0, 98.0, 101.0, 99.0]);
        let n = noise_of(&r, None, None).unwrap();
        assert_eq!((n.kept, n.df), (5, 4.0));
        let x: Vec<f64> = [100.0f64, 102.0, 98.0, 101.0, 99.0]
            .iter()
            .map(|v| v.ln())
            .collect();
        let m = x.iter().sum::<f64>() / 5.0;
        let want = (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!((n.sigma - want).abs() < 1e-12);
        assert!((n.se - want / 5f64.sqrt()).abs() < 1e-12);
        // About a reported median at their own centre, the same spread.
        let c = noise_of(&r, Some(m), None).unwrap();
        assert!((c.sigma - want).abs() < 1e-12);
        // Rounds that agree with each other but not with the reported median (a pooled
        // median fallen into one mode of bimodal samples): σ holds the distance.
        let far = noise_of(&r, Some(m + 0.5), None).unwrap();
        assert!(far.sigma > 0.5 && far.se > 0.5 / 5f64.sqrt(), "{far:?}");
        // A disturbed round is left out.
        let steal = Disturbance {
            cause: Cause::Steal,
            value: 30.0,
            limit: 5.0,
            persistent: false,
        };
        r[1].disturbed.push(steal.clone());
        let n = noise_of(&r, None, None).unwrap();
        assert_eq!((n.kept, n.includes_disturbed), (4, false));
        // Fewer than two undisturbed: every round counts, and says so.
        let mut most = rounds(&[100.0, 102.0, 98.0]);
        most[0].disturbed.push(steal.clone());
        most[1].disturbed.push(steal);
        let n = noise_of(&most, None, None).unwrap();
        assert_eq!((n.kept, n.includes_disturbed), (3, true));
        // Two-stage: σ and df from the first 3 rounds, se over all 4 kept.
        let two = noise_of(&r, None, Some(3)).unwrap();
        let first: Vec<f64> = [100.0f64, 98.0].iter().map(|v| v.ln()).collect();
        assert_eq!((two.kept, two.df, two.stage1), (4, 1.0, Some(3)));
        assert!(!two.includes_disturbed);
        assert!((two.sigma - sd(&first)).abs() < 1e-12);
        assert!((two.se - two.sigma / 2.0).abs() < 1e-12);
        // One kept round has no spread.
        assert!(noise_of(&r[..1], None, None).is_none());
        // Three first-stage rounds, then five added: σ and df from the five added alone
        // (one loud first-stage round no longer sets the row's σ), se over all eight.
        let r = rounds(&[100.0, 130.0, 100.0, 101.0, 99.0, 100.0, 101.0, 99.0]);
        let two = noise_of(&r, None, Some(3)).unwrap();
        let added: Vec<f64> = [101.0f64, 99.0, 100.0, 101.0, 99.0]
            .iter()
            .map(|v| v.ln())
            .collect();
        assert_eq!((two.kept, two.df), (8, 4.0));
        assert!((two.sigma - sd(&added)).abs() < 1e-12);
        assert!((two.se - two.sigma / 8f64.sqrt()).abs() < 1e-12);
        // As many added as first: the first stage's, Stein's rule.
        let even = noise_of(&r[..6], None, Some(3)).unwrap();
        assert_eq!(even.df, 2.0);
        assert!(even.sigma > 0.1, "{}", even.sigma);
        assert_eq!(two_stage_df(3, 6), 2.0);
        assert_eq!(two_stage_df(3, 8), 4.0);
        assert_eq!(two_stage_df(5, 5), 4.0);
    }

    #[test]
    fn causes_are_counted_most_first() {
        let mut r = rounds(&[1.0, 1.0, 1.0]);
        let d = |c| Disturbance {
            cause: c,
            value: 1.0,
            limit: 0.5,
            persistent: false,
        };
        r[0].disturbed.push(d(Cause::Steal));
        r[1].disturbed.push(d(Cause::CpuSpeed));
        r[2].disturbed.push(d(Cause::CpuSpeed));
        let all = Rounds {
            rounds: r,
            noise: None,
        };
        assert_eq!(all.causes(), vec![(Cause::CpuSpeed, 2), (Cause::Steal, 1)]);
        assert_eq!((all.kept(), all.disturbed()), (0, 3));
    }

    /// A row whose first stage of three rounds ran 8x above its five added ones (a 5.7 MiB
    /// latency chain out of the LLC, then in it; an A/A of 2026-12-07 22:00 called it "B 1%
    /// slower" at p 1e-5): the level's σ spans both stages, not the added stage's 4%.
    #[test]
    fn a_level_whose_stages_sit_apart_carries_their_distance() {
        let r = rounds(&[128.3, 134.3, 97.8, 16.4, 16.7, 16.0, 17.4, 16.0]);
        let noise = noise_of(&r, None, Some(3)).unwrap();
        assert!(noise.sigma < 0.05, "{noise:?}");
        let rs = Rounds {
            rounds: r,
            noise: Some(noise),
        };
        let (mean, n) = rs.level().unwrap();
        let logs = rs.pooled_logs();
        assert!((mean - logs.iter().sum::<f64>() / 8.0).abs() < 1e-12);
        assert!(
            (n.sigma - sd(&logs)).abs() < 1e-12 && n.sigma > 0.9,
            "{n:?}"
        );
        assert!((n.se - n.sigma / 8f64.sqrt()).abs() < 1e-12);
        // Rounds of one mode keep their own σ.
        let calm = rounds(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.0]);
        let noise = noise_of(&calm, None, Some(3)).unwrap();
        let rs = Rounds {
            rounds: calm,
            noise: Some(noise.clone()),
        };
        assert_eq!(rs.level().unwrap().1, noise);
    }
}
