//! The `memory` suite: bandwidth (STREAM kernels and more), latency (a random pointer
//! chase and the measured cache levels), NUMA node-to-node cells, and the per-event timing
//! method that makes a VM look like it has half the bandwidth.

pub mod bandwidth;
pub mod kernels;
pub mod latency;
pub mod numa;
pub mod per_event;
pub mod region;
pub mod variance;
