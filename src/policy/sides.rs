//! The two sides of `truebench ab`, applied and switched between (the settings are
//! `policy::setting`). Per round of a row the session measures side A and side B in a
//! fresh random order ([`Sides::order`]); before each it calls [`Sides::enter`], which puts
//! the host in that side's setting: the system-wide knobs (THP, the clocksource: recorded
//! before the first change, `crate::knob`) and the cgroup this process runs in (a group
//! per side made by truebench, `truebench-PID-ab-N`, this process moved in and back out:
//! its own threads only, never another process of the host). The per-thread settings
//! (affinity, scheduling class, nice, memory policy) are applied by [`Sides::on_thread`]
//! to a fresh thread each round measures on, which ends with the round, so nothing of
//! them outlives it. On drop everything is put back: the process's cgroups and affinity,
//! the groups removed, the knobs restored (so on error, on panic and after Ctrl-C too;
//! after SIGKILL the next truebench start does, `cleanup`).

use super::setting::{Setting, Settings};
use crate::knob::{self, Knob, Switch};
use crate::loadstep::capacity::{self, Layout};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::path::{Path, PathBuf};

/// Side A (index 0) and side B (index 1), as their settings name them.
pub const NAMES: [&str; 2] = ["A", "B"];

/// A cgroup of one side: its directories (one per hierarchy on cgroup v1) and the
/// `cgroup.procs` files this process writes itself to, to enter it.
#[derive(Debug)]
struct Group {
    dirs: Vec<PathBuf>,
}

fn write(dir: &Path, file: &str, text: &str) -> Result<(), String> {
    std::fs::write(dir.join(file), text).map_err(|e| format!("{}: {e}", dir.join(file).display()))
}

