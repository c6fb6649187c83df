//! Copies of a classic test: how many make "N" (the CPUs this process may really use), and
//! one pass of them: each copy is a forked process that prepares its work, waits at a
//! barrier in shared memory, and then loops until the common window closes, counting its
//! iterations and timing its own span on CLOCK_MONOTONIC (two clock reads per copy per
//! pass). Unlike UnixBench, copies start together, share the window, and are kept apart
//! in the result; with `--pin` each is pinned to its own CPU.

use super::slot::{shared_len, slot_offset, Header, Slot, ERROR_BYTES};
use crate::measure::clocks::now_ns;
use crate::probe::CpusDoc;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A copy count asked for with `--copies`: a number of copies, or a multiple of the
/// full-width count N (`2x`: two copies per usable CPU, as byte-unixbench users run to load
/// a many-core machine fully).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyCount {
    Exact(usize),
    PerCpu(usize),
}

/// At most this many copies per usable CPU, and this many in all.
const MAX_PER_CPU: usize = 64;
const MAX_COPIES: usize = 65_536;

impl std::str::FromStr for CopyCount {
    type Err = String;

    fn from_str(s: &str) -> Result<CopyCount, String> {
        let (digits, per_cpu) = match s.strip_suffix(['x', 'X']) {
            Some(d) => (d, true),
            None => (s, false),
        };
        let n: usize = digits.parse().map_err(|_| {
            format!("'{s}' is neither a copy count (4) nor a multiple of the CPUs (2x)")
        })?;
        match (per_cpu, n) {
            (_, 0) => Err("a copy count is at least 1".into()),
            (true, n) if n > MAX_PER_CPU => Err(format!("at most {MAX_PER_CPU}x the CPUs")),
            (false, n) if n > MAX_COPIES => Err(format!("at most {MAX_COPIES} copies")),
            (true, n) => Ok(CopyCount::PerCpu(n)),
            (false, n) => Ok(CopyCount::Exact(n)),
        }
    }
}

impl std::fmt::Display for CopyCount {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            CopyCount::Exact(c) => write!(f, "{c}"),
            CopyCount::PerCpu(k) => write!(f, "{k}x"),
        }
    }
}

impl CopyCount {
    /// The number of copies on a machine whose full-width count is `n`.
    pub fn resolve(self, n: usize) -> usize {
        match self {
            CopyCount::Exact(c) => c,
            CopyCount::PerCpu(k) => k * n.max(1),
        }
    }
}

/// The full-width copy count and the words that say where it comes from: the usable CPUs
/// (affinity ∩ cpuset ∩ online), narrowed by a CPU quota rounded up (so the copies can use
/// all of it), never below 1.
pub fn full_width(cpus: &CpusDoc) -> (usize, String) {
    let width = cpus.usable_width.max(1);
    match cpus.cgroup_quota {
        Some(q) if q.ceil() < width as f64 => {
            let n = (q.ceil() as usize).max(1);
            (
                n,
                format!("{n} copies: the cgroup quota of {q:.2} CPUs rounded up, narrower than the {width} usable CPUs"),
            )
        }
        _ => (
            width,
            format!(
                "{width} copies: the usable CPUs ({}){}",
                if cpus.cgroup_cpuset.is_some() {
                    "affinity ∩ cpuset ∩ online"
                } else {
                    "affinity ∩ online"
                },
                match cpus.cgroup_quota {
                    Some(q) => format!("; the quota of {q:.2} CPUs is wider"),
                    None => "; no quota".into(),
                }
            ),
        ),
    }
}

/// The shared page(s): a header and one slot per copy.
struct Shared {
    ptr: *mut u8,
    len: usize,
    copies: usize,
}

