//! NUMA nodes from sysfs: each node's CPUs (`cpulist`, or the `cpumap` mask of older
//! kernels) and memory, its kind (`cpus+memory`, `memory-only` such as CXL or HBM memory,
//! `cpus-only`), its memory tier and initiators where the kernel gives them, and the
//! firmware distance matrix (one row of the ACPI SLIT per node). A kernel without NUMA
//! shows one implicit node.

use super::cpulist::{format_list, read_cpus};
use super::sysroot::SysRoot;
use super::Unavailable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const NODE_DIR: &str = "/sys/devices/system/node";
const TIER_DIR: &str = "/sys/devices/virtual/memory_tiering";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: u32,
    pub cpus: Vec<u32>,
    pub memory_bytes: Option<u64>,
    /// `cpus+memory`, `memory-only`, `cpus-only`, or `empty` (neither yet).
    /// Empty only in documents written before node kinds were read (then not written).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The memory tier holding this node (`memory_tiering/memory_tierN`, kernel 6.1+);
    /// lower is faster.
    #[serde(default)]
    pub memory_tier: Option<u32>,
    /// The nodes whose CPUs the firmware (HMAT) names as this memory's best initiators
    /// (`access0/initiators`).
    #[serde(default)]
    pub initiators: Option<Vec<u32>>,
    /// HMAT performance from the best initiators (`access0/initiators/read_latency` ns,
    /// `read_bandwidth` MB/s...), as the firmware states it.
    #[serde(default)]
    pub access: BTreeMap<String, u64>,
    /// Memory-side cache in front of this node's memory (`memory_side_cache/indexN/size`).
    #[serde(default)]
    pub memory_side_cache_bytes: Option<u64>,
}

impl Node {
    pub fn has_cpus(&self) -> bool {
        !self.cpus.is_empty()
    }

    /// Whether memory can be allocated here (a node of unknown size counts as having some).
    pub fn has_memory(&self) -> bool {
        self.memory_bytes != Some(0)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Numa {
    pub nodes: Vec<Node>,
    pub distances: Vec<Vec<u32>>,
    /// `sysfs`, or `implicit` when the kernel has no node directory (one node assumed).
    pub source: String,
}

impl Numa {
    /// The node holding `cpu` (None for a CPU no node lists, e.g. offline).
    pub fn node_of(&self, cpu: u32) -> Option<u32> {
        self.nodes
            .iter()
            .find(|n| n.cpus.contains(&cpu))
            .map(|n| n.id)
    }

    /// The distance from node `a` to node `b`, when the firmware gives it.
    pub fn distance(&self, a: u32, b: u32) -> Option<u32> {
        let i = self.nodes.iter().position(|n| n.id == a)?;
        let j = self.nodes.iter().position(|n| n.id == b)?;
        self.distances.get(i)?.get(j).copied()
    }

    /// The nodes with CPUs nearest to memory node `target` among `candidates` (node ids
    /// with usable CPUs), and how that was decided: the firmware's initiators when it
    /// names some candidates, else the smallest distance; ties keep every nearest node.
    pub fn nearest_cpu_nodes(&self, target: u32, candidates: &[u32]) -> (Vec<u32>, String) {
        let node = self.nodes.iter().find(|n| n.id == target);
        if let Some(init) = node.and_then(|n| n.initiators.as_ref()) {
            let hit: Vec<u32> = init
                .iter()
                .copied()
                .filter(|i| candidates.contains(i))
                .collect();
            if !hit.is_empty() {
                return (hit, format!("initiators of node {target} (HMAT access0)"));
            }
        }
        let best = candidates
            .iter()
            .filter_map(|&c| self.distance(c, target).map(|d| (d, c)))
            .min();
        match best {
            Some((d, _)) => (
                candidates
                    .iter()
                    .copied()
                    .filter(|&c| self.distance(c, target) == Some(d))
                    .collect(),
                format!("smallest distance to node {target} ({d})"),
            ),
            None => (
                candidates.to_vec(),
                format!("no distances to node {target}: every CPU node"),
            ),
        }
    }
}

/// `MemTotal` in bytes from a meminfo text (`Node 0 MemTotal: 1024 kB` or `MemTotal: 1024 kB`).
pub fn mem_total(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let idx = l.find("MemTotal:")?;
        let rest = l[idx + "MemTotal:".len()..].trim();
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        kb.checked_mul(1024)
    })
}

fn kind(cpus: &[u32], memory: Option<u64>) -> &'static str {
    match (cpus.is_empty(), memory == Some(0)) {
        (false, false) => "cpus+memory",
        (false, true) => "cpus-only",
        (true, false) => "memory-only",
        (true, true) => "empty",
    }
}

/// Node id -> memory tier, from `memory_tiering/memory_tierN/nodelist` (or `nodes`).
fn tiers(root: &SysRoot) -> BTreeMap<u32, u32> {
    let mut m = BTreeMap::new();
    for t in root.numbered(TIER_DIR, "memory_tier") {
        let d = format!("{TIER_DIR}/memory_tier{t}");
        if let Ok(nodes) = read_cpus(root, &format!("{d}/nodelist"), "")
            .or_else(|_| read_cpus(root, &format!("{d}/nodes"), ""))
        {
            for n in nodes {
                m.insert(n, t);
            }
        }
    }
    m
}

