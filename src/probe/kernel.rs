//! Kernel facts that change benchmark results: release and command line, cpufreq driver
//! and governor (or the fallback when absent), THP mode, idle driver, steal time so far,
//! load average.

use super::sysroot::SysRoot;
use super::Unavailable;
use procfs_core::{ExplicitSystemInfo, FromRead, FromReadSI, KernelStats, LoadAverage};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KernelInfo {
    pub release: Option<String>,
    pub cmdline: Option<String>,
    pub cpufreq_driver: Option<String>,
    pub cpufreq_governor: Option<String>,
    /// CPU MHz from /proc/cpuinfo, shown when cpufreq is absent (a VM usually reports the TSC rate).
    pub cpuinfo_mhz: Option<f64>,
    /// `model name`, or on ARM the core names from the MIDR implementer and part (probe/arm.rs).
    pub cpu_model: Option<String>,
    /// The vector extensions the CPU flags list (x86: sse2 avx avx2 avx512f; ARM: asimd
    /// sve sve2): the widths the compiled memory kernels could use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vector_extensions: Vec<String>,
    /// Transparent huge pages mode (`always`, `madvise`, `never`).
    pub thp: Option<String>,
    pub idle_driver: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Steal {
    /// Steal time since boot, all CPUs, in seconds.
    pub seconds: f64,
    /// Steal as a share of all CPU time since boot (0..1).
    pub share: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Load {
    pub one: f32,
    pub five: f32,
    pub fifteen: f32,
    pub runnable: u32,
    pub tasks: u32,
}

/// The bracketed choice of a sysfs selector (`always [madvise] never` -> madvise).
pub fn bracketed(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

/// The release in a /proc/version line (`Linux version 6.1.0-18-amd64 (...) ...`), for
/// trees that hold /proc/version and not /proc/sys (hwloc-gather-topology captures).
fn version_release(v: &str) -> Option<String> {
    let rest = v.trim().strip_prefix("Linux version ")?;
    rest.split_whitespace().next().map(str::to_string)
}

/// The vector extensions in the first `flags` (x86) or `Features` (ARM) line of cpuinfo.
fn vector_extensions(cpuinfo: &str) -> Vec<String> {
    const KNOWN: &[&str] = &["sse2", "avx", "avx2", "avx512f", "asimd", "sve", "sve2"];
    let Some((_, list)) = cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        matches!(k.trim(), "flags" | "Features").then_some((k, v))
    }) else {
        return Vec::new();
    };
    let present: Vec<&str> = list.split_whitespace().collect();
    KNOWN
        .iter()
        .filter(|f| present.contains(f))
        .map(|f| f.to_string())
        .collect()
}

fn cpufreq_file(root: &SysRoot, name: &str) -> Option<String> {
    root.read_opt(format!("/sys/devices/system/cpu/cpu0/cpufreq/{name}"))
        .or_else(|| root.read_opt(format!("/sys/devices/system/cpu/cpufreq/policy0/{name}")))
}

pub fn read(root: &SysRoot, missing: &mut Unavailable) -> KernelInfo {
    let cpuinfo = root.read_opt("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        cpuinfo.lines().find_map(|l| {
            let (a, b) = l.split_once(':')?;
            (a.trim() == k).then(|| b.trim().to_string())
        })
    };
    let info = KernelInfo {
        release: root.read_opt("/proc/sys/kernel/osrelease").or_else(|| {
            root.read_opt("/proc/version")
                .and_then(|v| version_release(&v))
        }),
        cmdline: root.read_opt("/proc/cmdline"),
        cpufreq_driver: cpufreq_file(root, "scaling_driver"),
        cpufreq_governor: cpufreq_file(root, "scaling_governor"),
        cpuinfo_mhz: field("cpu MHz").and_then(|s| s.parse().ok()),
        cpu_model: field("model name").or_else(|| super::arm::model(&cpuinfo)),
        vector_extensions: vector_extensions(&cpuinfo),
        thp: root
            .read_opt("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|s| bracketed(&s)),
        idle_driver: root.read_opt("/sys/devices/system/cpu/cpuidle/current_driver"),
    };
    if info.cpufreq_governor.is_none() {
        let fallback = match info.cpuinfo_mhz {
            Some(mhz) => format!("no cpufreq in sysfs; /proc/cpuinfo reports {mhz:.0} MHz (often the TSC rate in a VM)"),
            None => "no cpufreq in sysfs and no MHz in /proc/cpuinfo".to_string(),
        };
        missing.add("kernel.cpufreq_governor", &fallback);
    }
    if info.thp.is_none() {
        missing.add(
            "kernel.thp",
            "no /sys/kernel/mm/transparent_hugepage/enabled",
        );
    }
    info
}

fn ticks_per_second(root: &SysRoot) -> u64 {
    if root.is_live() {
        nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .map(|t| t as u64)
            .unwrap_or(100)
    } else {
        100
    }
}

/// Steal time so far from /proc/stat; None (with the reason) when the kernel has no steal field.
pub fn steal(root: &SysRoot, missing: &mut Unavailable) -> Option<Steal> {
    let si = ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: ticks_per_second(root),
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    };
    let stats = root
        .read_raw("/proc/stat")
        .and_then(|f| KernelStats::from_read(f.as_bytes(), &si).ok());
    let Some(stats) = stats else {
        missing.add("steal", "no readable /proc/stat");
        return None;
    };
    let t = &stats.total;
    let Some(steal) = t.steal else {
        missing.add(
            "steal",
            "/proc/stat has no steal column (kernel older than 2.6.11)",
        );
        return None;
    };
    let all = t.user
        + t.nice
        + t.system
        + t.idle
        + t.iowait.unwrap_or(0)
        + t.irq.unwrap_or(0)
        + t.softirq.unwrap_or(0)
        + steal;
    Some(Steal {
        seconds: steal as f64 / si.ticks_per_second as f64,
        share: if all > 0 {
            steal as f64 / all as f64
        } else {
            0.0
        },
    })
}

pub fn load(root: &SysRoot, missing: &mut Unavailable) -> Option<Load> {
    let l = root
        .read_raw("/proc/loadavg")
        .and_then(|f| LoadAverage::from_read(f.as_bytes()).ok());
    if l.is_none() {
        missing.add("load", "no readable /proc/loadavg");
    }
    l.map(|l| Load {
        one: l.one,
        five: l.five,
        fifteen: l.fifteen,
        runnable: l.cur,
        tasks: l.max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_extensions_come_from_the_flags_or_features_line() {
        let x86 = "processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 avx avx2 fma\n";
        assert_eq!(vector_extensions(x86), vec!["sse2", "avx", "avx2"]);
        let arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm sve sve2\nCPU part\t: 0xd49\n";
        assert_eq!(vector_extensions(arm), vec!["asimd", "sve", "sve2"]);
        assert!(vector_extensions("processor\t: 0\n").is_empty());
    }

    #[test]
    fn release_from_proc_version() {
        assert_eq!(
            version_release(
                "Linux version 2.6.32-754.el6.x86_64 (mockbuild@x) (gcc 4.4.7) #1 SMP\n"
            )
            .as_deref(),
            Some("2.6.32-754.el6.x86_64")
        );
        assert_eq!(version_release("garbage"), None);
    }

    #[test]
    fn bracketed_choice() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("none"), None);
    }
}
