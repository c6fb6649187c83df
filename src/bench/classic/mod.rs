//! The `classic` suite: UnixBench's twelve index tests, doing the same work per loop and
//! indexed against the same "George" baselines, so the numbers stay comparable with
//! published UnixBench indexes, but measured the truebench way: 1 copy and N copies (N from
//! the CPUs this process may really use), copies released together behind a barrier into
//! one window, every pass kept as a sample (median, CI, CV) with UnixBench's own combination
//! beside it, per-copy rates, the scaling efficiency, and where the tasks ran.

pub mod copies;
mod dhrystone;
pub mod score;
mod slot;
mod table;
mod whetstone;
mod work;

pub use copies::WORKER_ARG;
pub use table::*;

/// The suite's name, as `run classic` and its rows' ids (`classic.<test>@<version>`) give it.
pub const SUITE: &str = "classic";

/// Every classic test, in run order.
static TESTS: [&Classic; INDEX_TESTS] = [
    &DHRYSTONE,
    &WHETSTONE,
    &EXECL,
    &FILE_COPY_1024,
    &FILE_COPY_256,
    &FILE_COPY_4096,
    &PIPE_THROUGHPUT,
    &CONTEXT_SWITCH,
    &PROCESS_CREATION,
    &SHELL_1,
    &SHELL_8,
    &SYSCALL,
];

/// A copy worker (`truebench __classic-copy FD INDEX COPIES PIN TEST DIR VARIANT`), exec'd by
/// a pass: it builds the named test's work and runs it as the copy.
pub fn copy_worker(args: &[String]) -> ! {
    copies::worker(args, &|rest, i| {
        let [id, dir, variant] = rest else {
            return Err("TEST DIR VARIANT expected".into());
        };
        let variant: Variant = variant.parse()?;
        let t = TESTS
            .iter()
            .find(|t| t.id == id)
            .ok_or_else(|| format!("no classic test {id}"))?;
        t.make(Path::new(dir), i, &variant)
    })
}

use super::{Benchmark, Emitted, RunContext, Skipped};
use crate::findings::placement::{explain_pair, FORKS, PAIR_FINDINGS, TASKS};
use crate::findings::results::annotate;
use crate::measure::batch::Batch;
use crate::result::observed::{CopiesSeen, CopySeen, CpusSeen, Observed, Tasks};
use crate::result::params::key;
use crate::result::{figures, BenchResult, Placement, Quality};
use copies::{CopyOutcome, Work};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long UnixBench runs a test, which sets our passes and windows.
#[derive(Clone, Copy, PartialEq)]
enum Length {
    /// 10 passes of 10 s.
    Long,
    /// 3 passes of 30 s (execl, file copies, process creation).
    Medium,
    /// 3 passes of 60 s (shell scripts).
    Shell,
}

#[derive(Clone, Copy)]
enum Kind {
    Dhrystone,
    Whetstone,
    Execl,
    FileCopy { buf: usize, file_kb: usize },
    Pipe,
    ContextSwitch,
    ProcessCreation,
    Shell(usize),
    Syscall,
}

impl Kind {
    /// The kernel worker's mode for the tests whose loops run in it (system calls, forks,
    /// execs: their figures must not depend on truebench's own size), None for the tests
    /// that run in truebench's copy worker.
    fn kernel_mode(self) -> Option<&'static str> {
        match self {
            Kind::Execl => Some("execl"),
            Kind::Pipe => Some("pipe"),
            Kind::ContextSwitch => Some("context"),
            Kind::ProcessCreation => Some("spawn"),
            Kind::Syscall => Some("syscall"),
            Kind::Dhrystone | Kind::Whetstone | Kind::FileCopy { .. } | Kind::Shell(_) => None,
        }
    }
}

/// What a test runs besides its plain form: the file copies flushed (`--fsync`), the
/// context-switch pair pinned to one CPU or split over two, measured in the same run so the
/// index can say how far the scheduler's placement moves it, process creation with parent
/// and children pinned to one CPU (unpinned, where a fork's child starts moves the figure),
/// and Whetstone with all of its modules' work (its plain form does the work UnixBench's
/// binary does). None of these enter the index.
#[derive(Debug, Clone, PartialEq)]
enum Variant {
    Plain,
    Fsync,
    /// Each pair on its copy's CPU (the partner, or the forked children, inherit the copy's
    /// pin).
    PairSameCpu,
    /// Copy i's partner pinned to `partners[i % len]`, another CPU than the copy's.
    PairCrossCpu {
        partners: Vec<u32>,
    },
    /// Whetstone's every module as written (`params.work = "all-modules"`).
    AllModules,
}

impl Variant {
    /// The pair placement it pins, if any: `same-cpu` or `cross-cpu`.
    fn pair(&self) -> Option<&'static str> {
        match self {
            Variant::PairSameCpu => Some("same-cpu"),
            Variant::PairCrossCpu { .. } => Some("cross-cpu"),
            _ => None,
        }
    }
}

/// A case's name: `copies=2`, `copies=2,fsync`, `copies=1,pair=same-cpu`,
/// `copies=1,work=all-modules`.
fn case_name(copies: usize, v: &Variant) -> String {
    match (v, v.pair()) {
        (Variant::Fsync, _) => format!("copies={copies},fsync"),
        (Variant::AllModules, _) => format!("copies={copies},work=all-modules"),
        (_, Some(pair)) => format!("copies={copies},pair={pair}"),
        _ => format!("copies={copies}"),
    }
}

/// How a variant travels to an exec'd copy worker.
impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Variant::Plain => write!(f, "plain"),
            Variant::Fsync => write!(f, "fsync"),
            Variant::PairSameCpu => write!(f, "same-cpu"),
            Variant::AllModules => write!(f, "all-modules"),
            Variant::PairCrossCpu { partners } => {
                let list: Vec<String> = partners.iter().map(u32::to_string).collect();
                write!(f, "cross-cpu:{}", list.join(","))
            }
        }
    }
}

