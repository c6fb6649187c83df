//! The repetition levels of the memory benchmarks (see `bench::levels`): which levels their
//! samples draw afresh, so a confidence interval is read for what it covers. Latency and
//! bandwidth samples each take a fresh allocation, but a fresh allocation lands on much the
//! same physical pages as the last one: each round holds a spacer of random size while it
//! maps (`region::Spacer`), so the rounds draw the pages (their cache sets, how the host
//! backs them) afresh; the process (but for `per-event`, whose rounds run in fresh
//! processes), the run, the boot and the host vary only between runs, which `calibrate`
//! measures.

use crate::bench::levels::{
    between_runs, not_applicable, per_round, per_sample, Level, LevelUse, BOOT_AND_HOST,
};

/// The physical pages of latency chains and bandwidth arrays.
const PAGES: LevelUse = per_round(
    Level::Allocation,
    "each round holds a touched spacer of random size while it maps (`region::Spacer`), so its physical pages are drawn afresh; a round's samples map fresh memory on much the same pages",
);

const PROCESS: LevelUse = between_runs(
    Level::Process,
    "one truebench process per run: its address-space layout varies between runs only",
);
const RUN: LevelUse = between_runs(
    Level::Run,
    "frequency and neighbours of the run: separate runs (calibrate)",
);

pub const LATENCY: &[LevelUse] = &[
    per_sample(Level::Sample, "one timed walk of the chain per sample"),
    PAGES,
    PROCESS,
    RUN,
    BOOT_AND_HOST[0],
    BOOT_AND_HOST[1],
];

pub const BANDWIDTH: &[LevelUse] = &[
    per_sample(Level::Sample, "one timed pass over the arrays per sample"),
    PAGES,
    PROCESS,
    RUN,
    BOOT_AND_HOST[0],
    BOOT_AND_HOST[1],
];

pub const NUMA: &[LevelUse] = &[
    per_sample(Level::Sample, "consecutive timed batches per cell"),
    between_runs(
        Level::Allocation,
        "latency cells take a fresh allocation per sample; read-bandwidth cells share one per cell",
    ),
    PROCESS,
    RUN,
    BOOT_AND_HOST[0],
    BOOT_AND_HOST[1],
];

pub const PER_EVENT: &[LevelUse] = &[
    per_sample(Level::Sample, "consecutive timed batches"),
    not_applicable(
        Level::Allocation,
        "a 1 KiB buffer in L1: page placement does not move it",
    ),
    per_round(
        Level::Process,
        "each round runs in a fresh process (`bench::fresh_process`): the clock reads it times every event with cost what they cost in that process",
    ),
    RUN,
    BOOT_AND_HOST[0],
    BOOT_AND_HOST[1],
];
