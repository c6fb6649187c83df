//! What was seen while a result ran: for a pair of communicating tasks (ctx), where each
//! task ran, how often they shared a CPU, migrations and switches; for a suite of copies
//! (classic), where each copy ran and its rate per pass. The two JSON shapes are the ones
//! earlier versions wrote; `copies` tells them apart.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Observed {
    /// Parallel copies (the classic suite).
    Copies(CopiesSeen),
    /// Two tasks passing a token (ctx).
    Pair(PairSeen),
}

/// One task of a pair: the CPUs it was seen on and its scheduler counters over the run
/// (null when the kernel does not expose them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSeen {
    pub cpus_seen: Vec<u32>,
    pub migrations: Option<u64>,
    pub voluntary_switches: Option<u64>,
    pub involuntary_switches: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tasks<T> {
    pub a: T,
    pub b: T,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSeen {
    /// Why the placement puts the two tasks where it does, in words.
    pub relation: String,
    pub pinned: bool,
    /// Samples of both tasks' CPUs, and the share of them with both on one CPU.
    pub observations: u64,
    pub colocated_fraction: f64,
    pub round_trips: u64,
    pub tasks: Tasks<TaskSeen>,
    /// Counters that could not be read, with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<BTreeMap<String, String>>,
    /// On a hybrid machine: CPU kind -> the CPUs of that kind the tasks ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_kinds: Option<BTreeMap<String, Vec<u32>>>,
}

/// One copy of a parallel run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopySeen {
    pub cpus_seen: BTreeSet<u32>,
    /// Its rate in each pass, in the result's unit.
    pub rates: Vec<f64>,
    /// For a copy made of two processes (context switch), where the partner ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_cpus_seen: Option<BTreeSet<u32>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpusSeen {
    pub cpus_seen: BTreeSet<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopiesSeen {
    pub copies: Vec<CopySeen>,
    /// For copies made of pairs (context switch): samples, share with the pair on one CPU,
    /// and the CPUs each side was seen on over all copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colocated_fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Tasks<CpusSeen>>,
    /// On a hybrid machine: CPU kind -> the CPUs of that kind the copies ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_kinds: Option<BTreeMap<String, Vec<u32>>>,
}

impl Observed {
    /// The share of observations with both tasks on one CPU, when pairs were watched.
    pub fn colocated_fraction(&self) -> Option<f64> {
        match self {
            Observed::Pair(p) => Some(p.colocated_fraction),
            Observed::Copies(c) => c.colocated_fraction,
        }
    }

    /// How many times both tasks' CPUs were sampled (0 when not known).
    pub fn observations(&self) -> u64 {
        match self {
            Observed::Pair(p) => p.observations,
            Observed::Copies(c) => c.observations.unwrap_or(0),
        }
    }

    /// The CPUs side A and side B were seen on.
    pub fn sides(&self) -> Option<(Vec<u32>, Vec<u32>)> {
        match self {
            Observed::Pair(p) => Some((p.tasks.a.cpus_seen.clone(), p.tasks.b.cpus_seen.clone())),
            Observed::Copies(c) => c.tasks.as_ref().map(|t| {
                (
                    t.a.cpus_seen.iter().copied().collect(),
                    t.b.cpus_seen.iter().copied().collect(),
                )
            }),
        }
    }

    /// Every CPU any task or copy was seen on.
    pub fn all_cpus(&self) -> BTreeSet<u32> {
        match self {
            Observed::Pair(p) => p
                .tasks
                .a
                .cpus_seen
                .iter()
                .chain(&p.tasks.b.cpus_seen)
                .copied()
                .collect(),
            Observed::Copies(c) => c
                .copies
                .iter()
                .flat_map(|c| {
                    c.cpus_seen
                        .iter()
                        .chain(c.partner_cpus_seen.iter().flatten())
                })
                .copied()
                .collect(),
        }
    }

    /// Whether a pair was pinned (None for copies, which do not say).
    pub fn pinned(&self) -> Option<bool> {
        match self {
            Observed::Pair(p) => Some(p.pinned),
            Observed::Copies(_) => None,
        }
    }

    /// Record the kind of every CPU the tasks ran on (hybrid machines).
    pub fn set_cpu_kinds(&mut self, kinds: BTreeMap<String, Vec<u32>>) {
        match self {
            Observed::Pair(p) => p.cpu_kinds = Some(kinds),
            Observed::Copies(c) => c.cpu_kinds = Some(kinds),
        }
    }
}
