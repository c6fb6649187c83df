//! The causes of a real difference between two runs: one file per cause, each a
//! [`Cause`] in [`REGISTRY`], and the candidates nothing quantifies (`candidates`).
//! `explain` holds what they share: the explanation type, a row's context and how a row's
//! explanations combine into its status.
//!
//! Adding a cause: its file here (an `explain(&RowCtx) -> Option<Explanation>`), its
//! name in `explain`, and its entry in `REGISTRY`. A cause may import the statistics
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
pub mod speed;
pub mod steal;
pub mod timer;
pub mod topology;

#[cfg(test)]
pub mod testing;

use explain::{Claim, Explanation, RowCtx};

/// One cause: its name as the JSON writes it, and what it says about a row (nothing when
/// it has nothing to say about this row).
pub struct Cause {
    pub name: &'static str,
    pub explain: fn(&RowCtx) -> Option<Explanation>,
}

/// The causes, in the order a row lists them.
pub const REGISTRY: &[Cause] = &[
    Cause {
        name: explain::PLACEMENT,
        explain: placement::explain,
    },
    Cause {
        name: explain::TOPOLOGY,
        explain: topology::explain,
    },
    Cause {
        name: explain::TIMER,
        explain: timer::explain,
    },
    Cause {
        name: explain::CAPACITY,
        explain: capacity::explain,
    },
    Cause {
        name: explain::STEAL,
        explain: steal::explain,
    },
    Cause {
        name: explain::CPU_SHARE,
        explain: cpu_share::explain,
    },
    Cause {
        name: explain::NOISE,
        explain: noise::explain,
    },
    Cause {
        name: explain::NEIGHBOUR,
        explain: neighbour::explain,
    },
    Cause {
        name: explain::HOST_PLACEMENT,
        explain: host_placement::explain,
    },
    Cause {
        name: explain::LLC_SHARE,
        explain: llc_share::explain,
    },
    Cause {
        name: explain::HOST_MEMORY,
        explain: host_memory::explain,
    },
    Cause {
        name: explain::MEMORY_LIMIT,
        explain: memory_limit::explain,
    },
    Cause {
        name: explain::CPU_SPEED,
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
        assert!(!names.contains(&explain::CANDIDATE));
    }
}
