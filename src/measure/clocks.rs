//! The clocks a benchmark can read, each readable through the vDSO (the normal path of
//! `clock_gettime`) or through the raw system call, plus the CPU's own counter read by one
//! instruction: `rdtsc` on x86-64, the virtual counter `cntvct_el0` on aarch64 (its
//! frequency in `cntfrq_el0`). Comparing the two paths catches a clock read that has
//! silently become a syscall.

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
    /// The generic timer's virtual counter, read with `mrs cntvct_el0` (aarch64 only; no
    /// syscall path), the counter the kernel's arch_sys_counter clocksource reads.
    Cntvct,
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
    pub const ALL: [Clock; 7] = [
        Clock::Monotonic,
        Clock::MonotonicRaw,
        Clock::Realtime,
        Clock::MonotonicCoarse,
        Clock::Boottime,
        Clock::Rdtsc,
        Clock::Cntvct,
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
            Clock::Cntvct => "cntvct",
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
            Clock::Rdtsc | Clock::Cntvct => None,
        }
    }

    /// The read path as reported in results: `vdso`, `syscall`, or `instruction` for the
    /// CPU's counter (rdtsc, cntvct).
    pub fn path_label(self, path: Path) -> &'static str {
        match (self, path) {
            (Clock::Rdtsc | Clock::Cntvct, _) => "instruction",
            (_, Path::Vdso) => "vdso",
            (_, Path::Syscall) => "syscall",
        }
    }

    /// Whether this clock can be read here through `path`.
    pub fn supports(self, path: Path) -> bool {
        match (self, path) {
            (Clock::Rdtsc, Path::Vdso) => cfg!(target_arch = "x86_64"),
            (Clock::Cntvct, Path::Vdso) => cfg!(target_arch = "aarch64"),
            (Clock::Rdtsc | Clock::Cntvct, Path::Syscall) => false,
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
                if self == Clock::Rdtsc {
                    for _ in 0..n {
                        // SAFETY: rdtsc has no preconditions on x86-64.
                        acc = acc.wrapping_add(unsafe { core::arch::x86_64::_rdtsc() });
                    }
                }
                #[cfg(target_arch = "aarch64")]
                if self == Clock::Cntvct {
                    for _ in 0..n {
                        acc = acc.wrapping_add(cntvct());
                    }
                }
            }
        }
        std::hint::black_box(acc)
    }
}

/// One read of the virtual counter (EL0 may read it: Linux sets CNTKCTL_EL1.EL0VCTEN).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn cntvct() -> u64 {
    let v: u64;
    // SAFETY: a register read with no side effects, allowed at EL0 on Linux.
    unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack)) };
    v
}

/// The counter's frequency in Hz as the firmware set it (`cntfrq_el0`), where the CPU has a
/// counter read by one instruction whose rate the architecture states: aarch64 only (the
/// x86 TSC's rate is not architecturally readable).
pub fn counter_hz() -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        let f: u64;
        // SAFETY: a register read with no side effects, allowed at EL0.
        unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) f, options(nomem, nostack)) };
        return (f > 0).then_some(f);
    }
    #[allow(unreachable_code)]
    None
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
    fn exactly_one_instruction_counter_is_read_on_x86_64_and_aarch64() {
        let counters: Vec<Clock> = Clock::ALL
            .into_iter()
            .filter(|c| c.path_label(Path::Vdso) == "instruction" && c.supports(Path::Vdso))
            .collect();
        if cfg!(target_arch = "x86_64") {
            assert_eq!(counters, vec![Clock::Rdtsc]);
        } else if cfg!(target_arch = "aarch64") {
            assert_eq!(counters, vec![Clock::Cntvct]);
            #[cfg(target_arch = "aarch64")]
            {
                let hz = counter_hz().expect("cntfrq_el0 is set on aarch64 Linux");
                // The architecture's counter runs at 1 MHz to 1 GHz (Armv8.6 fixes 1 GHz).
                assert!((1_000_000..=1_000_000_000).contains(&hz), "{hz} Hz");
                // The counter moves forward between two reads 1 ms apart.
                let a = cntvct();
                std::thread::sleep(std::time::Duration::from_millis(1));
                assert!(cntvct() > a);
            }
        } else {
            assert!(counters.is_empty());
        }
        assert!(!Clock::Cntvct.supports(Path::Syscall));
        assert!(!Clock::Rdtsc.supports(Path::Syscall));
    }

    #[test]
    fn monotonic_moves_forward() {
        let a = now_ns();
        Clock::Monotonic.read_n(Path::Vdso, 1000);
        let b = now_ns();
        assert!(b > a, "CLOCK_MONOTONIC did not advance over 1000 reads");
    }
}
