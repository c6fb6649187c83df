//! One benchmark run at a time per machine: an exclusive advisory lock on a lock file
//! (`$TRUEBENCH_LOCK`, else `truebench-run.lock` in the temp directory) that records who
//! holds it, so a second run can say so.
//!
//! The file usually sits in a directory every user can write, and truebench often runs as
//! root: it is opened without following links and only when it is a regular file of the
//! caller or root (see `safe_file`). It is created readable and writable by everyone, so
//! whoever runs next can take it once its holder is gone; a root-owned 0644 file left by
//! an older version is still locked (read-only) rather than refused.

use crate::error::usage_hint;
use crate::safe_file;
use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

pub struct RunLock {
    _lock: Flock<File>,
}

/// `$TRUEBENCH_LOCK` (an empty value counts as unset), else the temp directory's
/// `truebench-run.lock`.
pub fn path() -> PathBuf {
    std::env::var_os("TRUEBENCH_LOCK")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("truebench-run.lock"))
}

/// What the lock file says about its holder: at most one short line of printable text,
/// and whether the process it names still runs.
fn holder(file: &mut File) -> String {
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.take(512).read_to_end(&mut bytes);
    let text: String = String::from_utf8_lossy(&bytes)
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    let text = text.trim().to_string();
    if text.is_empty() {
        return "holder unknown".into();
    }
    let pid = text
        .strip_prefix("pid ")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse::<i32>().ok());
    match pid {
        Some(p) if p > 0 && !std::path::Path::new(&format!("/proc/{p}")).exists() => {
            format!("holder unknown; the file still names an exited run: {text}")
        }
        _ => text,
    }
}

/// Take the lock, or fail naming its holder. A lock file that is a link, not a regular
/// file, or another user's is refused (exit 2) with the way out.
pub fn acquire(what: &str) -> anyhow::Result<RunLock> {
    let p = path();
    let opened = safe_file::open_or_create(&p, 0o666).map_err(|e| {
        let hint = match e {
            safe_file::Refused::NotRegular(_) => "set TRUEBENCH_LOCK to a regular file's path",
            _ => "remove it (as its owner or root), or set TRUEBENCH_LOCK to a file of yours",
        };
        usage_hint(
            format!("cannot use the run lock {}: {e}", p.display()),
            hint,
        )
    })?;
    let read_only = opened.read_only;
    match Flock::lock(opened.file, FlockArg::LockExclusiveNonblock) {
        Ok(mut lock) => {
            if !read_only {
                lock.set_len(0)?;
                lock.rewind()?;
                writeln!(
                    lock,
                    "pid {} since {}: {}",
                    std::process::id(),
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    what
                )?;
                lock.flush()?;
            }
            Ok(RunLock { _lock: lock })
        }
        Err((mut file, errno)) if errno == nix::errno::Errno::EWOULDBLOCK => anyhow::bail!(
            "another truebench run holds the lock {} ({}); wait for it to finish",
            p.display(),
            holder(&mut file)
        ),
        Err((_, errno)) => Err(usage_hint(
            format!("cannot lock the run lock {}: {}", p.display(), errno.desc()),
            "set TRUEBENCH_LOCK to a file on a local file system",
        )),
    }
}
