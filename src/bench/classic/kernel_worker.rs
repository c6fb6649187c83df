//! The small kernel worker: the classic tests that measure the kernel (process creation,
//! execl, pipe throughput, context switch, system calls) run their loops in this program,
//! so their figures depend on the kernel and not on the size, libraries or heap of the
//! truebench binary (a fork costs more the more its parent maps; UnixBench forks, execs
//! and loops in small C programs).
//!
//! It is not a module of the crate: build.rs compiles it on its own (no_std, panic=abort,
//! stripped, linked to the C library only; about 14 KB) and the classic suite embeds the
//! result and writes it into the test's directory. Two forms:
//!
//! - `kernel-worker N`: one link of an exec chain: exec itself with N-1 until N is 1, then
//!   exit 73 (the execl test's chains);
//! - `kernel-worker __classic-copy FD INDEX COPIES PIN MODE VARIANT`: one copy of a pass,
//!   speaking the suite's copy protocol on the shared memory file FD (slot.rs): record its
//!   pid, pin to CPU PIN (-1: not pinned), prepare MODE (`spawn`, `execl`, `pipe`,
//!   `syscall`, `context`), count itself ready, wait at the barrier, run batches until the
//!   window closes, timing its own span on CLOCK_MONOTONIC, and store count and span; or
//!   store why it failed. VARIANT places a context-switch partner: `plain` and `same-cpu`
//!   (where the copy is), `cross-cpu:C0,C1,...` (copy i's partner on C[i mod len]);
//!   process creation runs `plain` or `same-cpu` (its children inherit the copy's pin) and
//!   stores where its children started (the slot's fork counts).
//!
//! Malformed arguments exit 2.
#![no_std]
#![no_main]

#[path = "slot.rs"]
#[allow(dead_code)]
mod slot;

use core::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};
use core::sync::atomic::Ordering;
use slot::{Header, Slot, CPU_WORDS, ERROR_BYTES};

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: c_long,
}

#[link(name = "c")]
extern "C" {
    fn execv(path: *const c_char, argv: *const *const c_char) -> c_int;
    fn _exit(status: c_int) -> !;
    fn exit(status: c_int) -> !;
    fn fork() -> c_int;
    fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
    fn pipe(fds: *mut c_int) -> c_int;
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn close(fd: c_int) -> c_int;
    fn dup(fd: c_int) -> c_int;
    fn getpid() -> c_int;
    fn syscall(number: c_long, ...) -> c_long;
    fn getuid() -> c_uint;
    fn umask(mask: c_uint) -> c_uint;
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: i64,
    ) -> *mut c_void;
    fn sched_setaffinity(pid: c_int, size: usize, mask: *const c_ulong) -> c_int;
    fn sched_getcpu() -> c_int;
    fn sched_yield() -> c_int;
    fn prctl(option: c_int, ...) -> c_int;
    fn strerror(errnum: c_int) -> *const c_char;
    fn __errno_location() -> *mut c_int;
}

/// The exit status that ends an exec chain (the suite checks it).
const DONE: c_int = 73;
/// Execs per chain: one chain is one batch of the execl test.
const CHAIN: u64 = 10;
const CHAIN_ARG: &[u8] = b"10\0";
const WORKER_ARG: &[u8] = b"__classic-copy";
const CLOCK_MONOTONIC: c_int = 1;
/// getpid's system call number, which the syscall loop calls through the C library's
/// generic `syscall()`, as UnixBench's does: `getpid()` is not a system call under every C
/// library (glibc before 2.25 answered it from a cache, so the loop made four calls).
#[cfg(target_arch = "x86_64")]
const SYS_GETPID: c_long = 39;
#[cfg(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
))]
const SYS_GETPID: c_long = 172;
#[cfg(any(
    target_arch = "powerpc64",
    target_arch = "powerpc",
    target_arch = "s390x",
    target_arch = "x86",
    target_arch = "arm"
))]
const SYS_GETPID: c_long = 20;
const PROT_READ_WRITE: c_int = 0x1 | 0x2;
const MAP_SHARED: c_int = 0x01;
const PR_SET_PDEATHSIG: c_int = 1;
const SIGKILL: c_ulong = 9;
/// CPUs a pin can name (a 1024-bit mask, glibc's cpu_set_t).
const MASK_WORDS: usize = CPU_WORDS;
/// A spawned child's exit status when it started on another CPU numbered at least this
/// (its number does not fit in the status).
const CPU_UNNAMED: c_int = 255;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: _exit ends the process at once.
    unsafe { _exit(126) }
}

