//! Capacity policies for load steps: a cgroup per setting, made and removed by truebench,
//! with a CPU quota (guaranteed capacity, in CPUs) and a cpuset of a given width (virtual
//! processors): the entitled-capacity-against-virtual-processors experiment of
//! docs/methodology.md ("Why it exists" 4). On cgroup v1 each worker thread joins the `cpu` and `cpuset` groups itself
//! (the load generator stays outside); on cgroup v2 the whole process moves in and back
//! out (threads of one process cannot be split across domain cgroups), which the result
//! says. Groups are named `truebench-PID-N`; one left behind by a killed run (its PID gone)
//! is removed by the next. Removal happens on drop, so also on error, panic and Ctrl-C.

use crate::probe::sysroot::SysRoot;
use std::path::{Path, PathBuf};

/// How the service was put in a capacity group (a variant's `capacity_note`): cgroup v1,
/// the mq workload's worker threads.
pub const THREADS_IN_GROUP: &str =
    "cgroup v1: the worker threads ran in the group, the load generator outside";
/// cgroup v2, the mq workload: threads of one process cannot be split across groups.
pub const PROCESS_IN_GROUP: &str =
    "cgroup v2: the whole process (load generator included) ran in the group";
/// `--http --server`: the server's process tree, joined before exec (v1 and v2).
pub const SERVER_IN_GROUP: &str =
    "the server's process tree ran in the group (joined before exec), truebench (the load generator) outside";
/// The words of a note that put the load generator inside the quota (what predict reads).
pub const GENERATOR_INCLUDED: &str = "load generator included";

/// The CFS quota period when none is given, µs: the kernel's and Kubernetes' default,
/// and the only one truebench used before the period could be set (a stored setting
/// without `period_us` ran at it).
pub const DEFAULT_PERIOD_US: u64 = 100_000;
/// The kernel's shortest and longest quota periods, µs (cpu.cfs_period_us / cpu.max
/// outside them are EINVAL).
pub const MIN_PERIOD_US: u64 = 1_000;
pub const MAX_PERIOD_US: u64 = 1_000_000;

fn default_period_us() -> u64 {
    DEFAULT_PERIOD_US
}

/// One quota × width setting, with the quota's period.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Setting {
    /// CPU quota in CPUs (quota / period).
    pub quota: f64,
    /// CPUs in the cpuset.
    pub width: usize,
    /// The CFS quota period, µs: the group may run quota × period per period, and once it
    /// has, waits for the next one (so it bounds how long a throttled message waits).
    #[serde(default = "default_period_us")]
    pub period_us: u64,
}

/// The kernel's smallest CFS quota, µs (cfs_quota_us / cpu.max below it are EINVAL).
const MIN_QUOTA_US: u64 = 1000;

/// A quota the kernel accepts at this period: at least MIN_QUOTA_US per period (0.01 CPUs
/// at 100 ms, 0.2 at 5 ms), at most 65,536 CPUs.
pub fn check_quota(cpus: f64, period_us: u64) -> Result<(), String> {
    let min = MIN_QUOTA_US as f64 / period_us as f64;
    if !(cpus >= min && cpus <= 65_536.0) {
        return Err(format!(
            "a quota of {} CPUs: a quota is a number of CPUs from {} (the kernel's smallest, {MIN_QUOTA_US} µs per {} period) to 65536",
            crate::units::num(cpus),
            crate::units::num(min),
            period_words(period_us)
        ));
    }
    Ok(())
}

/// A quota the cpuset's width can use: a group of `width` CPUs runs at most `width` CPUs
/// of time per period, so a larger quota is never reached, never throttles, and measures
/// (or predicts) the width alone under a name that says otherwise. The one rule and
/// message for `loadstep --cpu-quota/--cpuset-width`, `cap:Q/W` policies and `predict
/// --capacity` (and predict's reading of a stored setting).
pub fn check_within_width(quota: f64, width: usize) -> Result<(), String> {
    if quota > width as f64 + 1e-9 {
        return Err(format!(
            "a quota of {} CPUs on a cpuset of {} cannot be used: the quota is at most the width (above it the group is never throttled; give a quota up to {width} or a wider cpuset)",
            crate::units::num(quota),
            crate::units::count(width, "CPU")
        ));
    }
    Ok(())
}

