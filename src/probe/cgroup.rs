//! The cgroup limits on this process: cpuset (v2 `cpuset.cpus.effective`, v1
//! `cpuset.effective_cpus`), its memory nodes (v2 `cpuset.mems.effective`, v1
//! `cpuset.effective_mems`) and CPU quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us` /
//! `cpu.cfs_period_us`), found through /proc/self/cgroup and /proc/self/mountinfo.
//! Quotas are walked up to the mount root, since any ancestor's quota binds.
//!
//! Trees captured by hwloc-gather-topology hold /proc/mounts instead of mountinfo and
//! /proc/self/cpuset beside /proc/self/cgroup; older machines mount the pre-cgroup `cpuset`
//! filesystem (files `cpus` and `mems`, the process's path in /proc/self/cpuset). Both are
//! read when mountinfo or a cgroup line is missing. A v1 hierarchy mounted with `noprefix`
//! (SGI and older SUSE systems, at /dev/cpuset) names its files without the `cpuset.`
//! prefix too (`cpus`, `mems`, `effective_cpus`, `effective_mems`) and is read the same way.

use super::cpulist::read_list_file;
use super::sysroot::SysRoot;
use super::Unavailable;
use procfs_core::process::MountInfos;
use procfs_core::{FromRead, MountEntry, ProcessCGroups};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CgroupInfo {
    /// `v1`, `v2` or `hybrid` (v1 controllers with a cgroup2 mount beside them).
    pub hierarchy: String,
    /// This process's cgroup path per controller family (`cpu`, `cpuset`, `unified`).
    pub paths: std::collections::BTreeMap<String, String>,
    /// CPUs of the cpuset, or None when no cpuset controller applies.
    pub cpuset: Option<Vec<u32>>,
    /// Memory nodes of the cpuset, or None when no cpuset controller applies.
    #[serde(default)]
    pub mems: Option<Vec<u32>>,
    /// The tightest CPU quota in CPUs (quota / period), or None when unlimited (or
    /// unknown: `quota_unreadable`).
    pub quota_cpus: Option<f64>,
    /// Why a quota file on the way to the hierarchy's root could not be read (also in the
    /// probe's `unavailable`, `cpus.cgroup_quota`): a quota tighter than `quota_cpus` may
    /// apply.
    #[serde(skip)]
    pub quota_unreadable: Option<String>,
    pub quota_us: Option<i64>,
    pub period_us: Option<i64>,
    /// Where the quota came from (file path inside the root).
    pub quota_source: Option<String>,
    /// Throttling counters of this cgroup so far (`cpu.stat`).
    pub nr_periods: Option<u64>,
    pub nr_throttled: Option<u64>,
    pub throttled_us: Option<u64>,
    /// The cgroup's cpu.stat file (inside the root), read again by the run sampler.
    pub cpu_stat_path: Option<String>,
    /// The lowest CPU weight on the way from this process's cpu cgroup up (v1 `cpu.shares`,
    /// v2 `cpu.weight`): its share of a busy CPU against its neighbours. Absent in documents
    /// of earlier versions and where no weight file is readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_weight: Option<super::cpu_weight::CpuWeight>,
}

/// The end of the reason a cgroup fact is unavailable when its file holds what the kernel
/// never writes there (garbage, an empty set, a period of 0): the fact is unknown, not
/// absent (no cpuset, no quota).
pub const UNREADABLE: &str = "not what the kernel writes there, so unknown";

/// A mounted hierarchy: its mount point, the cgroup path at its root, and its kind.
struct Mount {
    point: PathBuf,
    root: String,
    v2: bool,
    /// The pre-cgroup `cpuset` filesystem (files `cpus`, `mems` without a prefix).
    legacy_cpuset: bool,
    /// Mount options, the controllers among them (`cpuset`, `noprefix`, ...).
    controllers: Vec<String>,
}

impl Mount {
    /// A v1 hierarchy mounted with `noprefix`: its files have no `cpuset.` prefix.
    fn noprefix(&self) -> bool {
        !self.v2 && self.controllers.iter().any(|c| c == "noprefix")
    }
}

/// Where the cgroup mounts were read from (named in the reasons).
const MOUNT_SOURCES: &str = "/proc/self/mountinfo or /proc/mounts";

