//! The work of the classic tests that run in truebench's own copy worker (Dhrystone,
//! Whetstone, file copies, shell scripts), one loop as UnixBench defines it, prepared in
//! its copy before the barrier and run until the window closes, and the embedded kernel
//! worker that runs the others. Every loop checks what its calls return, so a failing call
//! stops the test instead of counting as work.

use super::copies::{Window, Work};
use super::dhrystone::Dhrystone;
use super::whetstone;
use std::path::{Path, PathBuf};

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

pub struct Whet(whetstone::Results, whetstone::Modules);

impl Work for Whet {
    fn run(&mut self, w: &Window) -> Result<u64, String> {
        until_closed(w, || {
            let r = whetstone::unit(self.1);
            if r != self.0 {
                return Err(format!("a Whetstone unit gave other answers: {r:?}"));
            }
            Ok(1)
        })
    }
}

pub fn whetstone(modules: whetstone::Modules) -> Whet {
    Whet(whetstone::unit(modules), modules)
}

/// The kernel worker (src/bench/classic/kernel_worker.rs, built by build.rs): empty when
/// it could not be built for this target. The process-creation, execl, pipe-throughput,
/// context-switch and syscall loops run in it.
const KERNEL_WORKER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/execl-link"));
/// Its file name in a test's directory.
pub const KERNEL_WORKER_NAME: &str = "kernel-worker";

/// The size of the kernel worker in bytes, or why there is none.
pub fn kernel_worker_size() -> Result<u64, String> {
    if KERNEL_WORKER.is_empty() {
        return Err(format!(
            "the small kernel worker it runs in was not built for this target ({})",
            env!("TRUEBENCH_EXECL_LINK_ERROR")
        ));
    }
    Ok(KERNEL_WORKER.len() as u64)
}

/// Write the kernel worker into `dir` (mode 0755, created anew, never through a link), once
/// per measurement, before the copies start; they run (and the execl test execs) it from
/// there.
pub fn install_kernel_worker(dir: &Path) -> Result<PathBuf, String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    kernel_worker_size()?;
    let path = dir.join(KERNEL_WORKER_NAME);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o755)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(KERNEL_WORKER)
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
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
