//! Benchmarks: one trait, one registry table (as stress-ng registers its stressors), one
//! module per family. A suite is a family name; `run SUITE` runs every benchmark in it.

pub mod c2c;
pub mod classic;
pub mod cpu_speed;
pub mod ctx;
pub mod fresh_process;
pub mod label;
pub mod levels;
pub mod memory;
pub mod nature;
pub mod pair;
pub mod timers;

use crate::probe::ProbeDoc;
use crate::result::BenchResult;

/// Choices from the command line that benchmarks read (each uses the ones that apply).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Placement names (`--placement`); empty = every applicable one plus `os`.
    pub placements: Vec<String>,
    /// An explicit CPU pair (`--cpus A,B`).
    pub cpus: Option<Vec<u32>>,
    /// Task modes (`--mode`): `process`, `thread`; empty = both.
    pub modes: Vec<String>,
    /// Memory each side touches per hop (`--footprint KB`).
    pub footprint_kb: u64,
    /// Bytes of each bandwidth array, all threads together (`--array-size`); None = sized
    /// from the caches.
    pub array_bytes: Option<u64>,
    /// Measure the timers under every available clocksource (`--clocksource-sweep`, root).
    pub clocksource_sweep: bool,
    /// The classic suite's own options (`--copies`, `--pin`, `--full`, `--fsync`).
    pub classic: classic::Options,
}

/// What a benchmark hands back as it goes: the case it starts measuring, a finished
/// result, or a case it could not run here, with the reason (a placement that cannot
/// exist, a missing tool).
pub enum Emitted {
    /// A case is about to be measured: what it is, in a few words (for progress).
    Running(String),
    Result(Box<BenchResult>),
    Skipped(Skipped),
}

pub use crate::result::Skipped;

/// The most a benchmark's share of the default budget grows with the machine
/// (`scaled_share`): a large machine's default run takes at most this many times a small
/// one's.
pub const MAX_SHARE_SCALE: f64 = 3.0;

/// A share of the default budget (`Benchmark::budget_share_s`) of `base_s` seconds for
/// `reference` units of work (cases, pairs, bytes) on a small machine, grown with the
/// square root of the `work` this machine has, at most `MAX_SHARE_SCALE` times.
pub fn scaled_share(base_s: f64, work: f64, reference: f64) -> f64 {
    let ratio = if reference > 0.0 {
        work / reference
    } else {
        1.0
    };
    base_s * ratio.max(0.0).sqrt().clamp(1.0, MAX_SHARE_SCALE)
}

/// Fewest samples a round draws by default (a round median from two batches).
pub const MIN_SAMPLES_PER_ROUND: usize = 2;

/// What a benchmark gets to run with.
pub struct RunContext<'a> {
    pub probe: &'a ProbeDoc,
    pub options: &'a RunOptions,
    /// Samples (timed batches) per result.
    pub samples: usize,
    /// Cost of one read of the timing clock (CLOCK_MONOTONIC), ns.
    pub clock_cost_ns: f64,
    /// The shortest timed batch allowed: >= 10^4 clock reads (trust contract rule 1).
    pub min_batch_ns: f64,
    /// What earlier benchmarks of this run measured that later ones use.
    pub measured: &'a Measured,
    /// The cases this round measures (`Benchmark::case_of`), None for every case: a round
    /// the run's allocation gives only the rows whose verdict is short (`session::allocate`).
    pub only: Option<&'a [String]>,
}

impl RunContext<'_> {
    /// Whether this round measures `case` (a name `Benchmark::case_of` gives its rows).
    pub fn wants(&self, case: &str) -> bool {
        self.only.is_none_or(|o| o.iter().any(|c| c == case))
    }
}

/// What a benchmark of a run measured that a later one of the same run uses: the memory
/// hierarchy the latency sweep judged, which sizes the bandwidth arrays.
#[derive(Debug, Default)]
pub struct Measured {
    hierarchy: std::sync::Mutex<Option<crate::measure::hierarchy::Hierarchy>>,
}

