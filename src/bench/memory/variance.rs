//! The levels of variation each memory benchmark's samples cover, so a confidence interval
//! is read for what it is. Levels, innermost first: `sample` (one timed batch), `allocation`
//! (which physical pages back the data: cache sets, TLB layout), `process`, `run`, `host`.
//! A level is either sampled inside one run or named with why it is not; the run-level
//! spread comes from repeated runs (`calibrate`), never from one run's samples.

/// One benchmark's levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarianceLevels {
    pub benchmark: &'static str,
    /// Levels that vary between the samples of one result.
    pub sampled: &'static [&'static str],
    /// Levels the samples do not cover, each with the reason.
    pub not_sampled: &'static [(&'static str, &'static str)],
}

const ONE_PROCESS: (&str, &str) = (
    "process",
    "one truebench process per run: its address-space layout varies between runs only",
);
const RUN: (&str, &str) = (
    "run",
    "covered by repeated runs (calibrate), not by one run",
);
const HOST: (&str, &str) = ("host", "one host per run: compare runs of several hosts");

/// The memory benchmarks' levels (docs/benchmarks.md says the same in words).
pub const MEMORY_VARIANCE_LEVELS: &[VarianceLevels] = &[
    VarianceLevels {
        benchmark: "memory.latency@1",
        sampled: &["sample", "allocation"],
        not_sampled: &[ONE_PROCESS, RUN, HOST],
    },
    VarianceLevels {
        benchmark: "memory.bandwidth@1",
        sampled: &["sample", "allocation"],
        not_sampled: &[ONE_PROCESS, RUN, HOST],
    },
    VarianceLevels {
        benchmark: "memory.numa@1",
        sampled: &["sample"],
        not_sampled: &[
            (
                "allocation",
                "latency cells take a fresh allocation per sample; read-bandwidth cells share one per cell",
            ),
            ONE_PROCESS,
            RUN,
            HOST,
        ],
    },
    VarianceLevels {
        benchmark: "memory.per-event@1",
        sampled: &["sample"],
        not_sampled: &[
            ("allocation", "a 1 KiB buffer in L1: page placement does not move it"),
            ONE_PROCESS,
            RUN,
            HOST,
        ],
    },
];

/// The levels of `benchmark` (an id with its version), if it is a memory benchmark.
pub fn levels_of(benchmark: &str) -> Option<&'static VarianceLevels> {
    MEMORY_VARIANCE_LEVELS
        .iter()
        .find(|l| l.benchmark == benchmark)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_memory_benchmark_declares_every_level_once() {
        for b in crate::bench::REGISTRY
            .iter()
            .filter(|b| b.suite() == "memory")
        {
            let l = levels_of(b.id()).unwrap_or_else(|| panic!("{} declares no levels", b.id()));
            let mut all: Vec<&str> = l.sampled.to_vec();
            all.extend(l.not_sampled.iter().map(|x| x.0));
            all.sort();
            assert_eq!(
                all,
                vec!["allocation", "host", "process", "run", "sample"],
                "{}",
                b.id()
            );
        }
    }
}