impl std::str::FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Variant, String> {
        Ok(match s {
            "plain" => Variant::Plain,
            "fsync" => Variant::Fsync,
            "same-cpu" => Variant::PairSameCpu,
            "all-modules" => Variant::AllModules,
            _ => {
                let list = s
                    .strip_prefix("cross-cpu:")
                    .ok_or_else(|| format!("unknown variant {s}"))?;
                let partners = list
                    .split(',')
                    .map(|c| c.parse::<u32>().map_err(|e| format!("{s}: {e}")))
                    .collect::<Result<Vec<u32>, String>>()?;
                Variant::PairCrossCpu { partners }
            }
        })
    }
}

/// One classic test.
pub struct Classic {
    id: &'static str,
    what: &'static str,
    kind: Kind,
    /// UnixBench's unit, and the factor from counted loops (or bytes) per second to it.
    unit: &'static str,
    per_s_to_unit: f64,
    /// George's score (UnixBench pgms/index.base).
    baseline: f64,
    length: Length,
}

/// The number of tests in the index.
pub const INDEX_TESTS: usize = 12;

/// Passes per round and the window of each pass. With `--full`, UnixBench's windows (10 s,
/// 30 s, 60 s): the 10-second tests two passes a round, so a default run's 5 rounds make
/// UnixBench's 10 passes; the others one a round, 5 passes in 5 rounds where UnixBench runs
/// 3 (as many rounds as the run's other benchmarks, so each row's noise rests on as many).
/// Else the quick plan: one pass of 0.5 s (1 s for the shell scripts) a round, the 5 passes
/// of a default run's 5 rounds keeping every test's spread meaningful and the suite for 1
/// and N copies about 2 minutes.
fn plan(length: Length, full: bool) -> (usize, Duration) {
    match (full, length) {
        (true, Length::Long) => (2, Duration::from_secs(10)),
        (true, Length::Medium) => (1, Duration::from_secs(30)),
        (true, Length::Shell) => (1, Duration::from_secs(60)),
        (false, Length::Shell) => (1, Duration::from_millis(1000)),
        (false, _) => (1, Duration::from_millis(500)),
    }
}

/// The pass before a round's passes of a case, not kept: a tenth of the window. Every pass
/// starts its copies afresh, so what it warms is what outlives a process: the worker and
/// the shell tools in the page cache, the kernel's caches of processes and files, the CPU's
/// clock after another benchmark's round. A fifth of the window (what the suite measured in
/// one piece spent once per case) in every round would cost a default run about 9 s more.
fn warm_up(window: Duration) -> Duration {
    window / 10
}

/// What starting a pass's copies and reaping them costs besides its window, s (a fork and
/// exec per copy, the copies preparing their work before the barrier; a round also makes
/// its directory and installs the kernel worker): part of the expected length of a round
/// (`Benchmark::round_s`).
const LAUNCH_S: f64 = 0.03;

/// The classic suite's own options (`truebench run classic ...`): refused for other suites.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Options {
    /// Classic suite: copy counts to run, comma-separated: numbers, or multiples of N such as
    /// `2x` (default: 1 and N, N = the CPUs this process may really use: affinity ∩ cpuset,
    /// narrowed by a CPU quota). Counts above N are labelled with their copies per CPU.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub copies: Option<Vec<copies::CopyCount>>,
    /// Classic suite: pin the copies one per CPU, spread across nodes, LLCs and cores.
    #[arg(long)]
    pub pin: bool,
    /// Classic suite: UnixBench's passes and durations (10 x 10 s, 3 x 30 s, 3 x 60 s: about
    /// 28 minutes per copy count) instead of the quick plan (5 passes of 0.5-1 s).
    #[arg(long)]
    pub full: bool,
    /// Classic suite: also run the file copies flushed to the device (fdatasync at each
    /// rewind), reported as fsync=true and kept out of the index.
    #[arg(long)]
    pub fsync: bool,
}

impl Options {
    /// The flags given on the command line (for refusing them outside the classic suite).
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.copies.is_some(), "--copies"),
            (self.pin, "--pin"),
            (self.full, "--full"),
            (self.fsync, "--fsync"),
        ]
        .into_iter()
        .filter_map(|(on, flag)| on.then_some(flag))
        .collect()
    }
}

/// The copy counts to run, each with the words that say where it comes from, in the order
/// asked and each once.
pub fn copy_counts(ctx: &RunContext) -> Vec<(usize, String)> {
    let (n, basis) = copies::full_width(&ctx.probe.cpus);
    match &ctx.options.classic.copies {
        Some(list) => {
            let mut out: Vec<(usize, String)> = Vec::new();
            for asked in list {
                let c = asked.resolve(n);
                if out.iter().any(|(seen, _)| *seen == c) {
                    continue;
                }
                let why = match asked {
                    _ if c == n => basis.clone(),
                    copies::CopyCount::PerCpu(k) => {
                        format!("{c} copies: asked as {k}x the {n} of N ({basis})")
                    }
                    copies::CopyCount::Exact(_) => format!("{c} copies: asked with --copies"),
                };
                out.push((c, why));
            }
            out
        }
        None if n > 1 => vec![(1, "1 copy".into()), (n, basis)],
        None => vec![(1, format!("1 copy; {basis}"))],
    }
}

impl Classic {
    /// The variants to run: the file copies also with fsync when `--fsync` asks; the
    /// context-switch pair also pinned to one CPU and split over two CPUs (each an Err with
    /// the reason where it cannot exist here); process creation also with its children on
    /// the copy's CPU (`pair=same-cpu`).
    fn variants(&self, ctx: &RunContext) -> Vec<Result<Variant, (String, String)>> {
        match self.kind {
            Kind::FileCopy { .. } if ctx.options.classic.fsync => {
                vec![Ok(Variant::Plain), Ok(Variant::Fsync)]
            }
            Kind::Whetstone => vec![Ok(Variant::Plain), Ok(Variant::AllModules)],
            Kind::ProcessCreation => vec![Ok(Variant::Plain), Ok(Variant::PairSameCpu)],
            Kind::ContextSwitch => {
                let order = crate::placement::spread_order(ctx.probe);
                let cross = if order.len() < 2 {
                    Err((
                        "cross-cpu".to_string(),
                        "one usable CPU: the pair cannot be split over two CPUs".to_string(),
                    ))
                } else {
                    // Copy i runs on order[i]; its partner on the next CPU of the spread
                    // order (another core, LLC or node first).
                    let partners = (0..order.len())
                        .map(|i| order[(i + 1) % order.len()])
                        .collect();
                    Ok(Variant::PairCrossCpu { partners })
                };
                vec![Ok(Variant::Plain), Ok(Variant::PairSameCpu), cross]
            }
            _ => vec![Ok(Variant::Plain)],
        }
    }