/// A quota period from `5ms`, `2500us`/`2500µs` or `0.5s` (a unit is required), µs, within
/// the kernel's 1 ms to 1 s.
pub fn parse_period(s: &str) -> Result<u64, String> {
    let us = crate::duration::micros(s, crate::duration::Bare::Refused).ok_or_else(|| {
        format!("'{s}' is not a quota period: give a number and a unit (5ms, 2500us, 0.5s)")
    })?;
    if !(us >= MIN_PERIOD_US as f64 && us <= MAX_PERIOD_US as f64) || (us - us.round()).abs() > 1e-6
    {
        return Err(format!(
            "a quota period of {s}: the kernel takes whole µs from 1 ms to 1 s"
        ));
    }
    Ok(us.round() as u64)
}

/// A period in words: `5 ms`, `2500 µs`, `1 s`.
pub fn period_words(us: u64) -> String {
    if us % 1_000_000 == 0 {
        format!("{} s", us / 1_000_000)
    } else if us % 1000 == 0 {
        format!("{} ms", us / 1000)
    } else {
        format!("{us} µs")
    }
}

/// A period as the syntax writes it: `5ms`, `2500us`, `1s`.
pub fn period_spec(us: u64) -> String {
    period_words(us).replace(' ', "").replace('µ', "u")
}

impl Setting {
    /// Whether the kernel takes it: a period from 1 ms to 1 s, a quota of at least its
    /// smallest at that period.
    pub fn check(&self) -> Result<(), String> {
        if !(MIN_PERIOD_US..=MAX_PERIOD_US).contains(&self.period_us) {
            return Err(format!(
                "a quota period of {} µs: the kernel takes whole µs from 1 ms to 1 s",
                self.period_us
            ));
        }
        if self.width == 0 {
            return Err("a cpuset width of 0 CPUs".into());
        }
        check_quota(self.quota, self.period_us)
    }

    /// A setting at the default period.
    pub fn new(quota: f64, width: usize) -> Setting {
        Setting {
            quota,
            width,
            period_us: DEFAULT_PERIOD_US,
        }
    }

    pub fn name(&self) -> String {
        let period = if self.period_us == DEFAULT_PERIOD_US {
            String::new()
        } else {
            format!(" ({} period)", period_words(self.period_us))
        };
        format!("quota {}/width {}{period}", self.quota, self.width)
    }

    /// `Q/W`, with `@PERIOD` when the period is not the default (`0.4/1@5ms`).
    pub fn spec(&self) -> String {
        if self.period_us == DEFAULT_PERIOD_US {
            format!("{}/{}", self.quota, self.width)
        } else {
            format!(
                "{}/{}@{}",
                self.quota,
                self.width,
                period_spec(self.period_us)
            )
        }
    }
}

/// Parse `Q/W[@PERIOD]` (quota in CPUs, cpuset width in CPUs, quota period: default
/// 100 ms), checked against the kernel's limits.
pub fn parse_setting(s: &str) -> Result<Setting, String> {
    let bad = || format!("'{s}' is not QUOTA/WIDTH[@PERIOD] (e.g. 1.8/2 or 0.4/1@5ms)");
    let (qw, period) = match s.split_once('@') {
        Some((qw, p)) => (qw, Some(p)),
        None => (s, None),
    };
    let (q, w) = qw.split_once('/').ok_or_else(bad)?;
    let quota: f64 = q
        .trim()
        .parse()
        .map_err(|_| format!("'{q}' is not a quota in CPUs"))?;
    let width: usize = w
        .trim()
        .parse()
        .map_err(|_| format!("'{w}' is not a width in CPUs"))?;
    let period_us = period
        .map(parse_period)
        .transpose()?
        .unwrap_or(DEFAULT_PERIOD_US);
    check_quota(quota, period_us)?;
    if !(1..=65_536).contains(&width) {
        return Err(format!("a width of {width} CPUs: from 1 to 65536"));
    }
    check_within_width(quota, width)?;
    Ok(Setting {
        quota,
        width,
        period_us,
    })
}

/// Where the groups go: this process's `cpu` and `cpuset` directories (the same one on v2).
#[derive(Debug, Clone)]
pub struct Layout {
    pub cpu: PathBuf,
    pub cpuset: PathBuf,
    pub v2: bool,
}

impl Layout {
    /// This process's layout on the live system, where its groups go (and where a killed
    /// run's were); Err says why capacity policies cannot run.
    pub fn find() -> Result<Layout, String> {
        if !nix::unistd::geteuid().is_root() {
            return Err("capacity policies create cgroups: run as root".into());
        }
        let root = SysRoot::live();
        let cpu = crate::probe::cgroup::own_dir(&root, "cpu")
            .ok_or("no cgroup hierarchy with the cpu controller is mounted")?;
        let cpuset = crate::probe::cgroup::own_dir(&root, "cpuset")
            .ok_or("no cgroup hierarchy with the cpuset controller is mounted")?;
        Ok(Layout {
            v2: cpu.1,
            cpu: cpu.0,
            cpuset: cpuset.0,
        })
    }

