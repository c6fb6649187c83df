//! Load steps: drive a workload open-loop at fixed rates and measure, per step, the
//! business metrics (rates, latency percentiles corrected for coordinated omission, queue
//! wait and service time) and the system metrics (CPU, switches, migrations, system calls
//! per transaction) on one clock; then the knee and the scalability fits.

pub mod capacity;
pub mod experiment;
pub mod http;
pub mod model;
pub mod mq;
pub mod step;
