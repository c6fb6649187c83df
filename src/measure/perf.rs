//! The one place perf_event counters are opened and read. The perf-event2 crate's bindings
//! (perf-event-open-sys2) exist for x86_64, aarch64 and riscv64 only, so it is a dependency
//! on those architectures alone (Cargo.toml). Elsewhere (ppc64le, s390x...) this module has
//! the same API and every open fails with [`unsupported`]'s reason: each counter is then absent with
//! that reason, never zero, and the rest of the program works.

use std::io;

/// What one counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Cycles,
    Instructions,
    /// Last-level cache misses (the generic CACHE_MISSES event).
    CacheMisses,
    StalledCyclesBackend,
    /// A tracepoint by its id (tracefs `events/<group>/<name>/id`).
    Tracepoint(u64),
    /// The software event cpu-migrations.
    CpuMigrations,
}

/// Whose work a counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whom {
    /// The calling process (its thread, and its children when inherited).
    Me,
    /// The thread (or process) with this id.
    Task(i32),
}

/// How to open a counter: on any CPU, disabled until [`Counter::enable`].
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub event: Event,
    pub whom: Whom,
    /// Threads and processes created later count into this counter.
    pub inherit: bool,
    /// Count user mode only.
    pub exclude_kernel: bool,
}

/// A count with the time the counter was enabled and the time it ran (multiplexing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountAndTime {
    pub count: u64,
    /// ns enabled.
    pub time_enabled: u64,
    /// ns running.
    pub time_running: u64,
}

/// Why no counter can be opened on this build, when the architecture has no bindings.
pub fn unsupported() -> String {
    let arch = if cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
        "ppc64le"
    } else {
        std::env::consts::ARCH
    };
    format!(
        "perf_event counters are not supported by this build on {arch} (the perf_event \
         bindings truebench uses exist for x86_64, aarch64 and riscv64 only)"
    )
}

/// Whether this build can open counters at all.
pub const SUPPORTED: bool = imp::SUPPORTED;

/// An open counter.
pub struct Counter(imp::Counter);

impl Counter {
    /// Open a counter (disabled). Err carries the errno of perf_event_open, or, on an
    /// architecture without bindings, no errno and the message of [`unsupported`].
    pub fn open(spec: &Spec) -> io::Result<Counter> {
        imp::open(spec).map(Counter)
    }

    /// Start counting.
    pub fn enable(&mut self) -> io::Result<()> {
        imp::enable(&mut self.0)
    }

    /// The count so far (not scaled for multiplexing).
    pub fn read(&mut self) -> io::Result<u64> {
        imp::read(&mut self.0).map(|c| c.count)
    }

    /// The count so far with its enabled and running times.
    pub fn read_count_and_time(&mut self) -> io::Result<CountAndTime> {
        imp::read(&mut self.0)
    }
}

#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
mod imp {
    use super::{CountAndTime, Event, Spec, Whom};
    use perf_event::events::{Hardware, Software, Tracepoint};
    use perf_event::Builder;
    use std::io;

    pub const SUPPORTED: bool = true;
    pub type Counter = perf_event::Counter;

    pub fn open(spec: &Spec) -> io::Result<Counter> {
        let mut b = match spec.event {
            Event::Cycles => Builder::new(Hardware::CPU_CYCLES),
            Event::Instructions => Builder::new(Hardware::INSTRUCTIONS),
            Event::CacheMisses => Builder::new(Hardware::CACHE_MISSES),
            Event::StalledCyclesBackend => Builder::new(Hardware::STALLED_CYCLES_BACKEND),
            Event::Tracepoint(id) => Builder::new(Tracepoint::with_id(id)),
            Event::CpuMigrations => Builder::new(Software::CPU_MIGRATIONS),
        };
        match spec.whom {
            Whom::Me => b.observe_self(),
            Whom::Task(tid) => b.observe_pid(tid),
        };
        b.any_cpu()
            .inherit(spec.inherit)
            .exclude_kernel(spec.exclude_kernel)
            .build()
    }

    pub fn enable(c: &mut Counter) -> io::Result<()> {
        c.enable()
    }

    pub fn read(c: &mut Counter) -> io::Result<CountAndTime> {
        let ct = c.read_count_and_time()?;
        Ok(CountAndTime {
            count: ct.count,
            time_enabled: ct.time_enabled,
            time_running: ct.time_running,
        })
    }
}

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
mod imp {
    use super::{unsupported, CountAndTime, Spec};
    use std::io;

    pub const SUPPORTED: bool = false;
    /// No value of this type exists: no counter is ever opened.
    pub enum Counter {}

    pub fn open(_: &Spec) -> io::Result<Counter> {
        Err(io::Error::new(io::ErrorKind::Unsupported, unsupported()))
    }

    pub fn enable(c: &mut Counter) -> io::Result<()> {
        match *c {}
    }

    pub fn read(c: &mut Counter) -> io::Result<CountAndTime> {
        match *c {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A software event needs no PMU: where the build supports counters, cpu-migrations
    /// opens on this process (unless perf_event_open itself is refused, which gives an
    /// errno), reads, and never runs backwards; where it does not, the open says why.
    #[test]
    fn a_software_counter_opens_or_says_why() {
        let spec = Spec {
            event: Event::CpuMigrations,
            whom: Whom::Me,
            inherit: false,
            exclude_kernel: false,
        };
        match Counter::open(&spec) {
            Ok(mut c) => {
                c.enable().unwrap();
                let a = c.read().unwrap();
                std::thread::yield_now();
                let b = c.read_count_and_time().unwrap();
                assert!(b.count >= a, "{a} then {}", b.count);
                assert!(b.time_running <= b.time_enabled, "{b:?}");
            }
            Err(e) if SUPPORTED => assert!(e.raw_os_error().is_some(), "{e}"),
            Err(e) => {
                assert_eq!(e.raw_os_error(), None, "{e}");
                assert_eq!(e.to_string(), unsupported());
                assert!(e.to_string().contains("not supported by this build"), "{e}");
            }
        }
    }
}