    /// `find`, then checked that groups can be made there (for capacity policies).
    pub fn live() -> Result<Layout, String> {
        let layout = Layout::find()?;
        layout.check_writable()?;
        Ok(layout)
    }

    /// Create and remove a probe group where the groups will go: a hierarchy mounted
    /// read-only or hidden (a container) is found before any step, in a sentence.
    fn check_writable(&self) -> Result<(), String> {
        for base in [&self.cpu, &self.cpuset] {
            let probe = base.join(format!("truebench-{}-probe", std::process::id()));
            std::fs::create_dir(&probe).map_err(|e| {
                format!(
                    "cannot create a cgroup in {} ({}): capacity policies need a writable cgroup hierarchy with the cpu and cpuset controllers",
                    base.display(),
                    nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(0)).desc()
                )
            })?;
            remove(&probe);
        }
        Ok(())
    }
}

/// A created group (or pair of v1 groups); removed on drop.
#[derive(Debug)]
pub struct Group {
    pub setting: Setting,
    /// The CPUs of its cpuset.
    pub cpus: Vec<u32>,
    dirs: Vec<PathBuf>,
    /// v1: the `tasks` files a worker thread writes its TID to.
    pub thread_files: Vec<PathBuf>,
    /// v2: the process was moved in; this is where it came from.
    moved_from: Option<PathBuf>,
    /// Its cpu.stat, for throttling.
    pub cpu_stat: PathBuf,
    pub v2: bool,
}

fn write(dir: &Path, file: &str, text: &str) -> Result<(), String> {
    std::fs::write(dir.join(file), text).map_err(|e| format!("{}: {e}", dir.join(file).display()))
}