impl Measured {
    /// Keep the hierarchy the first latency sweep of the run judged: later rounds of the
    /// sweep do not resize the bandwidth arrays, so every round of a bandwidth row measures
    /// the same array.
    pub fn set_hierarchy(&self, h: crate::measure::hierarchy::Hierarchy) {
        let mut held = self.hierarchy.lock().unwrap_or_else(|e| e.into_inner());
        if held.is_none() {
            *held = Some(h);
        }
    }

    pub fn hierarchy(&self) -> Option<crate::measure::hierarchy::Hierarchy> {
        self.hierarchy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

pub trait Benchmark: Sync {
    /// `family.name@version`.
    fn id(&self) -> &'static str;
    /// What it measures, in one line, with its unit.
    fn describe(&self) -> &'static str;
    /// How many results `run` will emit (for progress).
    fn planned(&self, ctx: &RunContext) -> usize;
    /// Run, handing each finished result to `emit` at once (so Ctrl-C keeps it). Returns
    /// `Err(Interrupted)` when an interrupt was requested between results.
    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()>;
    /// The repetition levels at which this benchmark's figure can vary and which of them
    /// its samples draw afresh (so its CI covers them) or leave to separate runs (what
    /// `calibrate` measures); see `levels`. Default: only the timed batch varies per sample.
    fn levels(&self) -> &'static [levels::LevelUse] {
        levels::UNDECLARED
    }
    /// Whether later benchmarks of its suite use what this one measures (through
    /// [`Measured`]), so any reordering of a run (calibrate's shuffle) keeps it ahead of
    /// them. Default: no.
    fn feeds_its_suite(&self) -> bool {
        false
    }
    /// Whether `run` draws its samples in rounds spread over the run (`session::rounds`);
    /// false for a benchmark measured in one piece (none of this build's: every row of a
    /// current document has rounds).
    fn in_rounds(&self) -> bool {
        true
    }
    /// The seconds one round of it is expected to take on this machine, where that is known
    /// before measuring (a benchmark whose passes have fixed windows: the classic suite), so
    /// a budget can plan its rounds; None where only measuring tells. Default: None.
    fn round_s(&self, ctx: &RunContext) -> Option<f64> {
        let _ = ctx;
        None
    }
    /// How many times the run's `--rounds` this benchmark draws (`session::rounds::
    /// rounds_of`). A benchmark whose rounds cost little (a tenth of a second) and whose
    /// rows' noise lies between rounds draws more of them: the standard error of its rows
    /// falls as the square root of the rounds and the t quantile with their degrees of
    /// freedom. Default: 1.
    fn round_weight(&self) -> usize {
        1
    }
    /// The fewest samples a round of it draws (`session::rounds::samples_in_round`):
    /// `MIN_SAMPLES_PER_ROUND` by default, so that one slow batch cannot alone set a
    /// round's median. One where a sample is a whole measurement drawn afresh (clock reads
    /// in a fresh process, bandwidth passes in fresh arrays) and the rounds are many: the
    /// rows' noise lies between rounds, so the run's samples go to more rounds, not to more
    /// samples in each, and a round far off is kept out by the outlier test across them.
    fn min_samples_per_round(&self) -> usize {
        MIN_SAMPLES_PER_ROUND
    }
    /// The seconds this benchmark adds to a run's default budget on this machine (`run`
    /// without `--budget`: the sum over the run's benchmarks, `session::budget`): what its
    /// first rounds and a share of the allocated ones take on a small machine, more where
    /// its work grows with the machine (more CPU pairs, thread counts). Default: 5 s.
    fn budget_share_s(&self, ctx: &RunContext) -> f64 {
        let _ = ctx;
        5.0
    }
    /// The minimum detectable effect a row of it should reach against an identical run on
    /// a quiet host (0.05 = 5%): the run's allocation spends its rounds on the rows furthest
    /// from it (`session::allocate`); `run --precision` sets every row's instead. Default:
    /// 5%.
    fn mde_target(&self, r: &BenchResult) -> f64 {
        let _ = r;
        0.05
    }
    /// The case a row belongs to, where a round can measure some cases only (`RunContext::
    /// only`): the rows the allocation gives more rounds then cost only their own. None
    /// (the default): every round measures every row.
    fn case_of(&self, r: &BenchResult) -> Option<String> {
        let _ = r;
        None
    }
    /// What a row of it is, as the causes and the statistics read it (`nature`: how it
    /// follows the clock, what of the kernel and of memory it uses, its tasks, its
    /// footprint, its run level). Default: none of these.
    fn nature(&self, r: &BenchResult) -> nature::Nature {
        let _ = r;
        nature::Nature::default()
    }
    /// Recompute what the benchmark derives from a result's median, after its rounds were
    /// pooled into one result. Default: nothing derived.
    fn refresh(&self, r: &mut BenchResult) {
        let _ = r;
    }
    /// A row's name in a few words from the params and placement that tell its rows apart
    /// (`label`); None when the params do not read as its own. Default: None (the row is
    /// named by its params as written).
    fn label(&self, params: &crate::result::Params, placement: &str) -> Option<String> {
        let _ = (params, placement);
        None
    }
    /// Where `run` would put each case on this machine, without running (`truebench
    /// plan`); built from the same functions `run` uses. Default: one unpinned case.
    fn plan(&self, ctx: &RunContext) -> Vec<crate::placement::Planned> {
        let _ = ctx;
        vec![crate::placement::Planned::run(
            self.id(),
            "all",
            None,
            "not pinned: the scheduler places it",
        )]
    }
}

impl dyn Benchmark {
    pub fn suite(&self) -> &'static str {
        self.id().split('.').next().unwrap_or("")
    }
}