    fn skip_reason(&self) -> Option<String> {
        match self.kind {
            Kind::Shell(_) => work::missing_shell_tool()
                .map(|t| format!("the shell tests need {t}, which is not installed")),
            k if k.kernel_mode().is_some() => work::kernel_worker_size().err(),
            _ => None,
        }
    }

    /// The CPUs copy i is pinned to (round robin), when the copies are pinned: with `--pin`,
    /// and for the pinned context-switch pairs.
    fn pins(&self, ctx: &RunContext, variant: &Variant) -> Option<Vec<u32>> {
        (ctx.options.classic.pin || variant.pair().is_some())
            .then(|| crate::placement::spread_order(ctx.probe))
    }

    fn make(&self, dir: &Path, copy: usize, variant: &Variant) -> Result<Box<dyn Work>, String> {
        let fsync = *variant == Variant::Fsync;
        let own = dir.join(format!("copy-{copy}"));
        let mkdir = || std::fs::create_dir_all(&own).map_err(|e| format!("{}: {e}", own.display()));
        Ok(match self.kind {
            Kind::Dhrystone => Box::new(work::dhrystone()),
            Kind::Whetstone => Box::new(work::whetstone(match variant {
                Variant::AllModules => whetstone::Modules::All,
                _ => whetstone::Modules::AsUnixBench,
            })),
            Kind::FileCopy { buf, file_kb } => {
                mkdir()?;
                Box::new(work::file_copy(&own, buf, file_kb, fsync)?)
            }
            Kind::Shell(k) => {
                mkdir()?;
                Box::new(work::shell(&own, k)?)
            }
            Kind::Execl
            | Kind::Pipe
            | Kind::ContextSwitch
            | Kind::ProcessCreation
            | Kind::Syscall => return Err(format!("{} runs in the kernel worker", self.id)),
        })
    }

    /// The worker the copies exec and its arguments after FD INDEX COPIES PIN: the kernel
    /// worker (installed into `dir` here) with MODE VARIANT, or truebench with TEST DIR
    /// VARIANT.
    fn launch_args(&self, dir: &Path, variant: &Variant) -> anyhow::Result<(PathBuf, Vec<String>)> {
        Ok(match self.kind.kernel_mode() {
            Some(mode) => (
                work::install_kernel_worker(dir)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", self.id))?,
                vec![mode.to_string(), variant.to_string()],
            ),
            None => (
                std::env::current_exe()?,
                vec![
                    self.id.to_string(),
                    dir.display().to_string(),
                    variant.to_string(),
                ],
            ),
        })
    }

    /// One round of one copy count: a short warm-up pass, then the round's passes, and its
    /// result. None when the budget left no room for a pass (`deadline`): a pass is not
    /// started when its window would end past the deadline, nor after the deadline or
    /// Ctrl-C (the passes finished are kept; Ctrl-C then ends the run as `Interrupted`).
    fn measure(
        &self,
        ctx: &RunContext,
        copies: usize,
        basis: &str,
        variant: &Variant,
    ) -> anyhow::Result<Option<BenchResult>> {
        let (passes, window) = plan(self.length, ctx.options.classic.full);
        let warm = warm_up(window);
        if crate::deadline::would_overrun((warm + window).as_secs_f64()) {
            return Ok(None);
        }
        let pins = self.pins(ctx, variant);
        let dir = tempfile::Builder::new()
            .prefix("truebench-classic-")
            .tempdir()?;
        let (exe, args) = self.launch_args(dir.path(), variant)?;
        let launch = copies::Launch::Exec { exe: &exe, args };
        copies::pass(copies, pins.as_deref(), warm, &launch)
            .map_err(|e| e.context(format!("{} warm-up", self.id)))?;
        let mut per_pass: Vec<Vec<CopyOutcome>> = Vec::with_capacity(passes);
        for _ in 0..passes {
            if crate::deadline::stop_requested()
                || crate::deadline::would_overrun(window.as_secs_f64())
            {
                break;
            }
            per_pass.push(copies::pass(copies, pins.as_deref(), window, &launch)?);
        }
        if crate::interrupt::requested() {
            return Err(crate::error::Interrupted.into());
        }
        if per_pass.is_empty() {
            return Ok(None);
        }
        let rates: Vec<f64> = per_pass
            .iter()
            .map(|out| out.iter().map(|c| c.rate_per_s()).sum::<f64>() * self.per_s_to_unit)
            .collect();
        let batches: Vec<Batch> = per_pass
            .iter()
            .map(|out| Batch {
                iterations: out.iter().map(|c| c.count).sum(),
                elapsed_ns: out.iter().map(|c| c.span_ns).sum::<u64>() / copies as u64,
            })
            .collect();
        let (n, _) = copies::full_width(&ctx.probe.cpus);
        let mut params = crate::result::Params::of([
            ("copies", crate::result::ParamValue::from(copies)),
            ("copies_per_cpu", (copies as f64 / n as f64).into()),
            ("copies_basis", basis.into()),
            ("passes_per_round", passes.into()),
            ("window_s", window.as_secs_f64().into()),
            (
                "plan",
                if ctx.options.classic.full {
                    "full"
                } else {
                    "quick"
                }
                .into(),
            ),
        ]);
        match self.kind {
            Kind::FileCopy { .. } => params.insert("fsync", *variant == Variant::Fsync),
            Kind::Whetstone => params.insert(
                "work",
                match variant {
                    Variant::AllModules => whetstone::Modules::All,
                    _ => whetstone::Modules::AsUnixBench,
                }
                .param(),
            ),
            Kind::ContextSwitch | Kind::ProcessCreation => {
                if let Some(pair) = variant.pair() {
                    params.insert("pair", pair);
                }
            }
            Kind::Execl => {
                params.insert("exec_target", work::KERNEL_WORKER_NAME);
                if let Ok(bytes) = work::kernel_worker_size() {
                    params.insert("exec_target_bytes", bytes);
                }
            }
            _ => {}
        }
        let placement = match &pins {
            Some(p) => {
                let mut cpus: Vec<u32> = (0..copies).map(|i| p[i % p.len()]).collect();
                if let Variant::PairCrossCpu { partners } = variant {
                    cpus.extend((0..copies).map(|i| partners[i % partners.len()]));
                    cpus.sort_unstable();
                    cpus.dedup();
                }
                Placement {
                    cpu_kinds: None,
                    name: variant.pair().unwrap_or("per-copy").into(),
                    cpus: Some(cpus),
                    observed: Some(self.observed(&per_pass)),
                }
            }
            None => Placement {
                observed: Some(self.observed(&per_pass)),
                ..Placement::os()
            },
        };
        let mut res = BenchResult::new(
            self.id,
            params,
            placement,
            self.unit,
            false,
            rates,
            Quality::of(ctx.clock_cost_ns, &batches),
        )
        .ok_or_else(|| anyhow::anyhow!("{}: no valid pass", self.id))?;
        self.derive(&mut res);
        annotate(&mut res);
        crate::findings::placement::mixed_cpu_kinds(&ctx.probe.topology.cpu_kinds, &mut res);
        Ok(Some(res))
    }

