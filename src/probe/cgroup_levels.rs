//! The cgroups that bind a process: its own directory in a hierarchy and each ancestor up to
//! the hierarchy's mount point. Limits (CPU quota, memory) and weights are read at every
//! level and the tightest one binds; the cgroup reader, the CPU weight and the memory limits
//! all walk the same levels.

use std::path::{Path, PathBuf};

/// `dir` and each of its ancestors up to `stop` (the hierarchy's mount point, inside the
/// root), own directory first: the cgroups whose limits bind a process in `dir`.
pub fn levels(dir: &Path, stop: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut cur = Some(dir.to_path_buf());
    while let Some(d) = cur {
        if d == stop {
            out.push(d);
            break;
        }
        cur = d
            .parent()
            .map(Path::to_path_buf)
            .filter(|p| p.starts_with(stop));
        out.push(d);
    }
    out
}
