//! The NUMA view of a `truebench record` recording (what plgrp and pmap -L show on
//! Solaris): each thread's home node and how its run time spread over nodes and LLC groups,
//! its migrations across them, and the process's memory per node by kind. Computed by
//! `homes.rs` and `numa_maps.rs`, stored in the recording (`result::recording`).

use serde::{Deserialize, Serialize};

/// Where the target's threads ran and where its memory lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumaView {
    /// NUMA nodes of the machine (the probe's), with and without CPUs.
    pub nodes: usize,
    /// LLC groups of the machine (the probe's).
    pub llc_groups: usize,
    /// `kernel.numa_balancing` (/proc/sys/kernel/numa_balancing: 0 off, 1 on, 2 memory
    /// tiering); null when the kernel has no such setting.
    pub balancing: Option<u32>,
    /// The target's threads whose run time was followed over at least one interval (seen
    /// at two readings, or born during the recording), busiest first.
    pub threads: Vec<ThreadPlacement>,
    /// The process's memory per node, from its last readable /proc/PID/numa_maps; null
    /// when it could not be read (the reason is in the recording's `unavailable`).
    pub memory: Option<ProcessMemory>,
}

/// One thread: where its run time went and how often it moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadPlacement {
    pub tid: i32,
    pub name: String,
    /// Readings at which the thread was seen.
    pub samples: usize,
    /// Run time over the recording, ms (/proc/PID/task/TID/schedstat, else stat ticks).
    pub run_ms: f64,
    /// The node holding most of its run time; null when it did not run.
    pub home_node: Option<u32>,
    /// Its run time per node (inferred from sampling: each interval's run time is given to
    /// the node of the CPU it was last on at the interval's end).
    pub nodes: Vec<RunShare>,
    /// Its run time per LLC group, attributed the same way.
    pub llc_groups: Vec<RunShare>,
    /// Migrations counted by the scheduler (se.nr_migrations) over the recording; null
    /// without CONFIG_SCHED_DEBUG.
    pub migrations: Option<u64>,
    /// Migrations between nodes (how they were known: `cross_node_basis`).
    pub cross_node_migrations: u64,
    pub cross_node_basis: CrossBasis,
    /// Migrations between LLC groups (how they were known: `cross_llc_basis`).
    pub cross_llc_migrations: u64,
    pub cross_llc_basis: CrossBasis,
}

/// How a count of migrations across nodes or LLC groups was known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CrossBasis {
    /// Exact: the machine has one node (or one LLC group), or the scheduler counted no
    /// migration of the thread at all.
    Counted,
    /// Changes of node (or LLC group) between consecutive readings: a lower bound, since a
    /// thread may move and come back between two readings.
    Sampled,
}

/// Run time spent in one node or LLC group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunShare {
    /// The node id, or the LLC group's index in the probe's `topology.llc_groups`.
    pub id: u32,
    /// The CPUs of that node or group, as a CPU list ("0-7,16-23").
    pub cpus: String,
    pub run_ms: f64,
    /// Share of the thread's run time, 0 to 1.
    pub share: f64,
}

/// The process's resident memory per node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessMemory {
    pub pid: i32,
    /// When numa_maps was read, seconds since the recording started.
    pub read_at_s: f64,
    /// Mappings in numa_maps.
    pub mappings: usize,
    /// Lines that could not be read as a mapping (left out of the totals).
    pub skipped_lines: usize,
    pub nodes: Vec<NodeMemory>,
}

impl ProcessMemory {
    pub fn total_bytes(&self) -> u64 {
        self.nodes.iter().map(|n| n.total_bytes()).sum()
    }

    /// The node holding the most memory (the lowest id on a tie); None without memory.
    pub fn largest(&self) -> Option<&NodeMemory> {
        self.nodes
            .iter()
            .filter(|n| n.total_bytes() > 0)
            .max_by(|a, b| {
                a.total_bytes()
                    .cmp(&b.total_bytes())
                    .then(b.node.cmp(&a.node))
            })
    }

    pub fn on(&self, node: u32) -> u64 {
        self.nodes
            .iter()
            .find(|n| n.node == node)
            .map_or(0, NodeMemory::total_bytes)
    }
}

/// Resident bytes on one node, by the kind of mapping holding them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeMemory {
    pub node: u32,
    /// The `[heap]` mapping.
    pub heap_bytes: u64,
    /// `[stack]` mappings (the main thread's; thread stacks are anonymous mappings).
    pub stack_bytes: u64,
    /// Other mappings without a file, hugetlb ones included.
    pub anon_bytes: u64,
    /// File-backed mappings (their private copied pages included, as pmap counts them).
    pub file_bytes: u64,
    /// Of the above, bytes in hugetlb pages (`huge` mappings).
    pub hugetlb_bytes: u64,
}

impl NodeMemory {
    pub fn total_bytes(&self) -> u64 {
        self.heap_bytes
            .saturating_add(self.stack_bytes)
            .saturating_add(self.anon_bytes)
            .saturating_add(self.file_bytes)
    }
}
