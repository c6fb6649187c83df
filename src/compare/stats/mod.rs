//! The statistics of a verdict: how noisy a row is (`noise_model`: each run's own rounds,
//! raised to the host's calibration or history), the verdict words and the test that gives
//! them (`verdict`), which stored runs make a host's calibration (`calibration`), and
//! `compare --precision`'s round plans (`round_plan`) and added rounds (`added_rounds`), and
//! whether a run's rounds of a row moved for a stretch of the run (`shift`) or two runs'
//! rounds fall in two modes (`modes`), and the test of an `ab` run's rows on their paired
//! rounds (`paired`).
//!
//! This room imports the pipeline's row types (`compare::matching`) and the run document;
//! it imports no cause (`compare::causes`): a verdict is decided before anything explains it.

pub mod added_rounds;
pub mod modes;
pub mod noise_model;
pub mod paired;
pub mod round_plan;
pub mod shift;
pub mod verdict;
