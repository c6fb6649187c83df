//! The one table of finding ids: every id truebench emits, the severities it may carry and
//! what it means. `Finding::new` refuses (in debug builds) an id or severity not listed
//! here; a test checks that every id emitted in the source is listed, that every listed id
//! is emitted, and that docs/methodology.md documents exactly these ids.

use super::Severity::{self, Info, Warning};

/// One kind of finding.
#[derive(Debug)]
pub struct Kind {
    /// The stable id (users filter on it; never renamed).
    pub id: &'static str,
    /// The severities it may carry.
    pub severities: &'static [Severity],
    /// What it means, in one line.
    pub meaning: &'static str,
}

const W: &[Severity] = &[Warning];
const I: &[Severity] = &[Info];
const IW: &[Severity] = &[Info, Warning];

/// Every finding id, grouped by the stage that raises it.
pub const KINDS: &[Kind] = &[
    // The probe (src/findings/probe.rs).
    Kind { id: "llc-not-shared", severities: W, meaning: "no last-level cache spans two cores of a package: the scheduler builds no LLC domain and keeps a woken task on its waker's CPU" },
    Kind { id: "smt-without-shared-cache", severities: W, meaning: "SMT siblings share no cache: a synthetic topology, as a hypervisor presents it" },
    Kind { id: "single-core-packages", severities: W, meaning: "every CPU is a package of its own: the topology says nothing about which CPUs share caches" },
    Kind { id: "clock-read-syscall", severities: W, meaning: "reading a clock through the vDSO costs about a system call: timing events is expensive here" },
    Kind { id: "steal-time", severities: IW, meaning: "the hypervisor took CPU time (since boot, during a run, or during one result)" },
    Kind { id: "cpu-quota-below-cpuset", severities: W, meaning: "the cgroup CPU quota is narrower than the CPUs the process may run on" },
    Kind { id: "pmu-unavailable", severities: I, meaning: "no hardware performance counters: cycles and cache misses cannot be read" },
    Kind { id: "stray-container-marker", severities: I, meaning: "a container marker file without container namespaces: not a container" },
    Kind { id: "offline-cpus", severities: I, meaning: "present CPUs are offline (hotplug slots that are only possible are not counted)" },
    // Placement (src/findings/placement.rs).
    Kind { id: "os-placement-colocated", severities: W, meaning: "the unpinned pair mostly shared one CPU: the os figure measures same-CPU hand-offs" },
    Kind { id: "os-placement-spread", severities: I, meaning: "the unpinned pair mostly ran on different CPUs" },
    Kind { id: "os-placement-mixed", severities: W, meaning: "the unpinned pair ran sometimes together, sometimes apart: the os figure mixes both costs" },
    Kind { id: "mixed-cpu-kinds", severities: W, meaning: "an unpinned result ran on CPUs of two or more kinds of a hybrid machine" },
    // The classic suite's index (src/findings/classic.rs).
    Kind { id: "index-placement-sensitive", severities: W, meaning: "the classic index moves with the context-switch pair's placement by more than its own 95% CI" },
    Kind { id: "rounds-disagree", severities: W, meaning: "a classic test's rounds disagree: the 95% interval of its median from them reaches further than 5% either way, so its index is that interval, not one figure" },
    // One result, and the rounds of all (src/findings/results.rs, memory.rs).
    Kind { id: "timer-bound", severities: W, meaning: "reading the clock is more than 1% of the measured time" },
    Kind { id: "high-variation", severities: I, meaning: "the samples' coefficient of variation exceeds 10%" },
    Kind { id: "disturbed-rounds", severities: IW, meaning: "rounds were disturbed (other tasks or steal in bursts, CPU pressure in earlier versions, a slow CPU-speed canary, the host placing the CPUs differently, or an unexplained outlier) and kept out of their rows' figures: once for the run, per cause its rounds and the rows they were on (each row's rounds hold which and every figure); a warning when a row had fewer than two undisturbed rounds, so its figures rest on every round" },
    Kind { id: "condition-throughout", severities: W, meaning: "other tasks or the hypervisor's steal took a steady share of rows' CPUs in at least 80% of their rounds (a neighbour or a loud host for the whole run): those rounds are kept as what the run measured, and compare names the condition as a difference" },
    Kind { id: "round-in-process", severities: I, meaning: "results of a round meant to run in a fresh process were measured in truebench's own (the executable could not be run again, or its process passed its deadline and was killed): its row's rounds do not sample what moves between processes" },
    Kind { id: "per-event-timing", severities: IW, meaning: "timing every small event (as sysbench memory does) against timing the batch" },
    Kind { id: "cache-levels", severities: I, meaning: "the cache levels a latency sweep measured" },
    Kind { id: "llc-size-mismatch", severities: W, meaning: "the last-level cache size reported differs from the one measured" },
    Kind { id: "memory-array-size", severities: I, meaning: "the bandwidth arrays' size and the rule that chose it" },
    Kind { id: "memory-limit", severities: I, meaning: "the cgroup's memory limit bound the run, and what it shaped: rows measured smaller, sizes left out or rows skipped to fit within it" },
    // The run (src/findings/run.rs, noise.rs, record.rs, loadstep.rs; src/session/noise_said.rs).
    Kind { id: "clocksource-changed", severities: W, meaning: "the clocksource changed during the run" },
    Kind { id: "budget-short", severities: IW, meaning: "rows the run's time budget left short of their target MDE, each with what it reached and why (the hypervisor named when it took the time)" },
    Kind { id: "host-noise", severities: IW, meaning: "how far apart this run's rounds fell (the clock-read rows: CPU; the latency rows: memory) and the hour that makes: quiet, noisy, very noisy (a warning)" },
    Kind { id: "mde-reach", severities: I, meaning: "per family, the MDE its median row reached and the time that would reach its target at the spread measured here, or that no number of rounds does" },
    Kind { id: "cpu-starved", severities: W, meaning: "truebench's threads waited for a CPU at least half the time over the run's rounds (schedstat run delay of the canaries; of the thread that ran them over the whole run when fewer than 3 rounds were read): the share of a CPU this cgroup got, and its weight against busy neighbours" },
    Kind { id: "start-clock-unsynchronised", severities: W, meaning: "a --start-at run began on a clock nothing synchronises: its start cannot be lined up with other hosts'" },
    Kind { id: "start-late", severities: W, meaning: "a --start-at run began at least 1 s after the time asked for" },
    Kind { id: "cpu-speed-dropped", severities: W, meaning: "the effective CPU speed fell by more than 10% between a suite's start and end" },
    Kind { id: "noisy-neighbour", severities: W, meaning: "other processes used at least 10% of the usable CPUs while a result was measured" },
    Kind { id: "throttled", severities: W, meaning: "the cgroup CPU quota throttled the measured work" },
    Kind { id: "recorder-overhead", severities: W, meaning: "the recorder itself used more than 1% of one CPU" },
    Kind { id: "memory-remote", severities: W, meaning: "a recorded thread's home node holds under half of the process's memory, most of which is on another node" },
];

