//! CPU topology from sysfs: packages, dies, clusters, cores, SMT threads, every cache
//! instance with the CPUs sharing it, and the last-level-cache groups.
//!
//! Relations come from the kernel's sibling lists (`core_cpus_list`, `package_cpus_list`,
//! `shared_cpu_list`), never from CPU number arithmetic: CPU i and i+N/2 are SMT siblings on
//! some machines and sockets apart on others.

use super::cpulist::{parse_list, parse_mask};
use super::sysroot::SysRoot;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// One logical CPU's place in the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlace {
    pub cpu: u32,
    pub package: i64,
    pub die: Option<i64>,
    /// CPUs of this CPU's cluster (ARM clusters, Intel modules), when the kernel reports them.
    pub cluster_cpus: Option<Vec<u32>>,
    pub core_id: i64,
    /// This CPU's SMT siblings, itself included.
    pub core_cpus: Vec<u32>,
    pub package_cpus: Vec<u32>,
}

/// One cache instance and the CPUs that share it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub cpus: Vec<u32>,
    pub id: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Topology {
    pub packages: usize,
    pub dies: usize,
    /// Distinct clusters, or None when the kernel reports none.
    pub clusters: Option<usize>,
    /// Physical cores (distinct SMT sibling sets).
    pub cores: usize,
    /// Logical CPUs (online).
    pub threads: usize,
    /// The most SMT threads any core has.
    pub threads_per_core: usize,
    /// SMT control state (`smt/control`): on, off, notsupported, forceoff; None when absent.
    pub smt_control: Option<String>,
    pub cpus: Vec<CpuPlace>,
    pub caches: Vec<Cache>,
    /// Level of the last-level cache (the highest data or unified level).
    pub llc_level: Option<u32>,
    /// One CPU list per last-level cache instance.
    pub llc_groups: Vec<Vec<u32>>,
}

impl Topology {
    pub fn place(&self, cpu: u32) -> Option<&CpuPlace> {
        self.cpus.iter().find(|p| p.cpu == cpu)
    }

    /// The LLC group holding `cpu`.
    pub fn llc_of(&self, cpu: u32) -> Option<&Vec<u32>> {
        self.llc_groups.iter().find(|g| g.contains(&cpu))
    }

    /// Distinct packages with their CPUs.
    pub fn package_cpus(&self) -> BTreeMap<i64, Vec<u32>> {
        let mut m: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
        for p in &self.cpus {
            m.entry(p.package).or_default().push(p.cpu);
        }
        m
    }

    /// Distinct cores (SMT sibling sets).
    pub fn core_sets(&self) -> BTreeSet<Vec<u32>> {
        self.cpus.iter().map(|p| p.core_cpus.clone()).collect()
    }
}

/// Read a list file, or its mask twin (`foo_list` / `foo`), whichever exists.
fn read_cpus(root: &SysRoot, list_path: &str, mask_path: &str) -> Option<Vec<u32>> {
    if let Some(s) = root.read_opt(list_path) {
        return parse_list(&s).ok();
    }
    root.read_opt(mask_path).and_then(|s| parse_mask(&s).ok())
}

/// Parse a sysfs cache size (`32K`, `8192K`, `2M`, `491520K`) into bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|n| n * mult)
}

fn read_place(root: &SysRoot, cpu: u32) -> Option<CpuPlace> {
    let t = format!("{CPU_DIR}/cpu{cpu}/topology");
    if !root.exists(&t) {
        return None;
    }
    let package = root
        .read_num(format!("{t}/physical_package_id"))
        .unwrap_or(0);
    let die = root
        .read_num::<i64>(format!("{t}/die_id"))
        .filter(|d| *d >= 0);
    let core_id = root.read_num(format!("{t}/core_id")).unwrap_or(cpu as i64);
    let core_cpus = read_cpus(
        root,
        &format!("{t}/core_cpus_list"),
        &format!("{t}/core_cpus"),
    )
    .or_else(|| {
        read_cpus(
            root,
            &format!("{t}/thread_siblings_list"),
            &format!("{t}/thread_siblings"),
        )
    })
    .unwrap_or_else(|| vec![cpu]);
    let package_cpus = read_cpus(
        root,
        &format!("{t}/package_cpus_list"),
        &format!("{t}/package_cpus"),
    )
    .or_else(|| {
        read_cpus(
            root,
            &format!("{t}/core_siblings_list"),
            &format!("{t}/core_siblings"),
        )
    })
    .unwrap_or_else(|| vec![cpu]);
    let cluster_cpus = read_cpus(
        root,
        &format!("{t}/cluster_cpus_list"),
        &format!("{t}/cluster_cpus"),
    );
    Some(CpuPlace {
        cpu,
        package,
        die,
        cluster_cpus,
        core_id,
        core_cpus,
        package_cpus,
    })
}

