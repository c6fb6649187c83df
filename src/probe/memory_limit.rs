//! The memory this process may use: the machine's (`MemTotal`, swap in /proc/meminfo) and
//! the limits of its memory cgroup and every ancestor up to the hierarchy's mount (v1
//! `memory.limit_in_bytes` and `memory.memsw.limit_in_bytes`, v2 `memory.max`, `memory.high`
//! and `memory.swap.max`; the tightest binds, since any ancestor's limit holds its whole
//! subtree), what the cgroup holds and the OOM kills it has counted (v1
//! `memory.oom_control`, v2 `memory.events`).
//!
//! Read again while a run goes on: [`Room::now`] is what a benchmark may still allocate
//! (the binding limit less what the cgroup holds, with headroom, and half the machine's
//! available memory), [`OomWatch`] the kills counted since a command started.

use super::cgroup::{levels, Located, UNREADABLE};
use super::sysroot::SysRoot;
use super::Unavailable;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

/// A v1 limit this large is none (the kernel writes PAGE_COUNTER_MAX pages:
/// 9223372036854771712 with 4 KiB pages).
const V1_UNLIMITED: u64 = 1 << 62;

/// Headroom kept inside a cgroup limit: this much, plus an eighth of what is free in it
/// (truebench's own allocations while a benchmark runs, a child process, page cache).
const HEADROOM_FIXED: u64 = 24 * MIB;

/// The memory facts of the probe document (`memory`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryDoc {
    /// `MemTotal` of /proc/meminfo, bytes.
    pub total_bytes: Option<u64>,
    /// `SwapTotal` and `SwapFree` of /proc/meminfo, bytes.
    pub swap_total_bytes: Option<u64>,
    pub swap_free_bytes: Option<u64>,
    /// This process's memory cgroup and its limits; null without a memory controller.
    pub cgroup: Option<MemoryCgroup>,
}

/// One limit: its value and the file that set it (the tightest of the ancestors').
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub bytes: u64,
    /// The file, as on the system (`/sys/fs/cgroup/memory/job/memory.limit_in_bytes`).
    pub file: String,
}

impl Limit {
    /// "256 MiB (/sys/fs/cgroup/memory/job/memory.limit_in_bytes)".
    pub fn words(&self) -> String {
        format!("{} ({})", crate::units::bytes(self.bytes), self.file)
    }

    /// The setting's name (`memory.max`, `memory.limit_in_bytes`).
    pub fn setting(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }
}

/// This process's memory cgroup.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryCgroup {
    /// Its path in the memory hierarchy.
    pub path: String,
    /// `v1` or `v2`.
    pub version: String,
    /// The tightest hard limit (v1 `memory.limit_in_bytes`, v2 `memory.max`): past it the
    /// kernel reclaims, swaps where it may, then OOM-kills. Null: none.
    pub limit: Option<Limit>,
    /// The tightest v2 `memory.high`: past it the group is throttled and reclaimed hard.
    pub high: Option<Limit>,
    /// The tightest swap limit: v1 `memory.memsw.limit_in_bytes` (memory and swap
    /// together), v2 `memory.swap.max` (swap alone).
    pub swap_limit: Option<Limit>,
    /// What the cgroup held when probed (v1 `memory.usage_in_bytes`, v2 `memory.current`),
    /// page cache included, bytes.
    pub usage_bytes: Option<u64>,
    /// OOM kills its memory controller counted so far (v1 `memory.oom_control`, v2
    /// `memory.events`: `oom_kill`).
    pub oom_kills: Option<u64>,
    /// Its directory and its ancestors' up to the mount, inside the root (read again by
    /// [`Room::now`] and [`OomWatch`]).
    #[serde(skip)]
    pub dirs: Vec<PathBuf>,
}

impl MemoryCgroup {
    fn v2(&self) -> bool {
        self.version == "v2"
    }