impl Shared {
    /// A fresh memory file (zeroed; all-zero bytes are valid atomics and arrays) mapped
    /// shared; its descriptor survives exec, so an exec'd copy maps the same pages.
    fn new(copies: usize) -> anyhow::Result<(Shared, std::os::fd::OwnedFd)> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        // SAFETY: a plain memfd_create with a NUL-terminated name; the result is checked.
        let fd = unsafe { libc::memfd_create(c"truebench-classic".as_ptr(), 0) };
        if fd < 0 {
            anyhow::bail!("memfd_create: {}", std::io::Error::last_os_error());
        }
        // SAFETY: fd is ours and open.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sizing our own memory file.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), shared_len(copies) as libc::off_t) } != 0 {
            anyhow::bail!("ftruncate: {}", std::io::Error::last_os_error());
        }
        let shared = Self::map(fd.as_raw_fd(), copies)
            .map_err(|e| anyhow::anyhow!("mmap of the copies' shared page: {e}"))?;
        Ok((shared, fd))
    }

    /// Map the memory file `fd` made by `new` for `copies` copies.
    fn map(fd: i32, copies: usize) -> Result<Shared, String> {
        let len = shared_len(copies);
        // SAFETY: mapping `len` bytes of a memory file at least that long.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(errno_text("mmap"));
        }
        Ok(Shared {
            ptr: ptr as *mut u8,
            len,
            copies,
        })
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a Header and lives as long as self.
        unsafe { &*(self.ptr as *const Header) }
    }

    fn slot(&self, i: usize) -> &Slot {
        assert!(i < self.copies);
        // SAFETY: slot i lies inside the mapping (len covers `copies` slots after the header),
        // aligned: the mapping is page-aligned and Header's size (64) is a multiple of
        // Slot's alignment, as is Slot's size.
        unsafe { &*(self.ptr.add(slot_offset(i)) as *const Slot) }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in new().
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// What a copy sees of the pass: the stop flag.
pub struct Window<'a> {
    stop: &'a AtomicU32,
}

impl Window<'_> {
    pub fn closed(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }
}

/// A test's work, made ready in the copy before the barrier.
pub trait Work {
    /// Do iterations until the window closes (checking it at least every few ms); return
    /// how many were completed. The last one may end after the window: it is counted, and
    /// the copy's span runs to its end.
    fn run(&mut self, w: &Window) -> Result<u64, String>;
}

/// One copy's outcome in a pass.
#[derive(Debug, Clone)]
pub struct CopyOutcome {
    pub count: u64,
    pub span_ns: u64,
    /// CPUs the copy (and its partner, or the children it forked) were seen on during the
    /// window.
    pub cpus_seen: Vec<u32>,
    pub partner_cpus_seen: Vec<u32>,
    /// Of `observations`: samples in which copy and partner were on the same CPU
    /// (context switch), or forks whose child started on the CPU of the fork (process
    /// creation, as the copy itself counted them).
    pub colocated: usize,
    pub observations: usize,
}

impl CopyOutcome {
    pub fn rate_per_s(&self) -> f64 {
        self.count as f64 / (self.span_ns as f64 / 1e9)
    }
}

/// The CPU a task last ran on (field 39 of /proc/PID/stat).
fn cpu_of(pid: i32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    crate::observe::process::last_cpu(&s)
}

fn record_failure(slot: &Slot, why: &str) {
    let mut buf = [0u8; ERROR_BYTES];
    let b = why.as_bytes();
    let n = b.len().min(buf.len());
    buf[..n].copy_from_slice(&b[..n]);
    // SAFETY: the slot's error array is plain bytes in our shared mapping; only this copy
    // writes its own slot.
    unsafe {
        std::ptr::copy_nonoverlapping(buf.as_ptr(), slot.error.as_ptr() as *mut u8, n);
    }
    slot.failed.store(1, Ordering::Release);
}

/// How a copy gets its work: built in the forked child (tests), or by exec'ing a fresh
/// worker (`exe __classic-copy FD INDEX COPIES PIN ARGS...`), so each copy is a small new
/// process, as UnixBench's are, not a fork of the whole harness (a fork's cost grows with
/// the mappings of the process that forks). The worker is truebench itself (the CPU and
/// file tests) or the small kernel worker (kernel_worker.rs: the tests whose loops are
/// system calls, forks and execs); both speak the protocol of slot.rs.
pub enum Launch<'a> {
    InProcess(&'a MakeWork<'a>),
    Exec { exe: &'a Path, args: Vec<String> },
}

/// Builds copy i's work.
pub type MakeWork<'a> = dyn Fn(usize) -> Result<Box<dyn Work>, String> + 'a;
/// Builds copy i's work from the worker's arguments (after FD INDEX COPIES PIN).
pub type MakeNamedWork = dyn Fn(&[String], usize) -> Result<Box<dyn Work>, String>;

/// The argument that makes truebench (or the kernel worker) a copy worker.
pub const WORKER_ARG: &str = "__classic-copy";

