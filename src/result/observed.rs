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

impl CopiesSeen {
    /// What several rounds saw of the same copies, as one: each copy's CPUs joined and its
    /// rates per pass in round order, the pair observations added and their shared-CPU share
    /// weighted by them, the CPUs each side was seen on joined. None for no rounds.
    pub fn merged(parts: &[&CopiesSeen]) -> Option<CopiesSeen> {
        let mut out = (*parts.first()?).clone();
        for p in &parts[1..] {
            for (mine, theirs) in out.copies.iter_mut().zip(&p.copies) {
                mine.cpus_seen.extend(&theirs.cpus_seen);
                mine.rates.extend(&theirs.rates);
                if let Some(b) = &theirs.partner_cpus_seen {
                    mine.partner_cpus_seen
                        .get_or_insert_with(BTreeSet::new)
                        .extend(b);
                }
            }
            if let Some(t) = &p.tasks {
                let mine = out.tasks.get_or_insert_with(|| Tasks {
                    a: CpusSeen {
                        cpus_seen: BTreeSet::new(),
                    },
                    b: CpusSeen {
                        cpus_seen: BTreeSet::new(),
                    },
                });
                mine.a.cpus_seen.extend(&t.a.cpus_seen);
                mine.b.cpus_seen.extend(&t.b.cpus_seen);
            }
            if let Some(k) = &p.cpu_kinds {
                let mine = out.cpu_kinds.get_or_insert_with(BTreeMap::new);
                for (kind, cpus) in k {
                    let v = mine.entry(kind.clone()).or_default();
                    v.extend(cpus);
                    v.sort_unstable();
                    v.dedup();
                }
            }
        }
        let watched: Vec<(u64, f64)> = parts
            .iter()
            .filter_map(|p| Some((p.observations?, p.colocated_fraction?)))
            .collect();
        if !watched.is_empty() {
            let n: u64 = watched.iter().map(|w| w.0).sum();
            out.observations = Some(n);
            out.colocated_fraction = Some(if n > 0 {
                watched.iter().map(|(k, f)| *k as f64 * f).sum::<f64>() / n as f64
            } else {
                watched.iter().map(|w| w.1).sum::<f64>() / watched.len() as f64
            });
        }
        Some(out)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(cpus: &[u32], rates: &[f64], obs: Option<(u64, f64)>) -> CopiesSeen {
        CopiesSeen {
            copies: vec![CopySeen {
                cpus_seen: cpus.iter().copied().collect(),
                rates: rates.to_vec(),
                partner_cpus_seen: obs.map(|_| BTreeSet::from([1])),
            }],
            observations: obs.map(|o| o.0),
            colocated_fraction: obs.map(|o| o.1),
            tasks: None,
            cpu_kinds: None,
        }
    }

    #[test]
    fn rounds_of_copies_merge_their_cpus_rates_and_observations() {
        // Two rounds of a context-switch copy: together on one CPU in 10% of 100 samples,
        // then in 70% of 300.
        let a = seen(&[0], &[10.0], Some((100, 0.1)));
        let b = seen(&[1], &[12.0], Some((300, 0.7)));
        let m = CopiesSeen::merged(&[&a, &b]).unwrap();
        assert_eq!(m.copies[0].cpus_seen, BTreeSet::from([0, 1]));
        assert_eq!(m.copies[0].rates, vec![10.0, 12.0]);
        assert_eq!(m.observations, Some(400));
        assert!((m.colocated_fraction.unwrap() - 0.55).abs() < 1e-12);
        // Copies not watched as pairs stay without observations.
        let plain =
            CopiesSeen::merged(&[&seen(&[0], &[1.0], None), &seen(&[0], &[2.0], None)]).unwrap();
        assert_eq!((plain.observations, plain.colocated_fraction), (None, None));
        assert!(CopiesSeen::merged(&[]).is_none());
    }
}
