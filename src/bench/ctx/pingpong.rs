//! Two tasks passing a token through two pipes: A writes, B reads and writes it back, A
//! reads (one round trip). A measures in batches; B echoes. B runs as a forked process or a
//! thread, each task pinned (and verified) or left to the scheduler. At every batch
//! boundary A records the CPU it and B are on (B answers a REPORT token with its CPU), and
//! the tasks' switch and migration counters are read before and after the measured batches.

use crate::measure::batch::{calibrate, time_batch, Batch};
use crate::observe::task::{self, TaskCounters};
use crate::placement::{current_cpu, pin_current_thread, pin_raw};
use anyhow::{anyhow, bail, Context};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

const STOP: u64 = u64::MAX;
const REPORT: u64 = u64::MAX - 1;
const PIN_FAILED: u64 = 1 << 63;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Process,
    Thread,
}

impl Mode {
    pub fn from_name(s: &str) -> Option<Mode> {
        match s {
            "process" => Some(Mode::Process),
            "thread" => Some(Mode::Thread),
            _ => None,
        }
    }
}

pub struct Spec {
    pub mode: Mode,
    /// CPUs of A and B, or None to leave both to the scheduler.
    pub cpus: Option<[u32; 2]>,
    /// Bytes of its own memory each side touches per hop.
    pub footprint: usize,
    pub samples: usize,
    pub min_batch_ns: f64,
}

/// What one placement's measurement saw.
pub struct Measurement {
    pub batches: Vec<Batch>,
    /// (A's CPU, B's CPU) at each batch boundary.
    pub observations: Vec<(u32, u32)>,
    pub a: TaskCounters,
    pub b: TaskCounters,
    /// Fewer batches than asked: Ctrl-C arrived or the run's deadline passed.
    pub interrupted: bool,
}

fn write_token(fd: RawFd, v: u64) -> bool {
    let b = v.to_ne_bytes();
    loop {
        // SAFETY: b is 8 valid bytes; fd is a pipe end owned by this side.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), 8) };
        if n == 8 {
            return true;
        }
        // SAFETY: errno location is always valid.
        if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR {
            continue;
        }
        return false;
    }
}

fn read_token(fd: RawFd) -> Option<u64> {
    let mut b = [0u8; 8];
    loop {
        // SAFETY: b is 8 writable bytes; fd is a pipe end owned by this side.
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 8) };
        if n == 8 {
            return Some(u64::from_ne_bytes(b));
        }
        // SAFETY: errno location is always valid.
        if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR {
            continue;
        }
        return None; // EOF or error: the other side is gone
    }
}

/// Read one byte per cache line of `buf` (lat_ctx-style cache footprint).
fn touch(buf: &[u8]) -> u64 {
    let mut s = 0u64;
    let mut i = 0;
    while i < buf.len() {
        s = s.wrapping_add(buf[i] as u64);
        i += 64;
    }
    std::hint::black_box(s)
}

/// Side B: say hello (tid, pin status), then echo tokens until STOP or EOF. Uses only raw
/// system calls and memory reads, so it is safe in a forked child.
fn echo(rx: RawFd, tx: RawFd, pin: Option<u32>, buf: &[u8]) -> i32 {
    let pinned = pin.is_none_or(pin_raw);
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u64;
    if !write_token(tx, tid | if pinned { 0 } else { PIN_FAILED }) {
        return 1;
    }
    let mut sink = 0u64;
    loop {
        match read_token(rx) {
            None | Some(STOP) => break,
            Some(REPORT) => {
                // SAFETY: sched_getcpu has no preconditions.
                let cpu = unsafe { libc::sched_getcpu() }.max(0) as u64;
                if !write_token(tx, cpu) {
                    return 1;
                }
            }
            Some(v) => {
                sink = sink.wrapping_add(touch(buf));
                if !write_token(tx, v) {
                    return 1;
                }
            }
        }
    }
    std::hint::black_box(sink);
    0
}

/// Round trips between two checks of the deadline and Ctrl-C inside a batch.
const STOP_CHECK_EVERY: u64 = 16;

