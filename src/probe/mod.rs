//! The environment as data (`truebench probe`): CPUs and limits, topology and caches,
//! NUMA, virtualization layers, clocks, kernel, PMU, steal and load. A pure function of a
//! system root, so captured trees test it. The findings these facts raise are evaluated
//! afterwards (`session::probe` calls `findings::probe::evaluate`): the probe does not
//! depend on the rules over it.

pub mod arm;
pub mod capture;
pub mod cgroup;
pub mod cgroup_levels;
pub mod clock;
pub mod cpu_weight;
pub mod cpulist;
pub mod cpus;
pub mod kernel;
pub mod kinds;
pub mod memory_limit;
pub mod numa;
pub mod pmu;
pub mod sysroot;
pub mod topology;
pub mod virt;

use crate::finding::Finding;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use sysroot::SysRoot;

pub const SCHEMA: &str = "truebench.probe/1";

/// Metrics that could not be read, each with its reason (never reported as 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Unavailable(pub BTreeMap<String, String>);

impl Unavailable {
    pub fn add(&mut self, key: &str, reason: &str) {
        self.0.insert(key.to_string(), reason.to_string());
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpusDoc {
    pub online: Vec<u32>,
    pub possible: Vec<u32>,
    /// The CPUs that exist (`cpu/present`); absent in documents of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub present: Option<Vec<u32>>,
    /// Present CPUs that are not online (possible-only hotplug slots are not counted).
    pub offline: Vec<u32>,
    /// The affinity mask of this process.
    pub allowed: Vec<u32>,
    pub cgroup_cpuset: Option<Vec<u32>>,
    /// Memory nodes the cgroup's cpuset allows (`cpuset.mems.effective`, v1
    /// `cpuset.effective_mems`), or null when no cpuset controller applies.
    #[serde(default)]
    pub cgroup_mems: Option<Vec<u32>>,
    /// Nodes this process may really allocate memory on: nodes with memory ∩ cgroup mems
    /// ∩ `Mems_allowed_list` of /proc/self/status.
    #[serde(default)]
    pub usable_mems: Vec<u32>,
    /// The CPU quota in CPUs, or null when unlimited.
    pub cgroup_quota: Option<f64>,
    pub isolated: Vec<u32>,
    pub nohz_full: Option<Vec<u32>>,
    /// CPUs this process may really run on: affinity ∩ cpuset ∩ online.
    pub usable: Vec<u32>,
    pub usable_width: usize,
    /// The CPU capacity it may really use: min(usable width, quota).
    pub capacity: f64,
    /// Which limit decides the capacity, in words.
    pub capacity_basis: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeDoc {
    pub schema: String,
    pub probed_at: String,
    /// The system root read (`/`, or the captured tree of --root).
    pub root: String,
    /// False when read from a captured tree: live-only measurements were skipped.
    pub live: bool,
    pub hostname: Option<String>,
    pub cpus: CpusDoc,
    pub cgroup: Option<cgroup::CgroupInfo>,
    pub topology: topology::Topology,
    pub numa: numa::Numa,
    /// The machine's memory and swap, and this process's memory cgroup limits; empty in
    /// documents of earlier versions.
    #[serde(default, skip_serializing_if = "memory_limit::MemoryDoc::is_unread")]
    pub memory: memory_limit::MemoryDoc,
    pub virtualization: virt::Virtualization,
    pub clock: clock::ClockInfo,
    pub kernel: kernel::KernelInfo,
    pub pmu: pmu::Pmu,
    pub steal: Option<kernel::Steal>,
    pub load: Option<kernel::Load>,
    pub unavailable: Unavailable,
    /// The findings of `findings::probe::evaluate` (empty until the session evaluates them).
    pub findings: Vec<Finding>,
    /// How long the probe took, in ms.
    pub probe_ms: f64,
}

/// Nodes with memory, narrowed by the cgroup's mems and the task's `Mems_allowed_list`.
fn usable_mems(root: &SysRoot, numa: &numa::Numa, cgroup_mems: Option<&Vec<u32>>) -> Vec<u32> {
    let allowed = root.read_opt("/proc/self/status").and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Mems_allowed_list:"))
            .and_then(|v| cpulist::parse_list(v).ok())
    });
    numa.nodes
        .iter()
        .filter(|n| n.has_memory())
        .map(|n| n.id)
        .filter(|id| cgroup_mems.is_none_or(|m| m.contains(id)))
        .filter(|id| allowed.as_ref().is_none_or(|m| m.contains(id)))
        .collect()
}

fn cpus_doc(
    sets: cpus::CpuSets,
    cg: Option<&cgroup::CgroupInfo>,
    usable_mems: Vec<u32>,
) -> CpusDoc {
    let cpuset = cg.and_then(|c| c.cpuset.clone());
    let quota = cg.and_then(|c| c.quota_cpus);
    let quota_unknown = cg.is_some_and(|c| c.quota_unreadable.is_some());
    let mut usable = cpulist::intersect(&sets.allowed, &sets.online);
    if let Some(cs) = &cpuset {
        usable = cpulist::intersect(&usable, cs);
    }
    let width = usable.len();
    let (capacity, basis) = match quota {
        Some(q) if q < width as f64 => (
            q,
            format!(
                "cgroup quota {q:.2} CPUs (narrower than the {width} usable {})",
                crate::units::noun(width, "CPU")
            ),
        ),
        _ => (
            width as f64,
            format!(
                "{} in affinity ∩ {}online{}",
                crate::units::count(width, "CPU"),
                if cpuset.is_some() { "cpuset ∩ " } else { "" },
                match (quota, quota_unknown) {
                    (_, true) => "; a quota file unreadable (see unavailable)",
                    (Some(_), false) => "; the quota is wider",
                    (None, false) => "; no quota",
                }
            ),
        ),
    };
    CpusDoc {
        online: sets.online,
        possible: sets.possible,
        present: Some(sets.present),
        offline: sets.offline,
        allowed: sets.allowed,
        cgroup_cpuset: cpuset,
        cgroup_mems: cg.and_then(|c| c.mems.clone()),
        usable_mems,
        cgroup_quota: quota,
        isolated: sets.isolated,
        nohz_full: sets.nohz_full,
        usable,
        usable_width: width,
        capacity,
        capacity_basis: basis,
    }
}

/// Probe the system under `root` (without findings: see `session::probe`).
pub fn probe(root: &SysRoot) -> ProbeDoc {
    let t0 = std::time::Instant::now();
    let mut missing = Unavailable::default();
    let sets = cpus::read(root, &mut missing);
    let cg = cgroup::read(root, &mut missing);
    let topology = topology::read(root, &sets.online);
    if topology.caches.is_empty() {
        missing.add(
            "topology.caches",
            "no cpuN/cache/index* directory with a level (s390, Itanium and 2.6 kernels write none): no caches and no LLC groups",
        );
    }
    let unsized_caches: std::collections::BTreeSet<String> = topology
        .caches
        .iter()
        .filter(|c| c.size_bytes.is_none())
        .map(|c| format!("L{} {}", c.level, c.kind))
        .collect();
    if !unsized_caches.is_empty() {
        missing.add(
            "topology.caches.size_bytes",
            &format!(
                "no readable cpuN/cache/index*/size (absent, 0 or not a size) for {}",
                unsized_caches.into_iter().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let numa = numa::read(root, &sets.online, &mut missing);
    let mems = usable_mems(root, &numa, cg.as_ref().and_then(|c| c.mems.as_ref()));
    let cpus = cpus_doc(sets, cg.as_ref(), mems);
    let hostname = if root.is_live() {
        nix::unistd::gethostname()
            .ok()
            .map(|h| h.to_string_lossy().into_owned())
    } else {
        root.read_opt("/proc/sys/kernel/hostname")
    };
    let mut doc = ProbeDoc {
        schema: SCHEMA.into(),
        probed_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        root: root.root().display().to_string(),
        live: root.is_live(),
        hostname,
        cpus,
        cgroup: cg,
        topology,
        numa,
        memory: memory_limit::read(root, &mut missing),
        virtualization: virt::read(root),
        clock: clock::read(root, &mut missing),
        kernel: kernel::read(root, &mut missing),
        pmu: pmu::read(root),
        steal: kernel::steal(root, &mut missing),
        load: kernel::load(root, &mut missing),
        unavailable: Unavailable::default(),
        findings: vec![],
        probe_ms: 0.0,
    };
    if doc.pmu.available != Some(true) {
        if let Some(r) = &doc.pmu.reason {
            missing.add("pmu", r);
        }
    }
    doc.unavailable = missing;
    doc.probe_ms = t0.elapsed().as_secs_f64() * 1e3;
    doc
}

/// The probe of a fixture tree (tests/fixtures/sysroots/NAME), for unit tests: probed once
/// per tree and process, then cloned (a probe reads hundreds of files, about 7 ms here and
/// far more under qemu-aarch64, and the fleet simulations build some 28,000 run documents).
#[cfg(test)]
pub fn fixture(name: &str) -> ProbeDoc {
    use std::collections::BTreeMap;
    use std::sync::{Mutex, PoisonError};
    static PROBED: Mutex<BTreeMap<String, ProbeDoc>> = Mutex::new(BTreeMap::new());
    let known = PROBED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
        .cloned();
    if let Some(doc) = known {
        return doc;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysroots")
        .join(name);
    let doc = probe(&SysRoot::captured(dir));
    PROBED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(name.to_string())
        .or_insert(doc)
        .clone()
}
