//! The timer as a cause: each result records the share of its measured time spent reading
//! the clock and the cost of one read; the probe records the clocksource and the measured
//! cost of each clock. A result timed per event (`timing=per-event`) whose timer share
//! changed is predicted to move by (1 - share) alone, and its batch-timed twin (the same
//! work timed as a batch, measured in the same run) shows whether anything else changed.
//! A clock-read row whose clock changed is predicted by its own move with the move of the
//! rows in the same rounds that read no clocksource held out (the probe's one reading of
//! each clock a side is evidence, never the prediction below 3x).

use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::compare::matching::identity;
use crate::compare::stats::verdict::judge;
use crate::result::params::key;
use crate::result::{BenchResult, RunDocument};
use crate::units::pct;

/// This cause, as the JSON names it.
pub const TIMER: &str = "timer";

/// Timer shares whose (1 - share) differ by less than this are the same.
const MIN_EFFECT: f64 = 0.02;
/// Clock read costs within this factor are the same when the clocksource did not change and
/// no run fell back to the system call. The probe times each clock for about 1 ms (five
/// batches in turns with the other clocks'): two runs of one command on a shared machine
/// measured a 3-5 ns coarse read 1.65x apart and a 170 ns system call 16% apart, a loud
/// one a realtime read at 50.6 and 51.8 ns where the rows measured it 1.32x apart, while
/// what changes a clock's cost on its own (a read the hypervisor traps, a vDSO that became
/// a system call) moves it 5x or more.
const SAME_COST: f64 = 3.0;

/// The batch-timed twin of a per-event result in its run.
fn twin<'a>(doc: &'a RunDocument, r: &BenchResult) -> Option<&'a BenchResult> {
    if r.params.timing() != Some("per-event") {
        return None;
    }
    let mut want = identity(r);
    want.insert(key::TIMING, "batch");
    doc.results
        .iter()
        .find(|t| t.benchmark == r.benchmark && identity(t) == want)
}

fn clocksource(doc: &RunDocument) -> String {
    doc.env
        .clock
        .clocksource
        .clone()
        .unwrap_or_else(|| "unknown".into())
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    if reads_clock(c.ra) {
        return clock_read(c);
    }
    if !clock_changed(c) {
        // The same clock at the same cost: a timer share that moved is the work's doing
        // (or noise), not the clock's.
        return None;
    }
    let (sa, sb) = (c.ra.quality.timer_share, c.rb.quality.timer_share);
    // Time per unit of work W/(1 - s): the timer alone moves a time by (1-sa)/(1-sb).
    let time_ratio = (1.0 - sa).max(1e-6) / (1.0 - sb).max(1e-6);
    if time_ratio.ln().abs() < MIN_EFFECT.ln_1p() {
        return None;
    }
    let predicted = if c.ra.lower_is_better {
        time_ratio
    } else {
        1.0 / time_ratio
    };
    let mut e = Explanation::new(
        TIMER,
        Claim::Contributes,
        format!(
            "reading the clock took {} of its measured time and {} of A's",
            pct(sb),
            pct(sa)
        ),
    )
    .evidence(format!("timer share: A {}, B {}", pct(sa), pct(sb)))
    .evidence(format!(
        "clock read cost: A {:.1} ns, B {:.1} ns",
        c.ra.quality.clock_cost_ns, c.rb.quality.clock_cost_ns
    ))
    .evidence(format!(
        "clocksource: A {}, B {}",
        clocksource(c.a),
        clocksource(c.b)
    ));
    for f in c.a.env.findings.iter().chain(&c.b.env.findings) {
        if f.id == "clock-read-syscall" {
            let side = if c.a.env.findings.contains(f) {
                "A"
            } else {
                "B"
            };
            e.evidence
                .push(format!("{side}: clock-read-syscall: {}", f.message));
        }
    }
    e = e.predict(predicted, c.ratio());
    if let (Some(ta), Some(tb)) = (twin(c.a, c.ra), twin(c.b, c.rb)) {
        let j = judge(ta, tb, c.drift);
        e.evidence.push(format!(
            "batch-timed twin: B/A {:.3} ({}), against {:.3} timed per event",
            j.ratio,
            j.verdict.text(),
            c.ratio()
        ));
        e.held_equal = Some(format!(
            "timed as a batch, the two are {} ({})",
            crate::compare::stats::verdict::apart(j.ratio),
            j.verdict.text()
        ));
        let same_way = predicted.ln().signum() == c.ratio().ln().signum();
        if !j.verdict.is_real() && same_way {
            e.claim = Claim::Explains;
            e.remains = None;
        } else if j.verdict.is_real() && e.claim == Claim::Explains {
            // The work itself changed too: the timer is only part of it.
            e.claim = Claim::Partly;
            e.remains = Some(format!(
                "the batch-timed twin differs too (B/A {:.3}, {})",
                j.ratio,
                j.verdict.text()
            ));
        }
    }
    Some(e)
}