/// The ids users script against since the first version; never renamed.
pub const STABLE: &[&str] = &[
    "llc-not-shared",
    "smt-without-shared-cache",
    "single-core-packages",
    "clock-read-syscall",
    "steal-time",
    "cpu-quota-below-cpuset",
    "pmu-unavailable",
    "llc-size-mismatch",
    "os-placement-colocated",
    "timer-bound",
    "noisy-neighbour",
    "throttled",
];

/// The kind of an id, if it is one.
pub fn kind(id: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::Path;

    fn listed() -> BTreeSet<&'static str> {
        KINDS.iter().map(|k| k.id).collect()
    }

    /// Every `.rs` file under `dir`.
    fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// The ids in the source: the string literal that follows each `Finding::new(`.
    fn emitted() -> BTreeSet<String> {
        let mut files = vec![];
        sources(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        let mut ids = BTreeSet::new();
        // This file names the call it looks for.
        for f in files.iter().filter(|f| !f.ends_with("finding/table.rs")) {
            let text = std::fs::read_to_string(f).unwrap();
            for (at, _) in text.match_indices("Finding::new(") {
                let rest = text[at + "Finding::new(".len()..].trim_start();
                let Some(lit) = rest.strip_prefix('"') else {
                    // An id passed through a variable would escape this check.
                    panic!("{}: Finding::new without a literal id", f.display());
                };
                ids.insert(lit[..lit.find('"').unwrap()].to_string());
            }
        }
        ids
    }

    #[test]
    fn every_emitted_id_is_listed_and_every_listed_id_is_emitted() {
        let emitted = emitted();
        let listed: BTreeSet<String> = listed().into_iter().map(String::from).collect();
        let unlisted: Vec<&String> = emitted.difference(&listed).collect();
        assert!(
            unlisted.is_empty(),
            "emitted but not in the table: {unlisted:?}"
        );
        let unused: Vec<&String> = listed.difference(&emitted).collect();
        assert!(unused.is_empty(), "in the table, never emitted: {unused:?}");
        assert_eq!(KINDS.len(), listed.len(), "an id is listed twice");
    }

    #[test]
    fn the_stable_ids_are_kept() {
        for id in STABLE {
            assert!(kind(id).is_some(), "stable id {id} left the table");
        }
    }

    #[test]
    fn methodology_documents_exactly_the_listed_ids() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/methodology.md"),
        )
        .unwrap();
        let section = doc
            .split("\n## Findings")
            .nth(1)
            .expect("docs/methodology.md has a Findings section");
        let section = section.split("\n## ").next().unwrap();
        let documented: BTreeSet<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .collect();
        assert_eq!(documented, listed());
    }
}