fn errno_text(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// A copy's life after fork (or after exec, in the worker): pin, prepare, barrier, run
/// until the window closes, report; returns the exit code.
fn copy_body(shared: &Shared, i: usize, pin: Option<u32>, make: &MakeWork) -> i32 {
    let slot = shared.slot(i);
    slot.pid.store(std::process::id() as i32, Ordering::Relaxed);
    if let Some(cpu) = pin {
        crate::placement::pin_raw(cpu);
    }
    let h = shared.header();
    match make(i) {
        Ok(mut work) => {
            h.ready.fetch_add(1, Ordering::AcqRel);
            while h.go.load(Ordering::Acquire) == 0 {
                std::hint::spin_loop();
                if h.stop.load(Ordering::Relaxed) != 0 {
                    return 0;
                }
            }
            let w = Window { stop: &h.stop };
            let t0 = now_ns();
            match work.run(&w) {
                Ok(n) => {
                    let t1 = now_ns();
                    slot.count.store(n, Ordering::Relaxed);
                    slot.span_ns.store((t1 - t0).max(1), Ordering::Release);
                    0
                }
                Err(e) => {
                    record_failure(slot, &e);
                    1
                }
            }
        }
        Err(e) => {
            record_failure(slot, &e);
            h.ready.fetch_add(1, Ordering::AcqRel);
            1
        }
    }
}

/// The worker's side of `Launch::Exec`: `args` are FD INDEX COPIES PIN, then what `make`
/// reads. Exits with the copy's code.
pub fn worker(args: &[String], make: &MakeNamedWork) -> ! {
    let num = |k: usize| args.get(k).and_then(|v| v.parse::<i64>().ok());
    let (Some(fd), Some(i), Some(copies), Some(pin)) = (num(0), num(1), num(2), num(3)) else {
        eprintln!("{WORKER_ARG}: FD INDEX COPIES PIN expected");
        std::process::exit(2);
    };
    let shared = match Shared::map(fd as i32, copies as usize) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{WORKER_ARG}: {e}");
            std::process::exit(2);
        }
    };
    let rest = &args[4..];
    let code = copy_body(
        &shared,
        i as usize,
        (pin >= 0).then_some(pin as u32),
        &|i| make(rest, i),
    );
    std::process::exit(code)
}