    /// The limit truebench sizes its buffers within: the lower of the hard limit and
    /// `memory.high`.
    pub fn binding(&self) -> Option<&Limit> {
        match (&self.limit, &self.high) {
            (Some(l), Some(h)) if h.bytes < l.bytes => Some(h),
            (Some(l), _) => Some(l),
            (None, h) => h.as_ref(),
        }
    }

    /// The swap the cgroup may use on top of its memory, when a limit says: v1 memsw less
    /// the memory limit, v2 `memory.swap.max`; None when nothing limits it.
    pub fn swap_allowed(&self) -> Option<u64> {
        let s = self.swap_limit.as_ref()?;
        if self.v2() {
            Some(s.bytes)
        } else {
            Some(s.bytes.saturating_sub(self.limit.as_ref()?.bytes))
        }
    }
}

impl MemoryDoc {
    /// Nothing read (a document of an earlier version): not written back, so such a
    /// document reads and writes unchanged.
    pub fn is_unread(&self) -> bool {
        *self == MemoryDoc::default()
    }

    /// The limit truebench sizes within, when a cgroup sets one.
    pub fn binding(&self) -> Option<&Limit> {
        self.cgroup.as_ref()?.binding()
    }

    /// The swap this process may use: the machine's free swap, within the cgroup's swap
    /// limit; None when /proc/meminfo was not read.
    pub fn swap_usable(&self) -> Option<u64> {
        let free = self.swap_free_bytes?;
        Some(match self.cgroup.as_ref().and_then(|c| c.swap_allowed()) {
            Some(a) => free.min(a),
            None => free,
        })
    }

    /// The OOM kills this process's memory cgroup has counted, read now; None without a
    /// cgroup or a readable counter.
    pub fn oom_kills_now(&self) -> Option<u64> {
        let c = self.cgroup.as_ref()?;
        oom_kills(&SysRoot::live(), c.dirs.first()?, c.v2())
    }

    /// The memory facts for the probe's text view: the machine's, then the cgroup's
    /// limits, each with the file that set it on a line of its own.
    pub fn lines(&self) -> Vec<String> {
        let b = crate::units::bytes;
        let swap = match (self.swap_total_bytes, self.swap_usable()) {
            (Some(0), _) => "no swap".to_string(),
            (Some(t), Some(u)) => format!("swap {} ({} usable)", b(t), b(u)),
            _ => "swap unknown".into(),
        };
        let mut out = vec![format!(
            "Memory: {}; {swap}",
            self.total_bytes.map(b).unwrap_or_else(|| "unknown".into())
        )];
        let Some(c) = &self.cgroup else {
            return out;
        };
        let mut head = format!(
            "  cgroup {} memory limit {}",
            c.version,
            c.limit
                .as_ref()
                .map(|l| b(l.bytes))
                .unwrap_or_else(|| "none".into())
        );
        if let Some(h) = &c.high {
            head.push_str(&format!(", memory.high {}", b(h.bytes)));
        }
        if let Some(w) = &c.swap_limit {
            head.push_str(&format!(", {} {}", w.setting(), b(w.bytes)));
        }
        if let Some(u) = c.usage_bytes {
            head.push_str(&format!("; holds {}", b(u)));
        }
        if let Some(k) = c.oom_kills {
            head.push_str(&format!(", {}", crate::units::count(k, "OOM kill")));
        }
        out.push(head);
        for l in [&c.limit, &c.high, &c.swap_limit].into_iter().flatten() {
            out.push(format!("    {}", l.file));
        }
        out
    }
}

/// A number of bytes in a limit file: `max` (v2) or a v1 value past 2^62 is no limit
/// (Ok(None)); Err for anything the kernel never writes there.
fn parse_limit(text: &str, v2: bool) -> Result<Option<u64>, ()> {
    let t = text.trim();
    if v2 && t == "max" {
        return Ok(None);
    }
    let v: u64 = t.parse().map_err(|_| ())?;
    Ok((v2 || v < V1_UNLIMITED).then_some(v))
}

