//! truebench: a Linux system benchmark whose numbers can be trusted on bare metal,
//! virtual machines and containers, and which explains them.
//!
//! The pipeline is `probe -> plan -> run -> observe -> analyze -> store -> present`
//! (see docs/methodology.md). Each stage is a module here; the binary in `main.rs`
//! only parses the command line and maps errors to exit codes.

pub mod bench;
pub mod bounded;
pub mod cleanup;
pub mod cli;
pub mod compare;
pub mod deadline;
pub mod descendants;
pub mod duration;
pub mod error;
pub mod export;
pub mod finding;
pub mod findings;
pub mod fleet;
pub mod interrupt;
pub mod json_text;
pub mod knob;
pub mod loadstep;
pub mod lock;
pub mod measure;
pub mod observe;
pub mod parallel;
pub mod placement;
pub mod policy;
pub mod predict;
pub mod probe;
pub mod redact;
pub mod repeated;
pub mod report;
pub mod result;
pub mod safe_file;
pub mod session;
pub mod stdout;
pub mod store;
pub mod trend;
pub mod units;
pub mod watchdog;