/// The prebuilt core library names an unwinding personality even under panic=abort;
/// nothing calls it.
#[no_mangle]
extern "C" fn rust_eh_personality() {}

/// The NUL-terminated string at `s` as bytes (without the NUL).
///
/// # Safety
/// `s` points to a NUL-terminated string that outlives the result.
unsafe fn bytes<'a>(s: *const c_char) -> &'a [u8] {
    let mut n = 0;
    while *s.add(n) != 0 {
        n += 1;
    }
    core::slice::from_raw_parts(s as *const u8, n)
}

/// A decimal number (an optional leading `-`), or None.
fn parse(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: i64 = 0;
    for c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(d as i64)?;
    }
    Some(if neg { -n } else { n })
}

fn now_ns() -> u64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime fills `ts`; CLOCK_MONOTONIC always exists on Linux.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

/// A reason a copy failed: what failed, and the C library's text for errno (when `errno`).
struct Why {
    what: &'static str,
    errno: c_int,
}

fn fail(what: &'static str) -> Why {
    // SAFETY: errno is this thread's.
    Why {
        what,
        errno: unsafe { *__errno_location() },
    }
}

fn bad(what: &'static str) -> Why {
    Why { what, errno: 0 }
}

/// Store why the copy failed in its slot.
fn record(slot: &Slot, why: &Why) {
    let mut buf = [0u8; ERROR_BYTES];
    let mut n = 0;
    let mut put = |b: &[u8]| {
        for c in b {
            if n < ERROR_BYTES - 1 {
                buf[n] = *c;
                n += 1;
            }
        }
    };
    put(why.what.as_bytes());
    if why.errno != 0 {
        put(b": ");
        // SAFETY: strerror returns a NUL-terminated string.
        put(unsafe { bytes(strerror(why.errno)) });
    }
    // SAFETY: only this copy writes its slot's error bytes, before it sets `failed`.
    unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), slot.error.as_ptr() as *mut u8, n) };
    slot.failed.store(1, Ordering::Release);
}

/// Pin the calling process to `cpu` and wait until it runs there.
fn pin(cpu: usize) -> bool {
    if cpu >= MASK_WORDS * 64 {
        return false;
    }
    let mut mask = [0 as c_ulong; MASK_WORDS];
    mask[cpu / 64] |= 1 << (cpu % 64);
    // SAFETY: a valid mask of MASK_WORDS words.
    if unsafe { sched_setaffinity(0, core::mem::size_of_val(&mask), mask.as_ptr()) } != 0 {
        return false;
    }
    // The kernel moves the task at its next scheduling point; yield until it is there.
    for _ in 0..1000 {
        // SAFETY: plain calls.
        if unsafe { sched_getcpu() } == cpu as c_int {
            return true;
        }
        unsafe { sched_yield() };
    }
    false
}

/// Reap `pid`; its exit status, or Err when it was killed.
fn reap_status(pid: c_int) -> Result<c_int, Why> {
    let mut status = 0;
    // SAFETY: reaping our own child.
    if unsafe { waitpid(pid, &mut status, 0) } != pid {
        return Err(fail("waitpid"));
    }
    if status & 0x7f != 0 {
        return Err(bad("a child was killed"));
    }
    Ok((status >> 8) & 0xff)
}

/// Reap `pid` and check it exited with `want`.
fn reap(pid: c_int, want: c_int) -> Result<(), Why> {
    if reap_status(pid)? != want {
        return Err(bad("a child did not exit as it should (the wrong status)"));
    }
    Ok(())
}

/// Where the children of the spawn loop started, as the copy saw it: each child tells in
/// its exit status (0: on the CPU its parent forked on; 1 + N: on CPU N; CPU_UNNAMED: on
/// another CPU numbered 254 or more). Costs one vDSO getcpu in parent and child per fork.
#[derive(Default)]
struct ForksSeen {
    seen: u64,
    colocated: u64,
    cpus: [u64; CPU_WORDS],
}

impl ForksSeen {
    /// The exit status a child that started on `child` tells its parent on `parent`.
    fn status(parent: c_int, child: c_int) -> c_int {
        match child {
            c if c == parent => 0,
            c if (0..CPU_UNNAMED - 1).contains(&c) => c + 1,
            _ => CPU_UNNAMED,
        }
    }