/// `key value` lines (memory.stat, memory.events, memory.oom_control): the value of `key`.
pub fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// /proc/meminfo's `key:` in bytes.
pub fn meminfo(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The files of each version: hard limit, high, swap, usage, OOM counter file and key.
struct Files {
    limit: &'static str,
    high: Option<&'static str>,
    swap: &'static str,
    usage: &'static str,
    events: &'static str,
}

fn files(v2: bool) -> Files {
    if v2 {
        Files {
            limit: "memory.max",
            high: Some("memory.high"),
            swap: "memory.swap.max",
            usage: "memory.current",
            events: "memory.events",
        }
    } else {
        Files {
            limit: "memory.limit_in_bytes",
            high: None,
            swap: "memory.memsw.limit_in_bytes",
            usage: "memory.usage_in_bytes",
            events: "memory.oom_control",
        }
    }
}

/// Whether a v1 ancestor's limit binds its children: not where it has `use_hierarchy` 0
/// (kernels before 5.16 allowed it; its children were then accounted apart).
fn hierarchical(root: &SysRoot, dir: &Path) -> bool {
    root.text(&dir.join("memory.use_hierarchy"))
        .map(|t| t.trim() != "0")
        .unwrap_or(true)
}

/// The tightest of one setting over `dirs` (own first); the files holding what the kernel
/// never writes go to `unreadable`.
fn tightest(
    root: &SysRoot,
    dirs: &[PathBuf],
    name: &str,
    v2: bool,
    unreadable: &mut Vec<String>,
) -> Option<Limit> {
    let mut best: Option<Limit> = None;
    for (i, d) in dirs.iter().enumerate() {
        if i > 0 && !v2 && !hierarchical(root, d) {
            continue;
        }
        let path = d.join(name);
        let Ok(text) = root.text(&path) else {
            continue;
        };
        match parse_limit(&text, v2) {
            Ok(Some(bytes)) if best.as_ref().is_none_or(|b| bytes < b.bytes) => {
                best = Some(Limit {
                    bytes,
                    file: root.shown(&path),
                })
            }
            Ok(_) => {}
            Err(()) => {
                let text: String = text.trim().chars().take(40).collect();
                unreadable.push(format!(
                    "{} reads '{}'",
                    root.shown(&path),
                    crate::stdout::field(&text)
                ));
            }
        }
    }
    best
}

/// The OOM kills counted in a cgroup directory, from its counter file.
fn oom_kills(root: &SysRoot, dir: &Path, v2: bool) -> Option<u64> {
    let text = root.text(&dir.join(files(v2).events)).ok()?;
    keyed(&text, "oom_kill")
}

/// The machine's memory and this process's memory cgroup under `root`.
pub fn read(root: &SysRoot, missing: &mut Unavailable) -> MemoryDoc {
    let info = root.read_raw("/proc/meminfo");
    if info.is_none() {
        missing.add("memory.total_bytes", "no /proc/meminfo");
    }
    let info = info.unwrap_or_default();
    let mut doc = MemoryDoc {
        total_bytes: meminfo(&info, "MemTotal"),
        swap_total_bytes: meminfo(&info, "SwapTotal"),
        swap_free_bytes: meminfo(&info, "SwapFree"),
        cgroup: None,
    };
    match super::cgroup::locate_for(root, "self", "memory") {
        Some(at) => doc.cgroup = Some(cgroup(root, &at, missing)),
        None => missing.add(
            "memory.cgroup",
            "no memory controller applies to this process (no cgroup memory limit can be set)",
        ),
    }
    doc
}

fn cgroup(root: &SysRoot, at: &Located, missing: &mut Unavailable) -> MemoryCgroup {
    let f = files(at.v2);
    let dirs = levels(&at.dir, &at.top);
    let mut unreadable = vec![];
    let limit = tightest(root, &dirs, f.limit, at.v2, &mut unreadable);
    let high = f
        .high
        .and_then(|h| tightest(root, &dirs, h, at.v2, &mut unreadable));
    let swap_limit = tightest(root, &dirs, f.swap, at.v2, &mut unreadable);
    if !unreadable.is_empty() {
        let then = if limit.is_some() || high.is_some() {
            " (a limit tighter than the one read may apply)"
        } else {
            ""
        };
        missing.add(
            "memory.cgroup.limit",
            &format!("{}: {UNREADABLE}{then}", unreadable.join(", ")),
        );
    }
    let usage_bytes = root
        .text(&at.dir.join(f.usage))
        .ok()
        .and_then(|t| t.trim().parse().ok());
    if usage_bytes.is_none() {
        missing.add(
            "memory.cgroup.usage_bytes",
            &format!("no readable {} in this process's memory cgroup", f.usage),
        );
    }
    let oom = oom_kills(root, &at.dir, at.v2);
    if oom.is_none() {
        missing.add(
            "memory.cgroup.oom_kills",
            &format!(
                "no oom_kill line in {} of this process's memory cgroup (kernels before 4.13 count none)",
                f.events
            ),
        );
    }
    MemoryCgroup {
        path: at.path.clone(),
        version: if at.v2 { "v2" } else { "v1" }.into(),
        limit,
        high,
        swap_limit,
        usage_bytes,
        oom_kills: oom,
        dirs,
    }
}

/// What a cgroup limit leaves a benchmark now.
#[derive(Debug, Clone, PartialEq)]
pub struct Squeeze {
    /// The limit that leaves the least.
    pub limit: Limit,
    /// What its cgroup holds now (usage less inactive page cache, which the kernel
    /// reclaims first), bytes.
    pub held_bytes: u64,
}

/// The memory a benchmark may allocate for its buffers now, and what decided it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Room {
    /// Bytes for buffers held at once; None when neither the machine's available memory nor
    /// a limit could be read.
    pub bytes: Option<u64>,
    /// The cgroup limit, when it (not the machine's available memory) decided `bytes`.
    pub squeeze: Option<Squeeze>,
}

