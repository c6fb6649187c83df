//! Findings: rules that turn evidence into an explanation with the numbers that support
//! it. Ids are stable (DESIGN.md); each finding cites its evidence.

pub mod loadstep;
pub mod memory;
pub mod noise;
pub mod placement;
pub mod probe;
pub mod record;
pub mod results;
pub mod run;

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
        Finding {
            id: id.into(),
            severity,
            message: message.into(),
            evidence,
        }
    }
}