    /// What the test derives from a row's passes: its index (from the median) against its
    /// baseline, and UnixBench's own combination of the passes and its index. Measured per
    /// round, and again on the row pooled from its rounds (`Benchmark::refresh`).
    fn derive(&self, r: &mut BenchResult) {
        let d = &mut r.derived;
        d.insert(
            figures::INDEX.into(),
            score::index(r.stats.median, self.baseline),
        );
        d.insert(figures::BASELINE.into(), self.baseline);
        d.remove(figures::SCALING_EFFICIENCY);
        match score::unixbench_style(&r.samples) {
            Some(ub) => {
                d.insert(figures::UNIXBENCH_SCORE.into(), ub);
                d.insert(
                    figures::UNIXBENCH_INDEX.into(),
                    score::index(ub, self.baseline),
                );
            }
            None => {
                d.remove(figures::UNIXBENCH_SCORE);
                d.remove(figures::UNIXBENCH_INDEX);
            }
        }
    }

    /// Where the copies ran and what each did, pass by pass.
    fn observed(&self, per_pass: &[Vec<CopyOutcome>]) -> Observed {
        let copies = per_pass.first().map(|p| p.len()).unwrap_or(0);
        let mut a: BTreeSet<u32> = BTreeSet::new();
        let mut b: BTreeSet<u32> = BTreeSet::new();
        let (mut together, mut obs) = (0, 0);
        let per_copy: Vec<CopySeen> = (0..copies)
            .map(|i| {
                let mut seen: BTreeSet<u32> = BTreeSet::new();
                let mut partner: BTreeSet<u32> = BTreeSet::new();
                let mut rates = Vec::new();
                for pass in per_pass {
                    let c = &pass[i];
                    seen.extend(&c.cpus_seen);
                    partner.extend(&c.partner_cpus_seen);
                    together += c.colocated;
                    obs += c.observations;
                    rates.push(c.rate_per_s() * self.per_s_to_unit);
                }
                a.extend(&seen);
                b.extend(&partner);
                CopySeen {
                    cpus_seen: seen,
                    rates,
                    partner_cpus_seen: (!partner.is_empty()).then_some(partner),
                }
            })
            .collect();
        let pairs = matches!(self.kind, Kind::ContextSwitch | Kind::ProcessCreation);
        Observed::Copies(CopiesSeen {
            copies: per_copy,
            observations: pairs.then_some(obs as u64),
            colocated_fraction: pairs.then_some(if obs > 0 {
                together as f64 / obs as f64
            } else {
                0.0
            }),
            tasks: pairs.then_some(Tasks {
                a: CpusSeen { cpus_seen: a },
                b: CpusSeen { cpus_seen: b },
            }),
            cpu_kinds: None,
        })
    }
}

impl Benchmark for Classic {
    /// "syscall 1 copy", "context-switch 2 copies same-cpu", "file-copy-256 1 copy fsync".
    fn label(&self, params: &crate::result::Params, _: &str) -> Option<String> {
        let name = self.id.split('@').next()?.split_once('.')?.1;
        let copies = params.copies()?;
        let mut s = format!("{name} {}", crate::units::count(copies, "copy"));
        if params.fsync() == Some(true) {
            s.push_str(" fsync");
        }
        if let Some(work) = params.work() {
            if work != whetstone::Modules::AsUnixBench.param() {
                s.push_str(&format!(" {work} work"));
            }
        }
        if let Some(pair) = params.pair() {
            s.push_str(&format!(" {pair}"));
        }
        Some(s)
    }

