//! The `classic` suite: UnixBench's twelve index tests, doing the same work per loop and
//! indexed against the same "George" baselines, so the numbers stay comparable with
//! published UnixBench indexes, but measured the truebench way: 1 copy and N copies (N from
//! the CPUs this process may really use), copies released together behind a barrier into
//! one window, every pass kept as a sample (median, CI, CV) with UnixBench's own combination
//! beside it, per-copy rates, the scaling efficiency, and where the tasks ran.

pub mod copies;
mod dhrystone;
pub mod score;
mod whetstone;
mod work;

pub use copies::WORKER_ARG;
pub use work::{execl_link, EXECL_ARG};

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

/// A copy worker (`truebench __classic-copy FD INDEX COPIES PIN TEST DIR FSYNC`), exec'd by
/// a pass: it builds the named test's work and runs it as the copy.
pub fn copy_worker(args: &[String]) -> ! {
    copies::worker(args, &|rest, i| {
        let [id, dir, fsync] = rest else {
            return Err("TEST DIR FSYNC expected".into());
        };
        let t = TESTS
            .iter()
            .find(|t| t.id == id)
            .ok_or_else(|| format!("no classic test {id}"))?;
        t.make(Path::new(dir), i, fsync == "true")
    })
}

use super::{Benchmark, Emitted, RunContext, Skipped};
use crate::findings::placement::explain_os;
use crate::findings::results::annotate;
use crate::measure::batch::Batch;
use crate::result::observed::{CopiesSeen, CopySeen, CpusSeen, Observed, Tasks};
use crate::result::{BenchResult, Placement, Quality};
use copies::{CopyOutcome, Work};
use std::collections::BTreeSet;
use std::path::Path;
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

pub static DHRYSTONE: Classic = Classic {
    id: "classic.dhrystone@1",
    what: "Dhrystone 2.1 main-loop passes per second (integer, string and record work; compiler-sensitive), lps",
    kind: Kind::Dhrystone,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 116700.0,
    length: Length::Long,
};
pub static WHETSTONE: Classic = Classic {
    id: "classic.whetstone@1",
    what: "double-precision Whetstone, millions of Whetstone instructions per second, MWIPS",
    kind: Kind::Whetstone,
    unit: "MWIPS",
    per_s_to_unit: 1.0,
    baseline: 55.0,
    length: Length::Long,
};
pub static EXECL: Classic = Classic {
    id: "classic.execl@1",
    what: "execs per second of the truebench binary replacing itself, lps",
    kind: Kind::Execl,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 43.0,
    length: Length::Medium,
};
pub static FILE_COPY_1024: Classic = Classic {
    id: "classic.file-copy-1024@1",
    what:
        "KiB/s copied file to file with 1024-byte read/write, 2000 KiB file in the page cache, KBps",
    kind: Kind::FileCopy {
        buf: 1024,
        file_kb: 2000,
    },
    unit: "KBps",
    per_s_to_unit: 1.0 / 1024.0,
    baseline: 3960.0,
    length: Length::Medium,
};
pub static FILE_COPY_256: Classic = Classic {
    id: "classic.file-copy-256@1",
    what:
        "KiB/s copied file to file with 256-byte read/write, 500 KiB file in the page cache, KBps",
    kind: Kind::FileCopy {
        buf: 256,
        file_kb: 500,
    },
    unit: "KBps",
    per_s_to_unit: 1.0 / 1024.0,
    baseline: 1655.0,
    length: Length::Medium,
};
pub static FILE_COPY_4096: Classic = Classic {
    id: "classic.file-copy-4096@1",
    what:
        "KiB/s copied file to file with 4096-byte read/write, 8000 KiB file in the page cache, KBps",
    kind: Kind::FileCopy {
        buf: 4096,
        file_kb: 8000,
    },
    unit: "KBps",
    per_s_to_unit: 1.0 / 1024.0,
    baseline: 5800.0,
    length: Length::Medium,
};
pub static PIPE_THROUGHPUT: Classic = Classic {
    id: "classic.pipe-throughput@1",
    what: "512-byte write then read on one pipe in one process (no context switch), lps",
    kind: Kind::Pipe,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 12440.0,
    length: Length::Long,
};
pub static CONTEXT_SWITCH: Classic = Classic {
    id: "classic.context-switch@1",
    what: "round trips of a counter between two processes over two pipes, placed by the scheduler (observed), lps",
    kind: Kind::ContextSwitch,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 4000.0,
    length: Length::Long,
};
pub static PROCESS_CREATION: Classic = Classic {
    id: "classic.process-creation@1",
    what: "fork, the child exits, the parent waits: loops per second, lps",
    kind: Kind::ProcessCreation,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 126.0,
    length: Length::Medium,
};
pub static SHELL_1: Classic = Classic {
    id: "classic.shell-1@1",
    what: "loops per minute of a shell script (sort, od | sort, grep | tee | wc) run once per loop, lpm",
    kind: Kind::Shell(1),
    unit: "lpm",
    per_s_to_unit: 60.0,
    baseline: 42.4,
    length: Length::Shell,
};
pub static SHELL_8: Classic = Classic {
    id: "classic.shell-8@1",
    what: "loops per minute of 8 concurrent copies of the shell script, lpm",
    kind: Kind::Shell(8),
    unit: "lpm",
    per_s_to_unit: 60.0,
    baseline: 6.0,
    length: Length::Shell,
};
pub static SYSCALL: Classic = Classic {
    id: "classic.syscall@1",
    what: "loops of close(dup(fd)), getpid, getuid, umask (five system calls) per second, lps",
    kind: Kind::Syscall,
    unit: "lps",
    per_s_to_unit: 1.0,
    baseline: 15000.0,
    length: Length::Long,
};

