//! Where each thread of a recorded process ran (what plgrp shows on Solaris): its run time
//! per NUMA node and per LLC group, its home node (the node holding most of it), and its
//! migrations across nodes and LLC groups.
//!
//! What is counted and what is inferred: the run time of each thread (schedstat) and its
//! total migrations (se.nr_migrations) are counted by the kernel. Where that run time went
//! is inferred from sampling: at each reading the CPU the thread last ran on (stat field 39)
//! is seen, and the run time since the previous reading is given to that CPU's node and LLC
//! group. Migrations across nodes or LLC groups are exact when the machine has one of them or
//! the scheduler counted no migration; else they are the changes seen between readings, a
//! lower bound (at most the counted total).

use super::numa::{CrossBasis, RunShare, ThreadPlacement};
use super::process::TaskSample;
use crate::probe::cpulist::format_list;
use crate::probe::ProbeDoc;
use std::collections::BTreeMap;

/// Which node and LLC group each CPU belongs to.
#[derive(Debug, Clone)]
pub struct Locality {
    /// Node id -> its CPUs.
    nodes: BTreeMap<u32, Vec<u32>>,
    /// LLC groups, indexed as in the probe's `topology.llc_groups`.
    llcs: Vec<Vec<u32>>,
}

impl Locality {
    pub fn new(p: &ProbeDoc) -> Locality {
        Locality {
            nodes: p
                .numa
                .nodes
                .iter()
                .map(|n| (n.id, n.cpus.clone()))
                .collect(),
            llcs: p.topology.llc_groups.clone(),
        }
    }

    fn node_of(&self, cpu: u32) -> Option<u32> {
        self.nodes
            .iter()
            .find(|(_, cpus)| cpus.contains(&cpu))
            .map(|(id, _)| *id)
    }

    fn llc_of(&self, cpu: u32) -> Option<u32> {
        self.llcs
            .iter()
            .position(|g| g.contains(&cpu))
            .map(|i| i as u32)
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn llc_count(&self) -> usize {
        self.llcs.len()
    }
}

/// One thread followed over the readings.
#[derive(Debug, Clone, Default)]
struct Track {
    name: String,
    samples: usize,
    /// Run time was followed over at least one interval.
    accounted: bool,
    last_cpu: Option<u32>,
    last_run_ns: u64,
    run_by_cpu: BTreeMap<u32, u64>,
    run_ns: u64,
    first_migrations: Option<u64>,
    last_migrations: Option<u64>,
    node_changes: u64,
    llc_changes: u64,
}

/// The threads of a process followed from reading to reading.
#[derive(Debug, Clone, Default)]
pub struct Homes {
    tracks: BTreeMap<i32, Track>,
    readings: usize,
}

impl Homes {
    /// Add one reading of the process's threads.
    pub fn add(&mut self, tasks: &[TaskSample], loc: &Locality) {
        let first = self.readings == 0;
        self.readings += 1;
        for t in tasks {
            let tr = self.tracks.entry(t.tid).or_default();
            tr.name.clone_from(&t.name);
            // A thread already known gives the run time since its last reading; one born
            // since the previous reading gives its whole life; at the first reading, only a
            // baseline.
            let ran = match (tr.samples, first) {
                (0, true) => None,
                (0, false) => Some(t.run_ns),
                _ => Some(t.run_ns.saturating_sub(tr.last_run_ns)),
            };
            if tr.samples == 0 {
                tr.first_migrations = if first { t.migrations } else { Some(0) };
            }
            if let Some(ran) = ran {
                tr.accounted = true;
                tr.run_ns += ran;
                if let Some(cpu) = t.cpu {
                    *tr.run_by_cpu.entry(cpu).or_default() += ran;
                }
            }
            if let (Some(a), Some(b)) = (tr.last_cpu, t.cpu) {
                tr.node_changes += u64::from(loc.node_of(a) != loc.node_of(b));
                tr.llc_changes += u64::from(loc.llc_of(a) != loc.llc_of(b));
            }
            tr.samples += 1;
            tr.last_cpu = t.cpu.or(tr.last_cpu);
            tr.last_run_ns = t.run_ns;
            tr.last_migrations = t.migrations;
        }
    }

