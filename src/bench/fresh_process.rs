//! A round in a fresh process. What a process draws when it starts (the addresses exec
//! gives its code, stack and the vDSO, and the cache sets they fall in) moves some figures
//! between processes while every round of one process agrees: measured here (2-vCPU KVM
//! guest, 2026-11-27), ten processes of `run timers` 1.5 s apart read the clock through the
//! system call 1.1% apart (σ of their medians) and through the vDSO 0.7% apart, against a
//! sampling error of 0.2% each, and the rounds within one process agreed within theirs. A
//! row whose rounds all ran in one process therefore saw none of it, and two runs differed
//! by more than their rounds allowed. Such a benchmark measures each round in a new process
//! of truebench itself (`truebench __round BENCH`, hidden), which prints its results as one
//! JSON array; the parent reads them as its own. The child dies with the parent
//! (PR_SET_PDEATHSIG) and is killed at Ctrl-C. Where the executable cannot be run again (it
//! was deleted, or an emulator without binfmt_misc runs it), the round is measured in this
//! process and its results say so (finding `round-in-process`); one rebuilt or removed
//! since the run started is run through /proc/self/exe.

use crate::error::Interrupted;
use crate::findings::{Finding, Severity};
use crate::result::BenchResult;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The hidden subcommand a child round runs.
pub const SUBCOMMAND: &str = "__round";

/// How a round's batches are timed: what the child needs of the parent's run context.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Batching {
    pub samples: usize,
    pub min_batch_ns: f64,
    pub clock_cost_ns: f64,
}

impl Batching {
    pub fn of(ctx: &super::RunContext) -> Batching {
        Batching {
            samples: ctx.samples,
            min_batch_ns: ctx.min_batch_ns,
            clock_cost_ns: ctx.clock_cost_ns,
        }
    }
}

/// Why a round could not run in a fresh process.
#[derive(Debug)]
pub enum Failed {
    /// Ctrl-C (or SIGTERM) while the child measured.
    Interrupted,
    /// The child could not be started or gave no results: why, in words.
    CannotRun(String),
}

/// Measure one round of benchmark `id` in a fresh process of this executable.
pub fn measure(id: &str, b: Batching) -> Result<Vec<BenchResult>, Failed> {
    let exe = std::env::current_exe()
        .map_err(|e| Failed::CannotRun(format!("the executable's path: {e}")))?;
    // Rebuilt or removed since it started ("… (deleted)"): the kernel's link still runs it.
    let exe = if exe.exists() {
        exe
    } else {
        std::path::PathBuf::from("/proc/self/exe")
    };
    let mut cmd = Command::new(&exe);
    cmd.args([SUBCOMMAND, id])
        .args(["--samples", &b.samples.to_string()])
        .args(["--min-batch-ns", &b.min_batch_ns.to_string()])
        .args(["--clock-cost-ns", &b.clock_cost_ns.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Failed::CannotRun(format!("starting {}: {e}", exe.display())))?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (String::new(), String::new());
        let _ = out.read_to_string(&mut o);
        let _ = err.read_to_string(&mut e);
        (o, e)
    });
    let status = loop {
        if crate::interrupt::requested() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
            return Err(Failed::Interrupted);
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(Failed::CannotRun(format!("waiting for the child: {e}"))),
        }
    };
    let (stdout, stderr) = reader.join().unwrap_or_default();
    parse(status.success(), &stdout, &stderr)
}

/// The child's results from what it printed.
fn parse(ok: bool, stdout: &str, stderr: &str) -> Result<Vec<BenchResult>, Failed> {
    let said = || {
        stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("nothing on stderr")
            .trim()
            .to_string()
    };
    if !ok {
        return Err(Failed::CannotRun(format!(
            "the child round failed: {}",
            said()
        )));
    }
    match serde_json::from_str::<Vec<BenchResult>>(stdout.trim()) {
        Ok(rs) if !rs.is_empty() => Ok(rs),
        Ok(_) => Err(Failed::CannotRun("the child round gave no results".into())),
        Err(e) => Err(Failed::CannotRun(format!(
            "the child round's output is not results ({e}): {}",
            said()
        ))),
    }
}

/// Measure one round of benchmark `id` here (the child's side, and the fallback).
pub fn measure_here(id: &str, b: Batching) -> anyhow::Result<Vec<BenchResult>> {
    match id {
        super::timers::ID => super::timers::clock_reads_here(b),
        super::memory::per_event::ID => super::memory::per_event::here(b),
        other => anyhow::bail!("{other} is not measured in a fresh process"),
    }
}

/// One round in a fresh process, or here when that cannot run, the results then carrying
/// why (`round-in-process`).
pub fn measure_round(id: &str, b: Batching) -> anyhow::Result<Vec<BenchResult>> {
    match measure(id, b) {
        Ok(rs) => Ok(rs),
        Err(Failed::Interrupted) => Err(Interrupted.into()),
        Err(Failed::CannotRun(why)) => {
            let mut rs = measure_here(id, b)?;
            for r in &mut rs {
                r.findings.push(in_process(&why));
            }
            Ok(rs)
        }
    }
}

fn in_process(why: &str) -> Finding {
    Finding::new(
        "round-in-process",
        Severity::Info,
        "This round ran in truebench's own process, not a fresh one: the row's rounds do not sample what moves between processes, and two runs may differ by more than its noise says.",
        vec![format!("a fresh process could not run it: {why}")],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_output_is_its_results_or_says_why_not() {
        let r = crate::result::testing::result(
            "timers.clock-read@1",
            "os",
            None,
            serde_json::json!({"clock": "monotonic", "path": "vdso"}),
            20.0,
        );
        let json = serde_json::to_string(&vec![r.clone()]).unwrap();
        let got = parse(true, &json, "").unwrap();
        assert_eq!(got, vec![r]);
        match parse(false, "", "x\nerror: no such benchmark\n") {
            Err(Failed::CannotRun(why)) => assert!(why.ends_with("error: no such benchmark")),
            other => panic!("{other:?}"),
        }
        // A test harness run as the child prints its own report, not results.
        match parse(true, "running 0 tests\n", "") {
            Err(Failed::CannotRun(why)) => assert!(why.contains("not results"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse(true, "[]", ""), Err(Failed::CannotRun(_))));
    }

    #[test]
    fn a_round_that_cannot_run_in_a_fresh_process_is_measured_here_and_says_so() {
        // Under `cargo test` this executable is the test harness: the child prints no
        // results, and the round is measured here.
        let b = Batching {
            samples: 2,
            min_batch_ns: 2e5,
            clock_cost_ns: 20.0,
        };
        let rs = measure_round(super::super::timers::ID, b).unwrap();
        assert!(!rs.is_empty());
        for r in &rs {
            assert!(
                r.stats.median > 0.0 && r.stats.median < 1e5,
                "{}",
                r.stats.median
            );
            let f = r
                .findings
                .iter()
                .find(|f| f.id == "round-in-process")
                .expect("says it ran here");
            assert!(
                f.evidence[0].starts_with("a fresh process could not run it: "),
                "{:?}",
                f.evidence
            );
        }
        assert!(measure_here("ctx.pipe@1", b).is_err());
    }
}