    fn id(&self) -> &'static str {
        self.id
    }

    /// CPU work that follows the core clock (but the file copies, which the page cache
    /// and the file system set); the compute loops never enter the kernel, the tests of
    /// pipes between tasks, forks, execs and shells sleep and are woken there.
    fn nature(&self, _: &BenchResult) -> crate::bench::nature::Nature {
        use crate::bench::nature::{Clock, Kernel, Nature};
        let (clock, kernel) = match self.kind {
            Kind::Dhrystone | Kind::Whetstone => (Clock::Follows, Kernel::Never),
            Kind::FileCopy { .. } => (Clock::No, Kernel::Enters),
            Kind::Syscall => (Clock::Follows, Kernel::Enters),
            Kind::Execl
            | Kind::Pipe
            | Kind::ContextSwitch
            | Kind::ProcessCreation
            | Kind::Shell(_) => (Clock::Follows, Kernel::Sleeps),
        };
        Nature {
            clock,
            kernel,
            ..Nature::default()
        }
    }

    /// A round's passes come from the plan (`plan`), not from `--samples`: one of 0.5-1 s
    /// in the quick plan, so a round is one sample of each case.
    fn min_samples_per_round(&self) -> usize {
        1
    }

    /// Every runnable case's warm-up, passes and launches: the windows are fixed, so a
    /// round's length is known before it runs (what a budget plans with).
    fn round_s(&self, ctx: &RunContext) -> Option<f64> {
        if self.skip_reason().is_some() {
            return Some(0.0);
        }
        let (passes, window) = plan(self.length, ctx.options.classic.full);
        let case = warm_up(window).as_secs_f64()
            + passes as f64 * window.as_secs_f64()
            + (passes + 1) as f64 * LAUNCH_S;
        Some(self.planned(ctx) as f64 * case)
    }

    /// The row pooled from its rounds: its index and UnixBench's combination from every
    /// kept pass, and whether its rounds disagree (`findings::classic::rounds_disagree`).
    fn refresh(&self, r: &mut BenchResult) {
        self.derive(r);
        r.findings
            .retain(|f| f.id != crate::findings::classic::ROUNDS_DISAGREE);
        if let Some(f) = crate::findings::classic::rounds_disagree(r) {
            r.findings.push(f);
        }
    }

    fn levels(&self) -> &'static [super::levels::LevelUse] {
        use super::levels::*;
        const L: &[LevelUse] = &[
            per_sample(Level::Sample, "each pass is a sample"),
            per_sample(
                Level::Allocation,
                "each pass's copies are fresh processes with fresh memory",
            ),
            per_sample(
                Level::Process,
                "each pass starts its copies afresh; the scheduler places them anew",
            ),
            between_runs(
                Level::Run,
                "frequency and neighbours of the run: separate runs (calibrate)",
            ),
            BOOT_AND_HOST[0],
            BOOT_AND_HOST[1],
        ];
        L
    }

    fn describe(&self) -> &'static str {
        self.what
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        copy_counts(ctx).len() * self.variants(ctx).iter().filter(|v| v.is_ok()).count()
    }

    /// What its rounds take by default: five rounds (`round_s`: per result its passes, the
    /// warm-up and the copies' launches) and a fifth more for rounds measured again (a
    /// quick run of the suite about 80 s for 1 and N copies; `--full` about 2 hours).
    fn budget_share_s(&self, ctx: &RunContext) -> f64 {
        // A run's five rounds by default (`run --rounds`).
        5.0 * self.round_s(ctx).unwrap_or(0.0) * 1.2
    }

    fn plan(&self, ctx: &RunContext) -> Vec<crate::placement::Planned> {
        use crate::placement::Planned;
        let mut out = Vec::new();
        for variant in self.variants(ctx) {
            for (c, basis) in copy_counts(ctx) {
                let case = match &variant {
                    Ok(v) => case_name(c, v),
                    Err((name, _)) => format!("copies={c},pair={name}"),
                };
                out.push(match (self.skip_reason(), &variant) {
                    (Some(reason), _) => Planned::skip(self.id, case, reason),
                    (None, Err((_, reason))) => Planned::skip(self.id, case, reason.clone()),
                    (None, Ok(v)) => match self.pins(ctx, v) {
                        Some(order) => {
                            let mut cpus: Vec<u32> =
                                order.iter().copied().cycle().take(c).collect();
                            let why = match v {
                                Variant::PairSameCpu
                                    if matches!(self.kind, Kind::ProcessCreation) =>
                                {
                                    "each copy and its children on the copy's CPU"
                                }
                                Variant::PairSameCpu => "each pair on its copy's CPU",
                                Variant::PairCrossCpu { partners } => {
                                    cpus.extend(partners.iter().copied().cycle().take(c));
                                    "each copy's partner on the next CPU of the spread order"
                                }
                                _ => "pinned one per CPU, spread by topology",
                            };
                            Planned::run(self.id, case, Some(cpus), format!("{basis}; {why}"))
                        }
                        None => Planned::run(self.id, case, None, format!("{basis}; not pinned")),
                    },
                });
            }
        }
        out
    }

    /// One round: each variant and copy count in turn, a warm-up and the round's passes
    /// each (`measure`). The budget ends a round between cases (what was measured is
    /// kept); Ctrl-C ends it as `Interrupted`.
    fn run(&self, ctx: &RunContext, emit: &mut dyn FnMut(Emitted)) -> anyhow::Result<()> {
        if let Some(reason) = self.skip_reason() {
            for (c, _) in copy_counts(ctx) {
                emit(Emitted::Skipped(Skipped {
                    benchmark: self.id.into(),
                    case: format!("copies={c}"),
                    reason: reason.clone(),
                }));
            }
            return Ok(());
        }
        for variant in self.variants(ctx) {
            let variant = match variant {
                Ok(v) => v,
                Err((name, reason)) => {
                    for (c, _) in copy_counts(ctx) {
                        emit(Emitted::Skipped(Skipped {
                            benchmark: self.id.into(),
                            case: format!("copies={c},pair={name}"),
                            reason: reason.clone(),
                        }));
                    }
                    continue;
                }
            };
            for (c, basis) in copy_counts(ctx) {
                if crate::interrupt::requested() {
                    return Err(crate::error::Interrupted.into());
                }
                if crate::deadline::expired() {
                    return Ok(());
                }
                emit(Emitted::Running(case_name(c, &variant)));
                match self.measure(ctx, c, &basis, &variant)? {
                    Some(r) => emit(Emitted::Result(Box::new(r))),
                    None => return Ok(()),
                }
            }
        }
        Ok(())
    }
}