/// Every benchmark, in run order.
pub static REGISTRY: &[&dyn Benchmark] = &[
    &timers::ClockRead,
    &ctx::PipeRoundTrip,
    &c2c::CacheLine,
    // Latency first: its measured LLC sizes the bandwidth arrays.
    &memory::latency::Latency,
    &memory::bandwidth::Bandwidth,
    &memory::numa::Numa,
    &memory::per_event::PerEvent,
    &classic::DHRYSTONE,
    &classic::WHETSTONE,
    &classic::EXECL,
    &classic::FILE_COPY_1024,
    &classic::FILE_COPY_256,
    &classic::FILE_COPY_4096,
    &classic::PIPE_THROUGHPUT,
    &classic::CONTEXT_SWITCH,
    &classic::PROCESS_CREATION,
    &classic::SHELL_1,
    &classic::SHELL_8,
    &classic::SYSCALL,
];

/// The suites `truebench run` runs when none is named.
pub const DEFAULT_SUITES: &[&str] = &["timers", "ctx", "c2c", "memory"];

/// All suite names, in registry order.
pub fn suites() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    for b in REGISTRY {
        if !v.contains(&b.suite()) {
            v.push(b.suite());
        }
    }
    v
}

/// The benchmarks named: a suite (`memory`), or one benchmark by `family.name` with or
/// without its version (`memory.latency`, `memory.latency@1`). Err(the unknown name).
pub fn select(names: &[String]) -> Result<Vec<&'static dyn Benchmark>, String> {
    let mut out: Vec<&'static dyn Benchmark> = Vec::new();
    for n in names {
        let matched: Vec<&'static dyn Benchmark> = REGISTRY
            .iter()
            .copied()
            .filter(|b| {
                b.suite() == n || b.id() == n || b.id().split('@').next() == Some(n.as_str())
            })
            .collect();
        if matched.is_empty() {
            return Err(n.clone());
        }
        for b in matched {
            if !out.iter().any(|o| o.id() == b.id()) {
                out.push(b);
            }
        }
    }
    Ok(out)
}