/// The number of tests in the index.
pub const INDEX_TESTS: usize = 12;

/// Passes and window per pass: UnixBench's with `--full`, else a quick plan that keeps
/// every test's CV meaningful (5 passes) and the whole suite for 1 and N copies under
/// about 2 minutes.
fn plan(length: Length, full: bool) -> (usize, Duration) {
    match (full, length) {
        (true, Length::Long) => (10, Duration::from_secs(10)),
        (true, Length::Medium) => (3, Duration::from_secs(30)),
        (true, Length::Shell) => (3, Duration::from_secs(60)),
        (false, Length::Shell) => (5, Duration::from_millis(1000)),
        (false, _) => (5, Duration::from_millis(500)),
    }
}

/// The copy counts to run, each with the words that say where it comes from.
pub fn copy_counts(ctx: &RunContext) -> Vec<(usize, String)> {
    let (n, basis) = copies::full_width(&ctx.probe.cpus);
    match &ctx.options.copies {
        Some(list) => list
            .iter()
            .map(|c| {
                let why = if *c == n {
                    basis.clone()
                } else {
                    format!("{c} copies: asked with --copies")
                };
                (*c, why)
            })
            .collect(),
        None if n > 1 => vec![(1, "1 copy".into()), (n, basis)],
        None => vec![(1, format!("1 copy; {basis}"))],
    }
}

impl Classic {
    /// The variants to run: the file copies also with fsync when `--fsync` asks.
    fn variants(&self, ctx: &RunContext) -> Vec<bool> {
        match self.kind {
            Kind::FileCopy { .. } if ctx.options.fsync => vec![false, true],
            _ => vec![false],
        }
    }

    fn skip_reason(&self) -> Option<String> {
        match self.kind {
            Kind::Shell(_) => work::missing_shell_tool()
                .map(|t| format!("the shell tests need {t}, which is not installed")),
            Kind::Execl => std::env::current_exe()
                .err()
                .map(|e| format!("cannot find the truebench binary to re-execute: {e}")),
            _ => None,
        }
    }

