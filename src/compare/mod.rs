//! Comparing two runs: the pipeline. Rows pair the results of two runs that measured the
//! same thing (`matching`); a row whose definition, params or sample count differ is said to
//! be not comparable first (`comparability`); the others are tested against their noise and
//! end in three outcomes, by the statistics of a verdict (`stats`: the noise model, the
//! tests, the verdict words, calibration, round plans): called (the rows Benjamini-Hochberg
//! keeps at the false discovery rate, 5% unless `--fdr`), equivalent (the interval inside ±
//! the row's MDE), or cannot tell, with why. Every real difference is then explained, cause
//! by cause, with evidence from both documents (`causes`: placement, topology, timer,
//! capacity, noise, a neighbour, the host's placement of two CPUs, the host's share of the
//! last-level cache, CPU speed, ..., and candidates nothing quantifies, one file each behind
//! one registry); each row ends explained, partly explained (what remains) or unexplained,
//! and a summary gives each suite's sentence (`summary`). Several runs against a baseline
//! and many hosts against the fleet are `crate::fleet`.

pub mod causes;
pub mod comparability;
pub mod conditions;
pub mod index;
pub mod matching;
pub mod per_cycle;
pub mod rows;
pub mod settings;
pub mod stats;
pub mod summary;
#[cfg(test)]
pub mod testing;
mod wording;

use crate::result::RunDocument;
use causes::explain::{Explanation, RowCtx, Status};
use stats::verdict::{History, Verdict};

pub const SCHEMA: &str = "truebench.compare/1";

pub use rows::{Comparison, Fdr, Medians, NoiseSummary, Row, SideRounds};
pub use settings::{same_setting, setting_differences, EnvDiff};
use wording::{brief_of, noise_used, verdict_of, why_of, Pending};

/// The noise a matched pair of results (`a` of run `da`, `b` of run `db`) is tested against
/// with the baseline host's model (what `compare_at` uses for the row): the model's
/// calibration or history of A's row; without either, what each side lacks said before it
/// (`stats::noise_model::no_rounds_why`). Its run level is the row's in the two runs
/// (`stats::noise_model::row_run_sigma`).
pub fn row_noise(
    model: &History,
    (da, a): (&RunDocument, &crate::result::BenchResult),
    (db, b): (&RunDocument, &crate::result::BenchResult),
) -> stats::noise_model::RowNoise {
    let mut n = model.row(a);
    n.run = Some(stats::noise_model::row_run_sigma((a, da), (b, db)));
    if n.basis == stats::noise_model::Basis::None {
        let lacks: Vec<String> = [("A", a), ("B", b)]
            .iter()
            .filter_map(|(side, r)| {
                Some(format!("{side}: {}", stats::noise_model::no_rounds_why(r)?))
            })
            .collect();
        if !lacks.is_empty() {
            n.source = format!("{}; {}", lacks.join("; "), n.source);
        }
    }
    n
}

/// Results without a partner, each with the other run's reason when it skipped the case.
fn unmatched(
    results: &[&crate::result::BenchResult],
    other: &RunDocument,
    side: &str,
) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            let why = matching::skipped_reason(other, r)
                .map(|w| format!(" ({side} did not run it: {w})"))
                .unwrap_or_default();
            format!("{}{why}", r.key())
        })
        .collect()
}

/// Compare B with A with no noise model: every row on its runs' rounds (a row without them,
/// from an earlier version's document, is not tested).
pub fn compare(a: &RunDocument, b: &RunDocument) -> Comparison {
    compare_with(a, b, &History::default())
}

/// Compare B with A with the baseline host's noise model, at the default FDR.
pub fn compare_with(a: &RunDocument, b: &RunDocument, history: &History) -> Comparison {
    compare_at(a, b, history, stats::verdict::DEFAULT_FDR)
}

/// The explanations of row `ra` of A against `rb` of B, a difference known to be real
/// from elsewhere (`trend`: segments of many runs either side of a change point, where two
/// runs alone may not tell it from noise); `drift` is the smallest difference that counts.
pub fn explain_known(
    a: &RunDocument,
    b: &RunDocument,
    ra: &crate::result::BenchResult,
    rb: &crate::result::BenchResult,
    drift: f64,
) -> Vec<Explanation> {
    let judged = stats::verdict::judge(ra, rb, 0.0);
    let worse = (rb.stats.median > ra.stats.median) == ra.lower_is_better;
    let shared = causes::explain::Shared::default();
    let c = RowCtx {
        a,
        b,
        ra,
        rb,
        judged: stats::verdict::Judged {
            verdict: if worse {
                Verdict::Worse
            } else {
                Verdict::Better
            },
            ..judged
        },
        drift,
        shared: &shared,
    };
    causes::explain_row(&c, &causes::candidates::list(&a.env, &b.env))
}

