//! Writing a command's output file: atomically (a temporary file in the same directory,
//! created with O_EXCL, then renamed over the name, never written through a link),
//! readable by others (0644, as a file made with the usual umask) unless it replaces a
//! file, whose permissions and owner it keeps; refusing to replace an existing file, or
//! replacing only one this command wrote before (a report, an OpenMetrics textfile: a
//! slip of `-o results.db` never destroys the database); never replacing anything but a regular file (a device, FIFO, socket, directory or
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

/// What an existing file must hold for `-o` to replace it: `what` the command writes
/// ("truebench report"), and a `marker` found in the first 64 KiB of every such file.
/// An empty file is replaced too.
#[derive(Debug, Clone, Copy)]
pub struct Ours {
    pub what: &'static str,
    pub marker: &'static str,
}

/// Refuse an existing `path` that `replace` does not allow replacing (any, with None):
/// checked before the work that fills it, and again when it is written.
pub fn refuse_existing(path: &Path, replace: Option<Ours>) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    let Some(ours) = replace else {
        return Err(usage_hint(
            format!("{} already exists", path.display()),
            "choose another file name",
        ));
    };
    // A directory, device or link is refused below, with its kind.
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| {
        use std::io::Read;
        f.take(64 * 1024).read_to_end(&mut head)
    });
    let marker = ours.marker.as_bytes();
    if read.is_ok() && (head.is_empty() || head.windows(marker.len()).any(|w| w == marker)) {
        return Ok(());
    }
    Err(usage_hint(
        format!(
            "{} already exists and is not a {}: it is never replaced",
            path.display(),
            ours.what
        ),
        "choose another file name, or remove that file first",
    ))
}

/// Write text to `path` (see the module doc); `replace`: which existing file it may replace.
pub fn write_file(path: &Path, bytes: &[u8], replace: Option<Ours>) -> anyhow::Result<()> {
    // Text is written as standard output shows it (`crate::stdout::printable`): an escape
    // sequence or a bidirectional override in a document's text never reaches a file that
    // `cat` or a browser shows.
    let text = std::str::from_utf8(bytes).map(crate::stdout::printable);
    let bytes = match &text {
        Ok(t) => t.as_bytes(),
        Err(_) => bytes,
    };
    write_bytes(path, bytes, replace)
}

/// Write bytes to `path` as they are (an archive); `replace` as for `write_file`.
pub fn write_bytes(path: &Path, bytes: &[u8], replace: Option<Ours>) -> anyhow::Result<()> {
    refuse_existing(path, replace)?;
    let replace = replace.is_some();
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
