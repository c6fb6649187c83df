//! What a row of a benchmark is, as the causes and the statistics read it: how its figure
//! follows the core clock, what of the kernel its measured path uses, how many tasks it
//! runs and between which CPUs, what of the memory hierarchy it measures and holds, and
//! what only separate runs sample of it. Each benchmark declares its rows' nature in its
//! registry entry (`Benchmark::nature`, as a stress-ng stressor declares its class);
//! [`of`] finds it for a stored row through the registry, so no cause and no statistic
//! names a benchmark. A row of a benchmark this build does not know has the default
//! nature: it follows no clock, runs one task, measures no memory.

use crate::result::BenchResult;

/// A row's nature (the default: none of the properties below).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nature {
    /// How its figure follows the core clock (the `cpu-speed` cause; a row of two runs of
    /// one host tested per cycle).
    pub clock: Clock,
    /// What of the kernel its measured path uses (which differing settings can move it).
    pub kernel: Kernel,
    /// How many tasks it runs at once, and what passes between their CPUs.
    pub tasks: Tasks,
    /// What of the memory hierarchy its figure is.
    pub memory: Memory,
    /// The bytes it holds while measured (its chain or arrays), where it holds a sizeable
    /// amount: what a memory limit's reclaim can reach (the `memory-limit` cause).
    pub footprint_bytes: Option<u64>,
    /// Whether it asks for the size of its pages itself (MADV_HUGEPAGE or
    /// MADV_NOHUGEPAGE), so that THP's `always` does not decide it.
    pub advises_pages: bool,
    /// Whether its figure is the cost of reading a clock (params `clock` and `path`): the
    /// rows the `timer` cause explains and holds against each other, and the rows whose
    /// rounds say how noisy the host's CPU was (`host-noise`).
    pub reads_clock: bool,
    /// Whether its figure is what the run's pair canaries measure (the one-way time of a
    /// cache line between two CPUs): the canaries' ratio predicts it.
    pub pair_canary: bool,
    /// What only separate runs sample of it (its run level, `noise_model::run_sigma`).
    pub run_level: RunLevel,
}

/// How a row's figure follows the core clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Clock {
    /// It does not: memory, I/O, or work other clocks set.
    #[default]
    No,
    /// CPU work that scales with the core clock.
    Follows,
    /// CPU work that follows the clock only part of the way (a clock read through the
    /// system call: 0.19-0.58 of the clock's change, `compare::per_cycle::clock_bound`):
    /// CPU-bound, but compared as measured.
    Partly,
    /// A chain of loads (`Memory::Chain`): it follows the clock while the chain fits its
    /// core's own cache (the L2), where a hit takes a fixed number of core cycles.
    WhileInCoreCache,
}

impl Clock {
    /// Whether the figure is CPU work (it follows the clock at least part of the way).
    pub fn cpu_bound(self) -> bool {
        matches!(self, Clock::Follows | Clock::Partly)
    }
}

/// What of the kernel a row's measured path uses, least first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kernel {
    /// None: a pure compute loop in user space, neither entering the kernel nor sleeping.
    Never,
    /// It does not enter the kernel while timed, but the kernel's scheduler places it and
    /// its pages come from the kernel.
    #[default]
    Placed,
    /// It crosses into the kernel on its measured path (system calls, file I/O, clock
    /// reads that may trap).
    Enters,
    /// It crosses into the kernel and its tasks block and are woken there (pipes between
    /// tasks, context switches, fork and exec).
    Sleeps,
}

/// How many tasks a row runs at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tasks {
    /// One (or copies of one, counted by the row's `copies`).
    #[default]
    One,
    /// Two tasks passing something between their CPUs (a cache line, or a wake-up when
    /// the kernel puts them to sleep): the distance between the CPUs sets the figure.
    Pair,
    /// This many threads, each working on a CPU of its own at once (a bandwidth): further
    /// apart, each has a core of its own.
    Threads(u64),
}

/// What of the memory hierarchy a row's figure is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Memory {
    /// Nothing of it.
    #[default]
    None,
    /// The load-to-load latency of a chain of `size_bytes` on pages of `pages` (`4k`,
    /// `thp`): the sweep a run's effective LLC is judged from.
    Chain { size_bytes: u64, pages: String },
    /// A latency of memory (one node's memory read from another's CPUs).
    Latency,
    /// A bandwidth of memory, of arrays of `array_bytes` where the row records them.
    Bandwidth { array_bytes: Option<u64> },
    /// Another figure of memory (its traffic per event, a node's other measures).
    Other,
}

