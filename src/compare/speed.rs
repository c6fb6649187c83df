//! CPU speed as a cause: the effective clock each run measured (`cpu_speed`: dependent
//! integer adds per ns, per suite start and end and per CPU kind) compared per CPU kind. A
//! CPU-bound row whose ratio matches the speed ratio is explained by frequency. A run
//! without the measurement makes the cause "not measured", never a guess.

use super::explain::{Claim, Explanation, RowCtx, CPU_SPEED};
use crate::result::{BenchResult, RunDocument};

/// Rows whose figure is CPU work that scales with the clock: the classic suite's compute,
/// system-call, pipe and process tests, the clock reads, and a pair pinned to one CPU.
const CPU_BOUND: &[&str] = &[
    "classic.dhrystone",
    "classic.whetstone",
    "classic.syscall",
    "classic.pipe-throughput",
    "classic.execl",
    "classic.process-creation",
    "classic.shell-1",
    "classic.shell-8",
    "classic.context-switch",
    "timers.clock-read",
];
/// Effective clocks within this factor are the same: the drift floor results must exceed
/// to differ, because two runs of one command on a shared host measured clocks 3.4% apart.
/// Two clocks also count as the same when they differ by less than either run's own samples
/// did (a shared host moved the figure by up to 8% within one quiet run). What changes a
/// clock for real (a governor, turbo off, a power cap, a slower host) moves it far more.
const SAME: f64 = 1.05;

pub fn cpu_bound(r: &BenchResult) -> bool {
    CPU_BOUND.contains(&r.base_id())
        || (r.base_id() == "ctx.pipe" && r.placement.name == "same-cpu")
}

/// The CPU kind a result ran on, when it ran on exactly one known kind.
fn kind(r: &BenchResult) -> Option<String> {
    let o = r.placement.observed.as_ref()?;
    let kinds = match o {
        crate::result::Observed::Pair(p) => p.cpu_kinds.as_ref(),
        crate::result::Observed::Copies(c) => c.cpu_kinds.as_ref(),
    }?;
    (kinds.len() == 1)
        .then(|| kinds.keys().next().cloned())
        .flatten()
}

/// A run's effective clock on CPUs of `kind` (all samples on a machine of one kind).
#[derive(Debug, Clone, Copy)]
pub struct Ghz {
    /// The mean of the samples, GHz.
    pub mean: f64,
    pub samples: usize,
    /// How far apart its own samples were: ln(fastest / slowest).
    pub spread: f64,
}

/// The effective clock of a run on CPUs of `kind`, when it sampled any.
pub fn ghz(doc: &RunDocument, kind: Option<&str>) -> Option<Ghz> {
    let s = doc.cpu_speed.as_ref()?;
    let pick: Vec<f64> = s
        .samples
        .iter()
        .filter(|x| kind.is_none() || x.cpu_kind.as_deref() == kind)
        .map(|x| x.cycles_per_ns)
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let (lo, hi) = pick.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    });
    (!pick.is_empty()).then(|| Ghz {
        mean: pick.iter().sum::<f64>() / pick.len() as f64,
        samples: pick.len(),
        spread: (hi / lo).ln(),
    })
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    if !cpu_bound(c.ra) {
        return None;
    }
    let k = kind(c.ra).or_else(|| kind(c.rb));
    let (ga, gb) = match (ghz(c.a, k.as_deref()), ghz(c.b, k.as_deref())) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => {
            let missing: Vec<&str> = [("A", a.is_none()), ("B", b.is_none())]
                .into_iter()
                .filter(|x| x.1)
                .map(|x| x.0)
                .collect();
            return Some(
                Explanation::new(
                    CPU_SPEED,
                    Claim::NotMeasured,
                    "the effective clock was not measured",
                )
                .evidence(format!(
                    "{} recorded no effective-frequency samples{}",
                    missing.join(" and "),
                    k.map(|k| format!(" of CPU kind {k}")).unwrap_or_default()
                )),
            );
        }
    };
    let speed = gb.mean / ga.mean;
    let of_kind = k.map(|k| format!(" ({k} CPUs)")).unwrap_or_default();
    let evidence = format!(
        "effective clock{of_kind}: A {:.2} GHz ({} samples), B {:.2} GHz ({} samples), B/A {speed:.3}",
        ga.mean, ga.samples, gb.mean, gb.samples
    );
    let within = SAME.ln().max(ga.spread).max(gb.spread);
    if speed.ln().abs() < within {
        return Some(
            Explanation::new(
                CPU_SPEED,
                Claim::RuledOut,
                format!(
                    "its effective clock was the same as A's ({:.2} vs {:.2} GHz, within {:.1}%)",
                    gb.mean,
                    ga.mean,
                    within.exp_m1() * 100.0
                ),
            )
            .evidence(evidence),
        );
    }
    let predicted = if c.ra.lower_is_better {
        1.0 / speed
    } else {
        speed
    };
    Some(
        Explanation::new(
            CPU_SPEED,
            Claim::Contributes,
            format!(
                "its CPU ran at {:.2} GHz effective and A's at {:.2} GHz",
                gb.mean, ga.mean
            ),
        )
        .evidence(evidence)
        .predict(predicted, c.ratio()),
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{judged_rows, timers_run, with_speed};
    use super::*;

    #[test]
    fn a_slower_clock_explains_a_cpu_bound_slowdown_of_the_same_ratio() {
        let a = with_speed(timers_run("a", 20.0, None), 3.0);
        let b = with_speed(timers_run("b", 30.0, None), 2.0);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!((e.predicted.unwrap() - 1.5).abs() < 1e-9);
    }

    /// The run with its start and end speed samples at `start` and `end` GHz.
    fn sampled(doc: RunDocument, start: f64, end: f64) -> RunDocument {
        let mut doc = with_speed(doc, start);
        doc.cpu_speed.as_mut().unwrap().samples[1].cycles_per_ns = end;
        doc
    }

    #[test]
    fn a_difference_within_the_drift_or_a_runs_own_samples_is_not_a_clock_change() {
        // Two quiet runs of one command on a shared host: 4% between each run's own
        // samples, 3.4% between the means.
        let a = sampled(timers_run("a", 20.0, None), 3.85, 4.01);
        let b = sampled(timers_run("b", 30.0, None), 3.72, 3.86);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        assert!(e.because.contains("within 5.0%"), "{e:?}");
        // Steady samples each side, 3.4% apart (two runs of one command): the same clock.
        let a = sampled(timers_run("a", 20.0, None), 3.85, 3.85);
        let b = sampled(timers_run("b", 21.4, None), 3.72, 3.72);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        // Steady samples 6% apart: a change of clock, which explains a row that moved as much.
        let a = sampled(timers_run("a", 20.0, None), 3.93, 3.93);
        let b = sampled(timers_run("b", 21.2, None), 3.70, 3.70);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
    }

    #[test]
    fn the_same_clock_rules_frequency_out_and_a_missing_one_is_not_measured() {
        let a = with_speed(timers_run("a", 20.0, None), 3.0);
        let b = with_speed(timers_run("b", 30.0, None), 3.01);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        let b = timers_run("b", 30.0, None);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::NotMeasured, "{e:?}");
        assert!(e.evidence[0].contains("B recorded no"), "{e:?}");
    }
}
