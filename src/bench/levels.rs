//! Repetition levels: where a benchmark's figure can vary, and which of those levels its
//! samples draw afresh. Samples that share a level (the same allocation, process, run)
//! cannot show its variance: a confidence interval from them covers only the levels the
//! samples vary. Each benchmark declares its levels ([`super::Benchmark::levels`]);
//! `truebench calibrate` measures what the levels a run cannot sample add between runs,
//! and `compare` uses that (docs/benchmarks.md lists every benchmark's levels).

use serde::Serialize;

/// A level of repetition, innermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// One timed batch of the same loop.
    Sample,
    /// The memory the loop works on: physical pages, cache sets, TLB reach.
    Allocation,
    /// The process: address layout, environment, where its tasks are placed.
    Process,
    /// One run: frequency, neighbours, the scheduler's choices for its duration.
    Run,
    /// One boot: kernel memory layout, firmware and microcode state.
    Boot,
    /// One machine among others of its kind.
    Host,
}

impl Level {
    pub fn text(self) -> &'static str {
        match self {
            Level::Sample => "sample",
            Level::Allocation => "allocation",
            Level::Process => "process",
            Level::Run => "run",
            Level::Boot => "boot",
            Level::Host => "host",
        }
    }
}

/// How a level is covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coverage {
    /// Each sample draws it afresh: the run's CI covers it.
    PerSample,
    /// Each round draws it afresh (`session::rounds`): the spread between a row's rounds,
    /// its own noise, covers it; a result measured in one piece does not.
    PerRound,
    /// It varies, but only between runs: `calibrate` (separate runs) measures it.
    BetweenRuns,
    /// It does not move this benchmark's figure (how it is avoided is said).
    DoesNotApply,
}

/// One level of a benchmark: how it is covered, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LevelUse {
    pub level: Level,
    pub coverage: Coverage,
    pub how: &'static str,
}

pub const fn per_sample(level: Level, how: &'static str) -> LevelUse {
    LevelUse {
        level,
        coverage: Coverage::PerSample,
        how,
    }
}

pub const fn per_round(level: Level, how: &'static str) -> LevelUse {
    LevelUse {
        level,
        coverage: Coverage::PerRound,
        how,
    }
}

pub const fn between_runs(level: Level, how: &'static str) -> LevelUse {
    LevelUse {
        level,
        coverage: Coverage::BetweenRuns,
        how,
    }
}

pub const fn not_applicable(level: Level, how: &'static str) -> LevelUse {
    LevelUse {
        level,
        coverage: Coverage::DoesNotApply,
        how,
    }
}

/// The levels above a run, which no single run samples and `calibrate` on one boot does not
/// see either (compare across boots or hosts only with runs of each).
pub const BOOT_AND_HOST: [LevelUse; 2] = [
    between_runs(
        Level::Boot,
        "not sampled inside a run; calibration runs of one boot do not see it",
    ),
    between_runs(Level::Host, "not sampled: a host is compared with others"),
];

/// What a benchmark that declares nothing gets: samples vary only the batch; everything
/// else varies between runs.
pub const UNDECLARED: &[LevelUse] = &[
    per_sample(Level::Sample, "consecutive timed batches"),
    between_runs(Level::Allocation, "not declared: assumed fixed for a run"),
    between_runs(Level::Process, "not declared: assumed fixed for a run"),
    between_runs(Level::Run, "separate runs (calibrate)"),
    BOOT_AND_HOST[0],
    BOOT_AND_HOST[1],
];

/// The levels a run's samples do not cover, in words ("allocation, run, boot, host").
pub fn between_runs_text(levels: &[LevelUse]) -> String {
    levels
        .iter()
        .filter(|l| l.coverage == Coverage::BetweenRuns)
        .map(|l| l.level.text())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_benchmark_declares_every_level_once_with_the_sample_level_per_sample() {
        let all = [
            Level::Sample,
            Level::Allocation,
            Level::Process,
            Level::Run,
            Level::Boot,
            Level::Host,
        ];
        for b in super::super::REGISTRY {
            let l = b.levels();
            let mut seen: Vec<Level> = l.iter().map(|x| x.level).collect();
            seen.sort();
            assert_eq!(seen, all, "{}: {l:?}", b.id());
            assert!(
                l.iter()
                    .any(|x| x.level == Level::Sample && x.coverage == Coverage::PerSample),
                "{}",
                b.id()
            );
            // A run never samples itself.
            assert!(
                l.iter()
                    .any(|x| x.level == Level::Run && x.coverage == Coverage::BetweenRuns),
                "{}",
                b.id()
            );
            assert!(l.iter().all(|x| !x.how.is_empty()), "{}", b.id());
        }
        assert_eq!(
            between_runs_text(UNDECLARED),
            "allocation, process, run, boot, host"
        );
    }
}