impl Memory {
    /// Whether the figure is one of memory at all.
    pub fn any(&self) -> bool {
        *self != Memory::None
    }
}

/// What only separate runs sample of a row, beyond the level every row has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunLevel {
    /// Only what every row has (`noise_model::RUN_SIGMA`).
    #[default]
    Common,
    /// The host's memory, drawn once per run (a bandwidth of memory).
    HostMemory,
    /// The host's memory where the row lies past its run's LLC (a latency chain), else
    /// the common level.
    HostMemoryPastTheLlc,
}

/// The registered benchmark a stored row belongs to (by its id without the version, so a
/// row of an earlier version finds today's), or None.
pub fn benchmark_of(r: &BenchResult) -> Option<&'static dyn super::Benchmark> {
    let id = r.base_id();
    super::REGISTRY
        .iter()
        .copied()
        .find(|b| b.id().split('@').next() == Some(id))
}

/// The nature of a stored row, as its benchmark declares it; the default for a row of a
/// benchmark this build does not know.
pub fn of(r: &BenchResult) -> Nature {
    benchmark_of(r).map(|b| b.nature(r)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing::result;
    use serde_json::json;

    /// Each family's rows read as they are: classic compute never enters the kernel, a
    /// pipe pair on one CPU follows the clock and apart does not, a clock read through the
    /// system call follows it partly, a latency chain carries its size, an unknown
    /// benchmark has the default nature.
    #[test]
    fn rows_have_the_nature_their_benchmark_declares() {
        let dhry = result("classic.dhrystone@1", "os", None, json!({"copies": 1}), 1.0);
        let n = of(&dhry);
        assert_eq!((n.clock, n.kernel), (Clock::Follows, Kernel::Never));
        let copy = result(
            "classic.file-copy-256@1",
            "os",
            None,
            json!({"copies": 1}),
            1.0,
        );
        assert_eq!(
            (of(&copy).clock, of(&copy).kernel),
            (Clock::No, Kernel::Enters)
        );
        let same = result("ctx.pipe@1", "same-cpu", Some(vec![0, 0]), json!({}), 1.0);
        let apart = result("ctx.pipe@1", "cross-llc", Some(vec![0, 1]), json!({}), 1.0);
        assert_eq!(of(&same).clock, Clock::Follows);
        assert_eq!(of(&apart).clock, Clock::No);
        assert_eq!(
            (of(&apart).tasks, of(&apart).kernel),
            (Tasks::Pair, Kernel::Sleeps)
        );
        let syscall = result(
            "timers.clock-read@1",
            "os",
            None,
            json!({"clock": "monotonic", "path": "syscall"}),
            1.0,
        );
        assert_eq!(of(&syscall).clock, Clock::Partly);
        assert!(of(&syscall).reads_clock && of(&syscall).clock.cpu_bound());
        let chain = result(
            "memory.latency@1",
            "os",
            None,
            json!({"size_bytes": 1u64 << 20, "pages": "4k"}),
            1.0,
        );
        let n = of(&chain);
        assert_eq!(
            n.memory,
            Memory::Chain {
                size_bytes: 1 << 20,
                pages: "4k".into()
            }
        );
        assert_eq!(n.footprint_bytes, Some((1 << 20) + (1 << 17)));
        assert!(n.advises_pages && !n.clock.cpu_bound());
        let c2c = result(
            "c2c.cacheline@1",
            "cross-llc",
            Some(vec![0, 1]),
            json!({}),
            1.0,
        );
        assert!(of(&c2c).pair_canary && of(&c2c).tasks == Tasks::Pair);
        let unknown = result("gone.bench@1", "os", None, json!({}), 1.0);
        assert_eq!(of(&unknown), Nature::default());
    }

    /// Every registered benchmark declares its rows' nature: a benchmark that declared
    /// none would be explained by no cause, silently (the default nature says nothing).
    #[test]
    fn every_registered_benchmark_declares_a_nature() {
        for b in super::super::REGISTRY {
            let row = result(b.id(), "os", None, json!({}), 1.0);
            assert_ne!(
                b.nature(&row),
                Nature::default(),
                "{} declares no nature",
                b.id()
            );
            assert_eq!(benchmark_of(&row).map(|x| x.id()), Some(b.id()));
        }
    }
}
