//! Files truebench creates or rewrites, possibly as root, in places other users can write
//! (the run lock in /tmp, the clocksource state file, a spilled run document): opened
//! without following symbolic links (`O_NOFOLLOW`), created with `O_EXCL` so an existing
//! name is never taken over by accident, and accepted only when the file found is a
//! regular file with one link, owned by the caller or by root. A planted link or a file
//! hard-linked to somewhere else is refused, never written through.

use nix::sys::stat::fstat;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Why a file was refused or could not be opened; `Display` is one sentence naming it.
#[derive(Debug)]
pub enum Refused {
    /// The name is a symbolic link (never followed).
    Symlink,
    /// A directory, a device, a FIFO, a socket.
    NotRegular(&'static str),
    /// A regular file with other hard links: writing it would write them too.
    HardLinked(libc::nlink_t),
    /// Owned by another user than the caller (and not by root).
    ForeignOwner(u32),
    /// The open itself failed.
    Io(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Symlink => write!(f, "it is a symbolic link, which truebench never follows"),
            Refused::NotRegular(kind) => write!(f, "it is a {kind}, not a regular file"),
            Refused::HardLinked(n) => write!(f, "it is a regular file with {n} hard links"),
            Refused::ForeignOwner(uid) => write!(f, "it belongs to another user (uid {uid})"),
            Refused::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Refused {}

/// What a file of this `st_mode` is, in words; None for a regular file.
pub fn kind(mode: u32) -> Option<&'static str> {
    match mode & libc::S_IFMT {
        libc::S_IFREG => None,
        libc::S_IFDIR => Some("directory"),
        libc::S_IFCHR => Some("character device"),
        libc::S_IFBLK => Some("block device"),
        libc::S_IFIFO => Some("FIFO"),
        libc::S_IFSOCK => Some("socket"),
        libc::S_IFLNK => Some("symbolic link"),
        _ => Some("special file"),
    }
}

/// Check an open file: regular, one link, owned by the caller or root (for root: by root).
fn vet(file: &File) -> Result<(), Refused> {
    let st = fstat(file).map_err(|e| Refused::Io(e.into()))?;
    if let Some(k) = kind(st.st_mode) {
        return Err(Refused::NotRegular(k));
    }
    if st.st_nlink > 1 {
        return Err(Refused::HardLinked(st.st_nlink));
    }
    let me = nix::unistd::geteuid().as_raw();
    if st.st_uid != 0 && st.st_uid != me {
        return Err(Refused::ForeignOwner(st.st_uid));
    }
    Ok(())
}

fn open_error(e: io::Error) -> Refused {
    // O_NOFOLLOW on a symlink fails with ELOOP.
    if e.raw_os_error() == Some(libc::ELOOP) {
        Refused::Symlink
    } else {
        Refused::Io(e)
    }
}

/// Create a new file (it must not exist), never through a link, with `mode` exactly
/// (whatever the umask). For files written once: a spilled document, a state file.
pub fn create_new(path: &Path, mode: u32) -> Result<File, Refused> {
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(mode)
        .open(path)
        .map_err(open_error)?;
    f.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(Refused::Io)?;
    Ok(f)
}

/// How an existing or new file was opened.
pub struct Opened {
    pub file: File,
    /// Created by this call.
    pub created: bool,
    /// Opened read-only: the caller may not write it (a root-owned 0644 file, for a user).
    pub read_only: bool,
}

/// Open `path` for reading and writing, creating it with `mode` when absent; never through
/// a link, and only a regular single-link file of the caller or root. When the caller may
/// not write an existing file it is opened read-only (an advisory lock still works on it).
pub fn open_or_create(path: &Path, mode: u32) -> Result<Opened, Refused> {
    for _ in 0..3 {
        match create_new(path, mode) {
            Ok(file) => {
                return Ok(Opened {
                    file,
                    created: true,
                    read_only: false,
                })
            }
            Err(Refused::Io(e)) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let open = |write: bool| {
            OpenOptions::new()
                .read(true)
                .write(write)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
                .open(path)
        };
        let (file, read_only) = match open(true) {
            Ok(f) => (f, false),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                (open(false).map_err(open_error)?, true)
            }
            // Removed between the two calls: create it again.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(open_error(e)),
        };
        vet(&file)?;
        return Ok(Opened {
            file,
            created: false,
            read_only,
        });
    }
    Err(Refused::Io(io::Error::other(
        "it keeps being removed and created by someone else",
    )))
}

/// Open an existing file for reading, never through a link, only when the caller or root
/// owns it (so for root, only root's own): for state files whose content truebench acts
/// on. None when it does not exist.
pub fn open_trusted(path: &Path) -> Result<Option<File>, Refused> {
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => {
            vet(&f)?;
            Ok(Some(f))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(open_error(e)),
    }
}

/// The permission bits and owner of an existing file, to give a replacement the same.
pub fn mode_and_owner(path: &Path) -> Option<(u32, u32, u32)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    m.file_type()
        .is_file()
        .then(|| (m.mode() & 0o7777, m.uid(), m.gid()))
}

/// Make a directory (and its parents) with `mode` for the new ones; an existing one must be
/// a directory, not a link to one.
pub fn private_dir(path: &Path, mode: u32) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_dir() => Ok(()),
        Ok(_) => Err(io::Error::other(format!(
            "{} exists and is not a directory",
            path.display()
        ))),
        Err(_) => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(mode)
            .create(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_special_files_are_refused_and_regular_files_opened() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(
            open_or_create(&link, 0o644),
            Err(Refused::Symlink)
        ));
        assert!(matches!(create_new(&link, 0o644), Err(Refused::Io(_))));
        let hard = d.path().join("hard");
        std::fs::hard_link(&target, &hard).unwrap();
        assert!(matches!(
            open_or_create(&hard, 0o644),
            Err(Refused::HardLinked(2))
        ));
        assert!(matches!(
            open_or_create(Path::new("/dev/null"), 0o644),
            Err(Refused::NotRegular("character device"))
        ));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        let fresh = d.path().join("fresh");
        let o = open_or_create(&fresh, 0o666).unwrap();
        assert!(o.created);
        assert_eq!(
            std::fs::metadata(&fresh).unwrap().mode() & 0o777,
            0o666,
            "mode regardless of umask"
        );
        let again = open_or_create(&fresh, 0o666).unwrap();
        assert!(!again.created && !again.read_only);
    }
}
