//! CPU topology from sysfs: packages, dies, clusters, cores, SMT threads, every cache
//! instance with the CPUs sharing it, and the last-level-cache groups.
//!
//! Relations come from the kernel's sibling lists (`core_cpus_list`, `package_cpus_list`,
//! `shared_cpu_list`), never from CPU number arithmetic: CPU i and i+N/2 are SMT siblings on
//! some machines and sockets apart on others.

use super::cpulist::{format_list, read_cpus};
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
    /// Kinds of CPU on a hybrid machine (P/E cores, big.LITTLE), fastest first; empty
    /// when every CPU is of one kind.
    #[serde(default)]
    pub cpu_kinds: Vec<super::kinds::CpuKind>,
    /// Which sources decided packages, cores and cache sharing where they disagreed or
    /// were missing.
    #[serde(default)]
    pub evidence: Vec<String>,
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

/// Parse a sysfs cache size (`32K`, `8192K`, `2M`, `491520K`) into bytes; a size of 0
/// (some firmware's for a cache it does not describe) is no size.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
}

/// One CPU's topology files as found (None: absent or unreadable).
#[derive(Debug, Clone, Default)]
struct Raw {
    cpu: u32,
    package_id: Option<i64>,
    die_id: Option<i64>,
    core_id: Option<i64>,
    /// `core_cpus`/`thread_siblings` (list or mask), cut to the online CPUs.
    thread_sibs: Option<Vec<u32>>,
    /// `package_cpus`/`core_siblings` (list or mask), cut to the online CPUs.
    package_sibs: Option<Vec<u32>>,
    die_sibs: Option<Vec<u32>>,
    cluster_sibs: Option<Vec<u32>>,
}

/// Read a sibling set from the first of several (list, mask) file pairs that reads; the
/// CPU itself is always in its own set, CPUs outside `online` never are. An empty set is
/// not a reading (the kernel always lists the CPU itself; an empty file is a masked or
/// damaged tree), so it never makes each CPU a package or a core of its own.
fn siblings(
    root: &SysRoot,
    dir: &str,
    names: &[(&str, &str)],
    cpu: u32,
    online: &BTreeSet<u32>,
) -> Option<Vec<u32>> {
    let v = names.iter().find_map(|(l, m)| {
        read_cpus(root, &format!("{dir}/{l}"), &format!("{dir}/{m}"))
            .ok()
            .filter(|v| !v.is_empty())
    })?;
    let mut set: BTreeSet<u32> = v.into_iter().filter(|c| online.contains(c)).collect();
    set.insert(cpu);
    Some(set.into_iter().collect())
}

fn read_raw(root: &SysRoot, cpu: u32, online: &BTreeSet<u32>) -> Raw {
    let t = format!("{CPU_DIR}/cpu{cpu}/topology");
    let num = |n: &str| root.read_num::<i64>(format!("{t}/{n}"));
    Raw {
        cpu,
        package_id: num("physical_package_id"),
        die_id: num("die_id"),
        core_id: num("core_id"),
        thread_sibs: siblings(
            root,
            &t,
            &[
                ("core_cpus_list", "core_cpus"),
                ("thread_siblings_list", "thread_siblings"),
            ],
            cpu,
            online,
        ),
        package_sibs: siblings(
            root,
            &t,
            &[
                ("package_cpus_list", "package_cpus"),
                ("core_siblings_list", "core_siblings"),
            ],
            cpu,
            online,
        ),
        die_sibs: siblings(root, &t, &[("die_cpus_list", "die_cpus")], cpu, online),
        cluster_sibs: siblings(
            root,
            &t,
            &[("cluster_cpus_list", "cluster_cpus")],
            cpu,
            online,
        ),
    }
}

