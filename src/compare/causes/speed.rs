//! CPU speed as a cause: the effective clock each run measured (`cpu_speed`: dependent
//! integer adds per ns, per suite start and end and per CPU kind) compared per CPU kind. A
//! CPU-bound row whose ratio matches the speed ratio is explained by frequency. A run
//! without the measurement makes the cause "not measured", never a guess.
//!
//! On one host in one setting the clock itself moves between runs by a few percent (the
//! host's other tenants take its turbo budget): two quiet runs of one command read every
//! clock 2-4% apart, with the rounds of each run agreeing within 1%. Such a shift is seen
//! by the canaries each run reads before its rounds, and `compare` tests a CPU-bound row of
//! two such runs per cycle: its ratio divided by the clock's (`compare::per_cycle`).

use crate::compare::causes::explain::{Claim, Explanation, RowCtx};
use crate::compare::per_cycle::SAME;
use crate::result::{BenchResult, RunDocument};

/// This cause, as the JSON names it.
pub const CPU_SPEED: &str = "cpu-speed";

/// Whether a row's figure is CPU work that scales with the clock, as its benchmark
/// declares it (`bench::nature::Clock`: the classic suite's compute, system-call, pipe
/// and process tests, the clock reads, a pipe pair on one CPU).
pub fn cpu_bound(r: &BenchResult) -> bool {
    crate::bench::nature::of(r).clock.cpu_bound()
}

/// The CPU kind a result ran on, when it ran on exactly one known kind: where it was seen
/// running, else (a pinned result nobody watched) the kind of the CPUs it was pinned to.
fn kind(r: &BenchResult) -> Option<String> {
    let seen = r.placement.observed.as_ref().and_then(|o| match o {
        crate::result::Observed::Pair(p) => p.cpu_kinds.as_ref(),
        crate::result::Observed::Copies(c) => c.cpu_kinds.as_ref(),
    });
    let kinds = seen.or(r.placement.cpu_kinds.as_ref())?;
    (kinds.len() == 1)
        .then(|| kinds.keys().next().cloned())
        .flatten()
        .filter(|k| k != "unknown")
}

/// The CPU kinds a run sampled its clock on.
fn kinds_sampled(doc: &RunDocument) -> Vec<String> {
    let mut k: Vec<String> = doc
        .cpu_speed
        .iter()
        .flat_map(|s| &s.samples)
        .filter_map(|x| x.cpu_kind.clone())
        .collect();
    k.sort();
    k.dedup();
    k
}

