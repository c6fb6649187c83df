//! Measurement: the clocks we can read and what a read costs, batch timing that keeps the
//! timer's share of every interval small, the effective CPU speed, the cache-line latency
//! between two pinned CPUs (`pair`), and the statistics
//! reported for every result, the false-discovery control for many rows tested at once, and
//! the memory hierarchy a latency curve shows (its plateaus judged as caches or not).

pub mod batch;
pub mod clocks;
pub mod clocksource;
pub mod fdr;
pub mod hierarchy;
pub mod mde;
pub mod perf;
pub mod plateaus;
pub mod run_delay;
pub mod stats;