/// Union-find over CPU positions: CPUs joined by their sibling sets.
fn components(raws: &[Raw], sibs: impl Fn(&Raw) -> Option<&Vec<u32>>) -> Vec<usize> {
    let pos: BTreeMap<u32, usize> = raws.iter().enumerate().map(|(i, r)| (r.cpu, i)).collect();
    let mut parent: Vec<usize> = (0..raws.len()).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for (i, r) in raws.iter().enumerate() {
        for c in sibs(r).into_iter().flatten() {
            if let Some(&j) = pos.get(c) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    (0..raws.len()).map(|i| find(&mut parent, i)).collect()
}

/// The partition a labelling makes: CPU groups, in order of their first CPU.
fn partition<K: Ord + Clone>(raws: &[Raw], key: impl Fn(usize) -> K) -> Vec<Vec<u32>> {
    let mut m: BTreeMap<K, Vec<u32>> = BTreeMap::new();
    for (i, r) in raws.iter().enumerate() {
        m.entry(key(i)).or_default().push(r.cpu);
    }
    let mut groups: Vec<Vec<u32>> = m.into_values().collect();
    groups.sort();
    groups
}

/// Each CPU's package label and the evidence for the grouping. Packages are
/// `physical_package_id` when every CPU has one (>= 0) and they agree with the sibling
/// masks (`package_cpus`/`core_siblings`); otherwise the masks group them (s390 and older
/// POWER write -1, Itanium repeats ids across sockets), numbered in CPU order.
fn packages(raws: &[Raw]) -> (Vec<i64>, String) {
    let ids: Option<Vec<i64>> = raws
        .iter()
        .map(|r| r.package_id.filter(|&i| i >= 0))
        .collect();
    let masks = raws.iter().all(|r| r.package_sibs.is_some());
    let by_mask = || {
        let comp = components(raws, |r| r.package_sibs.as_ref());
        let groups = partition(raws, |i| comp[i]);
        ordinal(raws, &groups)
    };
    match (ids, masks) {
        (Some(ids), true) => {
            let by_id = partition(raws, |i| ids[i]);
            let comp = components(raws, |r| r.package_sibs.as_ref());
            let by_masks = partition(raws, |i| comp[i]);
            if by_id == by_masks {
                (ids, "packages from physical_package_id, agreeing with the package sibling masks".into())
            } else if refines(&by_masks, &by_id) && core_ids_unique(raws, &ids) {
                (
                    ids,
                    format!(
                        "packages from physical_package_id ({}): the package sibling masks split them into {}, but each package's core_ids are distinct (masks cut per node, as kernels wrote core_siblings on Cluster-on-Die Xeons)",
                        crate::units::count(by_id.len(), "group"),
                        crate::units::count(by_masks.len(), "group")
                    ),
                )
            } else {
                (
                    by_mask(),
                    format!(
                        "packages from the sibling masks (package_cpus/core_siblings: {}): physical_package_id gives {} that contradict them",
                        crate::units::count(by_masks.len(), "group"),
                        crate::units::count(by_id.len(), "group")
                    ),
                )
            }
        }
        (None, true) => {
            let bad: Vec<u32> = raws
                .iter()
                .filter(|r| r.package_id.is_none_or(|i| i < 0))
                .map(|r| r.cpu)
                .collect();
            (
                by_mask(),
                format!(
                    "packages from the sibling masks (package_cpus/core_siblings): physical_package_id is missing or negative on CPUs [{}]",
                    format_list(&bad)
                ),
            )
        }
        (Some(ids), false) => (
            ids,
            "packages from physical_package_id (no package sibling masks)".into(),
        ),
        (None, false) => (
            raws.iter()
                .map(|r| r.package_id.filter(|&i| i >= 0).unwrap_or(-1))
                .collect(),
            "neither a valid physical_package_id nor package sibling masks on every CPU: CPUs without either are counted as one package (-1)".into(),
        ),
    }
}

/// Whether every group of `fine` lies inside one group of `coarse`.
fn refines(fine: &[Vec<u32>], coarse: &[Vec<u32>]) -> bool {
    fine.iter()
        .all(|f| coarse.iter().any(|c| f.iter().all(|x| c.contains(x))))
}

/// Whether no two cores of one package (by `ids`) share a die_id and core_id: CPUs that do
/// share them must also share an SMT sibling mask. Repeated ids on distinct sockets
/// (Itanium) break this, since each socket numbers its cores from 0.
fn core_ids_unique(raws: &[Raw], ids: &[i64]) -> bool {
    // (package id, die_id, core_id) -> the SMT sibling mask of the first CPU seen with them.
    type CoreKey = (i64, Option<i64>, i64);
    let mut seen: BTreeMap<CoreKey, &Option<Vec<u32>>> = BTreeMap::new();
    raws.iter().enumerate().all(|(i, r)| {
        let Some(core) = r.core_id else {
            return false;
        };
        match seen.get(&(ids[i], r.die_id, core)) {
            Some(sibs) => **sibs == r.thread_sibs && r.thread_sibs.is_some(),
            None => {
                seen.insert((ids[i], r.die_id, core), &r.thread_sibs);
                true
            }
        }
    })
}

/// Each CPU's label: the index (in CPU order) of its group.
fn ordinal(raws: &[Raw], groups: &[Vec<u32>]) -> Vec<i64> {
    raws.iter()
        .map(|r| groups.iter().position(|g| g.contains(&r.cpu)).unwrap_or(0) as i64)
        .collect()
}

/// Each CPU's core: the CPUs sharing its package, die and `core_id` that its SMT sibling
/// mask also holds. Where the two disagree the finer wins: a sibling mask spanning two
/// core_ids (AMD compute units) is two cores, a core_id repeated on CPUs with distinct
/// masks is distinct cores. The evidence says where they disagreed.
fn cores(raws: &[Raw], pkg: &[i64], die: &[i64]) -> (Vec<Vec<u32>>, Vec<String>) {
    let key = |i: usize| {
        let r = &raws[i];
        let own = (r.core_id.is_none() && r.thread_sibs.is_none()).then_some(r.cpu);
        (pkg[i], die[i], r.core_id, r.thread_sibs.clone(), own)
    };
    let groups = partition(raws, key);
    let pos: BTreeMap<u32, usize> = raws.iter().enumerate().map(|(i, r)| (r.cpu, i)).collect();
    let mut evidence = Vec::new();
    let mut spans: Vec<String> = Vec::new();
    let mut repeated: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for r in raws {
        if let Some(s) = &r.thread_sibs {
            let ids: BTreeSet<Option<i64>> = s
                .iter()
                .filter_map(|c| pos.get(c))
                .map(|&i| raws[i].core_id)
                .collect();
            if ids.len() > 1 && seen.insert(s.clone()) {
                spans.push(format!("[{}]", format_list(s)));
            }
        }
    }
    let mut by_id: BTreeMap<(i64, i64, i64), BTreeSet<Vec<u32>>> = BTreeMap::new();
    for (i, r) in raws.iter().enumerate() {
        if let (Some(id), Some(s)) = (r.core_id, &r.thread_sibs) {
            by_id
                .entry((pkg[i], die[i], id))
                .or_default()
                .insert(s.clone());
        }
    }
    for ((p, _, id), masks) in &by_id {
        if masks.len() > 1 {
            repeated.push(format!("core_id {id} in package {p}"));
        }
    }
    if !spans.is_empty() {
        evidence.push(format!(
            "SMT sibling masks {} span several core_ids (compute units, not SMT): each core_id counted as a core",
            spans.iter().take(4).cloned().collect::<Vec<_>>().join(" ")
        ));
    }
    if !repeated.is_empty() {
        evidence.push(format!(
            "{} repeated on CPUs with distinct sibling masks: the masks split them",
            repeated
                .iter()
                .take(4)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let core_of: Vec<Vec<u32>> = raws
        .iter()
        .map(|r| {
            groups
                .iter()
                .find(|g| g.contains(&r.cpu))
                .cloned()
                .unwrap_or_else(|| vec![r.cpu])
        })
        .collect();
    (core_of, evidence)
}

/// Each CPU's die label within its package: die sibling masks when every CPU has them,
/// else die_id (>= 0), else the package itself.
fn dies(raws: &[Raw], pkg: &[i64]) -> Vec<i64> {
    if raws.iter().all(|r| r.die_sibs.is_some()) {
        let comp = components(raws, |r| r.die_sibs.as_ref());
        let groups = partition(raws, |i| (pkg[i], comp[i]));
        return ordinal(raws, &groups);
    }
    raws.iter()
        .map(|r| r.die_id.filter(|&d| d >= 0).unwrap_or(0))
        .collect()
}

fn read_caches_of(
    root: &SysRoot,
    cpu: u32,
    core: &[u32],
    notes: &mut BTreeSet<String>,
) -> Vec<Cache> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cache");
    root.numbered(&dir, "index")
        .into_iter()
        .filter_map(|i| {
            let d = format!("{dir}/index{i}");
            let level = root.read_num(format!("{d}/level")).filter(|l| *l >= 1)?;
            let kind = root
                .read_opt(format!("{d}/type"))
                .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric()))
                .unwrap_or_else(|| "Unknown".into());
            let shared = read_cpus(
                root,
                &format!("{d}/shared_cpu_list"),
                &format!("{d}/shared_cpu_map"),
            );
            let mut cpus: BTreeSet<u32> = match shared {
                Ok(v) if !v.is_empty() => v.into_iter().collect(),
                Ok(_) => {
                    notes.insert(format!(
                        "empty L{level} {kind} sharing mask (shared_cpu_map all zeros): taken as the CPU's own core"
                    ));
                    core.iter().copied().collect()
                }
                Err(e) => {
                    notes.insert(format!(
                        "L{level} {kind} sharing unreadable ({e}): taken as the CPU's own core"
                    ));
                    core.iter().copied().collect()
                }
            };
            cpus.insert(cpu);
            Some(Cache {
                level,
                kind,
                size_bytes: root
                    .read_opt(format!("{d}/size"))
                    .and_then(|s| parse_size(&s)),
                cpus: cpus.into_iter().collect(),
                id: root.read_num(format!("{d}/id")),
            })
        })
        .collect()
}

/// `physical id` and `core id` of each `processor` in /proc/cpuinfo (x86 and ia64 kernels
/// that have no cpuN/topology directory); a processor missing either has None there.
fn cpuinfo_ids(root: &SysRoot) -> BTreeMap<u32, (Option<i64>, Option<i64>)> {
    let text = root.read_opt("/proc/cpuinfo").unwrap_or_default();
    let mut out = BTreeMap::new();
    for block in text.split("\n\n") {
        let field = |k: &str| {
            block.lines().find_map(|l| {
                let (a, b) = l.split_once(':')?;
                (a.trim() == k)
                    .then(|| b.trim().parse::<i64>().ok())
                    .flatten()
            })
        };
        if let Some(cpu) = field("processor").and_then(|c| u32::try_from(c).ok()) {
            let ids = (field("physical id"), field("core id"));
            if ids != (None, None) {
                out.insert(cpu, ids);
            }
        }
    }
    out
}

/// Read the topology of the given online CPUs.
pub fn read(root: &SysRoot, online: &[u32]) -> Topology {
    let online_set: BTreeSet<u32> = online.iter().copied().collect();
    let mut evidence = Vec::new();
    let (with, without): (Vec<u32>, Vec<u32>) = online
        .iter()
        .partition(|&&c| root.exists(format!("{CPU_DIR}/cpu{c}/topology")));
    let ids = if without.is_empty() {
        BTreeMap::new()
    } else {
        cpuinfo_ids(root)
    };
    if !without.is_empty() {
        let known = without.iter().any(|c| ids.contains_key(c));
        evidence.push(if known {
            format!(
                "no topology directory for CPUs [{}]: package and core from /proc/cpuinfo's physical id and core id",
                format_list(&without)
            )
        } else {
            format!(
                "no topology directory for CPUs [{}]: each counted as its own core",
                format_list(&without)
            )
        });
    }
    let raws: Vec<Raw> = online
        .iter()
        .map(|&c| {
            if with.contains(&c) {
                read_raw(root, c, &online_set)
            } else {
                let (package_id, core_id) = ids.get(&c).copied().unwrap_or_default();
                Raw {
                    cpu: c,
                    package_id,
                    core_id,
                    ..Default::default()
                }
            }
        })
        .collect();
    let (pkg, pkg_why) = packages(&raws);
    evidence.push(pkg_why);
    let die = dies(&raws, &pkg);
    let (core_of, core_why) = cores(&raws, &pkg, &die);
    evidence.extend(core_why);
    let cpus: Vec<CpuPlace> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| CpuPlace {
            cpu: r.cpu,
            package: pkg[i],
            die: r.die_id.filter(|d| *d >= 0),
            cluster_cpus: r.cluster_sibs.clone(),
            core_id: r.core_id.unwrap_or(r.cpu as i64),
            core_cpus: core_of[i].clone(),
            package_cpus: raws
                .iter()
                .enumerate()
                .filter(|(j, _)| pkg[*j] == pkg[i])
                .map(|(_, x)| x.cpu)
                .collect(),
        })
        .collect();

    // Cache instances: deduplicated by (level, type, sharing set).
    let mut seen = BTreeSet::new();
    let mut caches = Vec::new();
    let mut notes = BTreeSet::new();
    for (i, &c) in online.iter().enumerate() {
        for cache in read_caches_of(root, c, &core_of[i], &mut notes) {
            let key = (cache.level, cache.kind.clone(), cache.cpus.clone());
            if seen.insert(key) {
                caches.push(cache);
            }
        }
    }
    evidence.extend(notes);
    caches.sort_by(|a, b| (a.level, &a.kind, &a.cpus).cmp(&(b.level, &b.kind, &b.cpus)));
    let (llc_level, llc_groups) = llc_groups(&caches, online);

    let packages: BTreeSet<i64> = pkg.iter().copied().collect();
    let dies: BTreeSet<(i64, i64)> = pkg.iter().copied().zip(die.iter().copied()).collect();
    let clusters: BTreeSet<Vec<u32>> = cpus.iter().filter_map(|p| p.cluster_cpus.clone()).collect();
    let cores: BTreeSet<Vec<u32>> = core_of.iter().cloned().collect();
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
        cpu_kinds: super::kinds::read(root, online),
        cpus,
        caches,
        llc_level,
        llc_groups,
        evidence,
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
        assert_eq!(parse_size("0K"), None);
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("1 M"), Some(1 << 20));
        assert_eq!(parse_size("99999999999999999999K"), None);
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
    fn cpuinfo_gives_package_and_core_without_sysfs_topology() {
        let dir = tempfile::tempdir().unwrap();
        let info = "processor\t: 0\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 1\nphysical id\t: 1\ncore id\t\t: 0\n\nprocessor\t: 2\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 3\n";
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/cpuinfo"), info).unwrap();
        let root = SysRoot::captured(dir.path());
        let t = read(&root, &[0, 1, 2, 3]);
        // CPUs 0 and 2 share package 0 and core 0 (SMT); 1 is package 1; 3 says nothing.
        assert_eq!(t.place(2).unwrap().core_cpus, vec![0, 2]);
        assert_eq!(t.place(1).unwrap().core_cpus, vec![1]);
        assert_eq!(t.place(3).unwrap().core_cpus, vec![3]);
        assert!(t.evidence[0].contains("/proc/cpuinfo"), "{:?}", t.evidence);
    }

    #[test]
    fn empty_sibling_files_are_not_a_package_or_core_per_cpu() {
        // A two-socket tree whose topology files were emptied (a masked or damaged
        // capture): the sibling lists read as nothing, not as "each CPU alone".
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sysroots/two-socket-smt");
        let dir = tempfile::tempdir().unwrap();
        let online: Vec<u32> = (0..40).collect();
        for c in &online {
            let rel = format!("sys/devices/system/cpu/cpu{c}/topology");
            let to = dir.path().join(&rel);
            std::fs::create_dir_all(&to).unwrap();
            for f in std::fs::read_dir(fixture.join(&rel)).unwrap() {
                let name = f.unwrap().file_name();
                std::fs::write(to.join(&name), "").unwrap();
            }
        }
        let t = read(&SysRoot::captured(dir.path()), &online);
        assert_eq!(t.packages, 1, "{:?}", t.evidence);
        assert!(
            t.evidence
                .iter()
                .any(|e| e.contains("neither a valid physical_package_id")),
            "{:?}",
            t.evidence
        );
        // The same tree intact: two packages from the masks, as before.
        let whole = read(&SysRoot::captured(&fixture), &online);
        assert_eq!((whole.packages, whole.threads_per_core), (2, 2));
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