fn hmat(root: &SysRoot, d: &str) -> (Option<Vec<u32>>, BTreeMap<String, u64>) {
    let dir = format!("{d}/access0/initiators");
    let init = root.numbered(&dir, "node");
    let mut access = BTreeMap::new();
    for f in [
        "read_latency",
        "write_latency",
        "read_bandwidth",
        "write_bandwidth",
    ] {
        if let Some(v) = root.read_num::<u64>(format!("{dir}/{f}")) {
            access.insert(f.to_string(), v);
        }
    }
    ((!init.is_empty()).then_some(init), access)
}

fn side_cache(root: &SysRoot, d: &str) -> Option<u64> {
    let dir = format!("{d}/memory_side_cache");
    let sizes: Vec<u64> = root
        .numbered(&dir, "index")
        .into_iter()
        .filter_map(|i| root.read_num::<u64>(format!("{dir}/index{i}/size")))
        .collect();
    (!sizes.is_empty()).then(|| sizes.iter().sum())
}

/// One row of the distance matrix: whitespace-separated numbers, all of them or nothing.
fn distance_row(s: &str) -> Result<Vec<u32>, String> {
    s.split_whitespace()
        .map(|x| {
            x.parse::<u32>()
                .map_err(|_| format!("'{x}' is not a distance"))
        })
        .collect()
}

pub fn read(root: &SysRoot, online: &[u32], missing: &mut Unavailable) -> Numa {
    let dirs = root.numbered(NODE_DIR, "node");
    let ids: Vec<u32> = match read_cpus(root, &format!("{NODE_DIR}/online"), "") {
        Ok(v) if !v.is_empty() => v,
        Ok(_) | Err(_) if dirs.is_empty() => vec![],
        Ok(_) | Err(_) => {
            missing.add(
                "numa.online",
                &format!(
                    "{NODE_DIR}/online unreadable or empty: the nodeN directories [{}] counted",
                    format_list(&dirs)
                ),
            );
            dirs
        }
    };
    if ids.is_empty() {
        missing.add(
            "numa",
            "no /sys/devices/system/node (kernel without NUMA): one implicit node",
        );
        let memory_bytes = root.read_opt("/proc/meminfo").and_then(|m| mem_total(&m));
        return Numa {
            nodes: vec![Node {
                id: 0,
                cpus: online.to_vec(),
                memory_bytes,
                kind: kind(online, memory_bytes).into(),
                memory_tier: None,
                initiators: None,
                access: BTreeMap::new(),
                memory_side_cache_bytes: None,
            }],
            distances: vec![vec![10]],
            source: "implicit".into(),
        };
    }
    let tiers = tiers(root);
    let mut nodes = Vec::new();
    let mut distances = Vec::new();
    let mut bad_cpus = Vec::new();
    let mut bad_rows = Vec::new();
    for id in ids {
        let d = format!("{NODE_DIR}/node{id}");
        // The kind follows the node's CPUs, online or not; `cpus` keeps the online ones.
        let all: Vec<u32> = match read_cpus(root, &format!("{d}/cpulist"), &format!("{d}/cpumap")) {
            Ok(v) => v,
            Err(e) => {
                bad_cpus.push(format!("node {id}: {e}"));
                vec![]
            }
        };
        let cpus: Vec<u32> = all.iter().copied().filter(|c| online.contains(c)).collect();
        let memory_bytes = root
            .read_opt(format!("{d}/meminfo"))
            .and_then(|m| mem_total(&m));
        let (initiators, access) = hmat(root, &d);
        nodes.push(Node {
            id,
            kind: kind(&all, memory_bytes).into(),
            cpus,
            memory_bytes,
            memory_tier: tiers.get(&id).copied(),
            initiators,
            access,
            memory_side_cache_bytes: side_cache(root, &d),
        });
        let row = match root.read_opt(format!("{d}/distance")) {
            Some(s) => distance_row(&s).unwrap_or_else(|e| {
                bad_rows.push(format!("node {id}: {e}"));
                vec![]
            }),
            None => {
                bad_rows.push(format!("node {id}: no distance file"));
                vec![]
            }
        };
        distances.push(row);
    }
    if !bad_cpus.is_empty() {
        missing.add(
            "numa.nodes.cpus",
            &format!("{} (such nodes show no CPUs)", bad_cpus.join("; ")),
        );
    }
    if !bad_rows.is_empty() {
        missing.add("numa.distances", &bad_rows.join("; "));
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

    #[test]
    fn node_kinds_from_cpus_and_memory() {
        assert_eq!(kind(&[0], Some(1)), "cpus+memory");
        assert_eq!(kind(&[0], None), "cpus+memory");
        assert_eq!(kind(&[], Some(1 << 30)), "memory-only");
        assert_eq!(kind(&[3], Some(0)), "cpus-only");
    }

    #[test]
    fn distance_rows_are_all_or_nothing() {
        assert_eq!(distance_row("10 21\n").unwrap(), vec![10, 21]);
        assert!(distance_row("10 x").is_err());
    }
}