    /// Count one child's status (the fork ran on `parent`).
    fn count(&mut self, parent: c_int, status: c_int) {
        self.seen += 1;
        let cpu = match status {
            0 => {
                self.colocated += 1;
                parent
            }
            CPU_UNNAMED => return,
            s => s - 1,
        };
        if (0..(CPU_WORDS * 64) as c_int).contains(&cpu) {
            self.cpus[cpu as usize / 64] |= 1 << (cpu % 64);
        }
    }

    /// Store the counts in the copy's slot.
    fn store(&self, slot: &Slot) {
        slot.forks_seen.store(self.seen, Ordering::Relaxed);
        slot.forks_colocated.store(self.colocated, Ordering::Relaxed);
        for (w, bits) in slot.child_cpus.iter().zip(self.cpus) {
            w.store(bits, Ordering::Relaxed);
        }
    }
}

fn new_pipe() -> Result<[c_int; 2], Why> {
    let mut p = [0; 2];
    // SAFETY: pipe fills the two descriptors.
    if unsafe { pipe(p.as_mut_ptr()) } != 0 {
        return Err(fail("pipe"));
    }
    Ok(p)
}

fn read_u64(fd: c_int) -> Option<u64> {
    let mut b = [0u8; 8];
    // SAFETY: reading 8 bytes into `b`.
    (unsafe { read(fd, b.as_mut_ptr().cast(), 8) } == 8).then(|| u64::from_ne_bytes(b))
}

fn write_u64(fd: c_int, v: u64) -> bool {
    let b = v.to_ne_bytes();
    // SAFETY: writing the 8 bytes of `b`.
    unsafe { write(fd, b.as_ptr().cast(), 8) == 8 }
}

/// One test's loop, ready to run batches.
enum Work {
    /// fork; the child exits at once (telling where it started); wait and check.
    Spawn(ForksSeen),
    /// Fork a chain of CHAIN execs of this program (at `exe`), wait, check its status.
    Execl { exe: *const c_char },
    /// 512 bytes written into a pipe and read back.
    Pipe { p: [c_int; 2] },
    /// close(dup(fd)) on a pipe's read end (its write end closed), getpid through
    /// `syscall()`, getuid, umask: UnixBench's `syscall` loop, call for call.
    Syscall { fd: c_int },
    /// A counter to the partner and back: one round trip.
    Context {
        to: c_int,
        from: c_int,
        partner: c_int,
        i: u64,
    },
}

impl Work {
    /// One batch; the loops it completed.
    fn batch(&mut self) -> Result<u64, Why> {
        match self {
            Work::Spawn(seen) => {
                for _ in 0..10 {
                    // SAFETY: plain calls (getcpu is a vDSO read, no system call).
                    let parent = unsafe { sched_getcpu() };
                    // SAFETY: the child exits at once. Through the C library's exit, as
                    // UnixBench's spawn does (its exit handlers and stdio flush are part of
                    // the loop's work: _exit was 13% faster here).
                    match unsafe { fork() } {
                        -1 => return Err(fail("fork")),
                        0 => unsafe { exit(ForksSeen::status(parent, sched_getcpu())) },
                        pid => seen.count(parent, reap_status(pid)?),
                    }
                }
                Ok(10)
            }
            Work::Execl { exe } => {
                chain(*exe)?;
                Ok(CHAIN)
            }
            Work::Pipe { p } => {
                let mut buf = [0u8; 512];
                for _ in 0..1000 {
                    // SAFETY: 512 bytes to and from our own pipe, from and into `buf`.
                    unsafe {
                        if write(p[1], buf.as_ptr().cast(), 512) != 512 {
                            return Err(fail("pipe write"));
                        }
                        if read(p[0], buf.as_mut_ptr().cast(), 512) != 512 {
                            return Err(fail("pipe read"));
                        }
                    }
                }
                Ok(1000)
            }
            Work::Syscall { fd } => {
                for _ in 0..1000 {
                    // SAFETY: plain system calls on our own descriptor.
                    unsafe {
                        let d = dup(*fd);
                        if d < 0 || close(d) != 0 {
                            return Err(fail("dup/close"));
                        }
                        syscall(SYS_GETPID);
                        getuid();
                        umask(0o022);
                    }
                }
                Ok(1000)
            }
            Work::Context { to, from, i, .. } => {
                for _ in 0..100 {
                    *i += 1;
                    if !write_u64(*to, *i) {
                        return Err(fail("write to the partner"));
                    }
                    match read_u64(*from) {
                        Some(v) if v == *i => {}
                        Some(_) => return Err(bad("the partner sent back another number")),
                        None => return Err(fail("read from the partner")),
                    }
                }
                Ok(100)
            }
        }
    }

