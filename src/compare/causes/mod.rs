//! The causes of a real difference between two runs: one file per cause, each a
//! [`Cause`] in [`REGISTRY`], and the candidates nothing quantifies (`candidates`).
//! `explain` holds what they share: the explanation type, a row's context and how a row's
//! explanations combine into its status.
//!
//! Adding a cause touches two places: its file here (its name as the JSON writes it, and an
//! `explain(&RowCtx) -> Option<Explanation>`), and its entry in `REGISTRY`. A cause may import the statistics
//! (`compare::stats`), the pipeline's types (`compare::matching`) and the run document;
//! nothing in `compare::stats` imports a cause.

pub mod candidates;
pub mod capacity;
pub mod cpu_share;
pub mod explain;
pub mod host_memory;
pub mod host_placement;
pub mod llc_share;
pub mod memory_limit;
pub mod neighbour;
pub mod noise;
pub mod placement;
pub mod round_modes;
pub mod run_shift;
pub mod speed;
pub mod steal;
pub mod timer;
pub mod topology;

#[cfg(test)]
pub mod testing;

use explain::{Claim, Explanation, RowCtx};

/// One cause: its name as the JSON writes it, its words in the fleet view, and what it says about a row (nothing when
/// it has nothing to say about this row).
pub struct Cause {
    pub name: &'static str,
    /// What the fleet view calls it ("the clock").
    pub words: &'static str,
    pub explain: fn(&RowCtx) -> Option<Explanation>,
}

/// The names of the causes that can explain a row, in REGISTRY's order (a candidate only
/// ever says "not measured").
pub fn measured_causes() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|c| c.name)
}

/// The causes, in the order a row lists them.
pub const REGISTRY: &[Cause] = &[
    Cause {
        name: placement::PLACEMENT,
        words: "task placement",
        explain: placement::explain,
    },
    Cause {
        name: topology::TOPOLOGY,
        words: "the CPU topology",
        explain: topology::explain,
    },
    Cause {
        name: timer::TIMER,
        words: "the clock",
        explain: timer::explain,
    },
    Cause {
        name: capacity::CAPACITY,
        words: "CPU capacity",
        explain: capacity::explain,
    },
    Cause {
        name: steal::STEAL,
        words: "the hypervisor taking the virtual CPUs' time (steal)",
        explain: steal::explain,
    },
    Cause {
        name: cpu_share::CPU_SHARE,
        words: "the share of a busy CPU the cgroup got (its CPU weight against busy neighbours)",
        explain: cpu_share::explain,
    },
    Cause {
        name: noise::NOISE,
        words: "other processes or steal time",
        explain: noise::explain,
    },
    Cause {
        name: neighbour::NEIGHBOUR,
        words: "other tasks on the CPUs in use",
        explain: neighbour::explain,
    },
    Cause {
        name: host_placement::HOST_PLACEMENT,
        words: "the host's placement of the virtual CPUs",
        explain: host_placement::explain,
    },
    Cause {
        name: llc_share::LLC_SHARE,
        words: "the host's share of the last-level cache",
        explain: llc_share::explain,
    },
    Cause {
        name: host_memory::HOST_MEMORY,
        words: "the host's memory (its placement of the guest's memory, other tenants' traffic)",
        explain: host_memory::explain,
    },
    Cause {
        name: memory_limit::MEMORY_LIMIT,
        words: "the cgroup's memory limit",
        explain: memory_limit::explain,
    },
    Cause {
        name: round_modes::ROUND_MODES,
        words: "which of two modes a row's rounds landed in (a fresh process's cost of one figure or another)",
        explain: round_modes::explain,
    },
    Cause {
        name: run_shift::RUN_SHIFT,
        words: "a stretch of one run at another speed than the rest of it (the host changed for a while)",
        explain: run_shift::explain,
    },
    Cause {
        name: speed::CPU_SPEED,
        words: "CPU clock speed",
        explain: speed::explain,
    },
];

/// Every cause's explanation of a real difference of one row; the candidates nothing
/// quantifies when no cause explains it.
pub fn explain_row(c: &RowCtx, cands: &[candidates::Candidate]) -> Vec<Explanation> {
    let mut out: Vec<Explanation> = REGISTRY
        .iter()
        .filter_map(|cause| (cause.explain)(c))
        .map(|e| e.unless_below_drift(c.drift))
        .collect();
    if !out.iter().any(|e| e.claim == Claim::Explains) {
        let found = candidates::explain(cands, c.ra, &out);
        out.extend(found);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry names each measured cause once, and only those.
    #[test]
    fn the_registry_names_each_cause_once() {
        let names: Vec<&str> = REGISTRY.iter().map(|c| c.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        assert!(!names.contains(&candidates::CANDIDATE));
    }

    /// The names are JSON values users rely on: moving a cause's name into its file changed
    /// none of them.
    #[test]
    fn the_causes_keep_their_json_names() {
        assert_eq!(
            measured_causes().collect::<Vec<_>>(),
            [
                "placement",
                "topology",
                "timer",
                "capacity",
                "steal",
                "cpu-share",
                "noise",
                "neighbour",
                "host-placement",
                "llc-share",
                "host-memory",
                "memory-limit",
                "round-modes",
                "run-shift",
                "cpu-speed",
            ]
        );
        assert_eq!(candidates::CANDIDATE, "candidate");
    }
}