impl Room {
    /// Room for `bytes` with no cgroup limit in the way (the machine's memory decided).
    pub fn machine(bytes: Option<u64>) -> Room {
        Room {
            bytes,
            squeeze: None,
        }
    }

    /// The room now: half of /proc/meminfo's `MemAvailable`, and within `doc`'s memory
    /// cgroup for every level with a limit (or `memory.high`) its limit less what it holds,
    /// less the headroom ([`headroom`]).
    pub fn now(doc: &MemoryDoc) -> Room {
        let machine = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| meminfo(&t, "MemAvailable"))
            .map(|a| a / 2);
        let squeeze = doc.cgroup.as_ref().and_then(squeeze_now);
        Room::of(machine, squeeze)
    }

    /// The room from the machine's share and a cgroup's squeeze.
    pub fn of(machine: Option<u64>, squeeze: Option<Squeeze>) -> Room {
        let cgroup = squeeze.as_ref().map(Squeeze::room);
        match (machine, cgroup) {
            (Some(m), Some(c)) if m <= c => Room::machine(Some(m)),
            (_, Some(c)) => Room {
                bytes: Some(c),
                squeeze,
            },
            (m, None) => Room::machine(m),
        }
    }

    /// "the memory limit 256 MiB (...) less the 58 MiB its cgroup holds" or "half the
    /// available memory", for reasons.
    pub fn basis(&self) -> String {
        match &self.squeeze {
            Some(s) => format!(
                "{} {} less the {} its cgroup holds and headroom",
                limit_words(&s.limit),
                crate::units::bytes(s.limit.bytes),
                crate::units::bytes(s.held_bytes)
            ),
            None => "half the available memory".into(),
        }
    }
}

/// "memory limit" / "memory.high", naming a limit in reasons (the prefix
/// [`crate::findings::memory::LIMIT_PREFIX`] begins with the first).
pub fn limit_words(l: &Limit) -> &'static str {
    if l.setting() == "memory.high" {
        "memory.high"
    } else {
        "memory limit"
    }
}

/// The headroom kept inside a limit with `free` bytes left in it.
pub fn headroom(free: u64) -> u64 {
    HEADROOM_FIXED + free / 8
}