/// The cgroup hierarchies mounted: from /proc/self/mountinfo, else /proc/mounts (which
/// has no mount roots: each is taken as "/").
fn mounts(root: &SysRoot) -> Vec<Mount> {
    let cgroupish = |t: &str| t == "cgroup" || t == "cgroup2" || t == "cpuset";
    if let Some(infos) = root
        .read_raw("/proc/self/mountinfo")
        .and_then(|f| MountInfos::from_read(f.as_bytes()).ok())
    {
        return infos
            .into_iter()
            .filter(|m| cgroupish(&m.fs_type))
            .map(|m| Mount {
                controllers: m.super_options.keys().cloned().collect(),
                point: m.mount_point.clone(),
                root: m.root.clone(),
                v2: m.fs_type == "cgroup2",
                legacy_cpuset: m.fs_type == "cpuset",
            })
            .collect();
    }
    let Some(entries) = root
        .read_raw("/proc/mounts")
        .and_then(|f| Vec::<MountEntry>::from_read(f.as_bytes()).ok())
    else {
        return vec![];
    };
    entries
        .into_iter()
        .filter(|m| cgroupish(&m.fs_vfstype))
        .map(|m| Mount {
            controllers: m.fs_mntops.keys().cloned().collect(),
            point: PathBuf::from(&m.fs_file),
            root: "/".into(),
            v2: m.fs_vfstype == "cgroup2",
            legacy_cpuset: m.fs_vfstype == "cpuset",
        })
        .collect()
}

/// This process's cpuset path from /proc/PID/cpuset (kernels before cgroups, and
/// hwloc-gather-topology captures).
fn cpuset_path(root: &SysRoot, pid: &str) -> Option<String> {
    root.read_opt(format!("/proc/{pid}/cpuset"))
        .filter(|p| p.starts_with('/'))
}

/// The directory of cgroup `path` in a hierarchy mounted at `m`, inside the sysroot.
fn cgroup_dir(root: &SysRoot, m: &Mount, path: &str) -> PathBuf {
    let rel = path.strip_prefix(m.root.as_str()).unwrap_or(path);
    let rel = rel.trim_start_matches('/');
    let base = root.path(&m.point);
    if rel.is_empty() {
        base
    } else {
        base.join(rel)
    }
}

fn read_file(root: &SysRoot, dir: &Path, name: &str) -> Option<String> {
    root.text(&dir.join(name))
        .ok()
        .map(|s| s.trim().to_string())
}

/// (quota_us, period_us) from `cpu.max` (`max 100000` or `150000 100000`): None when it
/// is not a positive quota (or `max`) and a positive period, the kernel's only forms.
pub fn parse_cpu_max(s: &str) -> Option<(Option<i64>, i64)> {
    let mut it = s.split_whitespace();
    let q = it.next()?;
    let period: i64 = it.next().unwrap_or("100000").parse().ok()?;
    if period <= 0 || it.next().is_some() {
        return None;
    }
    if q == "max" {
        Some((None, period))
    } else {
        Some((Some(q.parse().ok().filter(|q| *q > 0)?), period))
    }
}

/// (quota_us, period_us) from v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us`: quota -1
/// is no quota; None when they are not that or a positive quota and period.
fn parse_cfs(quota: &str, period: &str) -> Option<(Option<i64>, i64)> {
    let period: i64 = period.parse().ok().filter(|p| *p > 0)?;
    match quota.parse::<i64>().ok()? {
        -1 => Some((None, period)),
        q if q > 0 => Some((Some(q), period)),
        _ => None,
    }
}

/// Parse `cpu.stat` key/value lines into (nr_periods, nr_throttled, throttled_us).
pub fn parse_cpu_stat(s: &str, v2: bool) -> (Option<u64>, Option<u64>, Option<u64>) {
    let get = |k: &str| {
        s.lines().find_map(|l| {
            let (a, b) = l.split_once(' ')?;
            (a == k).then(|| b.trim().parse::<u64>().ok()).flatten()
        })
    };
    let throttled = if v2 {
        get("throttled_usec")
    } else {
        get("throttled_time").map(|ns| ns / 1000)
    };
    (get("nr_periods"), get("nr_throttled"), throttled)
}

/// The quotas at `dir` and each ancestor up to `stop`: the tightest readable one, and
/// the quota files that hold something else (`path reads 'text'`).
#[derive(Default)]
struct Quotas {
    tightest: Option<(i64, i64, String)>,
    unreadable: Vec<String>,
}

