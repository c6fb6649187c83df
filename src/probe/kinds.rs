//! Kinds of CPU on hybrid machines (Intel P and E cores, ARM big.LITTLE), fastest first.
//!
//! Sources, first that tells kinds apart wins: the hybrid PMU devices
//! `/sys/devices/cpu_core/cpus` and `/sys/devices/cpu_atom/cpus` (Intel), each CPU's
//! `cpu_capacity` (ARM, 1024 = the fastest), and each CPU's cpufreq maximum
//! (`cpuinfo_max_freq`). Capacities or maxima less than 10% apart are one kind (a few
//! favoured cores boosting slightly higher are not a kind of their own); a source that
//! finds one kind gives way to the next.

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
    let several = |k: &Vec<CpuKind>| k.len() >= 2;
    hybrid_pmu(root, online)
        .filter(several)
        .or_else(|| by_capacity(root, online).filter(several))
        .or_else(|| by_max_freq(root, online).filter(several))
        .unwrap_or_default()
}

/// Values (highest first) grouped where each is within 10% of the group's previous one:
/// (highest, lowest, CPUs) per group.
fn close_groups(m: BTreeMap<u64, Vec<u32>>) -> Vec<(u64, u64, Vec<u32>)> {
    let mut groups: Vec<(u64, u64, Vec<u32>)> = Vec::new();
    for (v, cpus) in m.into_iter().rev() {
        match groups.last_mut() {
            Some((top, low, all)) if (*low as f64 - v as f64) < SAME_KIND * *top as f64 => {
                *low = v;
                all.extend(cpus);
            }
            _ => groups.push((v, v, cpus)),
        }
    }
    for g in &mut groups {
        g.2.sort_unstable();
    }
    groups
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
        close_groups(m)
            .into_iter()
            .map(|(top, low, cpus)| CpuKind {
                kind: format!("capacity-{top}"),
                evidence: vec![format!(
                    "cpu_capacity {} on CPUs [{}]",
                    if top == low {
                        top.to_string()
                    } else {
                        format!("{low}-{top}")
                    },
                    format_list(&cpus)
                )],
                cpus,
            })
            .collect(),
    )
}

fn by_max_freq(root: &SysRoot, online: &[u32]) -> Option<Vec<CpuKind>> {
    let m = per_cpu_value(root, online, "cpufreq/cpuinfo_max_freq")?;
    Some(
        close_groups(m)
            .into_iter()
            .map(|(top, low, cpus)| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_within_ten_percent_are_one_kind() {
        let m: BTreeMap<u64, Vec<u32>> = [
            (4_700_000, vec![0, 1]),
            (4_500_000, vec![2, 3]), // favoured cores vs the rest: one kind
            (3_500_000, vec![4, 5]),
        ]
        .into_iter()
        .collect();
        let g = close_groups(m);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0], (4_700_000, 4_500_000, vec![0, 1, 2, 3]));
        assert_eq!(g[1], (3_500_000, 3_500_000, vec![4, 5]));
    }

    #[test]
    fn a_source_that_sees_one_kind_gives_way_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: String, v: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, v).unwrap();
        };
        for c in 0..4 {
            // Every capacity 1024 (a device tree without capacities), maxima 2.4 / 1.8 GHz.
            w(
                format!("sys/devices/system/cpu/cpu{c}/cpu_capacity"),
                "1024\n",
            );
            w(
                format!("sys/devices/system/cpu/cpu{c}/cpufreq/cpuinfo_max_freq"),
                if c < 2 { "1800000\n" } else { "2400000\n" },
            );
        }
        let root = SysRoot::captured(dir.path());
        let k = read(&root, &[0, 1, 2, 3]);
        assert_eq!(k.len(), 2);
        assert_eq!(
            (k[0].kind.as_str(), k[0].cpus.clone()),
            ("max-2400-MHz", vec![2, 3])
        );
        assert_eq!(k[1].cpus, vec![0, 1]);
        // Equal maxima too: one kind, so no kinds at all.
        for c in 0..2 {
            w(
                format!("sys/devices/system/cpu/cpu{c}/cpufreq/cpuinfo_max_freq"),
                "2400000\n",
            );
        }
        assert!(read(&root, &[0, 1, 2, 3]).is_empty());
    }
}
