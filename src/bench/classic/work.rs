//! The work of each classic test, one loop as UnixBench defines it, prepared in its copy
//! before the barrier and run until the window closes. Every loop checks what its calls
//! return, so a failing call stops the test instead of counting as work.

use super::copies::{Window, Work};
use super::dhrystone::Dhrystone;
use super::whetstone;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};

/// The exit status of the last link (so a chain that ran something else is noticed).
pub const EXECL_DONE: i32 = 73;
/// Execs per chain: one chain is one batch of the execl test.
const EXECL_CHAIN: u64 = 10;

fn errno_text(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Run `batch` until the window closes; it returns the loops it completed.
fn until_closed(w: &Window, mut batch: impl FnMut() -> Result<u64, String>) -> Result<u64, String> {
    let mut n = 0;
    while !w.closed() {
        n += batch()?;
    }
    Ok(n)
}

pub struct Dhry(Dhrystone);

impl Work for Dhry {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        let n = until_closed(w, || {
            self.0.run(10_000);
            Ok(10_000)
        })?;
        match self.0.check().first() {
            Some(bad) => Err(format!("Dhrystone state is wrong after the run: {bad}")),
            None => Ok(n),
        }
    }
}

pub fn dhrystone() -> Dhry {
    Dhry(Dhrystone::new())
}

pub struct Whet(whetstone::Results);

impl Work for Whet {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        until_closed(w, || {
            let r = whetstone::unit();
            if r != self.0 {
                return Err(format!("a Whetstone unit gave other answers: {r:?}"));
            }
            Ok(1)
        })
    }
}

pub fn whetstone() -> Whet {
    Whet(whetstone::unit())
}

/// `close(dup(fd))`, `getpid` (the system call, not a cached value), `getuid`, `umask`:
/// five system calls a loop, on a pipe of the copy's own.
pub struct Syscalls {
    fd: RawFd,
}

impl Work for Syscalls {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        until_closed(w, || {
            for _ in 0..1000 {
                // SAFETY: plain system calls on our own descriptor.
                unsafe {
                    let d = libc::dup(self.fd);
                    if d < 0 || libc::close(d) != 0 {
                        return Err(errno_text("dup/close"));
                    }
                    libc::syscall(libc::SYS_getpid);
                    libc::getuid();
                    libc::umask(0o022);
                }
            }
            Ok(1000)
        })
    }
}

fn pipe() -> Result<[RawFd; 2], String> {
    let mut p = [0; 2];
    // SAFETY: pipe() fills the two descriptors.
    if unsafe { libc::pipe(p.as_mut_ptr()) } != 0 {
        return Err(errno_text("pipe"));
    }
    Ok(p)
}

pub fn syscalls() -> Result<Syscalls, String> {
    Ok(Syscalls { fd: pipe()?[0] })
}

/// Write 512 bytes into a pipe and read them back, in one process.
pub struct PipeThroughput {
    p: [RawFd; 2],
}

impl Work for PipeThroughput {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        let mut buf = [0u8; 512];
        until_closed(w, || {
            for _ in 0..1000 {
                // SAFETY: 512 bytes to and from our own pipe, from and into `buf`.
                unsafe {
                    if libc::write(self.p[1], buf.as_ptr().cast(), 512) != 512 {
                        return Err(errno_text("pipe write"));
                    }
                    if libc::read(self.p[0], buf.as_mut_ptr().cast(), 512) != 512 {
                        return Err(errno_text("pipe read"));
                    }
                }
            }
            Ok(1000)
        })
    }
}

pub fn pipe_throughput() -> Result<PipeThroughput, String> {
    Ok(PipeThroughput { p: pipe()? })
}

fn read_u64(fd: RawFd) -> Option<u64> {
    let mut b = [0u8; 8];
    // SAFETY: reading 8 bytes into `b`.
    (unsafe { libc::read(fd, b.as_mut_ptr().cast(), 8) } == 8).then(|| u64::from_ne_bytes(b))
}

fn write_u64(fd: RawFd, v: u64) -> bool {
    let b = v.to_ne_bytes();
    // SAFETY: writing the 8 bytes of `b`.
    unsafe { libc::write(fd, b.as_ptr().cast(), 8) == 8 }
}

/// A counter sent to a partner process through one pipe and checked when it comes back
/// through another: one loop is one round trip (two context switches when both share a
/// CPU). Where the two run is the scheduler's choice, as in UnixBench, and is observed.
pub struct ContextSwitch {
    to: RawFd,
    from: RawFd,
    partner: i32,
    i: u64,
}

impl Work for ContextSwitch {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        w.set_partner(self.partner);
        let out = until_closed(w, || {
            for _ in 0..100 {
                self.i += 1;
                if !write_u64(self.to, self.i) {
                    return Err(errno_text("write to the partner"));
                }
                match read_u64(self.from) {
                    Some(v) if v == self.i => {}
                    Some(v) => return Err(format!("partner sent {v}, expected {}", self.i)),
                    None => return Err(errno_text("read from the partner")),
                }
            }
            Ok(100)
        });
        // SAFETY: closing our write end ends the partner's loop; then reap it.
        unsafe {
            libc::close(self.to);
            let mut status = 0;
            libc::waitpid(self.partner, &mut status, 0);
        }
        out
    }
}

