//! What a killed run leaves behind (SIGKILL, a crash, a power cut skip every destructor),
//! found and undone by the next truebench command that starts, saying so once: cgroups
//! `truebench-PID-N` of capacity policies and `ab` settings whose PID is gone, and a
//! system-wide setting (the clocksource of `--clocksource-sweep` or `ab clocksource=`, THP
//! of `ab thp=`) a run changed (recorded in a state file before the first switch, `knob`).
//! Without root there is nothing a run could have left, and nothing is looked at.

use crate::loadstep::capacity;

/// Undo what killed runs left; one line per thing done, for stderr.
pub fn after_killed_runs() -> Vec<String> {
    if !nix::unistd::geteuid().is_root() {
        return Vec::new();
    }
    let mut said = Vec::new();
    if let Ok(layout) = capacity::Layout::find() {
        let removed = capacity::remove_stale(&layout);
        if !removed.is_empty() {
            said.push(format!(
                "removed {} left by a killed run: {}",
                crate::units::count(removed.len(), "cgroup"),
                removed
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    said.extend(
        crate::knob::known()
            .iter()
            .filter_map(crate::knob::restore_after_killed_run),
    );
    said
}
