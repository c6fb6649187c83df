//! The system root every probe reads from: `/` in production, a captured directory tree
//! in tests (`--root DIR`). All sysfs/procfs access goes through here, so a probe is a
//! pure function of the tree.

use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct SysRoot {
    root: PathBuf,
    live: bool,
}

impl SysRoot {
    /// The running system: `/`, with live-only measurements (CPUID, clock costs, PMU) allowed.
    pub fn live() -> Self {
        SysRoot {
            root: PathBuf::from("/"),
            live: true,
        }
    }

    /// A captured tree: every file is read under `root`, live-only measurements are skipped.
    pub fn captured(root: impl Into<PathBuf>) -> Self {
        SysRoot {
            root: root.into(),
            live: false,
        }
    }

    /// Whether this is the running system (live-only measurements allowed).
    pub fn is_live(&self) -> bool {
        self.live
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of `rel` (an absolute system path such as `/proc/stat`) inside this root.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        let rel = rel.as_ref();
        let rel = rel.strip_prefix("/").unwrap_or(rel);
        self.root.join(rel)
    }

    /// The file's content, with trailing whitespace and NULs trimmed (some kernels end
    /// sysfs files with `\n\0`).
    pub fn read(&self, rel: impl AsRef<Path>) -> io::Result<String> {
        let s = std::fs::read_to_string(self.path(rel))?;
        Ok(s.trim_end_matches(|c: char| c == '\0' || c.is_whitespace())
            .to_string())
    }

    /// The file's content as it is, or None when absent, unreadable or not text.
    pub fn read_raw(&self, rel: impl AsRef<Path>) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
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
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
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
