//! System-wide counters read at each recording interval: per-CPU time by state
//! (/proc/stat), context switches and interrupts, inter-processor interrupts (the CAL, RES
//! and TLB rows of /proc/interrupts), runnable tasks, CPU pressure (PSI), and the NUMA
//! counters of /proc/vmstat.

use crate::probe::sysroot::SysRoot;
use procfs_core::{ExplicitSystemInfo, FromReadSI, KernelStats};
use serde::{Deserialize, Serialize};

/// Cumulative counters at one instant.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Per CPU: [user, nice, system, idle, iowait, irq, softirq, steal] ticks.
    pub cpu: Vec<(u32, [u64; 8])>,
    pub ctxt: u64,
    pub intr: u64,
    /// IPIs summed over CPUs: function calls (CAL), reschedules (RES), TLB shootdowns (TLB).
    pub ipi: Option<[u64; 3]>,
    pub procs_running: Option<u32>,
    /// /proc/pressure/cpu `some` total, µs.
    pub psi_some_us: Option<u64>,
    /// NUMA counters of /proc/vmstat (src/observe/vmstat.rs); None when it is unreadable.
    pub numa: Option<std::collections::BTreeMap<String, u64>>,
}

/// The CAL, RES and TLB rows of /proc/interrupts, each summed over CPUs.
pub fn parse_ipis(text: &str) -> Option<[u64; 3]> {
    let row = |name: &str| -> Option<u64> {
        let l = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}:")))?;
        let rest = l.trim_start()[name.len() + 1..].split_whitespace();
        Some(rest.map_while(|x| x.parse::<u64>().ok()).sum())
    };
    Some([row("CAL")?, row("RES")?, row("TLB")?])
}

/// `some ... total=N` of a PSI file.
pub fn parse_psi_some(text: &str) -> Option<u64> {
    let l = text.lines().find(|l| l.starts_with("some"))?;
    l.split_whitespace()
        .find_map(|kv| kv.strip_prefix("total=")?.parse().ok())
}

pub fn ticks_per_second() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .map(|t| t as u64)
        .unwrap_or(100)
}

/// Read the system-wide counters under `root` (`/` live; a captured tree in tests).
pub fn read(root: &SysRoot) -> Counters {
    let si = ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: ticks_per_second(),
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    };
    let mut c = Counters::default();
    let stat = root.read_opt("/proc/stat");
    if let Some(ks) = stat
        .as_deref()
        .and_then(|s| KernelStats::from_read(s.as_bytes(), &si).ok())
    {
        let online = root
            .read_opt("/sys/devices/system/cpu/online")
            .and_then(|s| crate::probe::cpulist::parse_list(&s).ok())
            .unwrap_or_default();
        // /proc/stat lists online CPUs in order; pair them with their numbers.
        for (i, t) in ks.cpu_time.iter().enumerate() {
            let cpu = online.get(i).copied().unwrap_or(i as u32);
            c.cpu.push((
                cpu,
                [
                    t.user,
                    t.nice,
                    t.system,
                    t.idle,
                    t.iowait.unwrap_or(0),
                    t.irq.unwrap_or(0),
                    t.softirq.unwrap_or(0),
                    t.steal.unwrap_or(0),
                ],
            ));
        }
        c.ctxt = ks.ctxt;
        c.procs_running = ks.procs_running;
    }
    if let Some(s) = &stat {
        c.intr = s
            .lines()
            .find_map(|l| {
                l.strip_prefix("intr ")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or(0);
    }
    c.ipi = root
        .read_opt("/proc/interrupts")
        .and_then(|s| parse_ipis(&s));
    c.psi_some_us = root
        .read_opt("/proc/pressure/cpu")
        .and_then(|s| parse_psi_some(&s));
    c.numa = root
        .read_opt("/proc/vmstat")
        .map(|s| super::vmstat::parse(&s));
    c
}

/// One CPU's time by state over an interval, in percent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuShare {
    pub cpu: u32,
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
    pub idle: f64,
}

/// Per-CPU percentages between two readings.
pub fn cpu_shares(a: &Counters, b: &Counters) -> Vec<CpuShare> {
    b.cpu
        .iter()
        .filter_map(|(cpu, t1)| {
            let t0 = a.cpu.iter().find(|(c, _)| c == cpu)?.1;
            let d: Vec<f64> = (0..8).map(|i| t1[i].saturating_sub(t0[i]) as f64).collect();
            let total: f64 = d.iter().sum::<f64>().max(1.0);
            let pct = |x: f64| x / total * 100.0;
            Some(CpuShare {
                cpu: *cpu,
                user: pct(d[0] + d[1]),
                system: pct(d[2]),
                iowait: pct(d[4]),
                irq: pct(d[5]),
                softirq: pct(d[6]),
                steal: pct(d[7]),
                idle: pct(d[3]),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_read_from_a_captured_tree() {
        let root = SysRoot::captured(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/sysroots/this-vm"),
        );
        let c = read(&root);
        let cpus: Vec<u32> = c.cpu.iter().map(|x| x.0).collect();
        assert_eq!(cpus, vec![0, 1]);
        // cpu0: user 25012, nice 0, system 1857, idle 108015, iowait 155, irq 0, softirq 43, steal 58
        assert_eq!(c.cpu[0].1, [25012, 0, 1857, 108015, 155, 0, 43, 58]);
        assert_eq!((c.ctxt, c.intr, c.procs_running), (336538, 328786, Some(2)));
        // The tree holds no /proc/interrupts and no /proc/pressure/cpu: absent, not 0.
        assert_eq!((c.ipi, c.psi_some_us), (None, None));
    }

    #[test]
    fn ipis_are_summed_over_cpus() {
        let t = "           CPU0       CPU1\n  0:         10          0   IO-APIC   2-edge  timer\nRES:      52265      54984   Rescheduling interrupts\nCAL:     765231     730933   Function call interrupts\nTLB:     309989     327207   TLB shootdowns\n";
        assert_eq!(
            parse_ipis(t),
            Some([765231 + 730933, 52265 + 54984, 309989 + 327207])
        );
        assert_eq!(parse_ipis("nothing"), None);
    }

    #[test]
    fn psi_total() {
        let t = "some avg10=0.59 avg60=1.09 avg300=1.10 total=81475431\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_psi_some(t), Some(81475431));
    }

    #[test]
    fn shares_add_up_to_100() {
        let a = Counters {
            cpu: vec![(0, [0; 8])],
            ..Default::default()
        };
        let b = Counters {
            cpu: vec![(0, [30, 0, 10, 50, 0, 0, 0, 10])],
            ..Default::default()
        };
        let s = &cpu_shares(&a, &b)[0];
        assert_eq!(
            (s.user, s.system, s.idle, s.steal),
            (30.0, 10.0, 50.0, 10.0)
        );
    }
}
