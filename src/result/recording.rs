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
    /// by itself (see exit_signal).
    pub exit_status: Option<i32>,
    /// The signal that ended the started command, when one did (absent from the first
    /// recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_signal: Option<i32>,
    /// True when truebench stopped the command at the recording's end (--duration, Ctrl-C)
    /// rather than it ending by itself (absent from the first recordings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by_truebench: Option<bool>,
    /// OOM kills counted in truebench's memory cgroup (the started command's) while it
    /// ran; absent when none were counted, the counter cannot be read, or attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<crate::probe::memory_limit::OomKills>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// Seconds between samples, as asked.
    pub interval_s: f64,
    pub duration_s: f64,
    pub target: Option<RecordTarget>,
    /// CPU the recorder itself used, as a share of one CPU; null when the recording was too
    /// short to resolve it in clock ticks (`unavailable` says so).
    pub recorder_cpu_share: Option<f64>,
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
    /// The target's NUMA view: thread homes, memory per node (absent without a target,
    /// and from recordings made before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<crate::observe::numa::NumaView>,
}