/// Run one pass: `copies` copies (forked, or forked and exec'd), released together,
/// stopped after `window`. `pins` gives each copy its CPU (round robin). Err when a copy
/// failed (with its reason) or on interrupt (`Interrupted`).
pub fn pass(
    copies: usize,
    pins: Option<&[u32]>,
    window: Duration,
    launch: &Launch,
) -> anyhow::Result<Vec<CopyOutcome>> {
    use std::os::fd::AsRawFd;
    let (shared, fd) = Shared::new(copies)?;
    let pin_of = |i: usize| pins.filter(|p| !p.is_empty()).map(|p| p[i % p.len()]);
    // Everything exec needs is built before fork: the child only forks and execs.
    let argvs: Vec<Vec<std::ffi::CString>> = match launch {
        Launch::InProcess(_) => Vec::new(),
        Launch::Exec { exe, args } => {
            use std::os::unix::ffi::OsStrExt;
            let c = |s: &[u8]| std::ffi::CString::new(s).map_err(anyhow::Error::from);
            (0..copies)
                .map(|i| {
                    let mut v = vec![c(exe.as_os_str().as_bytes())?, c(WORKER_ARG.as_bytes())?];
                    for a in [
                        fd.as_raw_fd().to_string(),
                        i.to_string(),
                        copies.to_string(),
                        pin_of(i).map(|c| c as i64).unwrap_or(-1).to_string(),
                    ]
                    .iter()
                    .chain(args)
                    {
                        v.push(c(a.as_bytes())?);
                    }
                    Ok(v)
                })
                .collect::<anyhow::Result<_>>()?
        }
    };
    let mut pids = Vec::with_capacity(copies);
    for i in 0..copies {
        // SAFETY: the child only runs the copy (or execs) and leaves with _exit; it never
        // returns into the caller's stack frames.
        match unsafe { libc::fork() } {
            -1 => {
                stop_all(&shared, &pids);
                anyhow::bail!(
                    "fork of copy {i} failed: {}",
                    std::io::Error::last_os_error()
                );
            }
            0 => {
                let code = match launch {
                    Launch::InProcess(make) => copy_body(&shared, i, pin_of(i), *make),
                    Launch::Exec { .. } => {
                        let argv: Vec<*const libc::c_char> = argvs
                            .get(i)
                            .into_iter()
                            .flatten()
                            .map(|a| a.as_ptr())
                            .chain(std::iter::once(std::ptr::null()))
                            .collect();
                        // SAFETY: NUL-terminated strings and a null-terminated argv built
                        // before fork. A worker just written into the test's directory can
                        // be busy for an instant (ETXTBSY: a process forked meanwhile by
                        // another thread still holds its write descriptor until it execs):
                        // try again for up to 100 ms.
                        for _ in 0..100 {
                            unsafe { libc::execv(argv[0], argv.as_ptr()) };
                            if std::io::Error::last_os_error().raw_os_error() != Some(libc::ETXTBSY)
                            {
                                break;
                            }
                            unsafe { libc::usleep(1000) };
                        }
                        record_failure(shared.slot(i), &errno_text("exec of the copy worker"));
                        shared.header().ready.fetch_add(1, Ordering::AcqRel);
                        127
                    }
                };
                // SAFETY: leaving the forked child without running the parent's destructors.
                unsafe { libc::_exit(code) };
            }
            pid => pids.push(pid),
        }
    }
    let h = shared.header();
    // The barrier: every copy has prepared its work.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while (h.ready.load(Ordering::Acquire) as usize) < copies {
        if crate::interrupt::requested() || std::time::Instant::now() > deadline {
            stop_all(&shared, &pids);
            if crate::interrupt::requested() {
                return Err(crate::error::Interrupted.into());
            }
            anyhow::bail!("the copies did not get ready within 60 s");
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    if let Some(i) = (0..copies).find(|i| shared.slot(*i).failed.load(Ordering::Acquire) != 0) {
        let why = error_text(shared.slot(i));
        stop_all(&shared, &pids);
        anyhow::bail!("copy {i} could not start: {why}");
    }
    h.go.store(1, Ordering::Release);
    // Watch where the copies run while the window is open.
    let end = std::time::Instant::now() + window;
    let mut seen: Vec<(Vec<u32>, Vec<u32>, usize, usize)> = vec![Default::default(); copies];
    while std::time::Instant::now() < end {
        if crate::interrupt::requested() {
            break;
        }
        for (i, s) in seen.iter_mut().enumerate() {
            let slot = shared.slot(i);
            let a = cpu_of(slot.pid.load(Ordering::Relaxed));
            let partner = slot.partner.load(Ordering::Relaxed);
            let b = (partner > 0).then(|| cpu_of(partner)).flatten();
            if let Some(a) = a {
                if !s.0.contains(&a) {
                    s.0.push(a);
                }
            }
            if let Some(b) = b {
                if !s.1.contains(&b) {
                    s.1.push(b);
                }
                s.3 += 1;
                if a == Some(b) {
                    s.2 += 1;
                }
            }
        }
        std::thread::sleep(
            end.saturating_duration_since(std::time::Instant::now())
                .min(Duration::from_millis(10)),
        );
    }
    h.stop.store(1, Ordering::Release);
    for pid in &pids {
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(*pid, &mut status, 0) };
    }
    if crate::interrupt::requested() {
        return Err(crate::error::Interrupted.into());
    }
    let mut out = Vec::with_capacity(copies);
    for (i, (mut cpus, mut partner_cpus, colocated, observations)) in seen.into_iter().enumerate() {
        let slot = shared.slot(i);
        if slot.failed.load(Ordering::Acquire) != 0 {
            anyhow::bail!("copy {i} failed: {}", error_text(slot));
        }
        let span_ns = slot.span_ns.load(Ordering::Acquire);
        if span_ns == 0 {
            anyhow::bail!("copy {i} ended without a result (killed?)");
        }
        // What the copy saw of its own children (process creation).
        for (w, bits) in slot.child_cpus.iter().enumerate() {
            let bits = bits.load(Ordering::Relaxed);
            for b in (0..64).filter(|b| bits & (1 << b) != 0) {
                let cpu = (w * 64 + b) as u32;
                if !partner_cpus.contains(&cpu) {
                    partner_cpus.push(cpu);
                }
            }
        }
        cpus.sort_unstable();
        partner_cpus.sort_unstable();
        out.push(CopyOutcome {
            count: slot.count.load(Ordering::Relaxed),
            span_ns,
            cpus_seen: cpus,
            partner_cpus_seen: partner_cpus,
            colocated: colocated + slot.forks_colocated.load(Ordering::Relaxed) as usize,
            observations: observations + slot.forks_seen.load(Ordering::Relaxed) as usize,
        });
    }
    Ok(out)
}

