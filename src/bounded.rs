//! Reads from outside truebench, bounded: every file, FIFO, device or command output that
//! a user names (an imported document, a metric file, a metric command) is read with a
//! size limit, without blocking on a FIFO that has no writer, with an optional time limit,
//! and giving up when Ctrl-C or SIGTERM was received. `/dev/zero`, an endless FIFO or a
//! command that never ends is an error that says so, not a hang or an out-of-memory.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why a bounded read stopped without its content.
#[derive(Debug)]
pub enum ReadError {
    Open(io::Error),
    Io(io::Error),
    /// More than this many bytes.
    TooLarge(usize),
    /// Nothing more came within this time.
    TimedOut(Duration),
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Open(e) | ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLarge(n) => write!(f, "it holds more than {} bytes", n),
            ReadError::TimedOut(d) => {
                write!(f, "it gave no end of data within {:.1} s", d.as_secs_f64())
            }
            ReadError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for ReadError {}

/// What a read does at its size limit: fail (the whole content was wanted), or stop and
/// keep what it has (only the beginning was wanted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Full {
    TooLarge,
    Prefix,
}

/// How long one wait for data lasts before the interrupt flag is looked at again.
const POLL_SLICE_MS: u16 = 100;

/// Read all of `r` (non-blocking) up to `max` bytes, waiting at most `timeout` overall.
fn drain<R: Read + AsFd>(
    r: &mut R,
    max: usize,
    timeout: Option<Duration>,
    full: Full,
) -> Result<Vec<u8>, ReadError> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => {
                if out.len() + n > max {
                    if full == Full::Prefix {
                        out.extend_from_slice(&buf[..max - out.len()]);
                        return Ok(out);
                    }
                    return Err(ReadError::TooLarge(max));
                }
                out.extend_from_slice(&buf[..n]);
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
        if crate::interrupt::requested() {
            return Err(ReadError::Interrupted);
        }
        if let Some(t) = timeout {
            if start.elapsed() >= t {
                return Err(ReadError::TimedOut(t));
            }
        }
        let mut fds = [PollFd::new(r.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(POLL_SLICE_MS)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(ReadError::Io(e.into())),
        }
    }
}

/// The content of the file at `path`, at most `max` bytes. A FIFO without a writer reads
/// as empty; one whose writer never stops, or a device like /dev/zero, is TooLarge or
/// TimedOut.
pub fn read_file(path: &Path, max: usize, timeout: Option<Duration>) -> Result<Vec<u8>, ReadError> {
    read_path(path, max, timeout, Full::TooLarge)
}

/// The first `max` bytes of the file at `path` (all of it when shorter), read like
/// [`read_file`]: /dev/zero or an endless FIFO gives its first `max` bytes.
pub fn read_prefix(
    path: &Path,
    max: usize,
    timeout: Option<Duration>,
) -> Result<Vec<u8>, ReadError> {
    read_path(path, max, timeout, Full::Prefix)
}

fn read_path(
    path: &Path,
    max: usize,
    timeout: Option<Duration>,
    full: Full,
) -> Result<Vec<u8>, ReadError> {
    let mut f: File = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(ReadError::Open)?;
    let meta = f.metadata().map_err(ReadError::Open)?;
    if meta.is_dir() {
        return Err(ReadError::Open(io::Error::other("it is a directory")));
    }
    if meta.file_type().is_file() {
        // A regular file never blocks; its size may still be enormous.
        let mut out = Vec::new();
        (&mut f)
            .take(max as u64 + 1)
            .read_to_end(&mut out)
            .map_err(ReadError::Io)?;
        if out.len() > max {
            if full == Full::Prefix {
                out.truncate(max);
                return Ok(out);
            }
            return Err(ReadError::TooLarge(max));
        }
        return Ok(out);
    }
    drain(&mut f, max, timeout, full)
}

/// A regular file's content, at most `max` bytes (a regular file never blocks; its size
/// may still be enormous, and procfs files say 0).
fn take_at_most(f: &mut File, max: usize) -> Result<Vec<u8>, ReadError> {
    let mut out = Vec::new();
    f.take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(ReadError::Io)?;
    if out.len() > max {
        return Err(ReadError::TooLarge(max));
    }
    Ok(out)
}