/// A pair: this copy and a forked partner that echoes; the partner stays where the copy is
/// pinned, or pins itself to `partner_cpu`.
pub fn context_switch(partner_cpu: Option<u32>) -> Result<ContextSwitch, String> {
    let a = pipe()?;
    let b = pipe()?;
    // SAFETY: the partner only echoes numbers and leaves with _exit.
    match unsafe { libc::fork() } {
        -1 => Err(errno_text("fork of the partner")),
        0 => unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let pinned = partner_cpu.is_none_or(crate::placement::pin_raw);
            libc::close(a[1]);
            libc::close(b[0]);
            // The handshake: the copy waits for it, so the partner is where it belongs
            // before the barrier (1) or the copy learns that its pin failed (0).
            if !write_u64(b[1], pinned as u64) {
                libc::_exit(1)
            }
            while let Some(v) = read_u64(a[0]) {
                if !write_u64(b[1], v) {
                    break;
                }
            }
            libc::_exit(0)
        },
        pid => {
            // SAFETY: the partner's ends are not ours.
            unsafe {
                libc::close(a[0]);
                libc::close(b[1]);
            }
            match read_u64(b[0]) {
                Some(1) => {}
                Some(_) => {
                    return Err(format!(
                        "the partner could not be pinned to CPU {partner_cpu:?}"
                    ))
                }
                None => return Err(errno_text("the partner's handshake")),
            }
            Ok(ContextSwitch {
                to: a[1],
                from: b[0],
                partner: pid,
                i: 0,
            })
        }
    }
}

/// fork; the child exits at once; the parent waits and checks its status.
pub struct ProcessCreation;

fn wait_ok(pid: i32, want: i32) -> Result<(), String> {
    let mut status = 0;
    // SAFETY: reaping our own child.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Err(errno_text("waitpid"));
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != want {
        return Err(format!(
            "child ended with status {status:#x}, expected exit {want}"
        ));
    }
    Ok(())
}

impl Work for ProcessCreation {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        until_closed(w, || {
            for _ in 0..10 {
                // SAFETY: the child exits at once.
                match unsafe { libc::fork() } {
                    -1 => return Err(errno_text("fork")),
                    0 => unsafe { libc::_exit(0) },
                    pid => wait_ok(pid, 0)?,
                }
            }
            Ok(10)
        })
    }
}

/// The execl link program (src/bench/classic/execl_link.rs, built by build.rs): empty when
/// it could not be built for this target.
const EXECL_LINK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/execl-link"));
/// Its file name in a test's directory.
pub const EXECL_LINK_NAME: &str = "execl-link";

/// The size of the exec'd program in bytes, or why there is none.
pub fn execl_link_size() -> Result<u64, String> {
    if EXECL_LINK.is_empty() {
        return Err(format!(
            "the small program it execs was not built for this target ({})",
            env!("TRUEBENCH_EXECL_LINK_ERROR")
        ));
    }
    Ok(EXECL_LINK.len() as u64)
}

/// Write the execl link into `dir` (mode 0755, created anew, never through a link), once per
/// measurement, before the copies start; they exec it from there.
pub fn install_execl_link(dir: &Path) -> Result<PathBuf, String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    execl_link_size()?;
    let path = dir.join(EXECL_LINK_NAME);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(EXECL_LINK)
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Chains of execs of the execl link (EXECL_CHAIN links each, one fork per chain).
pub struct Execl {
    exe: std::ffi::CString,
    chain: std::ffi::CString,
}

impl Execl {
    fn chain(&self) -> Result<(), String> {
        let argv = [self.exe.as_ptr(), self.chain.as_ptr(), std::ptr::null()];
        // SAFETY: the child execs at once (or exits).
        match unsafe { libc::fork() } {
            -1 => Err(errno_text("fork")),
            0 => unsafe {
                libc::execv(self.exe.as_ptr(), argv.as_ptr());
                libc::_exit(127)
            },
            pid => wait_ok(pid, EXECL_DONE),
        }
    }
}

impl Work for Execl {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        until_closed(w, || {
            self.chain()?;
            Ok(EXECL_CHAIN)
        })
    }
}

/// Exec chains of the link installed in `dir` (install_execl_link).
pub fn execl(dir: &Path) -> Result<Execl, String> {
    use std::os::unix::ffi::OsStrExt;
    let link = dir.join(EXECL_LINK_NAME);
    let c = |b: &[u8]| std::ffi::CString::new(b).map_err(|e| e.to_string());
    let e = Execl {
        exe: c(link.as_os_str().as_bytes())?,
        chain: c(EXECL_CHAIN.to_string().as_bytes())?,
    };
    // One chain before the barrier proves the link runs here (a noexec mount would not).
    e.chain()
        .map_err(|why| format!("{} does not run as an exec chain: {why}", link.display()))?;
    Ok(e)
}