/// Side A: wait for B's hello, warm up, calibrate, time the batches, observe.
fn drive(rx: RawFd, tx: RawFd, spec: &Spec, b_pid: i32, buf: &[u8]) -> anyhow::Result<Measurement> {
    let hello = read_token(rx).ok_or_else(|| anyhow!("task B did not start"))?;
    if hello & PIN_FAILED != 0 {
        bail!(
            "could not pin task B to CPU {}",
            spec.cpus.map(|c| c[1]).unwrap_or(0)
        );
    }
    let b_tid = (hello & 0xffff_ffff) as i32;
    // SAFETY: getpid/gettid have no preconditions.
    let (a_pid, a_tid) = unsafe { (libc::getpid(), libc::gettid()) };

    let mut token = 0u64;
    let mut broken = false;
    let cut = std::cell::Cell::new(false);
    let mut sink = 0u64;
    let mut work = |n: u64| {
        for i in 0..n {
            // The deadline or Ctrl-C, every few round trips (a clock read is about 1% of a
            // round trip on one CPU; one in STOP_CHECK_EVERY, well below the noise): a
            // starved cgroup's round trips can take tens of milliseconds each, and the
            // warm-up, the calibration and a batch would hold the run past its budget.
            if i % STOP_CHECK_EVERY == STOP_CHECK_EVERY - 1 && crate::deadline::stop_requested() {
                cut.set(true);
                return;
            }
            token += 1;
            if !write_token(tx, token) || read_token(rx) != Some(token) {
                broken = true;
                return;
            }
            sink = sink.wrapping_add(touch(buf));
        }
    };
    work(200); // warm up: fault in pages, wake both sides
    let n = calibrate(&mut work, spec.min_batch_ns);
    let observe = || -> anyhow::Result<(u32, u32)> {
        let a = current_cpu().unwrap_or(u32::MAX);
        if !write_token(tx, REPORT) {
            bail!("task B went away");
        }
        let b = read_token(rx).ok_or_else(|| anyhow!("task B went away"))?;
        Ok((a, b as u32))
    };
    let a0 = task::read(a_pid, a_tid);
    let b0 = task::read(b_pid, b_tid);
    let mut batches = Vec::with_capacity(spec.samples);
    let mut observations = Vec::with_capacity(spec.samples);
    // Cut during the warm-up or the calibration: no batch is worth timing.
    let mut interrupted = cut.get();
    for _ in 0..spec.samples {
        if interrupted {
            break;
        }
        if crate::deadline::stop_requested() {
            interrupted = true;
            break;
        }
        let batch = time_batch(&mut work, n);
        if cut.get() {
            // A batch the stop cut short is not a batch of n round trips.
            interrupted = true;
            break;
        }
        batches.push(batch);
        observations.push(observe()?);
    }
    let a1 = task::read(a_pid, a_tid);
    let b1 = task::read(b_pid, b_tid);
    if broken {
        bail!("the token came back wrong or task B went away");
    }
    write_token(tx, STOP);
    std::hint::black_box(sink);
    Ok(Measurement {
        batches,
        observations,
        a: a1.since(&a0),
        b: b1.since(&b0),
        interrupted,
    })
}

fn pipe() -> anyhow::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe().context("pipe()")
}

/// Run one placement and mode. Side A runs in a thread of its own, so pinning it never
/// changes the affinity of the caller.
pub fn measure(spec: &Spec) -> anyhow::Result<Measurement> {
    std::thread::scope(|s| {
        s.spawn(|| side_a(spec))
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the measuring thread panicked")))
    })
}

fn side_a(spec: &Spec) -> anyhow::Result<Measurement> {
    if let Some([a, _]) = spec.cpus {
        pin_current_thread(a).map_err(|e| anyhow!(e))?;
    }
    let (a_rx, b_tx) = pipe()?;
    let (b_rx, a_tx) = pipe()?;
    let a_buf = vec![1u8; spec.footprint];
    let b_buf = vec![1u8; spec.footprint];
    let b_cpu = spec.cpus.map(|c| c[1]);
    match spec.mode {
        Mode::Thread => std::thread::scope(|s| {
            let h = s.spawn(move || {
                let (rx, tx) = (b_rx, b_tx);
                echo(rx.as_raw_fd(), tx.as_raw_fd(), b_cpu, &b_buf)
            });
            // SAFETY: getpid has no preconditions.
            let r = drive(
                a_rx.as_raw_fd(),
                a_tx.as_raw_fd(),
                spec,
                unsafe { libc::getpid() },
                &a_buf,
            );
            drop(a_tx); // B reads EOF if it missed STOP
            let _ = h.join();
            r
        }),
        Mode::Process => {
            // SAFETY: the child only makes raw system calls and memory reads, then _exit()s.
            match unsafe { nix::unistd::fork() }.context("fork()")? {
                nix::unistd::ForkResult::Child => {
                    // SAFETY: closing A's ends in the child; these fds are never used here again.
                    unsafe {
                        libc::close(a_rx.as_raw_fd());
                        libc::close(a_tx.as_raw_fd());
                    }
                    let code = echo(b_rx.as_raw_fd(), b_tx.as_raw_fd(), b_cpu, &b_buf);
                    // SAFETY: leave without running destructors or atexit handlers.
                    unsafe { libc::_exit(code) }
                }
                nix::unistd::ForkResult::Parent { child } => {
                    drop((b_rx, b_tx));
                    let guard = Reaper(child);
                    let r = drive(
                        a_rx.as_raw_fd(),
                        a_tx.as_raw_fd(),
                        spec,
                        child.as_raw(),
                        &a_buf,
                    );
                    drop(a_tx); // the child reads EOF if it missed STOP
                    drop(guard);
                    r
                }
            }
        }
    }
}

/// Reaps the child on every path; kills it first if it has not exited within a second.
struct Reaper(nix::unistd::Pid);

impl Drop for Reaper {
    fn drop(&mut self) {
        use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
        for _ in 0..100 {
            match waitpid(self.0, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => return,
            }
        }
        let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGKILL);
        let _ = waitpid(self.0, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touch_reads_one_byte_per_line() {
        assert_eq!(touch(&[1u8; 256]), 4);
        assert_eq!(touch(&[]), 0);
    }

    #[test]
    fn both_modes_complete_a_short_run() {
        for mode in [Mode::Thread, Mode::Process] {
            let spec = Spec {
                mode,
                cpus: None,
                footprint: 4096,
                samples: 3,
                min_batch_ns: 1e6,
            };
            let m = measure(&spec).unwrap();
            assert_eq!(m.batches.len(), 3);
            assert_eq!(m.observations.len(), 3);
            for b in &m.batches {
                let ns = b.ns_per_iteration();
                assert!(
                    (100.0..1e7).contains(&ns),
                    "{mode:?}: {ns} ns per round trip"
                );
            }
        }
    }
}
