//! Measurement: the clocks we can read and what a read costs, batch timing that keeps the
//! timer's share of every interval small, the effective CPU speed, and the statistics
//! reported for every result.

pub mod batch;
pub mod clocks;
pub mod clocksource;
pub mod plateaus;
pub mod speed;
pub mod stats;
