//! A round in a fresh process. What a process draws when it starts (the addresses exec
//! gives its code, stack and the vDSO, and the cache sets they fall in) moves some figures
//! between processes while every round of one process agrees: measured here (2-vCPU KVM
//! guest, 2026-11-27), ten processes of `run timers` 1.5 s apart read the clock through the
//! system call 1.1% apart (σ of their medians) and through the vDSO 0.7% apart, against a
//! sampling error of 0.2% each, and the rounds within one process agreed within theirs. A
//! row whose rounds all ran in one process therefore saw none of it, and two runs differed
//! by more than their rounds allowed. Such a benchmark measures each round in a new process
//! of truebench itself (`truebench __round BENCH`, hidden), which prints each result as one
//! JSON line as it finishes; the parent reads them as its own. The child dies with the parent
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

/// A round measured where it runs: each result handed to `emit` as it finishes.
pub type Here<'a> = &'a mut dyn FnMut(Batching, &mut dyn FnMut(BenchResult)) -> anyhow::Result<()>;

/// Measure one round of benchmark `id` in a fresh process of this executable, each result
/// handed to `emit` as the child prints it (one JSON document per line), so a round stopped
/// by Ctrl-C keeps the results it finished. Returns how many it handed over with the error.
pub fn measure(
    id: &str,
    b: Batching,
    emit: &mut dyn FnMut(BenchResult),
) -> Result<(), (usize, Failed)> {
    let cannot = |why: String| (0, Failed::CannotRun(why));
    let exe = std::env::current_exe().map_err(|e| cannot(format!("the executable's path: {e}")))?;
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
        .map_err(|e| cannot(format!("starting {}: {e}", exe.display())))?;
    let out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let lines = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr = std::thread::spawn(move || {
        let mut e = String::new();
        let _ = err.read_to_string(&mut e);
        e
    });
    let mut handed = 0;
    let mut bad: Option<String> = None;
    let mut take = |line: &str, handed: &mut usize, bad: &mut Option<String>| {
        if line.trim().is_empty() || bad.is_some() {
            return;
        }
        match serde_json::from_str::<BenchResult>(line) {
            Ok(r) => {
                *handed += 1;
                emit(r)
            }
            Err(e) => {
                *bad = Some(format!(
                    "the child round printed no result ({e}): {line:.80}"
                ))
            }
        }
    };
    let status = loop {
        while let Ok(line) = rx.try_recv() {
            take(&line, &mut handed, &mut bad);
        }
        if crate::interrupt::requested() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = lines.join();
            return Err((handed, Failed::Interrupted));
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                return Err((
                    handed,
                    Failed::CannotRun(format!("waiting for the child: {e}")),
                ))
            }
        }
    };
    let _ = lines.join();
    while let Ok(line) = rx.try_recv() {
        take(&line, &mut handed, &mut bad);
    }
    let stderr = stderr.join().unwrap_or_default();
    judge(status.success(), handed, bad, &stderr).map_err(|f| (handed, f))
}

/// Whether a child round that handed over `handed` results (and printed something else
/// when `bad`) measured its round.
fn judge(ok: bool, handed: usize, bad: Option<String>, stderr: &str) -> Result<(), Failed> {
    let said = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("nothing on stderr")
        .trim()
        .to_string();
    if let Some(bad) = bad {
        return Err(Failed::CannotRun(format!("{bad}; {said}")));
    }
    if !ok {
        return Err(Failed::CannotRun(format!("the child round failed: {said}")));
    }
    if handed == 0 {
        return Err(Failed::CannotRun("the child round gave no results".into()));
    }
    Ok(())
}

/// One round in a fresh process, or, when that cannot start, here (`here`), the results
/// then carrying why (`round-in-process`). A child that failed after handing over results
/// ends the round with its reason (measuring the rest here would repeat those).
pub fn measure_round(
    id: &str,
    b: Batching,
    here: Here,
    emit: &mut dyn FnMut(BenchResult),
) -> anyhow::Result<()> {
    match measure(id, b, emit) {
        Ok(()) => Ok(()),
        Err((_, Failed::Interrupted)) => Err(Interrupted.into()),
        Err((0, Failed::CannotRun(why))) => here(b, &mut |mut r| {
            r.findings.push(in_process(&why));
            emit(r)
        }),
        Err((n, Failed::CannotRun(why))) => {
            anyhow::bail!(
                "{id}: a fresh-process round failed after {}: {why}",
                crate::units::count(n, "result")
            )
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
    fn a_child_that_printed_results_measured_its_round_and_others_say_why_not() {
        assert!(judge(true, 11, None, "").is_ok());
        match judge(false, 3, None, "x\nerror: no such benchmark\n") {
            Err(Failed::CannotRun(why)) => assert!(why.ends_with("error: no such benchmark")),
            other => panic!("{other:?}"),
        }
        // A test harness run as the child prints its own report, not results.
        match judge(
            true,
            0,
            Some("the child round printed no result".into()),
            "",
        ) {
            Err(Failed::CannotRun(why)) => assert!(why.contains("no result"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            judge(true, 0, None, ""),
            Err(Failed::CannotRun(_))
        ));
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
        let mut rs = vec![];
        measure_round(
            super::super::timers::ID,
            b,
            &mut super::super::timers::clock_reads_here,
            &mut |r| rs.push(r),
        )
        .unwrap();
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
    }
}
