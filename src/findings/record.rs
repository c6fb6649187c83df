//! Rules over a `truebench record` recording: the recorder's own cost
//! (`recorder-overhead`), and threads living away from the process's memory
//! (`memory-remote`).

use crate::finding::{Finding, Severity};
use crate::observe::numa::{NumaView, ThreadPlacement};
use crate::units::bytes;

/// The recorder used more than 1% of one CPU over the recording.
pub fn recorder_overhead(own_cpu_s: f64, wall_s: f64, share: Option<f64>) -> Option<Finding> {
    // No share when the recording was too short to resolve it in clock ticks.
    let share = share?;
    (share > 0.01).then(|| {
        Finding::new(
            "recorder-overhead",
            Severity::Warning,
            format!(
                "The recorder itself used {:.2}% of one CPU: lengthen --interval.",
                share * 100.0
            ),
            vec![format!("{own_cpu_s:.3} CPU-s over {wall_s:.1} s")],
        )
    })
}

/// A thread must have run this long for its home node to count.
pub const MIN_HOME_RUN_MS: f64 = 10.0;

/// Threads listed by name in the finding's evidence; the rest are counted.
const LISTED_THREADS: usize = 8;

/// `memory-remote`: a thread's home node (where it ran most) holds less than half of the
/// process's resident memory, and another node holds the most (the threads share one
/// address space, so the memory a thread can reach is the process's). Err with the reason
/// when the rule cannot apply: one node, or no memory per node read.
pub fn memory_remote(view: &NumaView) -> Result<Option<Finding>, String> {
    if view.nodes <= 1 {
        return Err(
            "one NUMA node: every thread's memory is on its home node, none is remote".into(),
        );
    }
    let Some(mem) = &view.memory else {
        return Err("the process's memory per node could not be read (numa_maps)".into());
    };
    let total = mem.total_bytes();
    let Some(most) = mem.largest() else {
        return Ok(None);
    };
    let share = |b: u64| b as f64 / total as f64 * 100.0;
    let remote: Vec<(&ThreadPlacement, u32)> = view
        .threads
        .iter()
        .filter(|t| t.run_ms >= MIN_HOME_RUN_MS)
        .filter_map(|t| Some((t, t.home_node?)))
        .filter(|(_, home)| *home != most.node && 2 * mem.on(*home) < total)
        .collect();
    if remote.is_empty() {
        return Ok(None);
    }
    let mut evidence = vec![format!(
        "memory of pid {} per node (numa_maps at {:.1} s): {}",
        mem.pid,
        mem.read_at_s,
        mem.nodes
            .iter()
            .map(|n| format!(
                "node {} {} ({:.0}%)",
                n.node,
                bytes(n.total_bytes()),
                share(n.total_bytes())
            ))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    for (t, home) in remote.iter().take(LISTED_THREADS) {
        let on_home = t
            .nodes
            .iter()
            .find(|s| s.id == *home)
            .map_or(0.0, |s| s.share);
        evidence.push(format!(
            "thread {} ({}): home node {home} with {:.0}% of its {:.0} ms run time; node {home} holds {} ({:.0}%) of the memory",
            t.tid,
            t.name,
            on_home * 100.0,
            t.run_ms,
            bytes(mem.on(*home)),
            share(mem.on(*home)),
        ));
    }
    if remote.len() > LISTED_THREADS {
        evidence.push(format!(
            "and {} more {}",
            remote.len() - LISTED_THREADS,
            crate::units::noun(remote.len() - LISTED_THREADS, "thread")
        ));
    }
    Ok(Some(Finding::new(
        "memory-remote",
        Severity::Warning,
        format!(
            "{} ran mostly away from node {}, which holds {} ({:.0}%) of the process's memory: {} accesses cross nodes (bind CPUs and memory together: numactl --cpunodebind=N --membind=N).",
            crate::units::count(remote.len(), "thread"),
            most.node,
            bytes(most.total_bytes()),
            share(most.total_bytes()),
            if remote.len() == 1 { "its" } else { "their" },
        ),
        evidence,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::numa::{CrossBasis, NodeMemory, ProcessMemory, RunShare};

    const MIB: u64 = 1 << 20;

    fn thread(tid: i32, home: u32, run_ms: f64) -> ThreadPlacement {
        ThreadPlacement {
            tid,
            name: format!("w{tid}"),
            samples: 5,
            run_ms,
            home_node: Some(home),
            nodes: vec![RunShare {
                id: home,
                cpus: "0-7".into(),
                run_ms,
                share: 1.0,
            }],
            llc_groups: vec![],
            migrations: Some(0),
            cross_node_migrations: 0,
            cross_node_basis: CrossBasis::Counted,
            cross_llc_migrations: 0,
            cross_llc_basis: CrossBasis::Counted,
        }
    }

    fn view(nodes: usize, threads: Vec<ThreadPlacement>, per_node_mib: &[u64]) -> NumaView {
        NumaView {
            nodes,
            llc_groups: nodes,
            balancing: Some(0),
            threads,
            memory: Some(ProcessMemory {
                pid: 42,
                read_at_s: 2.0,
                mappings: 10,
                skipped_lines: 0,
                nodes: per_node_mib
                    .iter()
                    .enumerate()
                    .map(|(i, m)| NodeMemory {
                        node: i as u32,
                        anon_bytes: m * MIB,
                        ..Default::default()
                    })
                    .collect(),
            }),
        }
    }

    #[test]
    fn a_thread_away_from_most_of_the_memory_fires_with_its_evidence() {
        // 900 MiB on node 0, 100 MiB on node 1; worker 7 lives on node 1.
        let v = view(
            2,
            vec![thread(6, 0, 500.0), thread(7, 1, 400.0)],
            &[900, 100],
        );
        let f = memory_remote(&v).unwrap().expect("fires");
        assert_eq!(f.id, "memory-remote");
        assert!(
            f.message.contains("node 0") && f.message.contains("900 MiB"),
            "{}",
            f.message
        );
        assert!(
            f.evidence[0].contains("node 1 100 MiB (10%)"),
            "{:?}",
            f.evidence
        );
        assert_eq!(f.evidence.len(), 2, "only thread 7: {:?}", f.evidence);
        assert!(
            f.evidence[1].contains("thread 7 (w7): home node 1"),
            "{:?}",
            f.evidence
        );
    }

    #[test]
    fn local_threads_idle_threads_and_even_splits_do_not_fire() {
        // Every busy thread on the node holding the memory.
        let v = view(2, vec![thread(6, 0, 500.0), thread(8, 1, 2.0)], &[900, 100]);
        assert!(
            memory_remote(&v).unwrap().is_none(),
            "an idle thread does not count"
        );
        // Memory split evenly: node 1 holds half, not a minority.
        let v = view(2, vec![thread(7, 1, 400.0)], &[100, 100]);
        assert!(memory_remote(&v).unwrap().is_none());
        // No resident memory at all.
        let v = view(2, vec![thread(7, 1, 400.0)], &[]);
        assert!(memory_remote(&v).unwrap().is_none());
    }

    #[test]
    fn one_node_or_no_memory_reading_is_unavailable_never_fired() {
        // One node: even a thread "on node 1" (impossible) never fires.
        let v = view(1, vec![thread(7, 1, 400.0)], &[900]);
        assert!(memory_remote(&v).unwrap_err().contains("one NUMA node"));
        let mut v = view(2, vec![thread(7, 1, 400.0)], &[900, 0]);
        v.memory = None;
        assert!(memory_remote(&v).unwrap_err().contains("numa_maps"));
    }
}
