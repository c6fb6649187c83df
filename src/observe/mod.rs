//! Observing tasks while a benchmark runs: where they ran, migrations, voluntary and
//! involuntary context switches, from /proc per task; perf_event counters on a target; the
//! NUMA view of a recorded process (thread homes, memory per node, balancing counters).

pub mod counters;
pub mod homes;
pub mod numa;
pub mod numa_maps;
pub mod process;
pub mod recorder;
pub mod sampler;
pub mod system;
pub mod task;
pub mod vmstat;
