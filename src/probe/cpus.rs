//! Which CPUs exist and which this process may use: online, possible, offline, the
//! affinity mask, isolated and nohz_full CPUs. Where `cpu/online` is missing (old kernels,
//! partial captures), a CPU is online unless its own `cpuN/online` says 0.

use super::cpulist::{parse_list, read_cpus};
use super::sysroot::SysRoot;
use super::Unavailable;

const CPU_DIR: &str = "/sys/devices/system/cpu";

#[derive(Debug, Clone, Default)]
pub struct CpuSets {
    pub online: Vec<u32>,
    pub possible: Vec<u32>,
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
    let possible = list(root, &format!("{CPU_DIR}/possible"))
        .filter(|v| !v.is_empty())
        .or_else(|| list(root, &format!("{CPU_DIR}/present")).filter(|v| !v.is_empty()))
        .unwrap_or(possible_dirs);
    // Offline CPUs are the possible ones not online; a possible list narrower than the
    // online one (a broken capture) is widened rather than trusted.
    let possible: Vec<u32> = possible
        .iter()
        .chain(&online)
        .copied()
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .collect();
    let offline: Vec<u32> = possible
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
        offline,
        allowed,
        nohz_full,
    }
}