/// On a machine of several CPU kinds, a row whose kind is not known: when the kinds' clocks
/// moved unalike between the runs, which one the row ran on decides what the clock did to
/// it, and nothing says which (Err: the kinds' clocks, B/A each). When they moved alike, the
/// first kind's clock stands for them (the mean over kinds would mix clocks a kind apart,
/// and its spread would hide any change). None on a machine of one kind.
fn kind_for_unknown(c: &RowCtx) -> Result<Option<String>, Vec<String>> {
    let kinds = kinds_sampled(c.a);
    let ratios: Vec<(String, f64, f64)> = kinds
        .iter()
        .filter_map(|k| Some((k.clone(), ghz(c.a, Some(k))?.mean, ghz(c.b, Some(k))?.mean)))
        .collect();
    if ratios.len() < 2 {
        return Ok(None);
    }
    let logs = ratios.iter().map(|(_, a, b)| (b / a).ln());
    let (lo, hi) = logs.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
        (l.min(x), h.max(x))
    });
    if hi - lo < SAME.ln() {
        return Ok(Some(ratios[0].0.clone()));
    }
    Err(ratios
        .iter()
        .map(|(k, a, b)| format!("{k}: A {a:.2} GHz, B {b:.2} GHz, B/A {:.3}", b / a))
        .collect())
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
    let (ka, kb) = (kind(c.ra), kind(c.rb));
    if let (Some(x), Some(y)) = (&ka, &kb) {
        if x != y {
            // Another kind of core: its work per cycle differs too, by no figure the clock gives.
            let at = |d, k: &str| {
                ghz(d, Some(k)).map_or("not measured".into(), |g| format!("{:.2} GHz", g.mean))
            };
            return Some(
                Explanation::new(
                    CPU_SPEED,
                    Claim::NotMeasured,
                    format!("A's row ran on {x} CPUs and B's on {y} CPUs: another kind of core, whose work per cycle the clock does not give"),
                )
                .evidence(format!("effective clock: A's {x} CPUs {}, B's {y} CPUs {}", at(c.a, x), at(c.b, y))),
            );
        }
    }
    let k = match ka.or(kb) {
        Some(k) => Some(k),
        None => match kind_for_unknown(c) {
            Ok(k) => k,
            Err(kinds) => {
                let mut e = Explanation::new(
                    CPU_SPEED,
                    Claim::NotMeasured,
                    "the clocks of the CPU kinds moved unalike and the kind this row ran on was not recorded",
                );
                e.evidence = kinds;
                return Some(e);
            }
        },
    };
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
        "effective clock{of_kind}: A {:.2} GHz ({}), B {:.2} GHz ({}), B/A {speed:.3}",
        ga.mean,
        crate::units::count(ga.samples, "sample"),
        gb.mean,
        crate::units::count(gb.samples, "sample")
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
    use super::*;
    use crate::compare::causes::testing::judged_rows;
    use crate::compare::per_cycle::*;
    use crate::compare::testing::{timers_run, with_speed};

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
    fn latency_points_within_a_cores_own_cache_move_with_the_clock_and_larger_ones_do_not() {
        let env = crate::result::testing::env();
        let l2 = smallest_l2(&env).expect("the test machine reports an L2");
        let point = |size: u64| {
            crate::result::testing::result(
                "memory.latency@1",
                "cpus",
                Some(vec![0]),
                serde_json::json!({"size_bytes": size, "pages": "4k"}),
                1.0,
            )
        };
        assert!(clock_bound(&point(l2 / 4), &env));
        assert!(clock_bound(&point(l2), &env));
        assert!(!clock_bound(&point(l2 * 8), &env));
        // Without an L2 in the probe nothing is assumed.
        let mut bare = env.clone();
        bare.topology.caches.clear();
        assert!(!clock_bound(&point(4096), &bare));
        assert!(clock_bound(&timers_run("a", 20.0, None).results[0], &bare));
        // A clock read through the system call follows the clock only in part.
        let mut syscall = timers_run("a", 150.0, None).results[0].clone();
        syscall.params =
            serde_json::from_value(serde_json::json!({"clock": "monotonic", "path": "syscall"}))
                .unwrap();
        assert!(cpu_bound(&syscall) && !clock_bound(&syscall, &bare));
    }

    #[test]
    fn the_latency_point_that_fills_the_l2_is_at_its_edge_and_its_neighbours_are_not() {
        let env = crate::result::testing::env();
        let l2 = smallest_l2(&env).expect("the test machine reports an L2");
        let point = |size: u64| {
            crate::result::testing::result(
                "memory.latency@1",
                "cpus",
                Some(vec![0]),
                serde_json::json!({"size_bytes": size, "pages": "thp"}),
                1.0,
            )
        };
        assert_eq!(cache_edge(&point(l2), &env), Some(l2));
        // The sweep's neighbours, √2 apart, are on it too (they moved 7-10% between runs);
        // the next ones, 2x apart, are off it.
        for size in [l2 as f64 / 2f64.sqrt(), l2 as f64 * 2f64.sqrt()] {
            assert_eq!(cache_edge(&point(size as u64), &env), Some(l2));
        }
        assert_eq!(cache_edge(&point(l2 / 2), &env), None);
        assert_eq!(cache_edge(&point(l2 * 2), &env), None);
        assert_eq!(
            cache_edge(&timers_run("a", 20.0, None).results[0], &env),
            None
        );
    }

    /// The run with clock samples on a P CPU (0) and an E CPU (8) at these GHz.
    fn hybrid(doc: RunDocument, p: f64, e: f64) -> RunDocument {
        use crate::result::{testing::speed_sample, SpeedPoint};
        let mut doc = with_speed(doc, p);
        doc.cpu_speed.as_mut().unwrap().samples = [(0, "P", p), (8, "E", e)]
            .into_iter()
            .flat_map(|(cpu, k, g)| {
                [SpeedPoint::Start, SpeedPoint::End]
                    .map(|pt| speed_sample("timers", pt, cpu, Some(k), g))
            })
            .collect();
        doc
    }

    /// A ctx pair pinned to CPU `cpu` (of `kind`), as a run on a hybrid machine records it.
    fn pinned_ctx(id: &str, cpu: u32, kind: &str, median: f64) -> RunDocument {
        let mut r = crate::compare::testing::result(
            "ctx.pipe@1",
            "same-cpu",
            Some(vec![cpu, cpu]),
            serde_json::json!({"mode": "process"}),
            median,
            true,
        );
        r.placement.cpu_kinds = Some([(kind.to_string(), vec![cpu])].into_iter().collect());
        crate::result::testing::run(id, vec![r], crate::result::testing::env())
    }

    #[test]
    fn on_a_hybrid_machine_the_rows_own_kind_of_cpu_gives_its_clock() {
        // B's E CPUs were capped (3.8 -> 3.0 GHz), its P CPUs ran faster (5.0 -> 5.6): the
        // mean over both kinds moved 2%.
        let a = hybrid(pinned_ctx("a", 8, "E", 1000.0), 5.0, 3.8);
        let b = hybrid(pinned_ctx("b", 8, "E", 1267.0), 5.6, 3.0);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(e.evidence[0].contains("(E CPUs)"), "{e:?}");
        // A row of no known kind: which kind's clock acted on it is not known.
        let (a, b) = (
            hybrid(timers_run("a", 20.0, None), 5.0, 3.8),
            hybrid(timers_run("b", 22.0, None), 5.6, 3.0),
        );
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::NotMeasured, "{e:?}");
        assert_eq!(e.evidence.len(), 2, "{e:?}");
        // Kinds that moved alike still give one clock.
        let b = hybrid(timers_run("b", 26.0, None), 4.0, 3.04);
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        // The row on a P CPU in A and an E CPU in B: another core, not only another clock.
        let (a, b) = (
            hybrid(pinned_ctx("a", 0, "P", 1000.0), 5.0, 3.8),
            hybrid(pinned_ctx("b", 0, "E", 1400.0), 5.0, 3.8),
        );
        let e = judged_rows(&a, &b, explain)[0].1.clone().unwrap();
        assert_eq!(e.claim, Claim::NotMeasured, "{e:?}");
        assert!(
            e.because
                .starts_with("A's row ran on P CPUs and B's on E CPUs"),
            "{e:?}"
        );
    }

    #[test]
    fn a_latency_point_is_held_against_the_l2_of_the_cpu_it_ran_on() {
        // The hybrid laptop: CPUs 0-11 have 1.25 MiB L2s, 12-19 2 MiB.
        let env = crate::probe::fixture("hybrid-laptop");
        let point = |cpu: u32, size: u64| {
            crate::result::testing::result(
                "memory.latency@1",
                "cpus",
                Some(vec![cpu]),
                serde_json::json!({"size_bytes": size, "pages": "4k"}),
                1.0,
            )
        };
        assert_eq!(cache_edge(&point(0, 1280 << 10), &env), Some(1280 << 10));
        assert_eq!(cache_edge(&point(12, 2 << 20), &env), Some(2 << 20));
        // 2.83 MiB is off a P core's edge, on an E core's; 1.41 MiB fits an E core's L2.
        assert_eq!(cache_edge(&point(0, 2965760), &env), None);
        assert_eq!(cache_edge(&point(12, 2965760), &env), Some(2 << 20));
        assert!(clock_bound(&point(12, 1482880), &env));
        assert!(!clock_bound(&point(0, 1482880), &env));
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
