//! Writing a command's output file: atomically (a temporary file in the same directory,
//! then renamed), readable by others (0644, as a file made with the usual umask), and
//! optionally refusing to replace an existing file. Failures are usage errors (exit 2).

use crate::error::{usage, usage_hint};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

pub fn write_file(path: &Path, bytes: &[u8], replace: bool) -> anyhow::Result<()> {
    if !replace && path.exists() {
        return Err(usage_hint(
            format!("{} already exists", path.display()),
            "choose another file name",
        ));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| usage(format!("cannot write in {}: {e}", dir.display())))?;
    tmp.write_all(bytes)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    let done = if replace {
        tmp.persist(path).map(|_| ())
    } else {
        tmp.persist_noclobber(path).map(|_| ())
    };
    done.map_err(|e| usage(format!("cannot write {}: {}", path.display(), e.error)))
}
