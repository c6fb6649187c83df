//! A run started at a wall-clock time (`--start-at`): when it was asked to begin, when
//! measuring really began, and how well this host's clock was synchronised then, so the
//! runs of a fleet can be told to have measured together (or not) from their documents.

use serde::{Deserialize, Serialize};

/// The scheduled start of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduledStart {
    /// The time `--start-at` asked for (RFC 3339, UTC).
    pub requested_at: String,
    /// When measuring began, read from this host's clock (RFC 3339, UTC, µs).
    pub began_at: String,
    /// How late measuring began, ms (negative never; large when probing outlasted the wait).
    pub late_ms: f64,
    /// How long the run waited for the time, s (0 when it had already passed).
    pub waited_s: f64,
    /// The kernel's clock discipline state as adjtimex(2) reports it; absent with
    /// `clock_sync_unavailable` when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_sync: Option<ClockSync>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_sync_unavailable: Option<String>,
}

/// adjtimex(2) read with `modes = 0` (nothing changed): whether an NTP/PTP daemon keeps
/// the clock synchronised and the error bounds it maintains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockSync {
    /// The clock state is not TIME_ERROR and STA_UNSYNC is clear: a daemon disciplines it.
    pub synchronised: bool,
    /// The return value of adjtimex: TIME_OK, TIME_INS, TIME_DEL, TIME_OOP, TIME_WAIT, TIME_ERROR.
    pub state: String,
    /// The STA_* status flags set (STA_PLL, STA_UNSYNC, STA_NANO...).
    pub status: Vec<String>,
    /// The estimated error, µs (`esterror`).
    pub estimated_error_us: i64,
    /// The maximum error, µs (`maxerror`; 16 s when nothing synchronises the clock).
    pub maximum_error_us: i64,
    /// The current offset the kernel is correcting, µs.
    pub offset_us: f64,
}
