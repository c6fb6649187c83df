//! Which CPUs exist and which this process may use: online, possible, offline, the
//! affinity mask, isolated and nohz_full CPUs.

use super::cpulist::parse_list;
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
    root.read_opt(path).and_then(|s| parse_list(&s).ok())
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
    let online = list(root, &format!("{CPU_DIR}/online")).unwrap_or_else(|| {
        missing.add(
            "cpus.online",
            "no /sys/devices/system/cpu/online; every cpuN directory counted",
        );
        possible_dirs.clone()
    });
    let possible = list(root, &format!("{CPU_DIR}/possible")).unwrap_or(possible_dirs);
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