/// Each matched row tested against its noise (the two sides of an `ab` run on their paired
/// rounds), per cycle where it follows the clock `clock` held out of it
/// (`per_cycle::clock_bound`), with why it is not comparable: the rows before the false
/// discovery rate decides which are real.
fn tested<'a>(
    (a, b): (&'a RunDocument, &'a RunDocument),
    model: &History,
    matched: &[matching::Match<'a>],
    clock: Option<per_cycle::RunClock>,
) -> Vec<Pending<'a>> {
    let paired = stats::paired::is_pair(a, b);
    matched
        .iter()
        .map(|m| {
            // The two sides of an ab run: each row on its paired rounds, which hold the
            // host's drift out (no clock held out, no run level added).
            let (noise, test) = match paired {
                true => stats::paired::test(m.a, m.b),
                false => {
                    let noise = row_noise(model, (a, m.a), (b, m.b));
                    let test = stats::noise_model::test(m.a, m.b, &noise);
                    (noise, test)
                }
            };
            let per_cycle = clock.filter(|_| {
                !paired
                    && per_cycle::clock_bound(m.a, &a.env)
                    && m.a.lower_is_better == m.b.lower_is_better
            });
            Pending {
                m: *m,
                // Whether the samples differ at all; the drift is the noise's business.
                judged: stats::verdict::judge(m.a, m.b, 0.0),
                test: match per_cycle {
                    Some(c) => test.map(|t| t.per_cycle(c.expected_log(m.a.lower_is_better), c.se)),
                    None => test,
                },
                noise,
                edge: per_cycle::cache_edge(m.a, &a.env)
                    .filter(|_| test.is_some_and(|t| t.basis == stats::noise_model::Basis::Rounds)),
                comparability: settings::with_limits(comparability::problems(m.a, m.b), a, b),
                per_cycle,
            }
        })
        .collect()
}

/// Compare B with A with the noise model `model` (the baseline host's), controlling the
/// false discovery rate across the rows at `q`.
pub fn compare_at(a: &RunDocument, b: &RunDocument, model: &History, q: f64) -> Comparison {
    // Conditions throughout a row's rounds marked by the current rule (documents of earlier
    // versions did not: `conditions::rejudged`).
    let (a, b) = (conditions::rejudged(a), conditions::rejudged(b));
    let (a, b) = (a.as_ref(), b.as_ref());
    let pairing = matching::pair_up(a, b);
    let cands = causes::candidates::list(&a.env, &b.env);
    let settings_differ = !setting_differences(&a.env, &b.env).is_empty();
    let clock = per_cycle::held_clock(a, b);
    let pending = tested((a, b), model, &pairing.matched, clock);
    let p_noise: Vec<Option<f64>> = pending
        .iter()
        .map(|p| {
            let t = p.test?;
            (p.comparability.is_empty() && p.edge.is_none()).then_some(t.p)
        })
        .collect();
    let real_at_fdr = crate::measure::fdr::benjamini_hochberg(&p_noise, q);
    let shared = causes::explain::Shared::default();
    let mut rows = vec![];
    for ((p, real), p_noise) in pending.iter().zip(real_at_fdr).zip(p_noise) {
        let m = p.m;
        let mut verdict = verdict_of(p, real);
        let mut why = why_of(p, verdict);
        let mde = p.test.map(|t| t.mde());
        let ci = p.test.filter(|_| p.comparability.is_empty()).map(|t| {
            let (lo, hi) = t.ci();
            [lo.exp(), hi.exp()]
        });
        // A row that cannot be told still hears what differs between the runs (a setting,
        // a condition throughout one run's rounds): the causes that would claim it are
        // offered, in the direction its figures point.
        let offered = verdict == Verdict::CannotTell
            && p.test.is_some()
            && (settings_differ
                || !conditions::throughout(m.a).is_empty()
                || !conditions::throughout(m.b).is_empty());
        let mut explanations = if verdict.is_real() || offered {
            let toward = if verdict.is_real() {
                verdict
            } else if (m.b.stats.median > m.a.stats.median) != m.a.lower_is_better {
                Verdict::Better
            } else {
                Verdict::Worse
            };
            causes::explain_row(
                &RowCtx {
                    a,
                    b,
                    ra: m.a,
                    rb: m.b,
                    judged: stats::verdict::Judged {
                        verdict: toward,
                        ..p.judged
                    },
                    // A row called real was tested: it has an MDE; an offered cause is
                    // kept at any size.
                    drift: if offered { 0.0 } else { mde.unwrap_or(0.0) },
                    shared: &shared,
                },
                &cands,
            )
        } else {
            vec![]
        };
        if offered {
            explanations.retain(|e| causes::explain::claimed(std::slice::from_ref(e)));
        }
        // A call between runs whose rounds one side's disturbance set apart, that no
        // measured cause claims, cannot be told from what disturbed them.
        if verdict.is_real() && !causes::explain::claimed(&explanations) {
            if let Some(d) = stats::verdict::lopsided_disturbance(m.a, m.b) {
                why = format!("cannot tell: {d}; no measured cause claims {why}");
                verdict = Verdict::CannotTell;
                explanations.clear();
            }
        }
        let (status, remains) = if offered && !explanations.is_empty() {
            (Status::Offered, None)
        } else {
            causes::explain::status(verdict, &explanations)
        };
        let comparability = p.comparability.clone();
        let brief = brief_of(p, verdict, &why);
        rows.push(Row {
            benchmark: m.a.benchmark.clone(),
            label: crate::bench::label::of(m.a),
            placement: m.a.placement.name.clone(),
            params: m.a.params_text(),
            role: m.role.map(|r| r.to_string()),
            unit: m.a.unit.clone(),
            unit_b: (m.b.unit != m.a.unit).then(|| m.b.unit.clone()),
            lower_is_better: m.a.lower_is_better,
            medians: Medians {
                a: m.a.stats.median,
                b: m.b.stats.median,
            },
            ratio: p.judged.ratio,
            ci_overlap: p.judged.ci_overlap,
            p: p.judged.p,
            p_noise,
            mde,
            noise: noise_used(p),
            verdict,
            why,
            brief,
            ci,
            rounds: [SideRounds::of(m.a), SideRounds::of(m.b)],
            drift: stats::verdict::Drift {
                fraction: mde,
                basis: p.noise.source.clone(),
            },
            warning: (!comparability.is_empty()).then(|| comparability.join("; ")),
            comparability,
            explanations,
            status,
            remains,
            a_median: m.a.stats.median,
            b_median: m.b.stats.median,
            p_value: p.judged.p,
            per_cycle: p.per_cycle.is_some(),
        });
    }
    let only_in_a = unmatched(&pairing.only_a, b, "B");
    let only_in_b = unmatched(&pairing.only_b, a, "A");
    let env_differences = setting_differences(&a.env, &b.env);
    let indexes = index::shares(a, b);
    let mut c = Comparison {
        schema: SCHEMA,
        runs: [a.run_id.clone(), b.run_id.clone()],
        a: a.run_id.clone(),
        b: b.run_id.clone(),
        tags: [a.tags.clone(), b.tags.clone()],
        summary: vec![],
        only_in_a,
        only_in_b,
        env_differences,
        topology_differences: settings::topology_differences(&a.env, &b.env),
        candidates: cands,
        indexes,
        fdr: fdr_of(q, &rows, &pending),
        noise: noise_summary(&rows, model, clock),
        rows,
    };
    c.summary = summary::sentences(&c);
    c
}

