//! Clocksources and the measured cost of reading each clock, through the vDSO and through
//! the system call, so a clock read that has silently become a syscall is caught.

use super::sysroot::SysRoot;
use super::Unavailable;
use crate::measure::batch::{cost_batches, min_interval_ns, timing_clock_cost_ns};
use crate::measure::clocks::{Clock, Path};
use crate::measure::stats::Stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const CS_DIR: &str = "/sys/devices/system/clocksource/clocksource0";
const TSC_FLAGS: &[&str] = &[
    "tsc",
    "rdtscp",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_known_freq",
    "tsc_reliable",
    "tsc_adjust",
    "tsc_deadline_timer",
];

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClockInfo {
    pub clocksource: Option<String>,
    pub available: Vec<String>,
    /// TSC-related CPU flags present in /proc/cpuinfo.
    pub tsc_flags: Vec<String>,
    /// The frequency of the CPU's instruction-read counter in Hz, where the architecture
    /// states it: aarch64's `cntfrq_el0` (the rate of `cntvct_el0`). Live only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_hz: Option<u64>,
    /// Median ns per read through the normal (vDSO) path, per clock name.
    pub read_cost_ns: BTreeMap<String, f64>,
    /// Median ns per read through the raw clock_gettime system call, per clock name.
    pub syscall_cost_ns: BTreeMap<String, f64>,
}

/// Median ns per read of each clock through `path` (5 batches of >= 200 µs each).
pub fn measure_costs(path: Path) -> BTreeMap<String, f64> {
    let floor = min_interval_ns(timing_clock_cost_ns(), 200_000.0);
    Clock::ALL
        .into_iter()
        .filter(|c| c.supports(path))
        .filter_map(|c| {
            let per_read: Vec<f64> = cost_batches(c, path, 5, floor)
                .iter()
                .map(|b| b.ns_per_iteration())
                .collect();
            Stats::of(&per_read).map(|s| (c.name().to_string(), s.median))
        })
        .collect()
}

pub fn read(root: &SysRoot, missing: &mut Unavailable) -> ClockInfo {
    let mut info = ClockInfo {
        clocksource: root.read_opt(format!("{CS_DIR}/current_clocksource")),
        available: root
            .read_opt(format!("{CS_DIR}/available_clocksource"))
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
        ..Default::default()
    };
    if info.clocksource.is_none() {
        missing.add("clock.clocksource", "no clocksource0 in sysfs");
    }
    if let Some(cpuinfo) = root.read_opt("/proc/cpuinfo") {
        if let Some(flags) = cpuinfo.lines().find(|l| l.starts_with("flags")) {
            let present: Vec<&str> = flags.split_whitespace().collect();
            info.tsc_flags = TSC_FLAGS
                .iter()
                .filter(|f| present.contains(f))
                .map(|f| f.to_string())
                .collect();
        }
    }
    if root.is_live() {
        info.counter_hz = crate::measure::clocks::counter_hz();
        info.read_cost_ns = measure_costs(Path::Vdso);
        info.syscall_cost_ns = measure_costs(Path::Syscall);
    } else {
        missing.add(
            "clock.read_cost_ns",
            "live only: not measured for a captured tree (--root)",
        );
    }
    info
}