fn cpulist(cpus: &[u32]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Remove a group directory: rmdir on cgroupfs (its control files go with it); in a
/// fixture tree (plain files) the files first.
pub fn remove(dir: &Path) {
    if std::fs::remove_dir(dir).is_err() {
        let on_cgroupfs = nix::sys::statfs::statfs(dir)
            .map(|s| {
                let t = s.filesystem_type();
                t == nix::sys::statfs::CGROUP_SUPER_MAGIC
                    || t == nix::sys::statfs::CGROUP2_SUPER_MAGIC
            })
            .unwrap_or(true);
        if !on_cgroupfs {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Groups named truebench-PID-N whose PID no longer runs: left by a killed run.
pub fn remove_stale(layout: &Layout) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for base in [&layout.cpu, &layout.cpuset] {
        let Ok(rd) = std::fs::read_dir(base) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix("truebench-")
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                remove(&e.path());
                removed.push(e.path());
            }
        }
    }
    removed
}

impl Group {
    /// The `cgroup.procs` files a process writes itself into to join every controller.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Create group `n` of this process for `setting`, its cpuset the first `width` CPUs of
    /// `order`, with the memory nodes `mems`. `move_self`: on cgroup v2 this process moves
    /// in (and back out on drop); else a process truebench launches joins through
    /// `procs_files`.
    pub fn create(
        layout: &Layout,
        n: usize,
        setting: Setting,
        order: &[u32],
        mems: &str,
        move_self: bool,
    ) -> Result<Group, String> {
        if setting.width == 0 || setting.width > order.len() {
            return Err(format!(
                "a cpuset of {}: this process may use {}",
                crate::units::count(setting.width, "CPU"),
                order.len()
            ));
        }
        if setting.quota.is_nan() || setting.quota <= 0.0 {
            return Err(format!("a quota of {} CPUs", setting.quota));
        }
        let mut cpus: Vec<u32> = order[..setting.width].to_vec();
        cpus.sort_unstable();
        let name = format!("truebench-{}-{n}", std::process::id());
        let period_us = setting.period_us;
        if !(MIN_PERIOD_US..=MAX_PERIOD_US).contains(&period_us) {
            return Err(format!(
                "a quota period of {period_us} µs: the kernel takes 1 ms to 1 s"
            ));
        }
        let quota_us = (setting.quota * period_us as f64).round() as u64;
        let mut g = Group {
            setting,
            cpus: cpus.clone(),
            dirs: Vec::new(),
            thread_files: Vec::new(),
            moved_from: None,
            cpu_stat: PathBuf::new(),
            v2: layout.v2,
        };
        let mkdir = |g: &mut Group, base: &Path| -> Result<PathBuf, String> {
            let d = base.join(&name);
            std::fs::create_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            g.dirs.push(d.clone());
            Ok(d)
        };
        if layout.v2 {
            let d = mkdir(&mut g, &layout.cpu)?;
            write(&d, "cpu.max", &format!("{quota_us} {period_us}"))?;
            write(&d, "cpuset.cpus", &cpulist(&cpus))?;
            write(&d, "cpuset.mems", mems)?;
            g.cpu_stat = d.join("cpu.stat");
            if !move_self {
                return Ok(g);
            }
            let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
            let from = own
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .map(|p| layout.cpu.join(p.trim_start_matches('/')))
                .unwrap_or_else(|| layout.cpu.clone());
            write(&d, "cgroup.procs", &std::process::id().to_string())?;
            g.moved_from = Some(from);
        } else {
            let c = mkdir(&mut g, &layout.cpu)?;
            // The period first: a new group's quota is unlimited, so any period is accepted.
            write(&c, "cpu.cfs_period_us", &period_us.to_string())?;
            write(&c, "cpu.cfs_quota_us", &quota_us.to_string())?;
            g.cpu_stat = c.join("cpu.stat");
            g.thread_files.push(c.join("tasks"));
            if layout.cpuset != layout.cpu {
                let s = mkdir(&mut g, &layout.cpuset)?;
                // `cpus`/`mems` under a hierarchy mounted with noprefix.
                let pre = crate::probe::cgroup::cpuset_prefix(&layout.cpuset);
                write(&s, &format!("{pre}cpus"), &cpulist(&cpus))?;
                write(&s, &format!("{pre}mems"), mems)?;
                g.thread_files.push(s.join("tasks"));
            }
        }
        Ok(g)
    }

    /// Throttled periods and time throttled (µs) so far.
    pub fn throttling(&self) -> (Option<u64>, Option<u64>) {
        let s = std::fs::read_to_string(&self.cpu_stat).unwrap_or_default();
        let (_, n, us) = crate::probe::cgroup::parse_cpu_stat(&s, s.contains("throttled_usec"));
        (n, us)
    }
}

/// Put the calling thread into the group's v1 `tasks` files.
pub fn join_thread(files: &[PathBuf]) -> Result<(), String> {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    for f in files {
        std::fs::write(f, tid.to_string()).map_err(|e| format!("{}: {e}", f.display()))?;
    }
    Ok(())
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(from) = &self.moved_from {
            let _ = std::fs::write(from.join("cgroup.procs"), std::process::id().to_string());
        }
        // Worker threads have exited by now; a v1 group is empty once they are gone.
        for d in self.dirs.iter().rev() {
            for _ in 0..50 {
                remove(d);
                if !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// The memory nodes to give a cpuset: the parent's.
pub fn parent_mems(layout: &Layout) -> String {
    [
        "cpuset.mems.effective",
        "cpuset.effective_mems",
        "cpuset.mems",
        "effective_mems",
        "mems",
    ]
    .iter()
    .find_map(|f| {
        std::fs::read_to_string(layout.cpuset.join(f))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    })
    .unwrap_or_else(|| "0".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(v2: bool) -> (tempfile::TempDir, Layout) {
        let t = tempfile::tempdir().unwrap();
        let (cpu, cpuset) = if v2 {
            (t.path().to_path_buf(), t.path().to_path_buf())
        } else {
            std::fs::create_dir_all(t.path().join("cpu")).unwrap();
            std::fs::create_dir_all(t.path().join("cpuset")).unwrap();
            (t.path().join("cpu"), t.path().join("cpuset"))
        };
        (t, Layout { cpu, cpuset, v2 })
    }

    #[test]
    fn a_v1_group_is_set_up_and_removed() {
        let (_t, l) = fixture(false);
        let s = Setting::new(1.5, 3);
        let g = Group::create(&l, 0, s, &[4, 2, 6, 8], "0", true).unwrap();
        let name = format!("truebench-{}-0", std::process::id());
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(l.cpu.join(&name).join("cpu.cfs_quota_us")), "150000");
        assert_eq!(read(l.cpu.join(&name).join("cpu.cfs_period_us")), "100000");
        assert_eq!(read(l.cpuset.join(&name).join("cpuset.cpus")), "2,4,6");
        assert_eq!(read(l.cpuset.join(&name).join("cpuset.mems")), "0");
        assert_eq!(g.cpus, vec![2, 4, 6]);
        assert_eq!(g.thread_files.len(), 2);
        join_thread(&g.thread_files).unwrap();
        assert!(!read(g.thread_files[0].clone()).is_empty());
        drop(g);
        assert!(!l.cpu.join(&name).exists());
        assert!(!l.cpuset.join(&name).exists());
    }

    #[test]
    fn impossible_settings_are_refused_and_leave_nothing() {
        let (t, l) = fixture(false);
        for s in [
            Setting::new(1.0, 5),
            Setting::new(0.0, 1),
            Setting {
                period_us: 500,
                ..Setting::new(0.5, 1)
            },
        ] {
            assert!(Group::create(&l, 0, s, &[0, 1], "0", true).is_err());
        }
        assert_eq!(std::fs::read_dir(t.path().join("cpu")).unwrap().count(), 0);
    }

    #[test]
    fn the_period_is_written_for_cgroup_v1_and_v2() {
        let s = parse_setting("0.4/1@5ms").unwrap();
        assert_eq!(s.period_us, 5000);
        let name = format!("truebench-{}-1", std::process::id());
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        let (_t, l) = fixture(false);
        let g = Group::create(&l, 1, s, &[0, 1], "0", true).unwrap();
        assert_eq!(read(l.cpu.join(&name).join("cpu.cfs_period_us")), "5000");
        assert_eq!(read(l.cpu.join(&name).join("cpu.cfs_quota_us")), "2000");
        drop(g);
        let (_t2, l2) = fixture(true);
        let g = Group::create(&l2, 1, s, &[0, 1], "0", false).unwrap();
        assert_eq!(read(l2.cpu.join(&name).join("cpu.max")), "2000 5000");
        drop(g);
    }

    #[test]
    fn settings_parse_with_an_optional_period_within_the_kernels_limits() {
        let s = parse_setting("1.8/2").unwrap();
        assert_eq!((s.quota, s.width, s.period_us), (1.8, 2, 100_000));
        assert_eq!(s.spec(), "1.8/2");
        assert_eq!(parse_setting("0.4/1@2500us").unwrap().period_us, 2500);
        assert_eq!(parse_setting("0.4/1@2500µs").unwrap().period_us, 2500);
        assert_eq!(parse_setting("2/2@1s").unwrap().period_us, 1_000_000);
        let five = parse_setting("0.4/1@0.005s").unwrap();
        assert_eq!(five.period_us, 5000);
        assert_eq!(five.spec(), "0.4/1@5ms");
        assert_eq!(parse_setting(&five.spec()).unwrap(), five);
        assert_eq!(five.name(), "quota 0.4/width 1 (5 ms period)");
        // Outside 1 ms..1 s, no unit, a fraction of a µs, a quota below 1 ms per period.
        for bad in [
            "0.4/1@999us",
            "0.4/1@2s",
            "0.4/1@5",
            "0.4/1@1.5us",
            "0.1/1@5ms",
            "0.4/1@",
            "0.4@5ms",
        ] {
            assert!(parse_setting(bad).is_err(), "{bad}");
        }
        assert!(parse_setting("0.1/1@5ms").unwrap_err().contains("0.2"));
        // A quota above the width is never reached: refused by the one rule.
        assert!(parse_setting("2/2").is_ok() && parse_setting("1.5/2").is_ok());
        let e = parse_setting("2.5/2@5ms").unwrap_err();
        assert_eq!(Err(e), check_within_width(2.5, 2));
        assert!(check_within_width(1e300, 1)
            .unwrap_err()
            .contains("1.000e300"));
        assert!(check_quota(0.01, DEFAULT_PERIOD_US).is_ok());
        assert!(check_quota(0.19, 5000).is_err() && check_quota(0.2, 5000).is_ok());
    }

    #[test]
    fn a_setting_stored_before_the_period_existed_ran_at_100_ms() {
        let old: Setting = serde_json::from_str(r#"{"quota": 0.5, "width": 1}"#).unwrap();
        assert_eq!(old, Setting::new(0.5, 1));
        let new = serde_json::to_value(parse_setting("0.5/1@5ms").unwrap()).unwrap();
        assert_eq!(new["period_us"], 5000);
    }

    #[test]
    fn groups_of_dead_runs_are_removed_and_live_ones_kept() {
        let (_t, l) = fixture(false);
        // PID 0x7fffffff cannot run; our own PID does.
        let dead = l.cpu.join("truebench-2147483647-0");
        let live = l.cpu.join(format!("truebench-{}-9", std::process::id()));
        let other = l.cpu.join("system.slice");
        for d in [&dead, &live, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(dead.join("cpu.cfs_quota_us"), "1000").unwrap();
        assert_eq!(remove_stale(&l), vec![dead.clone()]);
        assert!(!dead.exists() && live.exists() && other.exists());
    }
}
