//! Kinds of CPU on hybrid machines (Intel P and E cores, ARM big.LITTLE), fastest first.
//!
//! Sources, first that tells kinds apart wins: the hybrid PMU devices
//! `/sys/devices/cpu_core/cpus` and `/sys/devices/cpu_atom/cpus` (Intel), each CPU's
//! `cpu_capacity` (ARM, 1024 = the fastest), and each CPU's cpufreq maximum
//! (`cpuinfo_max_freq`), where maxima at least 10% apart make separate kinds (a few
//! favoured cores boosting slightly higher are not a kind of their own).

use super::cpulist::{format_list, read_cpus};
use super::sysroot::SysRoot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One kind of CPU and the CPUs of that kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuKind {
    /// `intel-core` / `intel-atom`, `capacity-N`, or `max-N-MHz`.
    pub kind: String,
    pub cpus: Vec<u32>,
    pub evidence: Vec<String>,
}

/// Frequencies closer than this share are one kind.
const SAME_KIND: f64 = 0.10;

/// The kinds of the online CPUs, fastest first; empty when all are of one kind.
pub fn read(root: &SysRoot, online: &[u32]) -> Vec<CpuKind> {
    let kinds = hybrid_pmu(root, online)
        .or_else(|| by_capacity(root, online))
        .or_else(|| by_max_freq(root, online))
        .unwrap_or_default();
    if kinds.len() < 2 {
        return vec![];
    }
    kinds
}

/// The kind of `cpu`, when the machine has several.
pub fn kind_of(kinds: &[CpuKind], cpu: u32) -> Option<&str> {
    kinds
        .iter()
        .find(|k| k.cpus.contains(&cpu))
        .map(|k| k.kind.as_str())
}

fn cut(v: Vec<u32>, online: &[u32]) -> Vec<u32> {
    v.into_iter().filter(|c| online.contains(c)).collect()
}

fn hybrid_pmu(root: &SysRoot, online: &[u32]) -> Option<Vec<CpuKind>> {
    let mut out = Vec::new();
    for (dev, kind) in [("cpu_core", "intel-core"), ("cpu_atom", "intel-atom")] {
        let path = format!("/sys/devices/{dev}/cpus");
        if let Ok(v) = read_cpus(root, &path, "") {
            let cpus = cut(v, online);
            if !cpus.is_empty() {
                out.push(CpuKind {
                    kind: kind.into(),
                    evidence: vec![format!("{path}: {}", format_list(&cpus))],
                    cpus,
                });
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Group CPUs by a per-CPU number read from `file`, highest first.
fn per_cpu_value(root: &SysRoot, online: &[u32], file: &str) -> Option<BTreeMap<u64, Vec<u32>>> {
    let mut m: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for &c in online {
        let v: u64 = root
            .read_num(format!("/sys/devices/system/cpu/cpu{c}/{file}"))
            .filter(|v| *v > 0)?;
        m.entry(v).or_default().push(c);
    }
    (!m.is_empty()).then_some(m)
}

fn by_capacity(root: &SysRoot, online: &[u32]) -> Option<Vec<CpuKind>> {
    let m = per_cpu_value(root, online, "cpu_capacity")?;
    Some(
        m.into_iter()
            .rev()
            .map(|(cap, cpus)| CpuKind {
                kind: format!("capacity-{cap}"),
                evidence: vec![format!(
                    "cpu_capacity {cap} on CPUs [{}]",
                    format_list(&cpus)
                )],
                cpus,
            })
            .collect(),
    )
}

fn by_max_freq(root: &SysRoot, online: &[u32]) -> Option<Vec<CpuKind>> {
    let m = per_cpu_value(root, online, "cpufreq/cpuinfo_max_freq")?;
    // Highest first; a new kind starts where the maximum drops by 10% or more.
    let mut kinds: Vec<(u64, u64, Vec<u32>)> = Vec::new();
    for (khz, cpus) in m.into_iter().rev() {
        match kinds.last_mut() {
            Some((top, low, all)) if (*low as f64 - khz as f64) < SAME_KIND * *top as f64 => {
                *low = khz;
                all.extend(cpus);
            }
            _ => kinds.push((khz, khz, cpus)),
        }
    }
    Some(
        kinds
            .into_iter()
            .map(|(top, low, mut cpus)| {
                cpus.sort_unstable();
                let range = if top == low {
                    format!("{} MHz", top / 1000)
                } else {
                    format!("{}-{} MHz", low / 1000, top / 1000)
                };
                CpuKind {
                    kind: format!("max-{}-MHz", top / 1000),
                    evidence: vec![format!(
                        "cpufreq cpuinfo_max_freq {range} on CPUs [{}]",
                        format_list(&cpus)
                    )],
                    cpus,
                }
            })
            .collect(),
    )
}