fn error_text(slot: &Slot) -> String {
    let end = slot
        .error
        .iter()
        .position(|b| *b == 0)
        .unwrap_or(slot.error.len());
    String::from_utf8_lossy(&slot.error[..end]).into_owned()
}

/// Release and reap copies already started (a failed start or an interrupt).
fn stop_all(shared: &Shared, pids: &[i32]) {
    shared.header().stop.store(1, Ordering::Release);
    for pid in pids {
        let mut status = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(*pid, &mut status, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n_of(fixture: &str) -> (usize, String) {
        full_width(&crate::probe::fixture(fixture).cpus)
    }

    #[test]
    fn n_comes_from_usable_cpus_and_quota() {
        // 1.5 CPUs of quota under a cpuset of 6: two copies use all of the quota.
        let (n, why) = n_of("container-quota");
        assert_eq!(n, 2, "{why}");
        assert!(why.contains("quota of 1.50"), "{why}");
        // The 256-CPU machine without limits: all of them.
        assert_eq!(n_of("epyc-256").0, 256);
        // 6 of 8 CPUs online, a parent v1 quota of 4 CPUs binding the child: 4 copies, not 8.
        let (n, why) = n_of("offline-cpus");
        assert_eq!(n, 4, "{why}");
        // This VM: 2 CPUs, no quota.
        let (n, why) = n_of("this-vm");
        assert_eq!(n, 2);
        assert!(why.contains("no quota"), "{why}");
        // A cpuset narrower than the machine, with a quota wider than it: the cpuset decides.
        let mut cpus = crate::probe::fixture("epyc-256").cpus;
        cpus.cgroup_cpuset = Some((0..12).collect());
        cpus.usable_width = 12;
        cpus.cgroup_quota = Some(20.0);
        let (n, why) = full_width(&cpus);
        assert_eq!(n, 12);
        assert!(why.contains("cpuset") && why.contains("wider"), "{why}");
    }

    #[test]
    fn copy_counts_are_numbers_or_multiples_of_n() {
        let parse = |s: &str| s.parse::<CopyCount>();
        assert_eq!(parse("4"), Ok(CopyCount::Exact(4)));
        assert_eq!(parse("2x"), Ok(CopyCount::PerCpu(2)));
        assert_eq!(parse("3X"), Ok(CopyCount::PerCpu(3)));
        assert_eq!(parse("2x").unwrap().resolve(2), 4);
        assert_eq!(parse("1x").unwrap().resolve(256), 256);
        assert_eq!(parse("5").unwrap().resolve(256), 5);
        for bad in [
            "0", "0x", "x", "", "-1", "2.5", "two", "2xx", "65x", "65537", " 2",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(parse("64x"), Ok(CopyCount::PerCpu(64)));
        assert_eq!(parse("65536"), Ok(CopyCount::Exact(65_536)));
    }

    struct Count;
    impl Work for Count {
        fn run(&mut self, w: &Window) -> Result<u64, String> {
            let mut n = 0;
            while !w.closed() {
                for _ in 0..1000 {
                    n = std::hint::black_box(n + 1);
                }
            }
            Ok(n)
        }
    }

    #[test]
    fn copies_share_one_window_and_report_their_counts() {
        let make = |_: usize| -> Result<Box<dyn Work>, String> { Ok(Box::new(Count)) };
        let out = pass(
            2,
            None,
            Duration::from_millis(100),
            &Launch::InProcess(&make),
        )
        .unwrap();
        assert_eq!(out.len(), 2);
        for c in &out {
            assert!(c.count > 0);
            // The span covers the window (100 ms), plus the start and stop latency.
            assert!((80e6..2e9).contains(&(c.span_ns as f64)), "{c:?}");
            assert!(!c.cpus_seen.is_empty());
        }
    }

    #[test]
    fn a_copy_that_cannot_prepare_fails_the_pass_with_its_reason() {
        let make = |i: usize| -> Result<Box<dyn Work>, String> {
            if i == 1 {
                Err("no /bin/sh here".into())
            } else {
                Ok(Box::new(Count))
            }
        };
        let e = pass(
            2,
            None,
            Duration::from_millis(50),
            &Launch::InProcess(&make),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("no /bin/sh here"), "{e}");
    }
}
