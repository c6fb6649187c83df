//! The system root every probe reads from: `/` in production, a captured directory tree
//! in tests (`--root DIR`). All sysfs/procfs access goes through here, so a probe is a
//! pure function of the tree, and a recording root knows every path the probe touched
//! (what `probe --capture` archives).
//!
//! Every file is read through one bounded reader ([`read_at`]): opened non-blocking, read
//! only when it is a regular file (a FIFO, /dev/zero or a socket planted in a captured tree
//! is refused with its reason, never waited on or read without end), and at most
//! [`SYSFS_MAX_BYTES`] under /sys (a sysfs attribute is one page) or [`PROC_MAX_BYTES`]
//! elsewhere (/proc/cpuinfo of a 1,024-CPU machine is about 1.5 MB). A file over its
//! limit is unreadable: the fact it gives is unavailable with the reason, as for a missing
//! file.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// At most this many bytes of one file under /sys (including cgroup files).
pub const SYSFS_MAX_BYTES: usize = 64 << 10;
/// At most this many bytes of one file elsewhere (/proc).
pub const PROC_MAX_BYTES: usize = 4 << 20;

/// The content of the system file at `full` (a path inside a root whose system path is
/// `system`), bounded: see the module doc.
pub fn read_at(full: &Path, system: &Path) -> io::Result<Vec<u8>> {
    let max = if system.starts_with("/sys") {
        SYSFS_MAX_BYTES
    } else {
        PROC_MAX_BYTES
    };
    crate::bounded::read_regular(full, max).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", system.display()),
        )
    })
}

#[derive(Debug, Clone)]
pub struct SysRoot {
    root: PathBuf,
    live: bool,
    /// When recording: every system path asked for (true) or only seen in a directory
    /// listing (false).
    seen: Option<Arc<Mutex<BTreeMap<PathBuf, bool>>>>,
}

impl SysRoot {
    /// The running system: `/`, with live-only measurements (CPUID, clock costs, PMU) allowed.
    pub fn live() -> Self {
        SysRoot {
            root: PathBuf::from("/"),
            live: true,
            seen: None,
        }
    }

    /// This root, remembering every path read through it from now on.
    pub fn recording(mut self) -> Self {
        self.seen = Some(Arc::new(Mutex::new(BTreeMap::new())));
        self
    }

    /// The system paths touched so far (absolute, as on the system), each with whether it
    /// was asked for (true) or only seen as an entry of a listed directory (false).
    pub fn recorded(&self) -> Vec<(PathBuf, bool)> {
        self.seen
            .as_ref()
            .map(|s| {
                s.lock()
                    .map(|g| g.iter().map(|(p, r)| (p.clone(), *r)).collect())
                    .unwrap_or_default()
            })
            .unwrap_or_default()
    }

    /// Remember a path found by other means (a cgroup file under a mount point), given as
    /// its full path inside the root.
    pub fn note(&self, full: &Path) {
        self.remember(full, true);
    }

    fn remember(&self, full: &Path, asked: bool) {
        if let Some(seen) = &self.seen {
            if let Ok(rel) = full.strip_prefix(&self.root) {
                if let Ok(mut g) = seen.lock() {
                    *g.entry(Path::new("/").join(rel)).or_insert(asked) |= asked;
                }
            }
        }
    }

    /// A captured tree: every file is read under `root`, live-only measurements are skipped.
    pub fn captured(root: impl Into<PathBuf>) -> Self {
        SysRoot {
            root: root.into(),
            live: false,
            seen: None,
        }
    }

    /// Whether this is the running system (live-only measurements allowed).
    pub fn is_live(&self) -> bool {
        self.live
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `full` (a path inside this root) as the system path it stands for (`/sys/...`), for
    /// reasons and evidence.
    pub fn shown(&self, full: &Path) -> String {
        full.strip_prefix(&self.root)
            .map(|r| format!("/{}", r.display()))
            .unwrap_or_else(|_| full.display().to_string())
    }

    /// The path of `rel` (an absolute system path such as `/proc/stat`) inside this root.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        let rel = rel.as_ref();
        let rel = rel.strip_prefix("/").unwrap_or(rel);
        let full = self.root.join(rel);
        self.note(&full);
        full
    }

    /// The file's content, with trailing whitespace and NULs trimmed (some kernels end
    /// sysfs files with `\n\0`).
    pub fn read(&self, rel: impl AsRef<Path>) -> io::Result<String> {
        let s = self.text(&self.path(rel))?;
        Ok(s.trim_end_matches(|c: char| c == '\0' || c.is_whitespace())
            .to_string())
    }

    /// The file's content as it is, or None when absent, unreadable or not text.
    pub fn read_raw(&self, rel: impl AsRef<Path>) -> Option<String> {
        self.text(&self.path(rel)).ok()
    }

    /// The text of a file given by its full path inside this root (a cgroup file found
    /// under a mount point), bounded; noted when recording.
    pub fn text(&self, full: &Path) -> io::Result<String> {
        self.note(full);
        let system = match full.strip_prefix(&self.root) {
            Ok(rel) => Path::new("/").join(rel),
            Err(_) => full.to_path_buf(),
        };
        String::from_utf8(read_at(full, &system)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// The file's content, or None when it is absent or unreadable.
    pub fn read_opt(&self, rel: impl AsRef<Path>) -> Option<String> {
        self.read(rel).ok()
    }

    /// The file parsed as a number, or None.
    pub fn read_num<T: std::str::FromStr>(&self, rel: impl AsRef<Path>) -> Option<T> {
        self.read_opt(rel).and_then(|s| s.trim().parse().ok())
    }

    pub fn exists(&self, rel: impl AsRef<Path>) -> bool {
        // symlink_metadata: a captured namespace link may dangle, and still counts.
        std::fs::symlink_metadata(self.path(rel)).is_ok()
    }

    /// The target of a symbolic link (namespace links read as `pid:[4026531836]`).
    pub fn read_link(&self, rel: impl AsRef<Path>) -> Option<String> {
        std::fs::read_link(self.path(rel))
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
    }

    /// Names of the entries of a directory, sorted; empty when absent.
    pub fn list(&self, rel: impl AsRef<Path>) -> Vec<String> {
        let dir = self.path(rel);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        if self.seen.is_some() {
            for n in &names {
                self.remember(&dir.join(n), false);
            }
        }
        names
    }

    /// Numbered entries `prefixN` of a directory (cpu0, node1, index2), sorted by N.
    pub fn numbered(&self, rel: impl AsRef<Path>, prefix: &str) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .list(rel)
            .iter()
            .filter_map(|n| n.strip_prefix(prefix))
            .filter_map(|n| n.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    }
}
