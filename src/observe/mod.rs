//! Observing tasks while a benchmark runs: where they ran, migrations, voluntary and
//! involuntary context switches, from /proc per task.

pub mod sampler;
pub mod task;
