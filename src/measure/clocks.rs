//! The clocks a benchmark can read, each readable through the vDSO (the normal path of
//! `clock_gettime`) or through the raw system call, plus `rdtsc` on x86-64. Comparing the
//! two paths catches a clock read that has silently become a syscall.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Clock {
    Monotonic,
    MonotonicRaw,
    Realtime,
    MonotonicCoarse,
    Boottime,
    /// The time-stamp counter, read with `rdtsc` (x86-64 only; no syscall path).
    Rdtsc,
}

/// How a clock is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Path {
    /// `clock_gettime` through libc, which uses the vDSO when the clocksource allows it.
    Vdso,
    /// `syscall(SYS_clock_gettime)`: always enters the kernel.
    Syscall,
}

impl Clock {
    pub const ALL: [Clock; 6] = [
        Clock::Monotonic,
        Clock::MonotonicRaw,
        Clock::Realtime,
        Clock::MonotonicCoarse,
        Clock::Boottime,
        Clock::Rdtsc,
    ];

    /// The stable name used in JSON keys (`clock.read_cost_ns`) and benchmark params.
    pub fn name(self) -> &'static str {
        match self {
            Clock::Monotonic => "monotonic",
            Clock::MonotonicRaw => "monotonic_raw",
            Clock::Realtime => "realtime",
            Clock::MonotonicCoarse => "monotonic_coarse",
            Clock::Boottime => "boottime",
            Clock::Rdtsc => "rdtsc",
        }
    }

    pub fn from_name(s: &str) -> Option<Clock> {
        Clock::ALL.into_iter().find(|c| c.name() == s)
    }

    fn clockid(self) -> Option<libc::clockid_t> {
        match self {
            Clock::Monotonic => Some(libc::CLOCK_MONOTONIC),
            Clock::MonotonicRaw => Some(libc::CLOCK_MONOTONIC_RAW),
            Clock::Realtime => Some(libc::CLOCK_REALTIME),
            Clock::MonotonicCoarse => Some(libc::CLOCK_MONOTONIC_COARSE),
            Clock::Boottime => Some(libc::CLOCK_BOOTTIME),
            Clock::Rdtsc => None,
        }
    }

    /// The read path as reported in results: `vdso`, `syscall`, or `instruction` for rdtsc.
    pub fn path_label(self, path: Path) -> &'static str {
        match (self, path) {
            (Clock::Rdtsc, _) => "instruction",
            (_, Path::Vdso) => "vdso",
            (_, Path::Syscall) => "syscall",
        }
    }

    /// Whether this clock can be read here through `path`.
    pub fn supports(self, path: Path) -> bool {
        match (self, path) {
            (Clock::Rdtsc, Path::Vdso) => cfg!(target_arch = "x86_64"),
            (Clock::Rdtsc, Path::Syscall) => false,
            _ => true,
        }
    }

    /// Read the clock `n` times through `path`, returning a value that depends on every
    /// read (so the compiler cannot drop them).
    pub fn read_n(self, path: Path, n: u64) -> u64 {
        let mut acc = 0u64;
        match (self.clockid(), path) {
            (Some(id), Path::Vdso) => {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                for _ in 0..n {
                    // SAFETY: ts is a valid timespec; the clock id is a valid constant.
                    unsafe { libc::clock_gettime(id, &mut ts) };
                    acc = acc.wrapping_add(ts.tv_nsec as u64);
                }
            }
            (Some(id), Path::Syscall) => {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                for _ in 0..n {
                    // SAFETY: the raw syscall takes the clock id and a valid timespec pointer.
                    unsafe {
                        libc::syscall(libc::SYS_clock_gettime, id, &mut ts as *mut libc::timespec)
                    };
                    acc = acc.wrapping_add(ts.tv_nsec as u64);
                }
            }
            (None, _) => {
                #[cfg(target_arch = "x86_64")]
                for _ in 0..n {
                    // SAFETY: rdtsc has no preconditions on x86-64.
                    acc = acc.wrapping_add(unsafe { core::arch::x86_64::_rdtsc() });
                }
            }
        }
        std::hint::black_box(acc)
    }
}

/// Nanoseconds on CLOCK_MONOTONIC (the clock every batch is timed with).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec pointer, valid clock id.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in Clock::ALL {
            assert_eq!(Clock::from_name(c.name()), Some(c));
        }
        assert_eq!(Clock::from_name("sundial"), None);
    }

    #[test]
    fn monotonic_moves_forward() {
        let a = now_ns();
        Clock::Monotonic.read_n(Path::Vdso, 1000);
        let b = now_ns();
        assert!(b > a, "CLOCK_MONOTONIC did not advance over 1000 reads");
    }
}
