//! Rules over a whole measuring run, from readings taken at its start and its end: the
//! hypervisor taking CPU time (`steal-time`), the clocksource changing (`clocksource-changed`).

use super::{Finding, Severity};
use crate::probe::{kernel, sysroot::SysRoot};

/// Steal seconds over the run, from two /proc/stat readings.
pub fn steal_during(
    before: Option<&kernel::Steal>,
    after: Option<&kernel::Steal>,
    secs: f64,
    cpus: usize,
) -> Option<Finding> {
    let stolen = after?.seconds - before?.seconds;
    let share = stolen / (secs * cpus.max(1) as f64);
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    (share >= 0.01 && crate::findings::noise::steal_resolved(stolen, ticks)).then(|| {
        Finding::new(
            "steal-time",
            Severity::Warning,
            format!("The hypervisor took {:.1}% of the CPU time during this run: results include waiting for the physical CPU.", share * 100.0),
            vec![format!("/proc/stat steal grew by {stolen:.2} s over {secs:.1} s on {cpus} CPUs")],
        )
    })
}

/// The clocksource at the end of the run differs from the one at its start (the kernel's
/// watchdog switches away from an unstable TSC; a migration can do it too).
pub fn clocksource_changed(before: Option<&str>, live: &SysRoot) -> Option<Finding> {
    let after = live.read_opt(crate::measure::clocksource::CURRENT)?;
    let before = before?;
    (before != after).then(|| {
        Finding::new(
            "clocksource-changed",
            Severity::Warning,
            format!("The clocksource changed during the run, from {before} to {after}: clock-read costs, and anything timed per event, differ before and after."),
            vec![format!("current_clocksource: {before} at the start, {after} at the end")],
        )
    })
}
