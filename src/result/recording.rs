//! A `truebench record` recording: the rows per interval, the followed command or process
//! and how it ended, the summary per unit of work, and what could not be read.

use crate::observe::recorder::{Row, Summary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The process a recording followed: started (`-- COMMAND`) or attached to (`--pid`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordTarget {
    pub pid: i32,
    /// The command line truebench started; null when it attached to `--pid`.
    pub command: Option<String>,
    /// The started command's exit status; null when attached, or when it did not exit
    /// before the recording ended.
    pub exit_status: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// Seconds between samples, as asked.
    pub interval_s: f64,
    pub duration_s: f64,
    pub target: Option<RecordTarget>,
    /// CPU the recorder itself used, as a share of one CPU.
    pub recorder_cpu_share: f64,
    /// True when a last interval shorter than half the interval was dropped (absent from
    /// the first recordings).
    #[serde(default)]
    pub last_short_interval_dropped: bool,
    pub rows: Vec<Row>,
    pub summary: Summary,
    /// Metrics that could not be read, each with its reason.
    pub unavailable: BTreeMap<String, String>,
    /// How the counters were read (tracefs mounted privately...).
    #[serde(default)]
    pub counter_notes: Vec<String>,
}
