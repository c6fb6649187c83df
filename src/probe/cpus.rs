//! Which CPUs exist and which this process may use: online, present, possible, offline, the
//! affinity mask, isolated and nohz_full CPUs. Where `cpu/online` is missing (old kernels,
//! partial captures), a CPU is online unless its own `cpuN/online` says 0.
//!
//! Offline means present and not online (the kernel's cputopology documentation: `present`
//! CPUs exist in the system, `possible` ones could be brought online *if present*). A VM
//! whose `possible` list runs to 0-255 with 4 vCPUs present has hotplug slots, not 252
//! offline CPUs; the kernel's own `offline` file counts those slots too, so it is not read.

use super::cpulist::{parse_list, read_cpus};
use super::sysroot::SysRoot;
use super::Unavailable;

const CPU_DIR: &str = "/sys/devices/system/cpu";

#[derive(Debug, Clone, Default)]
pub struct CpuSets {
    pub online: Vec<u32>,
    pub possible: Vec<u32>,
    pub present: Vec<u32>,
    pub offline: Vec<u32>,
    pub allowed: Vec<u32>,
    pub isolated: Vec<u32>,
    pub nohz_full: Option<Vec<u32>>,
}

fn list(root: &SysRoot, path: &str) -> Option<Vec<u32>> {
    read_cpus(root, path, "").ok()
}

/// Each `cpuN` directory whose `cpuN/online` is not 0 (a CPU without the file, usually
/// cpu0, cannot be taken offline).
fn online_by_dir(root: &SysRoot, dirs: &[u32]) -> Vec<u32> {
    dirs.iter()
        .copied()
        .filter(|c| root.read_num::<u32>(format!("{CPU_DIR}/cpu{c}/online")) != Some(0))
        .collect()
}

/// The affinity mask as the kernel reports it for this process (`Cpus_allowed_list` in
/// /proc/self/status: the same set as sched_getaffinity, for any number of CPUs).
fn allowed(root: &SysRoot) -> Option<Vec<u32>> {
    let status = root.read_opt("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .and_then(|v| parse_list(v).ok())
}

pub fn read(root: &SysRoot, missing: &mut Unavailable) -> CpuSets {
    let possible_dirs: Vec<u32> = root.numbered(CPU_DIR, "cpu");
    let online = match read_cpus(root, &format!("{CPU_DIR}/online"), "") {
        Ok(v) if !v.is_empty() => v,
        other => {
            let why = match other {
                Err(e) => e,
                Ok(_) => format!("{CPU_DIR}/online is empty"),
            };
            missing.add(
                "cpus.online",
                &format!("{why}: each cpuN directory counted unless its cpuN/online is 0"),
            );
            online_by_dir(root, &possible_dirs)
        }
    };
    // Present: the present file, else the cpuN directories (the kernel makes one per
    // present CPU), else the possible list; possible: its file, else present.
    let nonempty = |name: &str| list(root, &format!("{CPU_DIR}/{name}")).filter(|v| !v.is_empty());
    let present = nonempty("present")
        .or_else(|| (!possible_dirs.is_empty()).then(|| possible_dirs.clone()))
        .or_else(|| nonempty("possible"))
        .unwrap_or_default();
    let possible = nonempty("possible").unwrap_or_else(|| present.clone());
    // Each list widened by the online CPUs (a broken capture may list fewer than are
    // online); offline = present and not online.
    let with_online = |v: Vec<u32>| -> Vec<u32> {
        v.iter()
            .chain(&online)
            .copied()
            .collect::<std::collections::BTreeSet<u32>>()
            .into_iter()
            .collect()
    };
    let (present, possible) = (with_online(present), with_online(possible));
    let offline: Vec<u32> = present
        .iter()
        .copied()
        .filter(|c| !online.contains(c))
        .collect();
    let allowed = allowed(root).unwrap_or_else(|| {
        missing.add(
            "cpus.allowed",
            "no Cpus_allowed_list in /proc/self/status; all online CPUs assumed",
        );
        online.clone()
    });
    let nohz_full = list(root, &format!("{CPU_DIR}/nohz_full"));
    if nohz_full.is_none() {
        missing.add(
            "cpus.nohz_full",
            "no nohz_full file (kernel built without CONFIG_NO_HZ_FULL)",
        );
    }
    CpuSets {
        isolated: list(root, &format!("{CPU_DIR}/isolated")).unwrap_or_default(),
        online,
        possible,
        present,
        offline,
        allowed,
        nohz_full,
    }
}
