//! Writing a command's output file: atomically (a temporary file in the same directory,
//! created with O_EXCL, then renamed over the name, never written through a link),
//! readable by others (0644, as a file made with the usual umask) unless it replaces a
//! file, whose permissions and owner it keeps; optionally refusing to replace an existing
//! file; never replacing anything but a regular file (a device, FIFO, socket, directory or
//! symbolic link is refused). Failures are usage errors (exit 2). `-` names standard output (`-o -`) or
//! standard input (`import -`), as in other Unix tools, never a file called `-`.

use crate::error::{usage, usage_hint};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The name `-`: standard output for `-o`, standard input for `import`.
pub const STDIO: &str = "-";

/// `-o FILE` as given: `None` when the output goes to standard output (no `-o`, or `-o -`).
pub fn output_file(o: Option<PathBuf>) -> Option<PathBuf> {
    o.filter(|p| p.as_os_str() != STDIO)
}

pub fn write_file(path: &Path, bytes: &[u8], replace: bool) -> anyhow::Result<()> {
    if !replace && path.exists() {
        return Err(usage_hint(
            format!("{} already exists", path.display()),
            "choose another file name",
        ));
    }
    // Only a regular file is ever replaced: renaming over `/dev/null` made it a regular
    // file for every process of the machine; a FIFO, socket or device, or a symbolic link
    // (replacing it would break what it stands for, such as /dev/stdout), is refused.
    if let Some(k) = std::fs::symlink_metadata(path)
        .ok()
        .and_then(|m| crate::safe_file::kind(m.mode()))
    {
        return Err(usage_hint(
            format!(
                "cannot write {}: {}, which is never replaced",
                path.display(),
                crate::safe_file::Refused::NotRegular(k)
            ),
            "give a file name (`-o -` writes to standard output)",
        ));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // The temporary file's random name (tempfile appends ` at path "DIR/.tmpXXXX"`) is no
    // help to the user: the reason without it.
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        let why = e.to_string();
        let why = why.split(" at path ").next().unwrap_or_default();
        usage(format!(
            "cannot write {} (a file in {}): {why}",
            path.display(),
            dir.display()
        ))
    })?;
    // Text is written as standard output shows it (`crate::stdout::printable`): an escape
    // sequence or a bidirectional override in a document's text never reaches a file that
    // `cat` or a browser shows.
    let text = std::str::from_utf8(bytes).map(crate::stdout::printable);
    let bytes = match &text {
        Ok(t) => t.as_bytes(),
        Err(_) => bytes,
    };
    // A failure names the file asked for, not the temporary one (a full disk).
    // tempfile's errors end in ` at path "DIR/.tmpXXXX"`: left out (a full disk).
    let failed = |e: std::io::Error| {
        let why = e.to_string();
        let why = why.split(" at path ").next().unwrap_or_default();
        usage(format!("cannot write {}: {why}", path.display()))
    };
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(failed)?;
    // A file replaced keeps its permissions and owner (a 0600 report stays private);
    // a new one is 0644.
    let before = if replace {
        crate::safe_file::mode_and_owner(path)
    } else {
        None
    };
    let mode = before.map(|(m, _, _)| m).unwrap_or(0o644);
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(failed)?;
    if let Some((_, uid, gid)) = before {
        if nix::unistd::geteuid().is_root() {
            let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(uid), Some(gid));
        }
    }
    let done = if replace {
        tmp.persist(path).map(|_| ())
    } else {
        tmp.persist_noclobber(path).map(|_| ())
    };
    done.map_err(|e| usage(format!("cannot write {}: {}", path.display(), e.error)))
}