    fn make(&self, dir: &Path, copy: usize, fsync: bool) -> Result<Box<dyn Work>, String> {
        let own = dir.join(format!("copy-{copy}"));
        let mkdir = || std::fs::create_dir_all(&own).map_err(|e| format!("{}: {e}", own.display()));
        Ok(match self.kind {
            Kind::Dhrystone => Box::new(work::dhrystone()),
            Kind::Whetstone => Box::new(work::whetstone()),
            Kind::Execl => Box::new(work::execl(
                &std::env::current_exe().map_err(|e| e.to_string())?,
            )?),
            Kind::FileCopy { buf, file_kb } => {
                mkdir()?;
                Box::new(work::file_copy(&own, buf, file_kb, fsync)?)
            }
            Kind::Pipe => Box::new(work::pipe_throughput()?),
            Kind::ContextSwitch => Box::new(work::context_switch()?),
            Kind::ProcessCreation => Box::new(work::ProcessCreation),
            Kind::Shell(k) => {
                mkdir()?;
                Box::new(work::shell(&own, k)?)
            }
            Kind::Syscall => Box::new(work::syscalls()?),
        })
    }

    /// Run the passes of one copy count and build its result.
    fn measure(
        &self,
        ctx: &RunContext,
        copies: usize,
        basis: &str,
        fsync: bool,
        one_copy_median: Option<f64>,
    ) -> anyhow::Result<BenchResult> {
        let (passes, window) = plan(self.length, ctx.options.full);
        let pins: Option<Vec<u32>> = ctx
            .options
            .pin
            .then(|| crate::placement::spread_order(ctx.probe));
        let dir = tempfile::Builder::new()
            .prefix("truebench-classic-")
            .tempdir()?;
        let exe = std::env::current_exe()?;
        let launch = copies::Launch::Exec {
            exe: &exe,
            args: vec![
                self.id.to_string(),
                dir.path().display().to_string(),
                fsync.to_string(),
            ],
        };
        // A short warm-up pass (caches, page faults, the binary in the page cache), not kept.
        copies::pass(copies, pins.as_deref(), window / 5, &launch)
            .map_err(|e| e.context(format!("{} warm-up", self.id)))?;
        let mut rates = Vec::with_capacity(passes);
        let mut batches = Vec::with_capacity(passes);
        let mut per_pass: Vec<Vec<CopyOutcome>> = Vec::with_capacity(passes);
        for _ in 0..passes {
            let out = copies::pass(copies, pins.as_deref(), window, &launch)?;
            rates.push(out.iter().map(|c| c.rate_per_s()).sum::<f64>() * self.per_s_to_unit);
            batches.push(Batch {
                iterations: out.iter().map(|c| c.count).sum(),
                elapsed_ns: out.iter().map(|c| c.span_ns).sum::<u64>() / copies as u64,
            });
            per_pass.push(out);
        }
        let mut params: crate::result::Params = [
            (
                "copies".to_string(),
                crate::result::ParamValue::from(copies),
            ),
            (
                "copies_basis".to_string(),
                crate::result::ParamValue::from(basis),
            ),
            (
                "passes".to_string(),
                crate::result::ParamValue::from(passes),
            ),
            (
                "window_s".to_string(),
                crate::result::ParamValue::from(window.as_secs_f64()),
            ),
            (
                "plan".to_string(),
                crate::result::ParamValue::from(if ctx.options.full { "full" } else { "quick" }),
            ),
        ]
        .into_iter()
        .collect();
        if let Kind::FileCopy { .. } = self.kind {
            params.insert("fsync", fsync);
        }
        let placement = match &pins {
            Some(p) => Placement {
                name: "per-copy".into(),
                cpus: Some((0..copies).map(|i| p[i % p.len()]).collect()),
                observed: Some(self.observed(&per_pass)),
            },
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
            rates.clone(),
            Quality::of(ctx.clock_cost_ns, &batches),
        )
        .ok_or_else(|| anyhow::anyhow!("{}: no valid pass", self.id))?;
        let d = &mut res.derived;
        d.insert(
            "index".into(),
            score::index(res.stats.median, self.baseline),
        );
        d.insert("baseline".into(), self.baseline);
        if let Some(ub) = score::unixbench_style(&rates) {
            d.insert("unixbench_score".into(), ub);
            d.insert("unixbench_index".into(), score::index(ub, self.baseline));
        }
        if let Some(one) = one_copy_median.filter(|_| copies > 1) {
            d.insert(
                "scaling_efficiency".into(),
                score::scaling_efficiency(res.stats.median, copies, one),
            );
        }
        annotate(&mut res);
        if matches!(self.kind, Kind::ContextSwitch) && pins.is_none() {
            if let Some(mut f) = explain_os(&res, &[], &ctx.probe.findings) {
                f.evidence.push(
                    "`truebench run ctx` measures each placement (same CPU, same LLC, ...) on its own"
                        .into(),
                );
                res.findings.push(f);
            }
        }
        Ok(res)
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
        let pairs = matches!(self.kind, Kind::ContextSwitch);
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
        })
    }
}