/// The rows tested at the false discovery rate `q`, what it called real, and the rows left
/// out of the family (at the L2's edge, not comparable, no noise to judge them by).
fn fdr_of(q: f64, rows: &[Row], pending: &[Pending]) -> Fdr {
    Fdr {
        q,
        tested: rows.iter().filter(|r| r.p_noise.is_some()).count(),
        real: rows.iter().filter(|r| r.verdict.is_real()).count(),
        not_comparable: rows.iter().filter(|r| !r.comparability.is_empty()).count(),
        edge: pending
            .iter()
            .filter(|p| p.edge.is_some() && p.comparability.is_empty())
            .count(),
        no_noise: pending
            .iter()
            .filter(|p| p.test.is_none() && p.comparability.is_empty())
            .count(),
    }
}

/// How many rows rest on each noise basis, the calibration used, and the run clock held
/// out of the rows tested per cycle.
fn noise_summary(
    rows: &[Row],
    model: &History,
    clock: Option<per_cycle::RunClock>,
) -> NoiseSummary {
    let count = |b: stats::noise_model::Basis| rows.iter().filter(|r| r.noise.basis == b).count();
    NoiseSummary {
        calibration: model
            .calibration
            .as_ref()
            .filter(|_| count(stats::noise_model::Basis::Calibration) > 0)
            .map(|(id, _)| id.clone()),
        calibration_rows: count(stats::noise_model::Basis::Calibration),
        history_rows: count(stats::noise_model::Basis::History),
        none_rows: count(stats::noise_model::Basis::None),
        rounds_rows: count(stats::noise_model::Basis::Rounds),
        paired_rows: count(stats::noise_model::Basis::Paired),
        per_cycle_rows: rows.iter().filter(|r| r.per_cycle).count(),
        clock: clock.filter(|_| rows.iter().any(|r| r.per_cycle)),
    }
}

#[cfg(test)]
mod tests {
    use super::stats::noise_model::Basis;
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    /// A latency point of `size` bytes on `pages` with median `m` (samples +-4.5 around it).
    fn point(size: u64, pages: &str, m: f64) -> crate::result::BenchResult {
        testing::result(
            "memory.latency@1",
            "cpus",
            Some(vec![0]),
            json!({"size_bytes": size, "pages": pages}),
            m,
        )
    }

    /// A run of an earlier version (measured in one piece, no rounds) of rows of one kind (a
    /// system-call clock read), row i with median `medians[i]`.
    fn curve(id: &str, medians: &[f64]) -> RunDocument {
        let results = medians
            .iter()
            .enumerate()
            .map(|(i, m)| {
                testing::result(
                    "timers.clock-read@1",
                    "os",
                    None,
                    json!({"clock": "monotonic", "path": "syscall", "n": i}),
                    *m,
                )
            })
            .collect();
        let mut d = testing::run(id, results, testing::env());
        d.host = Some("h".into());
        d
    }

    /// `r` drawn in `rounds`, its samples (two a round) and noise as `run` pools those of
    /// `pool`.
    fn pooled(
        r: &mut crate::result::BenchResult,
        pool: &[&crate::result::rounds::Round],
        rounds: Vec<crate::result::rounds::Round>,
    ) {
        use crate::result::rounds::{noise_of, Rounds};
        r.samples = pool
            .iter()
            .flat_map(|x| [x.median * 0.999, x.median * 1.001])
            .collect();
        r.stats = crate::measure::stats::Stats::of(&r.samples).unwrap();
        r.rounds = Some(Rounds {
            noise: noise_of(&rounds, Some(r.stats.median.ln()), None),
            rounds,
        });
    }

