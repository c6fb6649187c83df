//! The effective CPU speed of a run: a short chain of dependent integer additions timed as
//! a batch on one CPU gives cycles per nanosecond (the effective clock in GHz on current
//! x86 and ARM cores, where such an add retires one per cycle). Sampled at the start and
//! end of each suite, on one CPU of each kind, so `compare` can tell a CPU-bound difference
//! that the clock explains from one it does not.

use serde::{Deserialize, Serialize};

/// Every speed sample of a run, in the order they were taken.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSpeed {
    /// How the figure was measured, in words (shown beside it in reports).
    pub method: String,
    pub samples: Vec<SpeedSample>,
}

/// When in the run a speed sample was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedPoint {
    Start,
    End,
}

/// One effective-speed measurement on one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedSample {
    /// The suite it belongs to (its start or end).
    pub suite: String,
    pub point: SpeedPoint,
    /// The CPU it ran pinned to.
    pub cpu: u32,
    /// The CPU's kind (as `env.cpus.kinds` names it); absent on machines of one kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_kind: Option<String>,
    /// Dependent integer adds per nanosecond: the effective clock in GHz.
    pub cycles_per_ns: f64,
    /// Wall time of the measured chain, in nanoseconds.
    pub elapsed_ns: f64,
}