impl Benchmark for Classic {
    fn id(&self) -> &'static str {
        self.id
    }

    fn describe(&self) -> &'static str {
        self.what
    }

    fn planned(&self, ctx: &RunContext) -> usize {
        copy_counts(ctx).len() * self.variants(ctx).len()
    }

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
        for fsync in self.variants(ctx) {
            let mut one_copy = None;
            for (c, basis) in copy_counts(ctx) {
                let r = self.measure(ctx, c, &basis, fsync, one_copy)?;
                if c == 1 {
                    one_copy = Some(r.stats.median);
                }
                emit(Emitted::Result(Box::new(r)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each test's work, run by one copy for a short window: it completes loops, checks
    /// what its calls returned, and lands in a plausible range for its unit.
    #[test]
    fn each_test_does_its_work_in_a_short_window() {
        let dir = tempfile::tempdir().unwrap();
        // (test, lowest plausible rate, highest plausible rate), in the test's unit.
        let cases: [(&Classic, f64, f64); 11] = [
            (&DHRYSTONE, 1e6, 1e10),
            (&WHETSTONE, 50.0, 1e6),
            (&FILE_COPY_1024, 1e4, 1e9),
            (&FILE_COPY_256, 1e3, 1e9),
            (&FILE_COPY_4096, 1e4, 1e9),
            // Two system calls a loop: never more than ~10^8 a second.
            (&PIPE_THROUGHPUT, 1e3, 5e7),
            (&CONTEXT_SWITCH, 1e2, 1e7),
            (&PROCESS_CREATION, 10.0, 1e6),
            (&SHELL_1, 6.0, 1e6),
            (&SHELL_8, 1.0, 1e6),
            // Five system calls a loop.
            (&SYSCALL, 1e3, 2e7),
        ];
        for (t, lo, hi) in cases {
            let window = if t.length == Length::Shell { 400 } else { 60 };
            let make = |i: usize| t.make(dir.path(), i, false);
            let out = copies::pass(
                1,
                None,
                Duration::from_millis(window),
                &copies::Launch::InProcess(&make),
            )
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

    #[test]
    fn the_file_copy_with_fsync_still_copies() {
        let dir = tempfile::tempdir().unwrap();
        let make = |i: usize| FILE_COPY_256.make(dir.path(), i, true);
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
    fn quick_and_full_plans() {
        assert_eq!(plan(Length::Long, true), (10, Duration::from_secs(10)));
        assert_eq!(plan(Length::Shell, true), (3, Duration::from_secs(60)));
        let (p, w) = plan(Length::Medium, false);
        assert!(p >= 5 && w <= Duration::from_secs(1));
    }
}