/// Whether both runs read the same clocksource through the same path (neither or both
/// fell back to the system call, as the probe's `clock-read-syscall` finding says).
fn same_clock(a: &RunDocument, b: &RunDocument) -> bool {
    clocksource(a) == clocksource(b) && syscall_fallback(a) == syscall_fallback(b)
}

/// Whether the clock itself changed between the runs: another clocksource or read path, or
/// a read cost of the row's own clock that moved by [`SAME_COST`] (a result without its
/// clock's cost is judged by its timer share alone).
fn clock_changed(c: &RowCtx) -> bool {
    let (ca, cb) = (c.ra.quality.clock_cost_ns, c.rb.quality.clock_cost_ns);
    let costs_known = ca.is_finite() && cb.is_finite() && ca > 0.0 && cb > 0.0;
    !same_clock(c.a, c.b) || !costs_known || (cb / ca).ln().abs() >= SAME_COST.ln()
}

/// Whether a row's figure is the cost of reading a clock, as its benchmark declares it
/// (`bench::nature::Nature::reads_clock`).
fn reads_clock(r: &BenchResult) -> bool {
    crate::bench::nature::of(r).reads_clock
}

/// Whether a clock-read row reads the clocksource: the vDSO and system-call paths of the fine
/// clocks do; the rdtsc/cntvct instruction and the coarse clocks (the tick's time) never
/// touch it.
pub fn reads_clocksource(r: &BenchResult) -> bool {
    reads_clock(r)
        && r.params.path().is_some_and(|p| p != "instruction")
        && r.params.clock().is_some_and(|c| !c.ends_with("_coarse"))
}

/// The rows of a run's clock reads that what changed between the runs leaves alone, measured
/// in the same rounds as the row: the CPU's counter read by one instruction (rdtsc, cntvct)
/// touches neither the clocksource nor libc's read path; the coarse clocks (the tick's time)
/// read no clocksource, and are controls too when the read path stayed the same.
fn controls(doc: &RunDocument, path_changed: bool) -> Vec<(usize, &BenchResult)> {
    doc.results
        .iter()
        .enumerate()
        .filter(|(_, r)| reads_clock(r) && !reads_clocksource(r))
        .filter(|(_, r)| !path_changed || by_instruction(r))
        .collect()
}

/// Whether a clock-read row reads the CPU's counter by one instruction (no libc, no kernel).
fn by_instruction(r: &BenchResult) -> bool {
    r.params.path() == Some("instruction")
}

