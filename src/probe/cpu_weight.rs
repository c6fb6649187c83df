//! The CPU weight of this process's cgroup: its share of a busy CPU against its siblings
//! (v1 `cpu.shares`, 2 to 262144, default 1024; v2 `cpu.weight`, 1 to 10000, default 100),
//! and whether the group is marked idle (`cpu.idle` 1: the scheduler's lowest weight). A
//! weight acts only when the CPUs are busy: against neighbours of the default weight a group
//! of `cpu.shares` 2 gets about 2/1026 of a CPU. The lowest weight on the way up the
//! hierarchy binds (a container's own default weight counts for nothing when its pod has
//! the lowest), relative to each version's default.

use super::cgroup_levels::levels;
use super::sysroot::SysRoot;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// v1 `cpu.shares` unless told otherwise.
pub const V1_DEFAULT: u64 = 1024;
/// v2 `cpu.weight`.
pub const V2_DEFAULT: u64 = 100;

/// The weight of one cgroup (the lowest, relative to its default, on the way up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuWeight {
    /// The file it was read from (`.../cpu.shares` or `.../cpu.weight`), as on the system.
    pub file: String,
    /// Its value.
    pub value: u64,
    /// The value a cgroup gets when nobody sets it (1024 for `cpu.shares`, 100 for
    /// `cpu.weight`).
    pub default: u64,
    /// The group is marked idle (`cpu.idle` 1): it runs only when nothing else wants the CPU.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
}

impl CpuWeight {
    /// The weight against the default one (1.0 = the default; 0.002 = `cpu.shares` 2).
    pub fn relative(&self) -> f64 {
        if self.idle {
            // The kernel's idle groups run at the weight of a SCHED_IDLE task (3 of 1024).
            return 3.0 / 1024.0;
        }
        self.value as f64 / self.default.max(1) as f64
    }

    /// Below the default: neighbours of the default weight get more of a busy CPU.
    pub fn below_default(&self) -> bool {
        self.relative() < 1.0
    }

    /// The name of the setting (`cpu.shares`, `cpu.weight`).
    pub fn setting(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }

    /// "cpu.shares 2 (default 1024)" / "cpu.weight 1 (default 100), cpu.idle 1".
    pub fn words(&self) -> String {
        format!(
            "{} {} (default {}){}",
            self.setting(),
            self.value,
            self.default,
            if self.idle { ", cpu.idle 1" } else { "" }
        )
    }

    /// The share of one busy CPU this weight gets against `neighbours` busy groups of the
    /// default weight (the kernel's proportional share).
    pub fn share_against(&self, neighbours: f64) -> f64 {
        let w = self.relative();
        w / (w + neighbours.max(0.0))
    }
}

/// A weight file's value: a positive number in the version's range; None for anything else.
pub fn parse(text: &str, v2: bool) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    let (lo, hi) = if v2 { (1, 10_000) } else { (2, 262_144) };
    (lo..=hi).contains(&v).then_some(v)
}

/// The lowest weight (relative to the default) of `dir` and its ancestors up to `top`; the
/// deepest of equal ones. None where no level has a readable weight file (v2 without the
/// cpu controller enabled for the group, the root cgroup).
pub fn lowest(root: &SysRoot, dir: &Path, top: &Path, v2: bool) -> Option<CpuWeight> {
    let (name, default) = if v2 {
        ("cpu.weight", V2_DEFAULT)
    } else {
        ("cpu.shares", V1_DEFAULT)
    };
    let mut best: Option<CpuWeight> = None;
    for d in levels(dir, top) {
        let Some(value) = root.text(&d.join(name)).ok().and_then(|t| parse(&t, v2)) else {
            continue;
        };
        let idle = root
            .text(&d.join("cpu.idle"))
            .is_ok_and(|t| t.trim() == "1");
        let w = CpuWeight {
            file: root.shown(&d.join(name)),
            value,
            default,
            idle,
        };
        if best.as_ref().is_none_or(|b| w.relative() < b.relative()) {
            best = Some(w);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse_within_each_versions_range() {
        assert_eq!(parse("1024\n", false), Some(1024));
        assert_eq!(parse("2", false), Some(2));
        assert_eq!(parse("1", false), None, "v1 shares start at 2");
        assert_eq!(parse("1", true), Some(1));
        assert_eq!(parse("10001", true), None);
        assert_eq!(parse("max", true), None);
        assert_eq!(parse("", false), None);
    }

    #[test]
    fn the_lowest_weight_up_the_hierarchy_binds_relative_to_its_default() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("sys/fs/cgroup");
        let pod = top.join("pod");
        let ctr = pod.join("ctr");
        std::fs::create_dir_all(&ctr).unwrap();
        std::fs::write(top.join("cpu.weight"), "100\n").unwrap();
        std::fs::write(pod.join("cpu.weight"), "1\n").unwrap();
        std::fs::write(ctr.join("cpu.weight"), "100\n").unwrap();
        let root = SysRoot::captured(d.path());
        let w = lowest(&root, &ctr, &top, true).unwrap();
        assert_eq!(w.file, "/sys/fs/cgroup/pod/cpu.weight");
        assert_eq!((w.value, w.default), (1, 100));
        assert!(w.below_default());
        assert_eq!(w.words(), "cpu.weight 1 (default 100)");
        // Against one busy neighbour of the default weight: 1/101 of the CPU.
        assert!((w.share_against(1.0) - 1.0 / 101.0).abs() < 1e-12);
        // Marked idle: lower still.
        std::fs::write(ctr.join("cpu.idle"), "1\n").unwrap();
        let w = lowest(&root, &ctr, &top, true).unwrap();
        assert!(w.idle && w.relative() < 0.01, "{w:?}");
        // v1 shares at their default: nothing below it.
        std::fs::remove_file(ctr.join("cpu.idle")).unwrap();
        std::fs::write(ctr.join("cpu.shares"), "1024\n").unwrap();
        let w = lowest(&root, &ctr, &ctr, false).unwrap();
        assert!(!w.below_default() && w.setting() == "cpu.shares", "{w:?}");
        assert!(lowest(&root, &pod, &pod, false).is_none(), "no cpu.shares");
    }
}