    /// `doc` with each row drawn in five rounds whose medians spread about 10% (σ of their
    /// logs about 0.095) around its median, samples and noise as `run` pools them.
    fn rounded(mut doc: RunDocument) -> RunDocument {
        use crate::result::rounds::quiet_rounds;
        for r in &mut doc.results {
            let m = r.stats.median;
            let logs: Vec<f64> = [-1.2, -0.6, 0.0, 0.6, 1.2]
                .iter()
                .map(|z| m.ln() + 0.1 * z)
                .collect();
            let rounds = quiet_rounds(&logs);
            pooled(r, &rounds.iter().collect::<Vec<_>>(), rounds.clone());
        }
        doc
    }

    #[test]
    fn a_run_under_another_quota_or_clocksource_is_another_setting() {
        let a = testing::env();
        assert!(same_setting(&a, &a.clone()));
        let mut quota = a.clone();
        quota.cpus.cgroup_quota = Some(0.5);
        assert!(!same_setting(&a, &quota));
        let mut clock = a.clone();
        clock.clock.clocksource = Some("kvm-clock".into());
        assert!(!same_setting(&a, &clock));
    }

    #[test]
    fn many_null_rows_call_nothing_and_one_large_difference_stays_real() {
        // 40 rows, each a few percent apart by chance (within-run tests call them all),
        // and one row 3x slower.
        let a: Vec<f64> = (0..41).map(|i| 100.0 + i as f64).collect();
        let mut b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, m)| m * if i % 2 == 0 { 1.12 } else { 0.9 })
            .collect();
        b[40] = a[40] * 3.0;
        let (da, db) = (rounded(curve("a", &a)), rounded(curve("b", &b)));
        let c = compare(&da, &db);
        assert_eq!(c.fdr.tested, 41);
        let real: Vec<&Row> = c.rows.iter().filter(|r| r.verdict.is_real()).collect();
        assert_eq!(real.len(), 1, "{:?}", c.summary);
        assert_eq!(real[0].verdict, Verdict::Worse);
        assert_eq!(c.fdr.real, 1);
        // The 10-12% rows are below their rounds' MDE: cannot tell, and why.
        assert!(c.rows[..40]
            .iter()
            .all(|r| r.verdict == Verdict::CannotTell && r.noise.basis == Basis::Rounds));
        assert!(
            c.rows[0].why.starts_with("cannot tell: B between ")
                && c.rows[0].why.contains("(95% interval), MDE ")
                && c.rows[0].why.ends_with("(rounds disagree)"),
            "{}",
            c.rows[0].why
        );
        assert!(c
            .rows
            .iter()
            .all(|r| r.mde.unwrap() > 0.15 && r.drift.fraction == r.mde));
        assert!(
            c.summary[0].starts_with(
                "41 rows tested, 1 real at FDR 5%; noise: each run's rounds (41 rows)"
            ),
            "{}",
            c.summary[0]
        );
        // A stricter rate keeps the 3x row; the JSON carries rows[].mde.
        let strict = compare_at(&da, &db, &History::default(), 0.001);
        assert_eq!(strict.fdr.real, 1);
        let j = serde_json::to_value(&strict).unwrap();
        assert!(j["rows"][0]["mde"].as_f64().unwrap() > 0.15);
        assert_eq!(j["rows"][0]["noise"]["basis"], "rounds");
    }

    #[test]
    fn a_clocksource_change_is_a_candidate_on_a_ctx_row_and_the_timers_on_a_clock_read_row() {
        let clocked = |mut d: RunDocument, cs: &str| {
            d.env.clock.clocksource = Some(cs.into());
            d.env.clock.read_cost_ns.insert("monotonic".into(), 20.0);
            d
        };
        let first = |d: &RunDocument| d.results[0].clone();
        // A ctx.pipe row 40% slower beside tsc -> kvm-clock: nothing quantifies it, the
        // clocksource is named, not measured.
        let a = clocked(super::testing::ctx_run("a", 1.0, 10.0, None, None), "tsc");
        let b = clocked(
            super::testing::ctx_run("b", 1.0, 14.0, None, None),
            "kvm-clock",
        );
        let named = |es: &[Explanation]| {
            es.iter().any(|e| {
                e.cause == causes::candidates::CANDIDATE && e.because.contains("clocksource")
            })
        };
        let es = explain_known(&a, &b, &first(&a), &first(&b), 0.05);
        assert!(named(&es), "{es:?}");
        // The same clocksource: not named.
        let same = clocked(super::testing::ctx_run("b", 1.0, 14.0, None, None), "tsc");
        assert!(!named(&explain_known(
            &a,
            &same,
            &first(&a),
            &first(&same),
            0.05
        )));
        // A clock-read row: the timer cause measures the clocksource's read cost, and the
        // candidate is not listed beside it.
        let a = clocked(super::testing::timers_run("a", 20.0, None), "tsc");
        let b = clocked(super::testing::timers_run("b", 23.5, None), "kvm-clock");
        let es = explain_known(&a, &b, &first(&a), &first(&b), 0.05);
        assert!(es.iter().any(|e| e.cause == causes::timer::TIMER), "{es:?}");
        assert!(!named(&es), "{es:?}");
    }

    #[test]
    fn the_summary_counts_a_row_not_comparable_beside_the_rows_tested() {
        let a = rounded(curve("a", &[100.0, 200.0]));
        let mut b = rounded(curve("b", &[100.0, 200.0]));
        b.results[1].unit = "ms".into();
        let c = compare(&a, &b);
        assert_eq!((c.fdr.tested, c.fdr.edge, c.fdr.not_comparable), (1, 0, 1));
        assert_eq!(c.noise.rounds_rows, 2);
        assert!(
            c.summary[0].starts_with(
                "1 row tested, 0 real at FDR 5%; 1 not comparable; noise: each run's rounds (2 rows)"
            ),
            "{}",
            c.summary[0]
        );
    }

    #[test]
    fn an_earlier_documents_rows_are_told_only_by_a_calibration_or_history_of_the_host() {
        let a = curve("a", &[100.0, 200.0]);
        let b = curve("b", &[115.0, 400.0]);
        // Without rounds (earlier versions' documents) and nothing measured of the host: no
        // row is tested, not even the one 2x slower; each says why, and no figure is made up.
        let c = compare(&a, &b);
        for r in &c.rows {
            assert_eq!(
                (r.verdict, r.noise.basis),
                (Verdict::CannotTell, Basis::None)
            );
            assert_eq!(
                (r.p_noise, r.mde, r.ci, r.noise.sigma),
                (None, None, None, None)
            );
            assert_eq!(
                r.why,
                "cannot tell: A: no rounds (an earlier version's document); B: no rounds (an earlier version's document); no calibration or stored history of this row"
            );
            assert_eq!(r.brief, "cannot tell (no rounds)");
        }
        assert_eq!((c.fdr.tested, c.fdr.no_noise, c.noise.none_rows), (0, 2, 2));
        assert!(
            c.summary[0].starts_with(
                "0 rows tested, 0 real at FDR 5%; 2 more not tested: no rounds (an earlier version's document), and no calibration or stored history of the host; noise: none (2 rows"
            ),
            "{}",
            c.summary[0]
        );
        let j = serde_json::to_value(&c).unwrap();
        assert_eq!(j["rows"][0]["noise"]["basis"], "none");
        assert!(j["rows"][0]["mde"].is_null() && j["rows"][0]["noise"]["sigma"].is_null());
        // One side measured in rounds, the other an earlier version's: the same, naming the
        // side without.
        let mixed = compare(&rounded(curve("a", &[100.0, 200.0])), &b);
        assert!(
            mixed.rows.iter().all(|r| r.verdict == Verdict::CannotTell
                && r.why.starts_with(
                    "cannot tell: B: no rounds (an earlier version's document); no calibration"
                )),
            "{:?}",
            mixed.rows.iter().map(|r| &r.why).collect::<Vec<_>>()
        );
        // Five quiet calibration runs make it detectable, and real.
        let cal: Vec<RunDocument> = [100.0, 100.4, 99.7, 100.2, 99.9]
            .iter()
            .map(|m| curve("c", &[*m, 200.0]))
            .collect();
        let model = History::new("h", Some(("cal-1", &cal)), &[]);
        let c = compare_with(&a, &b, &model);
        let r = &c.rows[0];
        assert_eq!((r.noise.basis, r.noise.runs), (Basis::Calibration, 5));
        assert!(r.mde.unwrap() < 0.1, "{:?}", r.mde);
        assert_eq!(r.verdict, Verdict::Worse);
        assert_eq!(c.rows[1].verdict, Verdict::Worse);
        assert_eq!(c.noise.calibration.as_deref(), Some("cal-1"));
        assert!(
            c.summary[0].contains("calibration cal-1 (2 rows)"),
            "{}",
            c.summary[0]
        );
        // A calibration that moved 30% between runs calls the same 15% undetectable.
        let loud: Vec<RunDocument> = [100.0, 130.0, 85.0, 120.0, 95.0]
            .iter()
            .map(|m| curve("c", &[*m, 200.0]))
            .collect();
        let model = History::new("h", Some(("cal-2", &loud)), &[]);
        assert_eq!(
            compare_with(&a, &b, &model).rows[0].verdict,
            Verdict::CannotTell
        );
    }

    #[test]
    fn thp_never_names_thp_on_huge_page_rows_only_and_the_missing_curve_gives_bs_reason() {
        let mut env_a = testing::env();
        env_a.kernel.thp = Some("madvise".into());
        let mut env_b = env_a.clone();
        env_b.kernel.thp = Some("never".into());
        let a = testing::run(
            "a",
            vec![point(1 << 30, "4k", 100.0), point(1 << 30, "thp", 60.0)],
            env_a,
        );
        let mut b = testing::run("b", vec![point(1 << 30, "4k", 300.0)], env_b);
        b.skipped.push(crate::result::Skipped {
            benchmark: "memory.latency@1".into(),
            case: "pages=thp".into(),
            reason: "transparent huge pages are never".into(),
        });
        // A quiet history of the 4 KiB row (measured in one piece, it is told by nothing else).
        let hist: Vec<RunDocument> = [100.0, 101.0, 99.0]
            .iter()
            .map(|m| testing::run("h", vec![point(1 << 30, "4k", *m)], testing::env()))
            .collect();
        let c = compare_with(&a, &b, &History::new("h", None, &hist));
        // The 4 KiB row differs (3x), but THP does not govern its pages.
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::Worse);
        assert!(
            r.explanations
                .iter()
                .all(|e| e.cause != causes::candidates::CANDIDATE),
            "{:?}",
            r.explanations
        );
        assert_eq!(c.only_in_a.len(), 1);
        assert!(
            c.only_in_a[0].contains("thp")
                && c.only_in_a[0].contains("B did not run it: transparent huge pages are never"),
            "{:?}",
            c.only_in_a
        );
        assert!(c
            .candidates
            .iter()
            .any(|x| x.what == "THP" && x.status == "differs"));
    }

    /// A clock-read row of a run measured in rounds with these round medians (`true`:
    /// disturbed by other tasks), its samples and noise as `run` pools them.
    fn in_rounds(id: &str, medians: &[f64], disturbed: &[bool]) -> RunDocument {
        use crate::result::rounds::{Cause, Disturbance};
        rounds_run(id, medians, |i| {
            let d = disturbed[i].then_some(Disturbance {
                cause: Cause::OtherTasks,
                value: 48.0,
                limit: 10.0,
                persistent: false,
            });
            (d.into_iter().collect(), None)
        })
    }

    /// As `in_rounds`, the hypervisor taking `steal` (%) of each round's CPUs' time, a round
    /// at 2% or more disturbed by it.
    fn stolen_rounds(id: &str, medians: &[f64], steal: &[f64]) -> RunDocument {
        use crate::result::rounds::{Cause, Disturbance};
        rounds_run(id, medians, |i| {
            let p = steal[i];
            let d = (p >= 2.0).then_some(Disturbance {
                cause: Cause::Steal,
                value: p,
                limit: 2.0,
                persistent: false,
            });
            (d.into_iter().collect(), Some(p))
        })
    }

    /// A clock-read row in rounds of these medians, `round(i)` giving round i's
    /// disturbances and steal figure.
    fn rounds_run(
        id: &str,
        medians: &[f64],
        round: impl Fn(usize) -> (Vec<crate::result::rounds::Disturbance>, Option<f64>),
    ) -> RunDocument {
        use crate::result::rounds::Round;
        let rounds: Vec<Round> = medians
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let (disturbed, steal) = round(i);
                Round {
                    seq: i * 7,
                    waited: None,
                    at_s: i as f64 * 6.0,
                    median: *m,
                    samples: 2,
                    disturbed,
                    others: None,
                    steal,
                }
            })
            .collect();
        let kept = rounds.iter().filter(|r| r.kept()).count();
        let pool: Vec<&Round> = rounds.iter().filter(|r| kept < 2 || r.kept()).collect();
        let mut r = testing::result(
            "timers.clock-read@1",
            "os",
            None,
            json!({"clock": "monotonic", "path": "vdso"}),
            100.0,
        );
        pooled(&mut r, &pool, rounds.clone());
        let mut d = testing::run(id, vec![r], testing::env());
        d.host = Some("h".into());
        d
    }

    /// The run with `n` canaries on each of CPUs 0 and 1 around `ghz` (±0.5%).
    fn with_canaries(mut d: RunDocument, ghz: f64, n: usize) -> RunDocument {
        let canaries = (0..2 * n)
            .map(|i| crate::result::CanaryReading {
                cpu: (i % 2) as u32,
                cycles_per_ns: ghz * (1.0 + 0.005 * ((i % 5) as f64 - 2.0) / 2.0),
            })
            .collect();
        d.cpu_speed = Some(crate::result::CpuSpeed {
            method: "dependent adds".into(),
            samples: vec![],
            unavailable: vec![],
            canaries,
            pair_canaries: vec![],
        });
        d
    }

    #[test]
    fn a_host_whose_clock_moved_between_two_runs_is_compared_per_cycle() {
        let quiet = [false; 5];
        let a = with_canaries(
            in_rounds("a", &[23.2, 23.25, 23.15, 23.2, 23.3], &quiet),
            4.15,
            20,
        );
        // The whole run 3% faster, its canaries 3% faster (two quiet runs on a shared
        // host): not called, the same within its MDE per cycle.
        let fast = [22.5, 22.55, 22.45, 22.5, 22.6];
        let b = with_canaries(in_rounds("b", &fast, &quiet), 4.15 * 1.031, 20);
        let c = compare(&a, &b);
        let r = &c.rows[0];
        assert!(r.per_cycle, "{r:?}");
        assert_eq!(r.verdict, Verdict::Equivalent, "{}", r.why);
        assert!(r.why.ends_with("per cycle"), "{}", r.why);
        assert!(
            (r.ratio - 0.970).abs() < 0.002,
            "the raw ratio stays: {}",
            r.ratio
        );
        assert_eq!(c.noise.per_cycle_rows, 1);
        assert!(
            c.summary[0].contains("B's clock 3.1% faster"),
            "{}",
            c.summary[0]
        );
        // Without canaries the same rows are called: the rounds alone cannot see the host.
        let bare = compare(
            &in_rounds("a", &[23.2, 23.25, 23.15, 23.2, 23.3], &quiet),
            &in_rounds("b", &fast, &quiet),
        );
        assert_eq!(bare.rows[0].verdict, Verdict::Better);
        assert!(!bare.rows[0].per_cycle);
        // A real 10% slowdown with the clock 3% faster: called, per cycle 13% slower.
        let slow = in_rounds("b", &[25.5, 25.55, 25.45, 25.5, 25.6], &quiet);
        let r = &compare(&a, &with_canaries(slow.clone(), 4.15 * 1.031, 20)).rows[0];
        assert_eq!(r.verdict, Verdict::Worse, "{}", r.why);
        assert_eq!(r.why, "B 12% slower per cycle");
        // Another host, or a clock 8% away (a governor, a power cap): compared as measured.
        let mut other = with_canaries(in_rounds("b", &fast, &quiet), 4.15 * 1.031, 20);
        other.host = Some("g".into());
        assert!(!compare(&a, &other).rows[0].per_cycle);
        let capped = with_canaries(in_rounds("b", &fast, &quiet), 4.15 * 1.08, 20);
        assert!(per_cycle::held_clock(&a, &capped).is_none());
        assert!(!compare(&a, &capped).rows[0].per_cycle);
        // Another setting (a quota): compared as measured.
        let mut quota = with_canaries(in_rounds("b", &fast, &quiet), 4.15 * 1.031, 20);
        quota.env.cpus.cgroup_quota = Some(0.5);
        assert!(per_cycle::held_clock(&a, &quota).is_none());
        // CPU 1 read 10% slower in B and CPU 0 the same (a neighbour on CPU 1): no one
        // clock moved, nothing held.
        let mut unalike = with_canaries(in_rounds("b", &fast, &quiet), 4.15, 20);
        for c in &mut unalike.cpu_speed.as_mut().unwrap().canaries {
            if c.cpu == 1 {
                c.cycles_per_ns *= 0.9;
            }
        }
        assert!(per_cycle::held_clock(&a, &unalike).is_none());
        // Too few canaries: nothing held.
        let few = with_canaries(in_rounds("b", &fast, &quiet), 4.15 * 1.031, 2);
        assert!(per_cycle::held_clock(&a, &few).is_none());
    }

    #[test]
    fn a_latency_point_at_the_l2s_edge_is_not_told_from_one_run_a_side() {
        let quiet = [false; 5];
        let at = |id: &str, medians: &[f64], size: u64| {
            let mut d = in_rounds(id, medians, &quiet);
            let r = &mut d.results[0];
            r.benchmark = "memory.latency@1".into();
            r.params = crate::result::Params::of([
                ("size_bytes", crate::result::ParamValue::Unsigned(size)),
                ("pages", crate::result::ParamValue::Text("thp".into())),
            ]);
            d
        };
        let l2 = per_cycle::smallest_l2(&testing::env()).unwrap();
        // Every round of A at 4.5 ns, of B at 6.9 ns (two runs of one host, 2026-11-27).
        let (fits, spills) = (
            [4.47, 4.47, 4.41, 4.42, 4.58],
            [6.84, 6.93, 6.97, 6.90, 7.08],
        );
        let c = compare(&at("a", &fits, l2), &at("b", &spills, l2));
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::CannotTell, "{}", r.why);
        assert!(r.why.contains("at the edge of the L2"), "{}", r.why);
        assert!(r.p_noise.is_none() && c.fdr.tested == 0);
        // The summary says the point was not tested, and why, beside the rows its noise
        // counts; wrapped, no line is wider than the table.
        assert_eq!((c.fdr.edge, c.noise.rounds_rows), (1, 1));
        assert!(
            c.summary[0].starts_with(
                "0 rows tested, 0 real at FDR 5%; 1 more at the edge of the L2 not tested from one run a side; noise: each run's rounds (1 row)"
            ),
            "{}",
            c.summary[0]
        );
        let wrapped = crate::report::views::wrap(&format!("  {}", c.summary[0]));
        assert!(wrapped.lines().all(|l| l.len() <= 100), "{wrapped}");
        // The sweep's next point, off the edge, is called.
        let off = l2 * 2;
        let c = compare(&at("a", &fits, off), &at("b", &spills, off));
        assert_eq!(c.rows[0].verdict, Verdict::Worse);
        assert_eq!((c.fdr.tested, c.fdr.edge), (1, 0));
        assert!(
            c.summary[0].starts_with("1 row tested, 1 real at FDR 5%; noise: "),
            "{}",
            c.summary[0]
        );
    }

    #[test]
    fn rounds_call_a_small_shift_and_say_equal_runs_are_the_same_within_their_mde() {
        let quiet = [false; 5];
        let a = in_rounds("a", &[23.2, 23.25, 23.15, 23.2, 23.3], &quiet);
        // A/A: the same noise, no shift: equivalent within a few percent.
        let same = in_rounds("b", &[23.25, 23.2, 23.3, 23.15, 23.2], &quiet);
        let c = compare(&a, &same);
        let r = &c.rows[0];
        assert_eq!(
            (r.verdict, r.noise.basis),
            (Verdict::Equivalent, Basis::Rounds)
        );
        // Rounds agreeing within 0.3%: the run level (0.6% a run) sets the MDE.
        assert!(r.mde.unwrap() < 0.03, "{:?}", r.mde);
        assert!(r.why.starts_with("same within ±"), "{}", r.why);
        assert_eq!(c.noise.rounds_rows, 1);
        // 7% slower clock reads (the disturbed runs of the field): called, with its CI.
        let slow = in_rounds("b", &[24.8, 24.9, 24.85, 24.8, 24.95], &quiet);
        let r = &compare(&a, &slow).rows[0];
        assert_eq!(r.verdict, Verdict::Worse);
        assert_eq!(r.why, "B 7% slower");
        let [lo, hi] = r.ci.unwrap();
        assert!(
            lo > 1.04 && hi < 1.10 && lo < r.ratio && r.ratio < hi,
            "{lo} {hi}"
        );
        // Rounds that disagree by 20%: the same 7% cannot be told, and the row says why.
        let loud = in_rounds("b", &[20.0, 29.0, 24.0, 31.0, 22.0], &quiet);
        let r = &compare(&a, &loud).rows[0];
        assert_eq!(r.verdict, Verdict::CannotTell);
        assert!(r.why.ends_with("(rounds disagree)"), "{}", r.why);
    }

    #[test]
    fn a_neighbour_in_all_of_bs_rounds_is_called_and_named_and_a_few_disturbed_rounds_are_kept_out()
    {
        let quiet = [false; 5];
        let a = in_rounds("a", &[23.2, 23.25, 23.15, 23.2, 23.3], &quiet);
        // Every round of B beside a hog: in B's figures, so called and explained by noise.
        let b = in_rounds("b", &[30.1, 30.3, 29.9, 30.2, 30.0], &[true; 5]);
        let c = compare(&a, &b);
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::Worse);
        let noise = r
            .explanations
            .iter()
            .find(|e| e.cause == causes::noise::NOISE)
            .unwrap_or_else(|| panic!("{:?}", r.explanations));
        assert!(
            noise.evidence.iter().any(|e| e.starts_with(
                "B: all 5 rounds: other tasks used 48% of the round's CPUs"
            )),
            "{:?}",
            noise.evidence
        );
        // A neighbour in every round at a steady share is B's condition: its rounds are
        // kept, and it is named on B's side.
        let side = r.rounds[1].as_ref().unwrap();
        assert!(!side.includes_disturbed);
        assert_eq!(side.throughout.len(), 1, "{side:?}");
        // Two disturbed rounds of five, far off: kept out, B is the same as A.
        let b = in_rounds(
            "b",
            &[23.2, 40.0, 23.25, 41.0, 23.2],
            &[false, true, false, true, false],
        );
        let r = &compare(&a, &b).rows[0];
        assert_eq!(r.verdict, Verdict::Equivalent, "{}", r.why);
        // Three of five disturbed and the rest disagreeing: cannot tell, naming them.
        let b = in_rounds(
            "b",
            &[20.0, 40.0, 29.0, 41.0, 39.0],
            &[false, true, false, true, true],
        );
        let r = &compare(&a, &b).rows[0];
        assert_eq!(r.verdict, Verdict::CannotTell);
        assert_eq!(
            r.why,
            "cannot tell: 3 of 5 rounds of B disturbed (3 other-tasks; other tasks took 48% of the CPUs on average)"
        );
    }

    #[test]
    fn a_loud_hours_clock_read_is_claimed_by_steal_or_cannot_be_told() {
        let a = stolen_rounds(
            "a",
            &[40.0, 40.2, 39.8, 40.1, 39.9],
            &[1.0, 0.0, 1.0, 1.5, 1.5],
        );
        // Every round of B carried steal (27% on average): in its figures, called and
        // named by the steal cause, as the summary says it (its time 1.56x A's: 36% of A's
        // speed lost, within the 1.37x steal in every batch would take, times 1.25).
        let b = stolen_rounds(
            "b",
            &[62.5, 62.0, 63.0, 62.6, 62.2],
            &[27.0, 25.0, 30.0, 26.0, 27.0],
        );
        let c = compare(&a, &b);
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::Worse, "{}", r.why);
        assert_eq!(r.status, Status::Explained, "{:?}", r.explanations);
        assert!(
            c.summary.iter().any(|l| l.contains("B is 36% slower because the hypervisor took 27% of B's CPU time during this row and 1% of A's (steal)")),
            "{:?}",
            c.summary
        );
        // The steal throughout B's rounds is said as B's condition.
        assert!(
            c.summary
                .iter()
                .any(|l| l.starts_with("Throughout B's rounds: the hypervisor took 27%")),
            "{:?}",
            c.summary
        );
        // Three of B's five rounds disturbed by steal and kept out, the two kept 30% slower
        // with nothing recorded: no measured cause claims it, and it cannot be told.
        let b = stolen_rounds(
            "b",
            &[60.0, 52.0, 61.0, 52.2, 59.0],
            &[40.0, 0.0, 35.0, 1.0, 50.0],
        );
        let r = &compare(&a, &b).rows[0];
        assert_eq!(r.verdict, Verdict::CannotTell, "{r:?}");
        assert_eq!(
            r.why,
            "cannot tell: 3 of 5 rounds of B disturbed (3 steal), 0 of 5 of A's; no measured cause claims B 23% slower"
        );
        assert!(r.explanations.is_empty() && r.status == Status::Nothing);
        // Undisturbed on both sides, the same 30% stays called: a change of B's own.
        let b = stolen_rounds(
            "b",
            &[52.0, 52.2, 51.8, 52.1, 51.9],
            &[0.0, 1.0, 0.0, 1.0, 0.0],
        );
        let r = &compare(&a, &b).rows[0];
        assert_eq!((r.verdict, r.status), (Verdict::Worse, Status::Unexplained));
    }
}