/// The content of the regular file at `path` (symbolic links followed), at most `max`
/// bytes: the reader of captured system trees (`probe --root`), where a file that should
/// be a kernel attribute may be a FIFO, a device or a socket. Opened non-blocking (a FIFO
/// never blocks the open), then refused unless it is a regular file; sysfs and procfs
/// files are regular files.
pub fn read_regular(path: &Path, max: usize) -> Result<Vec<u8>, ReadError> {
    let mut f: File = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(ReadError::Open)?;
    let kind = f.metadata().map_err(ReadError::Open)?.file_type();
    if !kind.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(ReadError::Open(io::Error::other(format!(
            "it is {what}, not a regular file"
        ))));
    }
    take_at_most(&mut f, max)
}

impl From<ReadError> for io::Error {
    fn from(e: ReadError) -> io::Error {
        match e {
            ReadError::Open(e) | ReadError::Io(e) => e,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// The standard output of `sh -c CMD`, at most `max` bytes within `timeout`; the command
/// is killed and reaped when it runs over either (or on Ctrl-C).
pub fn command_output(cmd: &str, max: usize, timeout: Duration) -> Result<Vec<u8>, ReadError> {
    use std::process::{Command, Stdio};
    let mut child = Command::new("sh")
        .args(["-c", cmd])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(ReadError::Open)?;
    let mut out = child.stdout.take().expect("piped stdout");
    let nb = nix::fcntl::fcntl(&out, nix::fcntl::FcntlArg::F_GETFL)
        .map(|fl| nix::fcntl::OFlag::from_bits_truncate(fl) | nix::fcntl::OFlag::O_NONBLOCK)
        .and_then(|fl| nix::fcntl::fcntl(&out, nix::fcntl::FcntlArg::F_SETFL(fl)));
    let got = match nb {
        Ok(_) => drain(&mut out, max, Some(timeout), Full::TooLarge),
        Err(e) => Err(ReadError::Io(e.into())),
    };
    drop(out);
    // The output is complete (or given up on): the command has had its time.
    let deadline = Instant::now() + Duration::from_millis(200);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if got.is_ok() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
    }
    got
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_devices_and_fifos_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("n");
        std::fs::write(&f, "42\n").unwrap();
        assert_eq!(read_file(&f, 16, None).unwrap(), b"42\n");
        assert!(matches!(
            read_file(&f, 2, None),
            Err(ReadError::TooLarge(2))
        ));
        assert!(matches!(
            read_file(Path::new("/dev/zero"), 1 << 16, None),
            Err(ReadError::TooLarge(_))
        ));
        let fifo = d.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let t = Instant::now();
        assert_eq!(
            read_file(&fifo, 16, Some(Duration::from_secs(5))).unwrap(),
            b""
        );
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "a FIFO without writer blocked"
        );
    }

    #[test]
    fn captured_tree_files_must_be_regular_and_small() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("online");
        std::fs::write(&f, "0-3\n").unwrap();
        assert_eq!(read_regular(&f, 64).unwrap(), b"0-3\n");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(read_regular(&link, 64).unwrap(), b"0-3\n");
        assert!(matches!(read_regular(&f, 2), Err(ReadError::TooLarge(2))));
        let zero = d.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read_regular(&zero, 64).unwrap_err().to_string();
        assert!(e.contains("a device"), "{e}");
        let fifo = d.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let t = Instant::now();
        let e = read_regular(&fifo, 64).unwrap_err().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(2));
        let e = read_regular(d.path(), 64).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
    }

    #[test]
    fn commands_are_bounded_in_size_and_time() {
        assert_eq!(
            command_output("echo 7", 64, Duration::from_secs(5)).unwrap(),
            b"7\n"
        );
        assert!(matches!(
            command_output("yes", 4096, Duration::from_secs(5)),
            Err(ReadError::TooLarge(4096))
        ));
        let t = Instant::now();
        assert!(matches!(
            command_output("sleep 30", 64, Duration::from_millis(300)),
            Err(ReadError::TimedOut(_))
        ));
        assert!(t.elapsed() < Duration::from_secs(3));
    }
}
