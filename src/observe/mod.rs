//! Observing tasks while a benchmark runs: where they ran, migrations, voluntary and
//! involuntary context switches, from /proc per task; perf_event counters on a target.

pub mod counters;
pub mod process;
pub mod recorder;
pub mod sampler;
pub mod system;
pub mod task;
