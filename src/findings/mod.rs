//! Findings: rules that turn evidence into an explanation with the numbers that support
//! it, one file per kind of evidence. Each finding cites its evidence. The finding type
//! and the one table of ids are `crate::finding` (the base layer: every stage passes
//! findings along).

pub mod classic;
pub mod loadstep;
pub mod memory;
pub mod noise;
pub mod placement;
pub mod probe;
pub mod record;
pub mod results;
pub mod run;
