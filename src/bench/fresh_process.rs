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
//! (PR_SET_PDEATHSIG) and is killed at Ctrl-C, and at its deadline ([`deadline`]: its
//! batches twenty times over and 3 s to start) if it hangs. It gets the run's deadline
//! (`crate::deadline::ENV`) and stops between results when that passes, like any round; a
//! child still running a moment after it is killed, keeping what it printed. Where the executable cannot be
//! run again (it was deleted, or an emulator without binfmt_misc runs it), the round is
//! measured in this process and its results say so (finding `round-in-process`), as are
//! the results a child killed at its deadline had not printed; an executable rebuilt or
//! removed since the run started is run through /proc/self/exe.

use crate::error::Interrupted;
use crate::finding::{Finding, Severity};
use crate::result::BenchResult;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

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
    /// The child had not finished when its deadline (this long) passed: it was killed.
    Expired(Duration),
    /// The run's deadline (`crate::deadline`) passed while the child measured: it was
    /// killed, the round ending with what it printed.
    Budget,
}

/// A round measured where it runs: each result handed to `emit` as it finishes.
pub type Here<'a> = &'a mut dyn FnMut(Batching, &mut dyn FnMut(BenchResult)) -> anyhow::Result<()>;

/// How much longer than its batches a child round may take: a default round of the clock
/// reads times 22 ms of batches (1 sample × 11 results × 2 ms) and takes about 0.09 s from
/// exec to exit (2-vCPU KVM guest, 2026-11-27); this factor covers a CPU shared twentyfold.
const DEADLINE_FACTOR: f64 = 20.0;
/// What a child round may take before it times anything: exec, loading, a busy machine.
const START_ALLOWANCE: Duration = Duration::from_secs(3);
/// A pause longer than this between two looks at the child is time the parent itself was
/// stopped (Ctrl-Z, SIGSTOP, a suspended machine), its child with it: not counted.
const STOPPED: Duration = Duration::from_millis(500);
/// How long past the run's deadline a child may take to stop by itself (it checks the
/// deadline between results) and print what it finished, before it is killed.
const BUDGET_GRACE: Duration = Duration::from_millis(200);

/// The deadline of a child round that must time `results` results of `b.samples` batches
/// of at least `b.min_batch_ns` each: about 3.4 s for a default round of the clock reads.
pub fn deadline(b: Batching, results: usize) -> Duration {
    let batches_s = b.samples as f64 * results as f64 * b.min_batch_ns / 1e9;
    START_ALLOWANCE + Duration::from_secs_f64((batches_s * DEADLINE_FACTOR).min(1e6))
}

/// The command of a child round of benchmark `id`: this executable (through /proc/self/exe
/// when rebuilt or removed since it started), dying with its parent.
fn command(id: &str, b: Batching) -> Result<Command, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the executable's path: {e}"))?;
    // Rebuilt or removed since it started ("… (deleted)"): the kernel's link still runs it.
    let exe = if exe.exists() {
        exe
    } else {
        std::path::PathBuf::from("/proc/self/exe")
    };
    let mut cmd = Command::new(&exe);
    if let Some(at) = crate::deadline::at_ns() {
        cmd.env(crate::deadline::ENV, at.to_string());
    }
    cmd.args([SUBCOMMAND, id])
        .args(["--samples", &b.samples.to_string()])
        .args(["--min-batch-ns", &b.min_batch_ns.to_string()])
        .args(["--clock-cost-ns", &b.clock_cost_ns.to_string()]);
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
    Ok(cmd)
}