pub use super::cgroup_levels::levels;

fn quotas(dir: &Path, stop: &Path, v2: bool, root: &SysRoot) -> Quotas {
    let mut out = Quotas::default();
    let shown = |p: &Path| root.shown(p);
    for d in levels(dir, stop) {
        // The file that holds the quota (absent at the root of a hierarchy: no quota there)
        // and what it says.
        let (file, read) = if v2 {
            let text = read_file(root, &d, "cpu.max");
            ("cpu.max", text.map(|t| (parse_cpu_max(&t), t)))
        } else {
            let q = read_file(root, &d, "cpu.cfs_quota_us");
            let p = read_file(root, &d, "cpu.cfs_period_us").unwrap_or_default();
            let read = q.map(|q| (parse_cfs(&q, &p), format!("{q}' with a period of '{p}")));
            ("cpu.cfs_quota_us", read)
        };
        match read {
            Some((Some((Some(q), p)), _)) => {
                let tighter = out
                    .tightest
                    .as_ref()
                    .is_none_or(|(bq, bp, _)| (q as f64 / p as f64) < (*bq as f64 / *bp as f64));
                if tighter {
                    out.tightest = Some((q, p, shown(&d.join(file))));
                }
            }
            Some((None, text)) => {
                let text: String = text.chars().take(40).collect();
                out.unreadable.push(format!(
                    "{} reads '{}'",
                    shown(&d.join(file)),
                    crate::stdout::field(&text)
                ));
            }
            Some((Some((None, _)), _)) | None => {}
        }
    }
    out
}

/// Find (mount, path) for a controller: a v1 hierarchy that has it, else the v2 one when
/// its root lists the controller in cgroup.controllers.
/// A cpuset found through no cgroup line comes from /proc/PID/cpuset: the legacy `cpuset`
/// filesystem, or a v1 hierarchy with the cpuset controller.
fn locate<'m>(
    root: &SysRoot,
    groups: &ProcessCGroups,
    mounts: &'m [Mount],
    ctrl: &str,
    pid: &str,
) -> Option<(&'m Mount, String)> {
    let v1 = |m: &&Mount| !m.v2 && !m.legacy_cpuset && m.controllers.iter().any(|c| c == ctrl);
    for g in &groups.0 {
        if g.hierarchy != 0 && g.controllers.iter().any(|c| c == ctrl) {
            if let Some(m) = mounts.iter().find(v1) {
                return Some((m, g.pathname.clone()));
            }
        }
    }
    let v2 = groups.0.iter().find(|g| g.hierarchy == 0).and_then(|g| {
        let m = mounts.iter().find(|m| m.v2)?;
        let ctrls = read_file(root, &root.path(&m.point), "cgroup.controllers").unwrap_or_default();
        ctrls
            .split_whitespace()
            .any(|c| c == ctrl)
            .then(|| (m, g.pathname.clone()))
    });
    v2.or_else(|| {
        if ctrl != "cpuset" {
            return None;
        }
        let path = cpuset_path(root, pid)?;
        let m = mounts
            .iter()
            .find(|m| m.legacy_cpuset)
            .or_else(|| mounts.iter().find(v1))?;
        Some((m, path.to_string()))
    })
}

/// Where a controller's cgroup of a process is: its directory, the directory its hierarchy
/// is mounted on (walks up the ancestors stop there), its path in the hierarchy and whether
/// the hierarchy is cgroup2 (all inside the root).
#[derive(Debug, Clone)]
pub struct Located {
    pub dir: PathBuf,
    pub top: PathBuf,
    pub path: String,
    pub v2: bool,
}

/// Process `pid`'s ("self" or a number) cgroup for controller `ctrl` (`cpu`, `memory`...);
/// None when no mounted hierarchy has the controller.
pub fn locate_for(root: &SysRoot, pid: &str, ctrl: &str) -> Option<Located> {
    let groups = root
        .read_raw(format!("/proc/{pid}/cgroup"))
        .and_then(|f| ProcessCGroups::from_read(f.as_bytes()).ok())
        .unwrap_or(ProcessCGroups(vec![]));
    let mounts = mounts(root);
    let (m, path) = locate(root, &groups, &mounts, ctrl, pid)?;
    Some(Located {
        dir: cgroup_dir(root, m, &path),
        top: root.path(&m.point),
        path,
        v2: m.v2,
    })
}