fn read_caches_of(root: &SysRoot, cpu: u32) -> Vec<Cache> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cache");
    root.numbered(&dir, "index")
        .into_iter()
        .filter_map(|i| {
            let d = format!("{dir}/index{i}");
            let level = root.read_num(format!("{d}/level"))?;
            let kind = root
                .read_opt(format!("{d}/type"))
                .unwrap_or_else(|| "Unknown".into());
            let cpus = read_cpus(
                root,
                &format!("{d}/shared_cpu_list"),
                &format!("{d}/shared_cpu_map"),
            )
            .unwrap_or_else(|| vec![cpu]);
            Some(Cache {
                level,
                kind,
                size_bytes: root
                    .read_opt(format!("{d}/size"))
                    .and_then(|s| parse_size(&s)),
                cpus,
                id: root.read_num(format!("{d}/id")),
            })
        })
        .collect()
}

/// Read the topology of the given online CPUs.
pub fn read(root: &SysRoot, online: &[u32]) -> Topology {
    let cpus: Vec<CpuPlace> = online.iter().filter_map(|&c| read_place(root, c)).collect();

    // Cache instances: deduplicated by (level, type, sharing set).
    let mut seen = BTreeSet::new();
    let mut caches = Vec::new();
    for &c in online {
        for cache in read_caches_of(root, c) {
            let key = (cache.level, cache.kind.clone(), cache.cpus.clone());
            if seen.insert(key) {
                caches.push(cache);
            }
        }
    }
    caches.sort_by(|a, b| (a.level, &a.kind, &a.cpus).cmp(&(b.level, &b.kind, &b.cpus)));
    let (llc_level, llc_groups) = llc_groups(&caches, online);

    let packages: BTreeSet<i64> = cpus.iter().map(|p| p.package).collect();
    let dies: BTreeSet<(i64, i64)> = cpus
        .iter()
        .map(|p| (p.package, p.die.unwrap_or(0)))
        .collect();
    let clusters: BTreeSet<Vec<u32>> = cpus.iter().filter_map(|p| p.cluster_cpus.clone()).collect();
    let cores: BTreeSet<Vec<u32>> = cpus.iter().map(|p| p.core_cpus.clone()).collect();
    let threads_per_core = cores.iter().map(Vec::len).max().unwrap_or(1);

    Topology {
        packages: packages.len(),
        dies: dies.len(),
        clusters: if clusters.is_empty() {
            None
        } else {
            Some(clusters.len())
        },
        cores: cores.len(),
        threads: cpus.len(),
        threads_per_core,
        smt_control: root.read_opt(format!("{CPU_DIR}/smt/control")),
        cpus,
        caches,
        llc_level,
        llc_groups,
    }
}

/// Each CPU's last-level cache is its highest-level data or unified cache (an L2 is the
/// LLC where no L3 exists). Returns the highest such level and the distinct sharing sets.
fn llc_groups(caches: &[Cache], online: &[u32]) -> (Option<u32>, Vec<Vec<u32>>) {
    let mut groups: BTreeSet<Vec<u32>> = BTreeSet::new();
    let mut top = None;
    for &cpu in online {
        let llc = caches
            .iter()
            .filter(|c| c.kind != "Instruction" && c.cpus.contains(&cpu))
            .max_by_key(|c| c.level);
        if let Some(c) = llc {
            top = top.max(Some(c.level));
            let members: Vec<u32> = c
                .cpus
                .iter()
                .copied()
                .filter(|x| online.contains(x))
                .collect();
            groups.insert(members);
        }
    }
    (top, groups.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_with_units() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("491520K"), Some(480 * 1024 * 1024));
        assert_eq!(parse_size("2M"), Some(2 * 1024 * 1024));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("big"), None);
    }

    fn cache(level: u32, kind: &str, cpus: &[u32]) -> Cache {
        Cache {
            level,
            kind: kind.into(),
            size_bytes: None,
            cpus: cpus.to_vec(),
            id: None,
        }
    }

    #[test]
    fn l2_is_the_llc_without_l3() {
        let caches = vec![
            cache(1, "Data", &[0]),
            cache(1, "Instruction", &[0]),
            cache(1, "Data", &[1]),
            cache(2, "Unified", &[0, 1]),
        ];
        assert_eq!(llc_groups(&caches, &[0, 1]), (Some(2), vec![vec![0, 1]]));
    }

    #[test]
    fn instruction_caches_never_count_as_llc() {
        let caches = vec![cache(1, "Data", &[0]), cache(2, "Instruction", &[0, 1])];
        assert_eq!(llc_groups(&caches, &[0]), (Some(1), vec![vec![0]]));
    }
}
