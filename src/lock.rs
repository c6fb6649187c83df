//! One benchmark run at a time per machine: an exclusive advisory lock on a lock file
//! (`$TRUEBENCH_LOCK`, else `truebench-run.lock` in the temp directory) that records who
//! holds it, so a second run can say so.

use anyhow::Context;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

pub struct RunLock {
    _lock: Flock<File>,
}

pub fn path() -> PathBuf {
    std::env::var_os("TRUEBENCH_LOCK")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("truebench-run.lock"))
}

/// Take the lock, or fail naming its holder.
pub fn acquire(what: &str) -> anyhow::Result<RunLock> {
    let p = path();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&p)
        .with_context(|| format!("cannot open the run lock {}", p.display()))?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(mut lock) => {
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
            Ok(RunLock { _lock: lock })
        }
        Err((mut file, _)) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            anyhow::bail!(
                "another truebench run holds the lock {} ({}); wait for it to finish",
                p.display(),
                if holder.is_empty() {
                    "holder unknown"
                } else {
                    holder
                }
            )
        }
    }
}