    /// After the window: end and reap the partner.
    fn finish(&mut self) {
        if let Work::Context { to, partner, .. } = self {
            // SAFETY: closing our write end ends the partner's loop; then reap it.
            unsafe {
                close(*to);
                let mut status = 0;
                waitpid(*partner, &mut status, 0);
            }
        }
    }
}

/// Fork a child that execs `exe` as a chain of CHAIN links; wait for its last link's status.
fn chain(exe: *const c_char) -> Result<(), Why> {
    let argv = [exe, CHAIN_ARG.as_ptr() as *const c_char, core::ptr::null()];
    // SAFETY: the child execs at once (or exits).
    match unsafe { fork() } {
        -1 => Err(fail("fork")),
        0 => unsafe {
            execv(exe, argv.as_ptr());
            _exit(127)
        },
        pid => reap(pid, DONE),
    }
}

/// The partner CPU of copy `index` under VARIANT, or None (the partner stays where the
/// copy is); Err on a malformed variant.
fn partner_cpu(variant: &[u8], index: usize) -> Result<Option<usize>, Why> {
    if variant == b"plain" || variant == b"same-cpu" {
        return Ok(None);
    }
    let list = variant
        .strip_prefix(b"cross-cpu:")
        .ok_or_else(|| bad("unknown variant"))?;
    let n = list.split(|c| *c == b',').count();
    let item = list.split(|c| *c == b',').nth(index % n).unwrap_or(b"");
    match parse(item) {
        Some(c) if c >= 0 => Ok(Some(c as usize)),
        _ => Err(bad("a cross-cpu partner is not a CPU number")),
    }
}

/// Fork the echoing partner (pinned to `cpu` if given) and wait for its handshake.
fn context(cpu: Option<usize>, slot: &Slot) -> Result<Work, Why> {
    let a = new_pipe()?;
    let b = new_pipe()?;
    // SAFETY: the partner only echoes numbers and leaves with _exit.
    match unsafe { fork() } {
        -1 => Err(fail("fork of the partner")),
        0 => unsafe {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            let pinned = cpu.is_none_or(pin);
            close(a[1]);
            close(b[0]);
            // The handshake: the copy waits for it, so the partner is where it belongs
            // before the barrier (1) or the copy learns that its pin failed (0).
            if !write_u64(b[1], pinned as u64) {
                _exit(1)
            }
            while let Some(v) = read_u64(a[0]) {
                if !write_u64(b[1], v) {
                    break;
                }
            }
            _exit(0)
        },
        pid => {
            // SAFETY: the partner's ends are not ours.
            unsafe {
                close(a[0]);
                close(b[1]);
            }
            slot.partner.store(pid, Ordering::Relaxed);
            match read_u64(b[0]) {
                Some(1) => Ok(Work::Context {
                    to: a[1],
                    from: b[0],
                    partner: pid,
                    i: 0,
                }),
                Some(_) => Err(bad("the partner could not be pinned to its CPU")),
                None => Err(fail("the partner's handshake")),
            }
        }
    }
}

/// Prepare MODE for copy `index`; `exe` is this program's path (argv[0]).
fn prepare(
    mode: &[u8],
    variant: &[u8],
    index: usize,
    exe: *const c_char,
    slot: &Slot,
) -> Result<Work, Why> {
    match mode {
        // The variant is where the copy is pinned (the children inherit it).
        b"spawn" if variant == b"plain" || variant == b"same-cpu" => {
            Ok(Work::Spawn(ForksSeen::default()))
        }
        b"spawn" => Err(bad("process creation runs plain or same-cpu")),
        b"execl" => {
            // One chain before the barrier proves the program runs here (a noexec mount
            // would not).
            chain(exe)?;
            Ok(Work::Execl { exe })
        }
        b"pipe" => Ok(Work::Pipe { p: new_pipe()? }),
        b"syscall" => {
            // UnixBench's create_fd: a pipe whose write end is closed.
            let [r, w] = new_pipe()?;
            // SAFETY: closing our own descriptor.
            if unsafe { close(w) } != 0 {
                return Err(fail("close"));
            }
            Ok(Work::Syscall { fd: r })
        }
        b"context" => context(partner_cpu(variant, index)?, slot),
        _ => Err(bad("unknown mode")),
    }
}