/// The classic rows of a run once pooled from their rounds: each N-copy row's scaling
/// efficiency against its 1-copy row (the same test and variant), and for the unpinned
/// context-switch and process-creation rows the placement finding from every kept round's
/// observations (`findings::placement::explain_pair`).
pub fn finish(results: &mut [BenchResult], probe: &crate::probe::ProbeDoc) {
    let one_copy: Vec<(String, f64)> = results
        .iter()
        .filter(|r| r.benchmark.starts_with("classic.") && copies_of(r) == Some(1))
        .map(|r| (variant_key(r), r.stats.median))
        .collect();
    for r in results.iter_mut() {
        if !r.benchmark.starts_with("classic.") {
            continue;
        }
        let Some(c) = copies_of(r) else { continue };
        let one = one_copy
            .iter()
            .find(|(k, _)| *k == variant_key(r))
            .map(|(_, m)| *m);
        match one.filter(|_| c > 1) {
            Some(one) => {
                r.derived.insert(
                    figures::SCALING_EFFICIENCY.into(),
                    score::scaling_efficiency(r.stats.median, c as usize, one),
                );
            }
            None => {
                r.derived.remove(figures::SCALING_EFFICIENCY);
            }
        }
        if r.placement.cpus.is_some() {
            continue;
        }
        let (words, more) = match r.base_id() {
            "classic.context-switch" => (&TASKS, "`truebench run ctx` measures each placement (same CPU, same LLC, ...) on its own"),
            "classic.process-creation" => (&FORKS, "each child tells in its exit status the CPU it started on (one vDSO getcpu in parent and child per fork)"),
            _ => continue,
        };
        r.findings
            .retain(|f| !PAIR_FINDINGS.contains(&f.id.as_str()));
        if let Some(mut f) = explain_pair(words, r, &[], &probe.findings) {
            f.evidence.push(more.into());
            r.findings.push(f);
        }
    }
}

fn copies_of(r: &BenchResult) -> Option<u64> {
    r.params.copies()
}