impl Group {
    /// Make side `side`'s group for the cgroup settings of `s` (None when it has none).
    fn create(layout: &Layout, side: usize, s: &Settings) -> Result<Option<Group>, String> {
        let (cpuset, quota, weight) = (
            s.0.iter().find_map(|x| match x {
                Setting::Cpuset(c) => Some(c.clone()),
                _ => None,
            }),
            s.0.iter().find_map(|x| match x {
                Setting::Quota(q) => Some(*q),
                _ => None,
            }),
            s.0.iter().find_map(|x| match x {
                Setting::Weight(w) => Some(*w),
                _ => None,
            }),
        );
        if cpuset.is_none() && quota.is_none() && weight.is_none() {
            return Ok(None);
        }
        let name = format!("truebench-{}-ab-{side}", std::process::id());
        let mut g = Group { dirs: vec![] };
        let mut mkdir = |base: &Path| -> Result<PathBuf, String> {
            let d = base.join(&name);
            std::fs::create_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            g.dirs.push(d.clone());
            Ok(d)
        };
        let period = capacity::DEFAULT_PERIOD_US;
        let quota_us = quota.map(|q| (q * period as f64).round() as u64);
        let list = cpuset.as_deref().map(crate::probe::cpulist::format_list);
        if layout.v2 {
            let d = mkdir(&layout.cpu)?;
            if let Some(q) = quota_us {
                write(&d, "cpu.max", &format!("{q} {period}"))?;
            }
            if let Some(w) = weight {
                write(&d, "cpu.weight", &w.to_string())?;
            }
            if let Some(l) = &list {
                write(&d, "cpuset.cpus", l)?;
                write(&d, "cpuset.mems", &capacity::parent_mems(layout))?;
            }
        } else {
            if quota_us.is_some() || weight.is_some() {
                let c = mkdir(&layout.cpu)?;
                if let Some(q) = quota_us {
                    write(&c, "cpu.cfs_period_us", &period.to_string())?;
                    write(&c, "cpu.cfs_quota_us", &q.to_string())?;
                }
                if let Some(w) = weight {
                    // systemd's mapping: weight 100 is 1024 shares.
                    write(&c, "cpu.shares", &(w * 1024 / 100).max(2).to_string())?;
                }
            }
            if let Some(l) = &list {
                let d = mkdir(&layout.cpuset)?;
                let pre = crate::probe::cgroup::cpuset_prefix(&layout.cpuset);
                write(&d, &format!("{pre}cpus"), l)?;
                write(&d, &format!("{pre}mems"), &capacity::parent_mems(layout))?;
            }
        }
        Ok(Some(g))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        for d in self.dirs.iter().rev() {
            for _ in 0..50 {
                capacity::remove(d);
                if !d.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// The two sides, made ready: the groups made, the knobs' originals recorded.
pub struct Sides {
    settings: [Settings; 2],
    groups: [Option<Group>; 2],
    layout: Option<Layout>,
    /// Each knob a side sets, its switch (the original recorded) and the value per side
    /// (None: the original).
    knobs: Vec<(Switch, [Option<String>; 2])>,
    /// The main thread's affinity when made (a cpuset group resets it on leaving).
    affinity: Option<nix::sched::CpuSet>,
    /// The memory nodes this process may use (a memory policy's nodes).
    nodes: Vec<u32>,
    /// The side the host is in now.
    current: Option<usize>,
    rng: rand::rngs::SmallRng,
}

/// The knob a system-wide setting switches, and its value.
fn knob_of(s: &Setting) -> Option<(Knob, String)> {
    match s {
        Setting::Thp(m) => Some((knob::thp(), m.clone())),
        Setting::Clocksource(c) => Some((knob::clocksource(), c.clone())),
        _ => None,
    }
}

impl Sides {
    /// Make the sides ready (checked settings, `setting::check`): each side's group made,
    /// each knob's original recorded before anything is changed. Nothing is switched yet.
    /// `nodes`: the memory nodes this process may use.
    pub fn new(a: Settings, b: Settings, nodes: Vec<u32>, seed: u64) -> Result<Sides, String> {
        let needs_group = a.0.iter().chain(&b.0).any(Setting::in_cgroup);
        let layout = needs_group.then(Layout::live).transpose()?;
        if let Some(l) = &layout {
            capacity::remove_stale(l);
        }
        let mut sides = Sides {
            groups: [None, None],
            layout,
            knobs: vec![],
            affinity: nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok(),
            nodes,
            current: None,
            rng: rand::rngs::SmallRng::seed_from_u64(seed),
            settings: [a, b],
        };
        for side in 0..2 {
            if let Some(l) = &sides.layout {
                sides.groups[side] = Group::create(l, side, &sides.settings[side])?;
            }
        }
        for side in 0..2 {
            for (k, v) in sides.settings[side].0.iter().filter_map(knob_of) {
                let at = match sides.knobs.iter().position(|(s, _)| s.knob() == &k) {
                    Some(i) => i,
                    None => {
                        let name = k.name;
                        let s = Switch::take_recorded(k)
                            .map_err(|e| format!("recording {name} before changing it: {e}"))?;
                        sides.knobs.push((s, [None, None]));
                        sides.knobs.len() - 1
                    }
                };
                sides.knobs[at].1[side] = Some(v);
            }
        }
        Ok(sides)
    }

    pub fn settings(&self, side: usize) -> &Settings {
        &self.settings[side]
    }

    /// The order this round measures the sides in: shuffled afresh.
    pub fn order(&mut self) -> [usize; 2] {
        let mut o = [0, 1];
        o.shuffle(&mut self.rng);
        o
    }

    /// Put the host in side `side`'s setting: its knobs' values (the original where it
    /// sets none), this process into its group (or back to where it was).
    pub fn enter(&mut self, side: usize) -> Result<(), String> {
        if self.current == Some(side) {
            return Ok(());
        }
        for (s, values) in &self.knobs {
            let v = values[side].as_deref().unwrap_or(s.original());
            if knob::read(&s.knob().path).ok().as_deref() != Some(v) {
                s.set(v)
                    .map_err(|e| format!("setting {} to {v}: {e}", s.knob().name))?;
            }
        }
        self.move_to(Some(side))?;
        self.current = Some(side);
        Ok(())
    }

    /// Move this process into side `side`'s group, or back where it was (None, or a side
    /// without a group).
    fn move_to(&self, side: Option<usize>) -> Result<(), String> {
        let Some(layout) = &self.layout else {
            return Ok(());
        };
        let pid = std::process::id().to_string();
        let home = [&layout.cpu, &layout.cpuset];
        let group = side.and_then(|s| self.groups[s].as_ref());
        // Each hierarchy: the group's directory there, else home.
        let mut targets: Vec<PathBuf> = vec![];
        for base in home.iter().take(if layout.v2 { 1 } else { 2 }) {
            let dir = group
                .and_then(|g| g.dirs.iter().find(|d| d.parent() == Some(base.as_path())))
                .cloned()
                .unwrap_or_else(|| base.to_path_buf());
            targets.push(dir);
        }
        targets.dedup();
        for t in targets {
            write(&t, "cgroup.procs", &pid)?;
        }
        // Leaving a cpuset resets every thread's affinity to the parent's CPUs: the
        // measuring thread's own is put back.
        if group.is_none() {
            if let Some(a) = &self.affinity {
                let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), a);
            }
        }
        Ok(())
    }

    /// Apply side `side`'s per-thread settings to the calling thread (a fresh one per
    /// round: threads and processes it starts inherit them).
    pub fn on_thread(&self, side: usize) -> Result<(), String> {
        let s = &self.settings[side];
        if let Some(Setting::Cpus(c)) = s.get("cpus") {
            crate::placement::confine_current_thread(c)?;
        }
        // Memory nodes only with a memory policy: without one, nodes would bind.
        let nodes = s.get("mempolicy").map(|_| self.nodes.as_slice());
        super::apply::current_thread(&s.thread_policy(), nodes)
    }
}

impl Drop for Sides {
    fn drop(&mut self) {
        if let Err(e) = self.move_to(None) {
            eprintln!("truebench: could not move back out of the ab cgroup: {e}");
        }
        // The groups (now empty of this process) go, then the knobs' switches restore.
        self.groups = [None, None];
        self.knobs.clear();
    }
}
