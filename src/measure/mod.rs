//! Measuring primitives: the clocks we can read and what a read costs, batch timing that
//! keeps the timer's share of every interval small, perf_event counters (`perf`), the
//! statistics reported for every result, the MDE and the false-discovery control for many
//! rows tested at once, and the memory hierarchy a latency curve shows (its plateaus judged
//! as caches or not). What pins threads to CPUs and fills a run document (the effective
//! clock's canaries, the pair ping-pong) is `bench`.

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