/// This process's cgroup directory for controller `ctrl` (`cpu`, `cpuset`) and whether it
/// is in a cgroup2 hierarchy; None when no mounted hierarchy has the controller.
pub fn own_dir(root: &SysRoot, ctrl: &str) -> Option<(PathBuf, bool)> {
    locate_for(root, "self", ctrl).map(|l| (l.dir, l.v2))
}

/// The prefix of a v1 cpuset directory's files: `cpuset.`, or none where the hierarchy is
/// mounted with `noprefix` (or is the pre-cgroup cpuset filesystem): its `cpus` file exists.
pub fn cpuset_prefix(dir: &Path) -> &'static str {
    if !dir.join("cpuset.cpus").exists() && dir.join("cpus").exists() {
        ""
    } else {
        "cpuset."
    }
}

/// The cgroup limits on this process.
pub fn read(root: &SysRoot, missing: &mut Unavailable) -> Option<CgroupInfo> {
    read_for(root, "self", missing)
}

/// The cgroup limits on process `pid` ("self" or a number), seen through this process's mounts.
pub fn read_for(root: &SysRoot, pid: &str, missing: &mut Unavailable) -> Option<CgroupInfo> {
    let groups = root
        .read_raw(format!("/proc/{pid}/cgroup"))
        .and_then(|f| ProcessCGroups::from_read(f.as_bytes()).ok());
    let groups = match groups {
        Some(g) => g,
        None if cpuset_path(root, pid).is_some() => ProcessCGroups(vec![]),
        None => {
            missing.add("cgroup", &format!("no /proc/{pid}/cgroup"));
            return None;
        }
    };
    let mounts = mounts(root);
    let has_v1 = mounts.iter().any(|m| !m.v2);
    let has_v2 = mounts.iter().any(|m| m.v2);
    let hierarchy = match (has_v1, has_v2) {
        (true, true) => "hybrid",
        (true, false) => "v1",
        (false, true) => "v2",
        (false, false) => {
            missing.add(
                "cgroup",
                &format!("no cgroup filesystem in {MOUNT_SOURCES}"),
            );
            return None;
        }
    };
    let mut info = CgroupInfo {
        hierarchy: hierarchy.into(),
        paths: Default::default(),
        cpuset: None,
        mems: None,
        quota_cpus: None,
        quota_us: None,
        period_us: None,
        quota_source: None,
        quota_unreadable: None,
        nr_periods: None,
        nr_throttled: None,
        throttled_us: None,
        cpu_stat_path: None,
        cpu_weight: None,
    };

    let locate = |ctrl: &str| locate(root, &groups, &mounts, ctrl, pid);

    if let Some(g) = groups.0.iter().find(|g| g.hierarchy == 0) {
        info.paths.insert("unified".into(), g.pathname.clone());
    }

    match locate("cpuset") {
        Some((m, path)) => {
            info.paths.insert("cpuset".into(), path.clone());
            let dir = cgroup_dir(root, m, &path);
            let (cpus, mems): (&[&str], &[&str]) = if m.v2 {
                (&["cpuset.cpus.effective"], &["cpuset.mems.effective"])
            } else if m.legacy_cpuset {
                (&["cpus"], &["mems"])
            } else if m.noprefix() {
                (&["effective_cpus", "cpus"], &["effective_mems", "mems"])
            } else {
                (
                    &["cpuset.effective_cpus", "cpuset.cpus"],
                    &["cpuset.effective_mems", "cpuset.mems"],
                )
            };
            // The first file that exists decides; garbage in it (or nothing: a cgroup
            // holding this process never has an empty set) leaves the set unknown, said.
            let set = |names: &[&str]| -> Result<Vec<u32>, String> {
                let Some(p) = names
                    .iter()
                    .map(|n| dir.join(n))
                    .inspect(|p| root.note(p))
                    .find(|p| p.exists())
                else {
                    return Err(format!(
                        "no {} in this process's cpuset cgroup",
                        names.join(" or ")
                    ));
                };
                let shown = root.shown(&p);
                match read_list_file(&p) {
                    Ok(v) if !v.is_empty() => Ok(v),
                    Ok(_) => Err(format!("{shown} is empty: {UNREADABLE}")),
                    Err(e) => Err(format!(
                        "{shown} unreadable ({}): {UNREADABLE}",
                        e.rsplit(": ").next().unwrap_or(&e)
                    )),
                }
            };
            for (key, names, out) in [
                ("cpus.cgroup_cpuset", cpus, &mut info.cpuset),
                ("cpus.cgroup_mems", mems, &mut info.mems),
            ] {
                match set(names) {
                    Ok(v) => *out = Some(v),
                    Err(why) => missing.add(key, &why),
                }
            }
        }
        None => {
            missing.add(
                "cpus.cgroup_cpuset",
                "no cpuset controller applies to this process",
            );
            missing.add(
                "cpus.cgroup_mems",
                "no cpuset controller applies to this process",
            );
        }
    }

    match locate("cpu") {
        Some((m, path)) => {
            info.paths.insert("cpu".into(), path.clone());
            let dir = cgroup_dir(root, m, &path);
            let stop = root.path(&m.point);
            let found = quotas(&dir, &stop, m.v2, root);
            info.cpu_weight = super::cpu_weight::lowest(root, &dir, &stop, m.v2);
            if let Some((q, p, src)) = found.tightest {
                info.quota_us = Some(q);
                info.period_us = Some(p);
                info.quota_cpus = Some(q as f64 / p as f64);
                info.quota_source = Some(src);
            }
            if !found.unreadable.is_empty() {
                let then = match info.quota_cpus {
                    Some(_) => " (a quota tighter than the one read may apply)",
                    None => "",
                };
                let why = format!("{}: {UNREADABLE}{then}", found.unreadable.join(", "));
                missing.add("cpus.cgroup_quota", &why);
                info.quota_unreadable = Some(why);
            }
            if dir.join("cpu.stat").exists() {
                info.cpu_stat_path = Some(dir.join("cpu.stat").display().to_string());
            }
            if let Some(stat) = read_file(root, &dir, "cpu.stat") {
                let (a, b, c) = parse_cpu_stat(&stat, m.v2);
                info.nr_periods = a;
                info.nr_throttled = b;
                info.throttled_us = c;
            }
        }
        None => missing.add(
            "cpus.cgroup_quota",
            "no cpu controller applies to this process (no quota can be set)",
        ),
    }
    Some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noprefix_cpuset_directories_are_told_apart_by_their_files() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(cpuset_prefix(d.path()), "cpuset.");
        std::fs::write(d.path().join("cpus"), "0-3\n").unwrap();
        assert_eq!(cpuset_prefix(d.path()), "");
        std::fs::write(d.path().join("cpuset.cpus"), "0-3\n").unwrap();
        assert_eq!(cpuset_prefix(d.path()), "cpuset.");
    }

    #[test]
    fn cpu_max_parses_limited_and_unlimited() {
        assert_eq!(parse_cpu_max("max 100000"), Some((None, 100000)));
        assert_eq!(parse_cpu_max("150000 100000"), Some((Some(150000), 100000)));
        assert_eq!(parse_cpu_max("garbage"), None);
        for bad in [
            "max 0",
            "100000 0",
            "0 100000",
            "-1 100000",
            "5 -100000",
            "1 2 3",
            "",
        ] {
            assert_eq!(parse_cpu_max(bad), None, "{bad}");
        }
        assert_eq!(parse_cfs("-1", "100000"), Some((None, 100000)));
        assert_eq!(parse_cfs("50000", "100000"), Some((Some(50000), 100000)));
        for (q, p) in [
            ("50000", "0"),
            ("0", "100000"),
            ("-2", "100000"),
            ("max", "100000"),
            ("50000", ""),
        ] {
            assert_eq!(parse_cfs(q, p), None, "{q} {p}");
        }
    }

    #[test]
    fn cpu_stat_reads_v1_and_v2_names() {
        let v2 = "usage_usec 5\nnr_periods 10\nnr_throttled 3\nthrottled_usec 4500\n";
        assert_eq!(parse_cpu_stat(v2, true), (Some(10), Some(3), Some(4500)));
        let v1 = "nr_periods 7\nnr_throttled 2\nthrottled_time 9000000\n";
        assert_eq!(parse_cpu_stat(v1, false), (Some(7), Some(2), Some(9000)));
    }
}