/// The rows both runs hold among `controls`, each with its B/A ratio, but the row itself;
/// worked out once per comparison (`Shared::clock_controls`).
fn control_ratios<'a>(c: &RowCtx<'a>, path_changed: bool) -> Vec<(&'a BenchResult, f64)> {
    let all = c.shared.clock_controls[usize::from(path_changed)].get_or_init(|| {
        let key = |r: &BenchResult| format!("{}|{:?}", r.benchmark, identity(r));
        let in_b: std::collections::HashMap<String, usize> =
            c.b.results
                .iter()
                .enumerate()
                .filter(|(_, y)| reads_clock(y))
                .map(|(i, y)| (key(y), i))
                .collect();
        controls(c.a, path_changed)
            .into_iter()
            .filter_map(|(i, x)| {
                let j = *in_b.get(&key(x))?;
                let r = c.b.results[j].stats.median / x.stats.median;
                (r.is_finite() && r > 0.0).then_some((i, j, r))
            })
            .collect()
    });
    let own = identity(c.ra);
    all.iter()
        .map(|&(i, _, r)| (&c.a.results[i], r))
        .filter(|(x, _)| x.benchmark != c.ra.benchmark || identity(x) != own)
        .collect()
}

/// How many rounds a row's figure rests on, in words ("25 rounds", "one piece").
fn rounds_of(r: &BenchResult) -> String {
    match r.run_noise() {
        Some(n) => crate::units::count(n.kept, "round"),
        None => "one piece".into(),
    }
}

/// A clock-read row whose clock changed between the runs (another clocksource for a clock
/// that reads it, another read path, or the probes' costs of it 3x apart). What it predicts
/// rests on rows measured in rounds, never on the probe's one reading of each clock (about
/// 1 ms a side, which a loud host moves by a third): the row's own move with the move of
/// the rows that read no clocksource held out (`controls`: measured in the same rounds,
/// they move with the host's speed and steal, not with the clock). Without those rows the
/// probes' readings predict only a change of 3x or more (beyond their noise); a smaller one
/// is said to contribute, unquantified.
fn clock_read(c: &RowCtx) -> Option<Explanation> {
    let clock = c.ra.params.clock()?;
    let path = c.ra.params.path()?;
    let costs = |d: &RunDocument| match path {
        "syscall" => d.env.clock.syscall_cost_ns.get(clock).copied(),
        _ => d.env.clock.read_cost_ns.get(clock).copied(),
    };
    let (csa, csb) = (clocksource(c.a), clocksource(c.b));
    let probe = costs(c.a).zip(costs(c.b));
    let probe_moved = probe.is_some_and(|(ca, cb)| (cb / ca).ln().abs() >= SAME_COST.ln());
    let path_changed = syscall_fallback(c.a) != syscall_fallback(c.b) && !by_instruction(c.ra);
    let source_changed = csa != csb && reads_clocksource(c.ra);
    if !(probe_moved || path_changed || source_changed) {
        return None;
    }
    let what = if source_changed {
        format!(
            "the clocksource changed ({csa} in A, {csb} in B) and a {clock} read ({path}) reads it"
        )
    } else if path_changed {
        format!("the {clock} read changed path (a probe found it fell back to the system call in one run only)")
    } else {
        format!("the probe measured a {clock} read ({path}) at least {SAME_COST}x apart in the two runs")
    };
    let mut e = Explanation::new(TIMER, Claim::Contributes, what)
        .evidence(format!("clocksource: A {csa}, B {csb}"))
        .evidence(format!(
            "the row: B/A {:.3} ({} of A, {} of B)",
            c.ratio(),
            rounds_of(c.ra),
            rounds_of(c.rb)
        ));
    if let Some((ca, cb)) = probe {
        e.evidence.push(format!(
            "probe {path} read cost of {clock}: A {ca:.1} ns, B {cb:.1} ns (one reading each, about 1 ms)"
        ));
    }
    let held = control_ratios(c, path_changed || (probe_moved && !source_changed));
    if !held.is_empty() {
        let host = (held.iter().map(|(_, r)| r.ln()).sum::<f64>() / held.len() as f64).exp();
        let names: Vec<String> = held
            .iter()
            .map(|(x, r)| {
                format!(
                    "{} {} B/A {r:.3} ({})",
                    x.params.clock().unwrap_or("?"),
                    x.params.path().unwrap_or("?"),
                    rounds_of(x)
                )
            })
            .collect();
        e.evidence.push(format!(
            "the rows whose reads it leaves alone, in the same runs: {} (together {host:.3}: the host's own move)",
            names.join(", ")
        ));
        let own = c.ratio() / host;
        e.held_equal = Some(format!(
            "with the rows that read no clocksource held equal, the row moved {own:.3}x"
        ));
        if own.ln().abs() < MIN_EFFECT.ln_1p() {
            e.claim = Claim::RuledOut;
            e.evidence.push(format!(
                "the row moved as they did ({:.3} against {host:.3}): not the clock's doing",
                c.ratio()
            ));
            return Some(e);
        }
        return Some(e.predict(own, c.ratio()));
    }
    match probe {
        Some((ca, cb)) if probe_moved => Some(e.predict(cb / ca, c.ratio())),
        _ => Some(e),
    }
}

