//! A finished run is never lost: when storing it fails at the end (the disk filled up,
//! another process kept the database locked, the file was damaged or made immutable while
//! the run measured, the PostgreSQL server went away), its document is written to a file of
//! its own, next to a SQLite database if possible, else in the current or the temp directory, and the error names that file
//! and the command that adds it to a database later.

use super::{Location, Store};
use crate::result::RunDocument;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Store `doc`; when that fails, spill it to a file and fail naming the file (exit 1).
pub fn save_or_spill(store: &mut Store, doc: &RunDocument) -> anyhow::Result<()> {
    let err = match store.insert(doc) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    let why = format!("{err:#}").replace('\n', " ");
    let db = store.location().clone();
    match spill(doc, &spill_dirs(&db)) {
        Ok(file) => anyhow::bail!(
            "cannot store run {} in {}: {why}; the run was kept in {} (add it to a database with `truebench import {}`)",
            doc.run_id,
            db,
            file.display(),
            file.display()
        ),
        Err(e) => anyhow::bail!(
            "cannot store run {} in {}: {why}; nor write it to a file: {e}",
            doc.run_id,
            db
        ),
    }
}

/// Where a spilled document may go, in order.
pub fn spill_dirs(db: &Location) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = db.sqlite_path().and_then(Path::parent) {
        dirs.push(if d.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            d.to_path_buf()
        });
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    dirs.push(std::env::temp_dir());
    dirs
}

/// Write the document as a new file (never over another, never through a link) in the
/// first directory that takes it; its path.
pub fn spill(doc: &RunDocument, dirs: &[PathBuf]) -> Result<PathBuf, String> {
    let text = crate::json_text::pretty(doc).map_err(|e| e.to_string())? + "\n";
    let safe_id: String = doc
        .run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let mut last = String::from("no directory to write in");
    for dir in dirs {
        for n in 0..100 {
            let name = if n == 0 {
                format!("truebench-run-{safe_id}.json")
            } else {
                format!("truebench-run-{safe_id}-{n}.json")
            };
            let path = dir.join(name);
            match crate::safe_file::create_new(&path, 0o644) {
                Ok(mut f) => match f.write_all(text.as_bytes()).and_then(|()| f.sync_all()) {
                    Ok(()) => return Ok(path),
                    Err(e) => {
                        let _ = std::fs::remove_file(&path);
                        last = format!("{}: {e}", path.display());
                        break;
                    }
                },
                Err(crate::safe_file::Refused::Io(e))
                    if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    last = format!("{}: {e}", path.display());
                    break;
                }
            }
        }
    }
    Err(last)
}