impl Squeeze {
    /// What the limit leaves for buffers: free in it less the headroom.
    pub fn room(&self) -> u64 {
        let free = self.limit.bytes.saturating_sub(self.held_bytes);
        free.saturating_sub(headroom(free))
    }
}

/// Read every level of `cg` with a limit again: the one leaving the least room.
fn squeeze_now(cg: &MemoryCgroup) -> Option<Squeeze> {
    let root = SysRoot::live();
    let v2 = cg.v2();
    let f = files(v2);
    let mut best: Option<Squeeze> = None;
    for (i, d) in cg.dirs.iter().enumerate() {
        if i > 0 && !v2 && !hierarchical(&root, d) {
            continue;
        }
        let mut ignored = vec![];
        let level = [Some(f.limit), f.high]
            .into_iter()
            .flatten()
            .filter_map(|n| tightest(&root, std::slice::from_ref(d), n, v2, &mut ignored))
            .min_by_key(|l| l.bytes);
        let Some(limit) = level else {
            continue;
        };
        let usage: Option<u64> = root
            .text(&d.join(f.usage))
            .ok()
            .and_then(|t| t.trim().parse().ok());
        let stat = root.text(&d.join("memory.stat")).unwrap_or_default();
        let inactive = keyed(&stat, "total_inactive_file")
            .or_else(|| keyed(&stat, "inactive_file"))
            .unwrap_or(0);
        // Unreadable usage: the whole limit taken as held (no room), never as free.
        let held = usage.map_or(limit.bytes, |u| u.saturating_sub(inactive));
        let s = Squeeze {
            limit,
            held_bytes: held,
        };
        if best.as_ref().is_none_or(|b| s.room() < b.room()) {
            best = Some(s);
        }
    }
    best
}

/// The OOM kills of a memory cgroup counted from a starting point: what `experiment` and
/// `record` read around a command they start (it runs in truebench's memory cgroup).
#[derive(Debug, Clone)]
pub struct OomWatch {
    dir: PathBuf,
    v2: bool,
    file: String,
    before: Option<u64>,
}

/// OOM kills counted while a command ran, and the file that counted them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OomKills {
    pub kills: u64,
    /// The counter (`/sys/fs/cgroup/memory/job/memory.oom_control`), as on the system.
    pub file: String,
    /// The cgroup's binding limit, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
}

impl OomKills {
    /// "the kernel's OOM killer (memory.oom_control of /x counted 1 OOM kill while it ran;
    /// memory limit 256 MiB)".
    pub fn words(&self) -> String {
        format!(
            "the kernel's OOM killer ({} counted {} while it ran{})",
            self.file,
            crate::units::count(self.kills, "OOM kill"),
            self.limit
                .as_ref()
                .map(|l| format!("; {} {}", limit_words(l), l.words()))
                .unwrap_or_default()
        )
    }
}

impl OomWatch {
    /// Start counting in this process's memory cgroup (`doc` from the probe); None without
    /// a memory cgroup.
    pub fn start(doc: &MemoryDoc) -> Option<OomWatch> {
        let cg = doc.cgroup.as_ref()?;
        let dir = cg.dirs.first()?.clone();
        let v2 = cg.v2();
        let root = SysRoot::live();
        Some(OomWatch {
            file: root.shown(&dir.join(files(v2).events)),
            before: oom_kills(&root, &dir, v2),
            dir,
            v2,
        })
    }

