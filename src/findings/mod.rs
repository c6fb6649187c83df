//! Findings: rules that turn evidence into an explanation with the numbers that support
//! it. Each finding cites its evidence. Every id, with its severities and meaning, is in
//! the one table of `table.rs`; ids are stable (users filter on them).

pub mod classic;
pub mod loadstep;
pub mod memory;
pub mod noise;
pub mod placement;
pub mod probe;
pub mod record;
pub mod results;
pub mod run;
pub mod table;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub severity: Severity,
    pub message: String,
    pub evidence: Vec<String>,
}

impl Finding {
    pub fn new(
        id: &str,
        severity: Severity,
        message: impl Into<String>,
        evidence: Vec<String>,
    ) -> Self {
        debug_assert!(
            table::kind(id).is_some_and(|k| k.severities.contains(&severity)),
            "finding {id} ({severity:?}) is not in findings/table.rs"
        );
        Finding {
            id: id.into(),
            severity,
            message: message.into(),
            evidence,
        }
    }
}
