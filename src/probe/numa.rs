//! NUMA nodes from sysfs: each node's CPUs and memory, and the firmware distance matrix
//! (one row of the ACPI SLIT per node). A kernel without NUMA shows one implicit node.

use super::cpulist::parse_list;
use super::sysroot::SysRoot;
use super::Unavailable;
use serde::{Deserialize, Serialize};

const NODE_DIR: &str = "/sys/devices/system/node";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: u32,
    pub cpus: Vec<u32>,
    pub memory_bytes: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Numa {
    pub nodes: Vec<Node>,
    pub distances: Vec<Vec<u32>>,
    /// `sysfs`, or `implicit` when the kernel has no node directory (one node assumed).
    pub source: String,
}

/// `MemTotal` in bytes from a meminfo text (`Node 0 MemTotal: 1024 kB` or `MemTotal: 1024 kB`).
pub fn mem_total(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let idx = l.find("MemTotal:")?;
        let rest = l[idx + "MemTotal:".len()..].trim();
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kb * 1024)
    })
}

pub fn read(root: &SysRoot, online: &[u32], missing: &mut Unavailable) -> Numa {
    let ids: Vec<u32> = match root.read_opt(format!("{NODE_DIR}/online")) {
        Some(s) => parse_list(&s).unwrap_or_default(),
        None => root.numbered(NODE_DIR, "node"),
    };
    if ids.is_empty() {
        missing.add(
            "numa",
            "no /sys/devices/system/node (kernel without NUMA): one implicit node",
        );
        return Numa {
            nodes: vec![Node {
                id: 0,
                cpus: online.to_vec(),
                memory_bytes: root.read_opt("/proc/meminfo").and_then(|m| mem_total(&m)),
            }],
            distances: vec![vec![10]],
            source: "implicit".into(),
        };
    }
    let mut nodes = Vec::new();
    let mut distances = Vec::new();
    for id in ids {
        let d = format!("{NODE_DIR}/node{id}");
        nodes.push(Node {
            id,
            cpus: root
                .read_opt(format!("{d}/cpulist"))
                .and_then(|s| parse_list(&s).ok())
                .unwrap_or_default(),
            memory_bytes: root
                .read_opt(format!("{d}/meminfo"))
                .and_then(|m| mem_total(&m)),
        });
        let row: Vec<u32> = root
            .read_opt(format!("{d}/distance"))
            .map(|s| {
                s.split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        distances.push(row);
    }
    Numa {
        nodes,
        distances,
        source: "sysfs".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_total_in_both_formats() {
        assert_eq!(
            mem_total("Node 0 MemTotal:       1024 kB\nNode 0 MemFree: 5 kB"),
            Some(1024 * 1024)
        );
        assert_eq!(mem_total("MemTotal:        2048 kB\n"), Some(2048 * 1024));
        assert_eq!(mem_total("nothing"), None);
    }
}