/// Run a child round (`cmd`), each result handed to `emit` as the child prints it (one JSON
/// document per line), so a round stopped by Ctrl-C or its deadline keeps the results it
/// finished. Nothing waits past `deadline` (time the parent was stopped not counted): the
/// child is then killed and reaped. Returns how many results it handed over with the error.
fn run_child(
    mut cmd: Command,
    deadline: Duration,
    emit: &mut dyn FnMut(BenchResult),
) -> Result<(), (usize, Failed)> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        let name = cmd.get_program().to_string_lossy();
        (0, Failed::CannotRun(format!("starting {name}: {e}")))
    })?;
    let out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    // Readers on threads of their own, never joined: a pipe a grandchild holds open
    // must not hold the round past its deadline.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let (etx, erx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut e = String::new();
        let _ = err.read_to_string(&mut e);
        let _ = etx.send(e);
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
    let end = |child: &mut std::process::Child, handed: usize, why: Failed| {
        let _ = child.kill();
        let _ = child.wait();
        Err((handed, why))
    };
    let (mut spent, mut last) = (Duration::ZERO, Instant::now());
    let (mut status, mut closed) = (None, false);
    while status.is_none() || !closed {
        match rx.recv_timeout(Duration::from_millis(2)) {
            Ok(line) => take(&line, &mut handed, &mut bad),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                closed = true;
                // Nothing more to read: wait for the exit without spinning.
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        if crate::interrupt::requested() {
            return end(&mut child, handed, Failed::Interrupted);
        }
        if crate::deadline::overdue(BUDGET_GRACE.as_secs_f64()) {
            // What it printed before it was killed is still in the pipe: keep it.
            let _ = child.kill();
            while let Ok(line) = rx.recv_timeout(Duration::from_millis(20)) {
                take(&line, &mut handed, &mut bad);
            }
            return end(&mut child, handed, Failed::Budget);
        }
        let now = Instant::now();
        let step = now - last;
        last = now;
        if step < STOPPED {
            spent += step;
        }
        if spent >= deadline {
            return end(&mut child, handed, Failed::Expired(spent));
        }
        if status.is_none() {
            match child.try_wait() {
                Ok(s) => status = s,
                Err(e) => {
                    let why = Failed::CannotRun(format!("waiting for the child: {e}"));
                    return end(&mut child, handed, why);
                }
            }
        }
    }
    let stderr = erx
        .recv_timeout(deadline.saturating_sub(spent))
        .unwrap_or_default();
    let ok = status.is_some_and(|s| s.success());
    judge(ok, handed, bad, &stderr).map_err(|f| (handed, f))
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

/// One round of benchmark `id` (`results` results) in a fresh process, or, when that
/// cannot start, here (`here`), the results then carrying why (`round-in-process`). A
/// child that passed its deadline is killed and what it had not printed is measured here,
/// saying so. A child that failed after handing over results ends the round with its
/// reason (measuring the rest here would repeat those).
pub fn measure_round(
    id: &str,
    b: Batching,
    results: usize,
    here: Here,
    emit: &mut dyn FnMut(BenchResult),
) -> anyhow::Result<()> {
    round_of(
        command(id, b),
        id,
        b,
        results,
        deadline(b, results),
        here,
        emit,
    )
}

/// [`measure_round`] with the child's command given (a test gives one that hangs).
fn round_of(
    cmd: Result<Command, String>,
    id: &str,
    b: Batching,
    results: usize,
    deadline: Duration,
    here: Here,
    emit: &mut dyn FnMut(BenchResult),
) -> anyhow::Result<()> {
    let mut kept = std::collections::HashSet::new();
    let outcome = match cmd {
        Err(why) => Err((0, Failed::CannotRun(why))),
        Ok(cmd) => run_child(cmd, deadline, &mut |r| {
            kept.insert(r.key());
            emit(r)
        }),
    };
    let why = match outcome {
        Ok(()) => return Ok(()),
        Err((_, Failed::Interrupted)) => return Err(Interrupted.into()),
        Err((_, Failed::Budget)) => return crate::deadline::stopped(),
        // Stopped by the deadline before it printed a result: nothing to measure here.
        Err(_) if crate::deadline::stop_requested() => return crate::deadline::stopped(),
        Err((0, Failed::CannotRun(why))) => format!("a fresh process could not run it: {why}"),
        Err((n, Failed::CannotRun(why))) => {
            anyhow::bail!(
                "{id}: a fresh-process round failed after {}: {why}",
                crate::units::count(n, "result")
            )
        }
        Err((n, Failed::Expired(spent))) => format!(
            "the fresh process printed {n} of {results} results in {:.1} s, its deadline; killed",
            spent.as_secs_f64()
        ),
    };
    // Only what the child did not print (the fallback measures the whole round).
    here(b, &mut |mut r| {
        if !kept.contains(&r.key()) {
            r.findings.push(in_process(&why));
            emit(r)
        }
    })
}

fn in_process(why: &str) -> Finding {
    Finding::new(
        "round-in-process",
        Severity::Info,
        "This result was measured in truebench's own process, not a fresh one: the row's rounds do not sample what moves between processes, and two runs may differ by more than its noise says.",
        vec![why.to_string()],
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

    use crate::result::testing;

    const QUICK: Batching = Batching {
        samples: 2,
        min_batch_ns: 2e5,
        clock_cost_ns: 20.0,
    };

    /// The id of the made-up benchmark these tests run rounds of (a real one's round is
    /// measured in `bench::timers`' tests).
    const ROUND: &str = "test.round";

    /// A made-up round of three results (one per `case`), as a child would print it.
    fn made_up() -> Vec<BenchResult> {
        (0..3)
            .map(|case| {
                let params = serde_json::json!({ "case": case });
                testing::result(ROUND, "os", None, params, 100.0 + case as f64)
            })
            .collect()
    }

    /// The made-up round measured here: each result handed to `emit`.
    fn made_up_here(_: Batching, emit: &mut dyn FnMut(BenchResult)) -> anyhow::Result<()> {
        made_up().into_iter().for_each(emit);
        Ok(())
    }

    /// `sh -c SCRIPT` printing `rs` (one JSON line each) where the script says `$LINES`.
    fn child_printing(rs: &[BenchResult], script: &str) -> Command {
        let lines: Vec<String> = rs
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).env("LINES", lines.join("\n"));
        cmd
    }

    #[test]
    fn a_default_round_has_a_few_seconds() {
        let d = deadline(
            Batching {
                samples: 2,
                min_batch_ns: 2e6,
                clock_cost_ns: 20.0,
            },
            11,
        );
        assert!((3.5..6.0).contains(&d.as_secs_f64()), "{d:?}");
        // 400 samples of each of 11 clock reads of 0.2 ms: 0.88 s of batches, 20 times over.
        let d = deadline(
            Batching {
                samples: 400,
                ..QUICK
            },
            11,
        );
        assert!(
            d.as_secs_f64() >= 3.0 + 400.0 * 11.0 * 2e-4 * 20.0 - 1e-6,
            "{d:?}"
        );
    }

    #[test]
    fn a_child_that_hangs_is_killed_at_its_deadline_and_the_rest_measured_here() {
        let all = made_up();
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        // Prints its first result, then hangs (as itself: `exec`, so its pid is the child's).
        let script = format!(
            "echo $$ > {}; printf '%s\\n' \"$LINES\"; exec sleep 600",
            pid_file.display()
        );
        let cmd = child_printing(&all[..1], &script);
        let mut rs = vec![];
        let t0 = Instant::now();
        round_of(
            Ok(cmd),
            ROUND,
            QUICK,
            all.len(),
            Duration::from_millis(300),
            &mut made_up_here,
            &mut |r| rs.push(r),
        )
        .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
        // Killed and reaped: its pid is gone.
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let proc = format!("/proc/{}", pid.trim());
        assert!(!std::path::Path::new(&proc).exists(), "{proc} still there");
        // Each result once: the child's first as it printed it, the others measured here.
        let keys: Vec<String> = rs.iter().map(BenchResult::key).collect();
        let want: Vec<String> = all.iter().map(BenchResult::key).collect();
        assert_eq!(keys.len(), want.len(), "{keys:?}");
        for k in &want {
            assert_eq!(
                keys.iter().filter(|x| *x == k).count(),
                1,
                "{k} in {keys:?}"
            );
        }
        let why = |r: &BenchResult| {
            r.findings
                .iter()
                .find(|f| f.id == "round-in-process")
                .map(|f| f.evidence[0].clone())
        };
        assert_eq!(why(&rs[0]), None, "the child's own result");
        // The time it ran is the deadline, or a little more on a busy machine.
        let said = format!("the fresh process printed 1 of {} results in ", all.len());
        for r in &rs[1..] {
            let why = why(r).expect("says it was measured here");
            assert!(why.starts_with(&said), "{why}");
            assert!(why.ends_with("its deadline; killed"), "{why}");
        }
    }

    #[test]
    fn a_child_that_finishes_in_time_is_not_cut_short() {
        let all = made_up();
        let cmd = child_printing(&all, "printf '%s\\n' \"$LINES\"");
        let mut rs = vec![];
        let mut measured_here = 0;
        round_of(
            Ok(cmd),
            ROUND,
            QUICK,
            all.len(),
            deadline(QUICK, all.len()),
            &mut |b, emit| {
                measured_here += 1;
                made_up_here(b, emit)
            },
            &mut |r| rs.push(r),
        )
        .unwrap();
        assert_eq!(measured_here, 0);
        assert_eq!(rs.len(), all.len());
        assert!(rs
            .iter()
            .all(|r| r.findings.iter().all(|f| f.id != "round-in-process")));
    }
}
