//! Clocksources and the measured cost of reading each clock, through the vDSO and through
//! the system call, so a clock read that has silently become a syscall is caught.

use super::sysroot::SysRoot;
use super::Unavailable;
use crate::measure::batch::{calibrate, min_interval_ns, time_batch, timing_clock_cost_ns};
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

/// Batches of each clock's reads the probe times.
pub const COST_BATCHES: usize = 5;
/// The wall time after which a path's clock costs stop at the passes taken (at least one):
/// about 7 ms of passes on a CPU of its own.
pub const COST_WALL: std::time::Duration = std::time::Duration::from_millis(100);

/// Median ns per read of each clock through `path`: `COST_BATCHES` batches of >= 200 µs
/// each, taken in turns over the clocks (one batch of every clock, then the next), so that
/// each clock's batches are spread over the whole measurement (about 7 ms a path) rather
/// than one burst of steal or a neighbour's taking all five of one clock's 1 ms.
pub fn measure_costs(path: Path) -> BTreeMap<String, f64> {
    let floor = min_interval_ns(timing_clock_cost_ns(), 200_000.0);
    let clocks: Vec<Clock> = Clock::ALL
        .into_iter()
        .filter(|c| c.supports(path))
        .collect();
    let mut works: Vec<Box<dyn FnMut(u64)>> = clocks
        .iter()
        .map(|c| {
            let c = *c;
            Box::new(move |n: u64| {
                c.read_n(path, n);
            }) as Box<dyn FnMut(u64)>
        })
        .collect();
    // Warm up (fault in the vDSO page, settle the branch predictors) and size each batch.
    let sizes: Vec<u64> = works
        .iter_mut()
        .map(|w| {
            w(1000);
            calibrate(w.as_mut(), floor)
        })
        .collect();
    let mut per_read: Vec<Vec<f64>> = vec![vec![]; clocks.len()];
    let t0 = std::time::Instant::now();
    for pass in 0..COST_BATCHES {
        // A pass takes about 1.5 ms of CPU; a process starved of CPU (a cgroup of the lowest
        // weight beside busy neighbours: 0.16% of a CPU, 2026-12-07) spent 18 s of its run's
        // budget here. After one pass, a path whose passes took longer than
        // `COST_WALL` keeps what it has.
        if crate::interrupt::requested() || pass > 0 && t0.elapsed() > COST_WALL {
            break;
        }
        for ((w, n), out) in works.iter_mut().zip(&sizes).zip(&mut per_read) {
            out.push(time_batch(w.as_mut(), *n).ns_per_iteration());
        }
    }
    clocks
        .iter()
        .zip(&per_read)
        .filter_map(|(c, v)| Stats::of(v).map(|s| (c.name().to_string(), s.median)))
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