/// One copy of a pass; returns the exit code.
fn copy(args: &[&[u8]], exe: *const c_char) -> c_int {
    let num = |k: usize| args.get(k).and_then(|a| parse(a));
    let (Some(fd), Some(index), Some(copies), Some(cpu), Some(mode), Some(variant)) =
        (num(0), num(1), num(2), num(3), args.get(4), args.get(5))
    else {
        return 2;
    };
    if fd < 0 || index < 0 || copies <= index {
        return 2;
    }
    let (index, copies) = (index as usize, copies as usize);
    // SAFETY: mapping the suite's shared memory file, made for `copies` copies.
    let base = unsafe {
        mmap(
            core::ptr::null_mut(),
            slot::shared_len(copies),
            PROT_READ_WRITE,
            MAP_SHARED,
            fd as c_int,
            0,
        )
    };
    if base as isize == -1 {
        return 2;
    }
    // SAFETY: the mapping starts with a Header and holds `copies` slots after it, aligned
    // (page-aligned base, Header's size a multiple of Slot's alignment); it lives until exit.
    let (h, slot) = unsafe {
        (
            &*(base as *const Header),
            &*((base as *const u8).add(slot::slot_offset(index)) as *const Slot),
        )
    };
    // SAFETY: a plain call.
    slot.pid.store(unsafe { getpid() }, Ordering::Relaxed);
    let prepared = if cpu >= 0 && !pin(cpu as usize) {
        Err(bad("could not pin the copy to its CPU"))
    } else {
        prepare(mode, variant, index, exe, slot)
    };
    let mut work = match prepared {
        Ok(w) => w,
        Err(why) => {
            record(slot, &why);
            h.ready.fetch_add(1, Ordering::AcqRel);
            return 1;
        }
    };
    h.ready.fetch_add(1, Ordering::AcqRel);
    while h.go.load(Ordering::Acquire) == 0 {
        core::hint::spin_loop();
        if h.stop.load(Ordering::Relaxed) != 0 {
            work.finish();
            return 0;
        }
    }
    let t0 = now_ns();
    let mut n = 0u64;
    while h.stop.load(Ordering::Relaxed) == 0 {
        match work.batch() {
            Ok(k) => n += k,
            Err(why) => {
                work.finish();
                record(slot, &why);
                return 1;
            }
        }
    }
    let t1 = now_ns();
    work.finish();
    if let Work::Spawn(seen) = &work {
        seen.store(slot);
    }
    slot.count.store(n, Ordering::Relaxed);
    slot.span_ns.store((t1 - t0).max(1), Ordering::Release);
    0
}

/// Exec this program with N-1 (a chain link), or end the chain at 1.
fn link(n: u64, exe_arg: *const c_char) -> ! {
    if n <= 1 {
        // SAFETY: _exit ends the process at once.
        unsafe { _exit(DONE) }
    }
    // n - 1 in decimal, NUL-terminated, at the end of `buf`.
    let mut buf = [0u8; 24];
    let mut i = buf.len() - 1;
    let mut m = n - 1;
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    // SAFETY: argv[0] and buf are NUL-terminated and outlive the call; argv is null-ended.
    unsafe {
        let args = [
            exe_arg,
            buf[i..].as_ptr() as *const c_char,
            core::ptr::null(),
        ];
        execv(c"/proc/self/exe".as_ptr(), args.as_ptr());
        _exit(127)
    }
}

#[no_mangle]
pub extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // At most the copy form's 8 arguments are read.
    let mut args: [&[u8]; 8] = [b""; 8];
    let argc = (argc.max(0) as usize).min(args.len());
    for (k, a) in args.iter_mut().enumerate().take(argc) {
        // SAFETY: the kernel passes argc NUL-terminated arguments.
        *a = unsafe { bytes(*argv.add(k)) };
    }
    // SAFETY: argv[0] exists when argc >= 1.
    let exe = if argc >= 1 {
        unsafe { *argv }
    } else {
        core::ptr::null()
    };
    if argc >= 2 && args[1] == WORKER_ARG && !exe.is_null() {
        return copy(&args[2..argc], exe);
    }
    match (argc == 2).then(|| parse(args[1])) {
        Some(Some(n)) if n >= 0 => link(n as u64, exe),
        _ => 2,
    }
}