/// A classic row's test and variant without its copy count: its benchmark, placement and
/// the params that name a variant (fsync, work, pair).
fn variant_key(r: &BenchResult) -> String {
    let p = |k: &str| r.params.get(k).map(|v| v.to_string()).unwrap_or_default();
    format!(
        "{} [{}] fsync={} work={} pair={}",
        r.benchmark,
        r.placement.name,
        p(key::FSYNC),
        p(key::WORK),
        p(key::PAIR)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each test's work, run by one copy for a short window (the kernel worker's tests
    /// through the kernel worker, exec'd as in a run; the others in a forked copy): it
    /// completes loops, checks what its calls returned, and lands in a plausible range for
    /// its unit.
    #[test]
    fn each_test_does_its_work_in_a_short_window() {
        // (test, lowest plausible rate, highest plausible rate), in the test's unit.
        let cases: [(&Classic, f64, f64); 12] = [
            (&DHRYSTONE, 1e6, 1e10),
            (&WHETSTONE, 50.0, 1e6),
            // Chains of 10 execs of a 20 KB program: 0.1 ms to 100 ms an exec.
            (&EXECL, 10.0, 1e4),
            (&FILE_COPY_1024, 1e4, 1e9),
            (&FILE_COPY_256, 1e3, 1e9),
            (&FILE_COPY_4096, 1e4, 1e9),
            // Two system calls a loop: never more than ~10^8 a second.
            (&PIPE_THROUGHPUT, 1e3, 5e7),
            (&CONTEXT_SWITCH, 1e2, 1e7),
            // A fork of a small program: 10 µs to 100 ms.
            (&PROCESS_CREATION, 10.0, 1e5),
            (&SHELL_1, 6.0, 1e6),
            (&SHELL_8, 1.0, 1e6),
            // Five system calls a loop.
            (&SYSCALL, 1e3, 2e7),
        ];
        for (t, lo, hi) in cases {
            let dir = tempfile::tempdir().unwrap();
            let window = if t.length == Length::Shell { 400 } else { 60 };
            let make = |i: usize| t.make(dir.path(), i, &Variant::Plain);
            let (exe, args) = t.launch_args(dir.path(), &Variant::Plain).unwrap();
            let launch = match t.kind.kernel_mode() {
                Some(_) => copies::Launch::Exec { exe: &exe, args },
                None => copies::Launch::InProcess(&make),
            };
            let out = copies::pass(1, None, Duration::from_millis(window), &launch)
                .unwrap_or_else(|e| panic!("{}: {e}", t.id));
            let rate = out[0].rate_per_s() * t.per_s_to_unit;
            assert!(out[0].count > 0, "{}: no loop completed", t.id);
            assert!(
                (lo..hi).contains(&rate),
                "{}: {rate} {} is implausible",
                t.id,
                t.unit
            );
        }
    }

    /// The CPUs this process may run on.
    fn usable_cpus() -> Vec<u32> {
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        (0..nix::sched::CpuSet::count())
            .filter(|c| set.is_set(*c).unwrap_or(false))
            .map(|c| c as u32)
            .collect()
    }

    /// The syscall and pipe loops make UnixBench's system calls, call for call, as strace
    /// sees them (the user code around them is the compiler's; the system calls are the
    /// work). syscall, per loop: close(dup(fd)) on a pipe's read end whose write end was
    /// closed first (UnixBench's create_fd), getpid as a system call in every loop (through
    /// `syscall()` as UnixBench's: glibc before 2.25 answered `getpid()` from a cache),
    /// getuid, umask(022). pipe, per loop: 512 bytes written into the pipe, 512 read back.
    #[test]
    fn the_syscall_and_pipe_loops_make_unixbenchs_system_calls() {
        let dir = tempfile::tempdir().unwrap();
        // Each loop's calls as strace prints them (pid and padding dropped), R and W the
        // pipe's ends, `*` any text.
        let cases: [(&Classic, &[&str]); 2] = [
            (
                &SYSCALL,
                &[
                    "close(W) = 0",
                    "dup(R) = W",
                    "getpid() = *",
                    "getuid() = *",
                    "umask(022) = 022",
                ],
            ),
            (
                &PIPE_THROUGHPUT,
                &[
                    "read(R, \"*\"..., 512) = 512",
                    "write(W, \"*\"..., 512) = 512",
                ],
            ),
        ];
        for (t, per_loop) in cases {
            let mode = t.kind.kernel_mode().unwrap();
            let sub = dir.path().join(mode);
            std::fs::create_dir(&sub).unwrap();
            let (worker, args) = t.launch_args(&sub, &Variant::Plain).unwrap();
            let trace = sub.join("trace");
            let traced = sub.join("traced");
            std::fs::write(
                &traced,
                format!(
                    "#!/bin/sh\nexec strace -f -qq -s 4 -o '{}' '{}' \"$@\"\n",
                    trace.display(),
                    worker.display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&traced, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            let launch = copies::Launch::Exec { exe: &traced, args };
            let out =
                copies::pass(1, None, Duration::from_millis(30), &launch).unwrap_or_else(|e| {
                    panic!("{} under strace (scripts/test installs it): {e}", t.id)
                });
            let loops = out[0].count;
            assert!(loops > 0, "{}: no loop completed", t.id);
            let text = std::fs::read_to_string(&trace).unwrap();
            // Each call without its pid and with single spaces.
            let calls: Vec<String> = text
                .lines()
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
                .collect();
            // The pipe made before the barrier: `pipe2([R, W], 0) = 0`.
            let made = calls
                .iter()
                .find(|c| c.starts_with("pipe"))
                .unwrap_or_else(|| panic!("{}: no pipe made:\n{text}", t.id));
            let ends: Vec<&str> = made
                .split(['[', ']'])
                .nth(1)
                .unwrap_or_default()
                .split(", ")
                .collect();
            let [r, w] = ends[..] else {
                panic!("{}: {made}", t.id)
            };
            let mut counts = std::collections::BTreeMap::<&str, u64>::new();
            for c in &calls {
                *counts.entry(c).or_default() += 1;
            }
            // The calls made in (nearly) every loop, and how often.
            let looped: Vec<(&str, u64)> = counts
                .into_iter()
                .filter(|(_, n)| *n >= loops / 2)
                .collect();
            let matches = |pattern: &str, call: &str| {
                let p = pattern.replace('R', r).replace('W', w);
                let (head, tail) = p.split_once('*').unwrap_or((&p, ""));
                call.len() >= head.len() + tail.len()
                    && call.starts_with(head)
                    && call.ends_with(tail)
                    && (p.contains('*') || call == p)
            };
            assert_eq!(looped.len(), per_loop.len(), "{}: {looped:?}", t.id);
            for (pattern, (call, n)) in per_loop.iter().zip(&looped) {
                assert!(
                    matches(pattern, call),
                    "{}: {call} is not {pattern} (R={r}, W={w})",
                    t.id
                );
                // The one extra: the write end closed before the loop, the pid read once.
                assert!(
                    (loops - 1..=loops + 1).contains(n),
                    "{}: {call} {n} times in {loops} loops",
                    t.id
                );
            }
            if mode == "syscall" {
                let first = |p: &str| calls.iter().position(|c| c.starts_with(p)).unwrap();
                assert!(
                    first(&format!("close({w})")) < first("dup("),
                    "{}: the write end is open during the loop",
                    t.id
                );
            }
        }
    }

    /// The kernel worker's context-switch pair, pinned to one CPU and split over two: the
    /// partner is seen where it was put, and a round trip takes between 0.1 µs and 10 ms.
    #[test]
    fn the_kernel_workers_pairs_run_where_they_are_pinned() {
        let cpus = usable_cpus();
        let dir = tempfile::tempdir().unwrap();
        let mut variants = vec![(Variant::PairSameCpu, cpus[0])];
        if cpus.len() >= 2 {
            variants.push((
                Variant::PairCrossCpu {
                    partners: vec![cpus[1]],
                },
                cpus[1],
            ));
        }
        for (i, (v, partner_cpu)) in variants.into_iter().enumerate() {
            let sub = dir.path().join(i.to_string());
            std::fs::create_dir(&sub).unwrap();
            let (exe, args) = CONTEXT_SWITCH.launch_args(&sub, &v).unwrap();
            let launch = copies::Launch::Exec { exe: &exe, args };
            let out = copies::pass(1, Some(&cpus[..1]), Duration::from_millis(100), &launch)
                .unwrap_or_else(|e| panic!("{v}: {e}"));
            let c = &out[0];
            assert_eq!(c.cpus_seen, vec![cpus[0]], "{v}: {c:?}");
            assert!(c.observations > 0, "{v}: the partner was never seen: {c:?}");
            assert_eq!(c.partner_cpus_seen, vec![partner_cpu], "{v}: {c:?}");
            assert!((1e2..1e7).contains(&c.rate_per_s()), "{v}: {c:?}");
        }
    }

    /// Process creation counts where each fork's child started: pinned (pair=same-cpu),
    /// every child starts on the copy's CPU; unpinned, every fork is counted and the
    /// children's CPUs are among the usable ones.
    #[test]
    fn process_creation_sees_where_its_children_start() {
        let cpus = usable_cpus();
        let dir = tempfile::tempdir().unwrap();
        for (i, (v, pins)) in [
            (Variant::PairSameCpu, Some(&cpus[..1])),
            (Variant::Plain, None),
        ]
        .into_iter()
        .enumerate()
        {
            let sub = dir.path().join(i.to_string());
            std::fs::create_dir(&sub).unwrap();
            let (exe, args) = PROCESS_CREATION.launch_args(&sub, &v).unwrap();
            assert_eq!(args, vec!["spawn".to_string(), v.to_string()]);
            let launch = copies::Launch::Exec { exe: &exe, args };
            let out = copies::pass(1, pins, Duration::from_millis(100), &launch)
                .unwrap_or_else(|e| panic!("{v}: {e}"));
            let c = &out[0];
            // Every fork counted (10 a batch), none of them twice.
            assert_eq!(c.observations as u64, c.count, "{v}: {c:?}");
            assert!(c.colocated <= c.observations, "{v}: {c:?}");
            assert!(!c.partner_cpus_seen.is_empty(), "{v}: {c:?}");
            assert!(
                c.partner_cpus_seen.iter().all(|p| cpus.contains(p)),
                "{v}: {c:?}"
            );
            if pins.is_some() {
                assert_eq!(c.colocated, c.observations, "{v}: {c:?}");
                assert_eq!(c.partner_cpus_seen, vec![cpus[0]], "{v}: {c:?}");
            }
        }
    }

    /// The variant names: how each travels to a copy worker and the case it is reported as
    /// (process creation's pinned form shares the context switch's `pair=same-cpu`).
    #[test]
    fn variant_names() {
        let cases = [
            (Variant::Plain, "plain", "copies=1"),
            (Variant::PairSameCpu, "same-cpu", "copies=1,pair=same-cpu"),
            (
                Variant::PairCrossCpu {
                    partners: vec![1, 0],
                },
                "cross-cpu:1,0",
                "copies=1,pair=cross-cpu",
            ),
            (Variant::Fsync, "fsync", "copies=1,fsync"),
            (
                Variant::AllModules,
                "all-modules",
                "copies=1,work=all-modules",
            ),
        ];
        for (v, arg, case) in cases {
            assert_eq!(v.to_string(), arg);
            assert_eq!(arg.parse::<Variant>().unwrap(), v);
            assert_eq!(case_name(1, &v), case);
        }
        assert!("cross-cpu:x".parse::<Variant>().is_err());
        assert!("pinned".parse::<Variant>().is_err());
    }

    /// A copy the kernel worker cannot prepare fails the pass with its reason, and bad
    /// arguments are refused.
    #[test]
    fn the_kernel_worker_reports_why_a_copy_failed() {
        let dir = tempfile::tempdir().unwrap();
        let exe = work::install_kernel_worker(dir.path()).unwrap();
        let launch = copies::Launch::Exec {
            exe: &exe,
            args: vec!["no-such-mode".into(), "plain".into()],
        };
        let e = copies::pass(1, None, Duration::from_millis(20), &launch).unwrap_err();
        assert!(e.to_string().contains("unknown mode"), "{e}");
        // A partner CPU that cannot exist.
        let launch = copies::Launch::Exec {
            exe: &exe,
            args: vec!["context".into(), "cross-cpu:100000".into()],
        };
        let e = copies::pass(1, None, Duration::from_millis(20), &launch).unwrap_err();
        assert!(e.to_string().contains("could not be pinned"), "{e}");
        // Process creation has no cross-CPU form (a child cannot be placed without work in
        // the child).
        let launch = copies::Launch::Exec {
            exe: &exe,
            args: vec!["spawn".into(), "cross-cpu:0".into()],
        };
        let e = copies::pass(1, None, Duration::from_millis(20), &launch).unwrap_err();
        assert!(e.to_string().contains("plain or same-cpu"), "{e}");
        // A chain link: exits 73 at the end of the chain, 2 on anything but a number.
        let status = |args: &[&str]| {
            std::process::Command::new(&exe)
                .args(args)
                .status()
                .unwrap()
                .code()
        };
        assert_eq!(status(&["3"]), Some(73));
        assert_eq!(status(&["three"]), Some(2));
        assert_eq!(status(&["__classic-copy", "1"]), Some(2));
    }

    #[test]
    fn the_file_copy_with_fsync_still_copies() {
        let dir = tempfile::tempdir().unwrap();
        let make = |i: usize| FILE_COPY_256.make(dir.path(), i, &Variant::Fsync);
        let out = copies::pass(
            1,
            None,
            Duration::from_millis(60),
            &copies::Launch::InProcess(&make),
        )
        .unwrap();
        assert!(out[0].count > 0);
    }

    #[test]
    fn the_shell_input_is_fixed_text_with_the_grepped_word() {
        let a = work::shell_input();
        assert_eq!(a, work::shell_input());
        assert!((8500..9000).contains(&a.len()), "{}", a.len());
        assert!(a.contains("the "));
    }

    #[test]
    fn pooled_rows_get_their_scaling_from_the_pooled_one_copy_row_of_their_variant() {
        let row = |copies: u64, pair: Option<&str>, m: f64| {
            let mut params = serde_json::json!({"copies": copies});
            if let Some(p) = pair {
                params["pair"] = p.into();
            }
            let mut r = crate::result::testing::result(
                "classic.context-switch@1",
                pair.unwrap_or("os"),
                pair.map(|_| vec![0, 1]),
                params,
                m,
            );
            // Scaled from one round's figure by merge: stale until `finish`.
            r.derived.insert(figures::SCALING_EFFICIENCY.into(), 9.0);
            r
        };
        let mut rows = vec![
            row(1, None, 100.0),
            row(2, None, 150.0),
            row(1, Some("same-cpu"), 200.0),
            row(2, Some("same-cpu"), 400.0),
        ];
        finish(&mut rows, &crate::probe::fixture("this-vm"));
        let eff = |i: usize| rows[i].derived.get(figures::SCALING_EFFICIENCY).copied();
        assert_eq!(eff(0), None, "one copy has no scaling");
        assert_eq!(eff(1), Some(0.75));
        assert_eq!(eff(2), None);
        assert_eq!(
            eff(3),
            Some(1.0),
            "the pinned pair against its own 1-copy row"
        );
    }

    #[test]
    fn a_rounds_length_is_its_cases_windows_warm_ups_and_launches() {
        let probe = crate::probe::fixture("this-vm");
        let options = crate::bench::RunOptions::default();
        let measured = crate::bench::Measured::default();
        let ctx = RunContext {
            probe: &probe,
            options: &options,
            samples: 10,
            clock_cost_ns: 20.0,
            min_batch_ns: 2e6,
            measured: &measured,
            only: None,
        };
        // 1 and N copies of one pass of 0.5 s, a warm-up of 0.05 s, two launches.
        let want = SYSCALL.planned(&ctx) as f64 * (0.05 + 0.5 + 2.0 * LAUNCH_S);
        let got = SYSCALL.round_s(&ctx).unwrap();
        assert!((got - want).abs() < 1e-9, "{got} {want}");
        assert_eq!(SYSCALL.planned(&ctx), copy_counts(&ctx).len());
        // Three context-switch variants: three times the cases.
        let ctx_s = CONTEXT_SWITCH.round_s(&ctx).unwrap();
        assert!(ctx_s >= got, "{ctx_s} {got}");
    }

    #[test]
    fn quick_and_full_plans() {
        // --full: UnixBench's windows; its 10 passes of the 10-second tests in 5 rounds.
        assert_eq!(plan(Length::Long, true), (2, Duration::from_secs(10)));
        assert_eq!(plan(Length::Medium, true), (1, Duration::from_secs(30)));
        assert_eq!(plan(Length::Shell, true), (1, Duration::from_secs(60)));
        // Quick: one short pass a round.
        let (p, w) = plan(Length::Medium, false);
        assert!(p == 1 && w <= Duration::from_secs(1));
        assert_eq!(
            warm_up(Duration::from_millis(500)),
            Duration::from_millis(50)
        );
    }
}