/// Whether a run's probe found the vDSO read fell back to the system call.
fn syscall_fallback(d: &RunDocument) -> bool {
    d.env.findings.iter().any(|f| f.id == "clock-read-syscall")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::testing::{per_event_run, timers_run};

    #[test]
    fn a_syscall_clock_explains_the_per_event_figure_when_its_batch_twin_holds() {
        let a = per_event_run("a", 0.02, 13000.0, 61000.0);
        let b = per_event_run("b", 0.87, 2200.0, 60800.0);
        let rows = judged_rows(&a, &b, explain);
        let (label, e) = rows.iter().find(|(l, _)| l.contains("per-event")).unwrap();
        let e = e
            .as_ref()
            .unwrap_or_else(|| panic!("{label}: no timer explanation"));
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.evidence.iter().any(|x| x.contains("batch-timed twin")),
            "{e:?}"
        );
        assert!(e
            .held_equal
            .as_deref()
            .unwrap()
            .contains("no real difference"));
        // The batch row's timer share did not change: the timer says nothing about it.
        let batch = rows
            .iter()
            .find(|(l, _)| l.contains("timing=batch"))
            .unwrap();
        assert!(batch.1.is_none(), "{batch:?}");
    }

    /// A clock-read run whose probe measured the vDSO read of monotonic at `cost` ns.
    fn clock_run(id: &str, median: f64, cost: f64, clocksource: &str) -> RunDocument {
        let mut d = timers_run(id, median, None);
        d.env.clock.read_cost_ns.insert("monotonic".into(), cost);
        d.env.clock.clocksource = Some(clocksource.into());
        d
    }

    #[test]
    fn a_clock_read_row_is_explained_by_a_slower_clock_not_by_the_probes_noise() {
        // The read became a system call (8x): the probe's own figure explains the row.
        let a = clock_run("a", 20.0, 20.0, "tsc");
        let b = clock_run("b", 160.0, 165.0, "tsc");
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        // Another clocksource is named even when its cost moved little.
        let b = clock_run("b", 26.0, 24.0, "kvm-clock");
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert!(
            e.evidence.iter().any(|x| x.contains("A tsc, B kvm-clock")),
            "{e:?}"
        );
        // The same clocksource measured 16% apart by the probe (two runs of one command on
        // a shared machine): the timer is not blamed.
        let a = clock_run("a", 178.0, 167.0, "tsc");
        let b = clock_run("b", 212.0, 193.0, "tsc");
        assert!(judged_rows(&a, &b, explain)[0].1.is_none());
        // A 3-5 ns coarse read measured 1.65x apart beside a neighbour: not the clock.
        let a = clock_run("a", 5.08, 4.8, "tsc");
        let b = clock_run("b", 2.95, 2.9, "tsc");
        assert!(judged_rows(&a, &b, explain)[0].1.is_none());
    }

    /// A timers run of the rows (clock, path, median ns) under `clocksource`, the probe's
    /// vDSO read cost of realtime at `probe` ns, each row in three quiet rounds.
    fn timers(id: &str, clocksource: &str, probe: f64, rows: &[(&str, &str, f64)]) -> RunDocument {
        let mut d = clock_run(id, 1.0, probe, clocksource);
        d.env.clock.read_cost_ns.insert("realtime".into(), probe);
        d.results = rows
            .iter()
            .map(|(clock, path, m)| {
                crate::compare::testing::result(
                    "timers.clock-read@1",
                    "os",
                    None,
                    serde_json::json!({"clock": clock, "path": path}),
                    *m,
                    true,
                )
            })
            .collect();
        crate::compare::testing::in_rounds(d)
    }

    /// A timers run of the realtime and coarse vDSO reads and rdtsc at these medians (ns).
    fn three(id: &str, clocksource: &str, probe: f64, ns: [f64; 3]) -> RunDocument {
        let clocks = [
            ("realtime", "vdso"),
            ("monotonic_coarse", "vdso"),
            ("rdtsc", "instruction"),
        ];
        let rows: Vec<(&str, &str, f64)> = clocks
            .iter()
            .zip(ns)
            .map(|((c, p), m)| (*c, *p, m))
            .collect();
        timers(id, clocksource, probe, &rows)
    }

    /// What the timer says about the realtime vDSO row.
    fn realtime(a: &RunDocument, b: &RunDocument) -> Option<Explanation> {
        judged_rows(a, b, explain)
            .into_iter()
            .find(|(l, _)| l.contains("clock=realtime,path=vdso"))
            .unwrap()
            .1
    }

    #[test]
    fn a_clocksource_switch_rests_on_the_rows_in_rounds_not_on_the_probes_one_reading() {
        // The root stage of 2026-11-28: tsc -> kvm-clock, the realtime vDSO row 1.32x, the
        // probe's one reading of it 50.6 and 51.8 ns (it ruled the timer out). rdtsc and the
        // coarse clock, which read no clocksource, held within 1-2% in the same rounds.
        let a = three("a", "tsc", 50.6, [33.0, 6.0, 10.0]);
        let b = three("b", "kvm-clock", 51.8, [43.6, 6.1, 10.1]);
        let e = realtime(&a, &b).expect("the timer speaks");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.because
                .starts_with("the clocksource changed (tsc in A, kvm-clock in B)"),
            "{}",
            e.because
        );
        assert!((e.predicted.unwrap() - 1.30).abs() < 0.01, "{e:?}");
        assert!(
            e.evidence
                .iter()
                .any(|x| x.contains("rdtsc instruction B/A 1.010 (3 rounds)")),
            "{e:?}"
        );
        assert!(
            e.evidence.iter().any(|x| x.contains("one reading each")),
            "{e:?}"
        );
        // The same switch while the host slowed everything alike: the rows that read no
        // clocksource moved as much, and the clock is ruled out.
        let slow = three("b", "kvm-clock", 51.8, [43.6, 7.9, 13.1]);
        assert_eq!(realtime(&a, &slow).unwrap().claim, Claim::RuledOut);
        // Without those rows (an earlier run of fewer clocks), the switch contributes with
        // no figure: one probe reading a side cannot rule it out, nor size it.
        let only = |d: &RunDocument| {
            let mut d = d.clone();
            d.results.retain(|r| r.params.clock() == Some("realtime"));
            d
        };
        let e = realtime(&only(&a), &only(&b)).unwrap();
        assert_eq!((e.claim, e.predicted), (Claim::Contributes, None), "{e:?}");
    }

    #[test]
    fn a_read_that_fell_back_to_the_system_call_is_held_against_the_instruction_only() {
        // B's vDSO reads all became system calls, the coarse one too: only rdtsc, which no
        // libc path touches, shows what the host did.
        let a = three("a", "tsc", 30.0, [30.0, 6.0, 10.0]);
        let mut b = three("b", "tsc", 170.0, [171.0, 160.0, 10.0]);
        b.env.findings.push(crate::finding::Finding::new(
            "clock-read-syscall",
            crate::finding::Severity::Warning,
            "reading a clock through the vDSO costs about a system call",
            vec![],
        ));
        let e = realtime(&a, &b).unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.evidence
                .iter()
                .all(|x| !x.contains("monotonic_coarse vdso B/A")),
            "{e:?}"
        );
        // rdtsc itself: the read path is not its, and nothing changed for it.
        let rows = judged_rows(&a, &b, explain);
        let rdtsc = rows.iter().find(|(l, _)| l.contains("rdtsc")).unwrap();
        assert!(rdtsc.1.is_none(), "{rdtsc:?}");
    }

    #[test]
    fn a_clocksource_change_explains_no_row_that_never_reads_it() {
        // rdtsc itself and the coarse clock (the tick's time) read no clocksource: a 1%
        // difference beside a tsc -> kvm-clock switch is not the timer's.
        for (clock, path) in [("rdtsc", "instruction"), ("monotonic_coarse", "vdso")] {
            let run = |id: &str, median: f64, cost: f64, cs: &str| {
                let mut d = clock_run(id, median, cost, cs);
                d.results = vec![crate::compare::testing::result(
                    "timers.clock-read@1",
                    "os",
                    None,
                    serde_json::json!({"clock": clock, "path": path}),
                    median,
                    true,
                )];
                d.env.clock.read_cost_ns.insert(clock.into(), cost);
                d
            };
            let a = run("a", 9.25, 9.3, "tsc");
            let b = run("b", 9.17, 9.2, "kvm-clock");
            let rows = judged_rows(&a, &b, explain);
            assert!(rows[0].1.is_none(), "{clock} {path}: {rows:?}");
            // Its own read measured more than 3x slower by the probe still explains it.
            let b = run("b", 29.0, 30.0, "kvm-clock");
            assert!(judged_rows(&a, &b, explain)[0].1.is_some(), "{clock}");
        }
        // The fine clocks through the vDSO do read it: named at a small cost change too.
        let a = clock_run("a", 23.0, 23.0, "tsc");
        let b = clock_run("b", 23.5, 23.4, "kvm-clock");
        assert!(judged_rows(&a, &b, explain)[0].1.is_some());
    }

    #[test]
    fn an_unchanged_timer_explains_nothing() {
        let a = per_event_run("a", 0.87, 2200.0, 61000.0);
        let b = per_event_run("b", 0.87, 1100.0, 30000.0);
        for (l, e) in judged_rows(&a, &b, explain) {
            assert!(e.is_none(), "{l}: {e:?}");
        }
    }

    #[test]
    fn a_timer_share_that_moved_at_the_same_clock_cost_is_not_the_clock() {
        // Two runs of one command: the share moved 30% -> 36% with the clock unchanged.
        let a = per_event_run("a", 0.30, 13000.0, 61000.0);
        let mut b = per_event_run("b", 0.36, 12000.0, 61000.0);
        for r in &mut b.results {
            r.quality.clock_cost_ns = a.results[0].quality.clock_cost_ns * 1.1;
        }
        for (l, e) in judged_rows(&a, &b, explain) {
            assert!(e.is_none(), "{l}: {e:?}");
        }
    }

    #[test]
    fn when_the_batch_twin_moved_too_the_timer_is_only_part_of_it() {
        let a = per_event_run("a", 0.02, 13000.0, 61000.0);
        let b = per_event_run("b", 0.87, 1000.0, 30000.0);
        let rows = judged_rows(&a, &b, explain);
        let e = rows
            .iter()
            .find(|(l, _)| l.contains("per-event"))
            .and_then(|x| x.1.clone())
            .unwrap();
        assert_ne!(e.claim, Claim::Explains, "{e:?}");
    }
}