    /// Each followed thread's placement, busiest first.
    pub fn placements(&self, loc: &Locality) -> Vec<ThreadPlacement> {
        let mut v: Vec<ThreadPlacement> = self
            .tracks
            .iter()
            .filter(|(_, t)| t.accounted)
            .map(|(tid, t)| placement(*tid, t, loc))
            .collect();
        v.sort_by(|a, b| b.run_ms.total_cmp(&a.run_ms).then(a.tid.cmp(&b.tid)));
        v
    }
}

/// Run time per group (node or LLC), from run time per CPU.
fn shares(
    t: &Track,
    group_of: impl Fn(u32) -> Option<u32>,
    cpus_of: impl Fn(u32) -> String,
) -> Vec<RunShare> {
    let mut by: BTreeMap<u32, u64> = BTreeMap::new();
    for (cpu, ns) in &t.run_by_cpu {
        if let Some(g) = group_of(*cpu) {
            *by.entry(g).or_default() += ns;
        }
    }
    by.into_iter()
        .filter(|(_, ns)| *ns > 0)
        .map(|(id, ns)| RunShare {
            id,
            cpus: cpus_of(id),
            run_ms: ns as f64 / 1e6,
            share: ns as f64 / t.run_ns.max(1) as f64,
        })
        .collect()
}

/// A count of migrations across groups, and how it is known.
fn cross(groups: usize, counted: Option<u64>, seen: u64) -> (u64, CrossBasis) {
    match counted {
        _ if groups <= 1 => (0, CrossBasis::Counted),
        Some(0) => (0, CrossBasis::Counted),
        Some(n) => (seen.min(n), CrossBasis::Sampled),
        None => (seen, CrossBasis::Sampled),
    }
}

fn placement(tid: i32, t: &Track, loc: &Locality) -> ThreadPlacement {
    let nodes = shares(
        t,
        |c| loc.node_of(c),
        |id| format_list(loc.nodes.get(&id).map_or(&[][..], |v| v)),
    );
    let llc_groups = shares(
        t,
        |c| loc.llc_of(c),
        |i| format_list(loc.llcs.get(i as usize).map_or(&[][..], |v| v)),
    );
    let home_node = nodes
        .iter()
        .max_by(|a, b| a.run_ms.total_cmp(&b.run_ms).then(b.id.cmp(&a.id)))
        .map(|s| s.id);
    let migrations = t
        .first_migrations
        .zip(t.last_migrations)
        .map(|(a, b)| b.saturating_sub(a));
    let (cross_node_migrations, cross_node_basis) =
        cross(loc.node_count(), migrations, t.node_changes);
    let (cross_llc_migrations, cross_llc_basis) = cross(loc.llc_count(), migrations, t.llc_changes);
    ThreadPlacement {
        tid,
        name: t.name.clone(),
        samples: t.samples,
        run_ms: t.run_ns as f64 / 1e6,
        home_node,
        nodes,
        llc_groups,
        migrations,
        cross_node_migrations,
        cross_node_basis,
        cross_llc_migrations,
        cross_llc_basis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture;

    fn task(tid: i32, cpu: u32, run_ms: u64, migrations: u64) -> TaskSample {
        TaskSample {
            tid,
            name: format!("worker-{tid}"),
            cpu: Some(cpu),
            run_ns: run_ms * 1_000_000,
            migrations: Some(migrations),
        }
    }

    /// On the two-node EPYC tree (node 0: CPUs 0-7,16-23 with LLC groups 0-3,16-19 and
    /// 4-7,20-23; node 1: 8-15,24-31), a thread that runs 300 ms on node 1 and 100 ms on
    /// node 0 has its home on node 1.
    #[test]
    fn home_node_and_spread_on_a_two_node_topology() {
        let p = fixture("epyc-multi-llc-2node");
        let loc = Locality::new(&p);
        assert_eq!((loc.node_count(), loc.llc_count()), (2, 4));
        let mut h = Homes::default();
        // Reading 1: baseline. Thread 10 on CPU 0 (node 0, LLC 0); thread 11 on CPU 1.
        h.add(&[task(10, 0, 1000, 5), task(11, 1, 50, 0)], &loc);
        // Reading 2: thread 10 ran 100 ms, last on CPU 4 (node 0, another LLC group).
        h.add(&[task(10, 4, 1100, 6), task(11, 1, 50, 0)], &loc);
        // Readings 3 and 4: 150 ms each on node 1 (CPU 8, then its SMT sibling 24).
        h.add(&[task(10, 8, 1250, 8), task(11, 1, 50, 0)], &loc);
        h.add(
            &[
                task(10, 24, 1400, 9),
                task(11, 1, 50, 0),
                task(12, 9, 30, 1),
            ],
            &loc,
        );
        let v = h.placements(&loc);
        let t10 = &v[0];
        assert_eq!((t10.tid, t10.samples), (10, 4));
        assert!((t10.run_ms - 400.0).abs() < 1e-9);
        assert_eq!(t10.home_node, Some(1));
        let node = |id| t10.nodes.iter().find(|s| s.id == id).unwrap();
        assert!((node(1).share - 0.75).abs() < 1e-9 && (node(0).share - 0.25).abs() < 1e-9);
        assert_eq!(node(1).cpus, "8-15,24-31");
        // LLC groups: 100 ms in the group of CPU 4, 300 ms in the group of CPUs 8 and 24.
        let llc = |cpu: u32| {
            let id = loc.llc_of(cpu).unwrap();
            t10.llc_groups.iter().find(|s| s.id == id).unwrap().run_ms
        };
        assert!((llc(4) - 100.0).abs() < 1e-9 && (llc(8) - 300.0).abs() < 1e-9);
        assert_eq!(t10.llc_groups.len(), 2, "{:?}", t10.llc_groups);
        // 4 migrations counted; seen: 0->4 (LLC), 4->8 (node and LLC), 8->24 (neither).
        assert_eq!(t10.migrations, Some(4));
        assert_eq!(
            (t10.cross_node_migrations, t10.cross_node_basis),
            (1, CrossBasis::Sampled)
        );
        assert_eq!(
            (t10.cross_llc_migrations, t10.cross_llc_basis),
            (2, CrossBasis::Sampled)
        );
        // Thread 11 never ran in the recording: followed, no home; no migration counted,
        // so no cross-node migration, exactly.
        let t11 = v.iter().find(|t| t.tid == 11).unwrap();
        assert_eq!((t11.home_node, t11.run_ms), (None, 0.0));
        assert!(t11.nodes.is_empty());
        assert_eq!(
            (t11.cross_node_migrations, t11.cross_node_basis),
            (0, CrossBasis::Counted)
        );
        // Thread 12 was born before the last reading: its whole life is in the recording.
        let t12 = v.iter().find(|t| t.tid == 12).unwrap();
        assert_eq!((t12.home_node, t12.migrations), (Some(1), Some(1)));
        assert!((t12.run_ms - 30.0).abs() < 1e-9);
    }

    #[test]
    fn on_one_node_cross_node_migrations_are_counted_zero() {
        let p = fixture("this-vm");
        let loc = Locality::new(&p);
        assert_eq!(loc.node_count(), 1);
        let mut h = Homes::default();
        h.add(&[task(1, 0, 0, 0)], &loc);
        h.add(&[task(1, 1, 10, 3)], &loc);
        h.add(&[task(1, 0, 20, 7)], &loc);
        let t = &h.placements(&loc)[0];
        assert_eq!(t.home_node, Some(0));
        assert_eq!(t.migrations, Some(7));
        assert_eq!(
            (t.cross_node_migrations, t.cross_node_basis),
            (0, CrossBasis::Counted)
        );
        // A sampled count never exceeds what the scheduler counted.
        assert_eq!(cross(2, Some(1), 5), (1, CrossBasis::Sampled));
        assert_eq!(cross(2, None, 5), (5, CrossBasis::Sampled));
    }
}
