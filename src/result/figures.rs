//! Names of the figures kept in a result's `derived` map and a load step's `per_tx` map,
//! and of counted events: one place for the writer and the readers.

/// A classic test's index against its George baseline (our median).
pub const INDEX: &str = "index";
/// The same from UnixBench's pass combination.
pub const UNIXBENCH_INDEX: &str = "unixbench_index";
/// UnixBench's pass combination of a classic test's rate, in its unit.
pub const UNIXBENCH_SCORE: &str = "unixbench_score";
/// A classic test's George baseline, in its unit.
pub const BASELINE: &str = "baseline";
/// N copies' rate ÷ (N × the 1-copy rate).
pub const SCALING_EFFICIENCY: &str = "scaling_efficiency";
/// Per transaction: CPU-µs, context switches, migrations; and the system-call event.
pub const CPU_US: &str = "cpu_us";
pub const CONTEXT_SWITCHES: &str = "context_switches";
pub const MIGRATIONS: &str = "migrations";
pub const SYSCALLS: &str = "syscalls";
pub const CYCLES: &str = "cycles";
pub const INSTRUCTIONS: &str = "instructions";
pub const LLC_MISSES: &str = "llc_misses";
