//! Hardware performance counters: try to open a cycles counter and say why it failed
//! (no vPMU, paranoid setting, busy), and list the event sources the kernel offers.

use super::sysroot::SysRoot;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Pmu {
    /// Whether a hardware cycles counter could be opened; None when not tried (captured tree).
    pub available: Option<bool>,
    /// Why not, when it could not.
    pub reason: Option<String>,
    /// /sys/bus/event_source/devices entries (`cpu`, `software`, `tracepoint`, ...).
    pub event_sources: Vec<String>,
}

/// The core PMU device names a machine with hardware counters exposes.
const CORE_PMUS: &[&str] = &[
    "cpu",
    "cpu_core",
    "cpu_atom",
    "armv8_pmuv3",
    "armv8_pmuv3_0",
];

/// A sentence for an errno from perf_event_open.
pub fn errno_reason(errno: i32) -> String {
    match errno {
        libc::ENOENT | libc::EOPNOTSUPP => {
            "hardware events not supported (ENOENT/EOPNOTSUPP): no PMU, or a VM without vPMU".into()
        }
        libc::EACCES | libc::EPERM => {
            "permission denied (EACCES/EPERM): perf_event_paranoid too high or CAP_PERFMON missing"
                .into()
        }
        libc::EBUSY => "PMU busy (EBUSY): counters owned by another user".into(),
        libc::ENOSYS => "perf_event_open not available in this kernel (ENOSYS)".into(),
        e => format!("perf_event_open failed with errno {e}"),
    }
}

pub fn read(root: &SysRoot) -> Pmu {
    let event_sources = root.list("/sys/bus/event_source/devices");
    let has_core = event_sources
        .iter()
        .any(|d| CORE_PMUS.contains(&d.as_str()) || d.starts_with("armv"));
    if !root.is_live() {
        return Pmu {
            available: None,
            reason: Some(if has_core {
                "not tried: captured tree (--root); a core PMU device is listed".into()
            } else {
                "not tried: captured tree (--root); no core PMU device (cpu, cpu_core, armv8_*) is listed".into()
            }),
            event_sources,
        };
    }
    use crate::measure::perf::{Counter, Event, Spec, Whom};
    let attempt = Counter::open(&Spec {
        event: Event::Cycles,
        whom: Whom::Me,
        inherit: false,
        exclude_kernel: true,
    });
    let (available, reason) = match attempt {
        Ok(_) => (true, None),
        // No errno: this build cannot open counters at all (its message says why).
        Err(e) => (
            false,
            Some(e.raw_os_error().map_or_else(|| e.to_string(), errno_reason)),
        ),
    };
    Pmu {
        available: Some(available),
        reason,
        event_sources,
    }
}