    /// The kills counted since the start (None when the counter cannot be read or none
    /// were), with the binding limit of `doc`.
    pub fn since(&self, doc: &MemoryDoc) -> Option<OomKills> {
        let now = oom_kills(&SysRoot::live(), &self.dir, self.v2)?;
        let kills = now.saturating_sub(self.before?);
        (kills > 0).then(|| OomKills {
            kills,
            file: self.file.clone(),
            limit: doc.binding().cloned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_as_each_version_writes_them() {
        assert_eq!(parse_limit("max\n", true), Ok(None));
        assert_eq!(parse_limit("268435456", true), Ok(Some(256 * MIB)));
        assert_eq!(parse_limit("9223372036854771712", false), Ok(None));
        assert_eq!(parse_limit("268435456\n", false), Ok(Some(256 * MIB)));
        assert_eq!(parse_limit("max", false), Err(()));
        assert_eq!(parse_limit("-1", true), Err(()));
        assert_eq!(parse_limit("", true), Err(()));
    }

    #[test]
    fn keyed_files_and_meminfo_are_read_by_key() {
        let events = "low 0\nhigh 12\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(keyed(events, "oom_kill"), Some(1));
        assert_eq!(keyed(events, "oom"), Some(1));
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n";
        assert_eq!(keyed(v1, "oom_kill"), Some(4));
        assert_eq!(keyed("oom_kill_disable 0\n", "oom_kill"), None);
        let mi = "MemTotal:       24684544 kB\nMemAvailable:   20000000 kB\nSwapTotal: 0 kB\n";
        assert_eq!(meminfo(mi, "MemTotal"), Some(24684544 * 1024));
        assert_eq!(meminfo(mi, "SwapTotal"), Some(0));
        assert_eq!(meminfo(mi, "SwapFree"), None);
    }

    #[test]
    fn the_limit_leaving_the_least_room_decides_with_headroom() {
        let l = |mib: u64| Limit {
            bytes: mib * MIB,
            file: "/sys/fs/cgroup/memory/job/memory.limit_in_bytes".into(),
        };
        let s = Squeeze {
            limit: l(256),
            held_bytes: 56 * MIB,
        };
        // 200 MiB free: 24 MiB + 25 MiB of headroom kept.
        assert_eq!(s.room(), 151 * MIB);
        let r = Room::of(Some(10 << 30), Some(s.clone()));
        assert_eq!(r.bytes, Some(151 * MIB));
        assert!(
            r.basis().starts_with("memory limit 256 MiB"),
            "{}",
            r.basis()
        );
        // The machine's share is smaller: it decides, and no limit is named.
        let r = Room::of(Some(100 * MIB), Some(s.clone()));
        assert_eq!(r, Room::machine(Some(100 * MIB)));
        // A cgroup that holds more than its limit (page cache at the limit) leaves nothing.
        let full = Squeeze {
            limit: l(256),
            held_bytes: 300 * MIB,
        };
        assert_eq!(full.room(), 0);
        assert_eq!(Room::of(None, None).bytes, None);
    }

    #[test]
    fn memory_high_binds_below_the_hard_limit_and_swap_is_what_the_cgroup_allows() {
        let lim = |b: u64, f: &str| Limit {
            bytes: b * MIB,
            file: f.into(),
        };
        let mut c = MemoryCgroup {
            version: "v2".into(),
            limit: Some(lim(512, "/sys/fs/cgroup/pod/memory.max")),
            high: Some(lim(384, "/sys/fs/cgroup/pod/ctr/memory.high")),
            swap_limit: Some(lim(64, "/sys/fs/cgroup/pod/memory.swap.max")),
            ..Default::default()
        };
        assert_eq!(c.binding().unwrap().setting(), "memory.high");
        assert_eq!(limit_words(c.binding().unwrap()), "memory.high");
        assert_eq!(c.swap_allowed(), Some(64 * MIB));
        c.version = "v1".into();
        c.high = None;
        c.swap_limit = Some(lim(768, "/x/memory.memsw.limit_in_bytes"));
        assert_eq!(c.swap_allowed(), Some(256 * MIB), "memsw counts memory too");
        let d = MemoryDoc {
            total_bytes: Some(1 << 30),
            swap_total_bytes: Some(1 << 30),
            swap_free_bytes: Some(100 * MIB),
            cgroup: Some(c),
        };
        assert_eq!(d.swap_usable(), Some(100 * MIB));
        let lines = d.lines();
        assert_eq!(lines[0], "Memory: 1 GiB; swap 1 GiB (100 MiB usable)");
        assert!(lines[1].contains("memory limit 512 MiB"), "{lines:?}");
        assert!(lines.iter().all(|l| l.len() <= 100), "{lines:?}");
    }
}