/// Copy a file into another with `buf`-byte reads and writes, rewinding both at the end of
/// the source (a file of `file_kb` KiB that stays in the page cache). With `fsync`, the
/// copy is flushed to the device at each rewind. The count is bytes copied.
pub struct FileCopy {
    src: std::fs::File,
    dst: std::fs::File,
    buf: Vec<u8>,
    fsync: bool,
}

impl Work for FileCopy {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        use std::io::{Read, Seek, SeekFrom, Write};
        until_closed(w, || {
            let mut bytes = 0u64;
            for _ in 0..64 {
                let n = self
                    .src
                    .read(&mut self.buf)
                    .map_err(|e| format!("read: {e}"))?;
                if n == 0 {
                    if self.fsync {
                        self.dst
                            .sync_data()
                            .map_err(|e| format!("fdatasync: {e}"))?;
                    }
                    self.src
                        .seek(SeekFrom::Start(0))
                        .map_err(|e| e.to_string())?;
                    self.dst
                        .seek(SeekFrom::Start(0))
                        .map_err(|e| e.to_string())?;
                    continue;
                }
                self.dst
                    .write_all(&self.buf[..n])
                    .map_err(|e| format!("write: {e}"))?;
                bytes += n as u64;
            }
            Ok(bytes)
        })
    }
}

pub fn file_copy(dir: &Path, buf: usize, file_kb: usize, fsync: bool) -> Result<FileCopy, String> {
    use std::io::Write;
    let open = |p: PathBuf, create: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(create)
            .open(&p)
            .map_err(|e| format!("{}: {e}", p.display()))
    };
    let mut src = open(dir.join("copy.src"), true)?;
    let block: Vec<u8> = (0..1024u32).map(|i| (i % 251) as u8).collect();
    for _ in 0..file_kb {
        src.write_all(&block)
            .map_err(|e| format!("writing the source file: {e}"))?;
    }
    src.sync_all().map_err(|e| e.to_string())?;
    let src = open(dir.join("copy.src"), false)?;
    let dst = open(dir.join("copy.dst"), true)?;
    Ok(FileCopy {
        src,
        dst,
        buf: vec![0; buf],
        fsync,
    })
}

/// The programs the shell tests need.
pub const SHELL_TOOLS: &[&str] = &["sh", "sort", "od", "grep", "tee", "wc"];

/// The first of SHELL_TOOLS not found on PATH (or /bin/sh missing).
pub fn missing_shell_tool() -> Option<&'static str> {
    if !Path::new("/bin/sh").exists() {
        return Some("/bin/sh");
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    SHELL_TOOLS
        .iter()
        .copied()
        .find(|t| !std::env::split_paths(&path).any(|d| d.join(t).is_file()))
}

/// One unit of the shell test: sort a text, sort its octal dump numerically, grep a word
/// through tee into wc, clean up.
const UNIT_SCRIPT: &str = "sort <\"$1\" >sorted.$$\nod sorted.$$ | sort -n -k 1 >od.$$\ngrep the sorted.$$ | tee grep.$$ | wc >wc.$$\nrm -f sorted.$$ od.$$ grep.$$ wc.$$\n";
/// One loop: start $1 units in the background and wait for all of them.
const LOOP_SCRIPT: &str =
    "i=0\nwhile [ $i -lt \"$1\" ]; do /bin/sh ./unit.sh input.txt & i=$((i+1)); done\nwait\n";

/// About 8.5 KB of text of words, with "the" among them, the same every time.
pub fn shell_input() -> String {
    const WORDS: &[&str] = &[
        "the",
        "system",
        "benchmark",
        "measures",
        "a",
        "machine",
        "and",
        "its",
        "kernel",
        "pipe",
        "process",
        "cache",
        "memory",
        "of",
        "clock",
        "where",
        "tasks",
        "run",
    ];
    let mut s = String::new();
    let mut x: u32 = 12345;
    let mut line = 0;
    while s.len() < 8500 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        s.push_str(WORDS[(x >> 16) as usize % WORDS.len()]);
        line += 1;
        s.push(if line % 9 == 0 { '\n' } else { ' ' });
    }
    s.push('\n');
    s
}

/// `/bin/sh loop.sh K` in the copy's own directory, K units at once; one loop each.
pub struct Shell {
    dir: PathBuf,
    concurrent: usize,
}

impl Work for Shell {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        until_closed(w, || {
            let st = std::process::Command::new("/bin/sh")
                .arg("loop.sh")
                .arg(self.concurrent.to_string())
                .current_dir(&self.dir)
                .env("LC_ALL", "C")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("/bin/sh: {e}"))?;
            if !st.success() {
                return Err(format!("loop.sh ended with {st}"));
            }
            Ok(1)
        })
    }
}

pub fn shell(dir: &Path, concurrent: usize) -> Result<Shell, String> {
    let w = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    w("input.txt", &shell_input())?;
    w("unit.sh", UNIT_SCRIPT)?;
    w("loop.sh", LOOP_SCRIPT)?;
    Ok(Shell {
        dir: dir.to_path_buf(),
        concurrent,
    })
}
