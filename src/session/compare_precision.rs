//! What `compare A B --precision P [--budget T]` measures: the rows of a two-run comparison
//! whose MDE is above P get rounds added on this machine, to the side(s) that can be
//! re-measured here (`compare::stats::added_rounds::remeasurable`), as many as the first stage
//! says (`compare::stats::round_plan`), each side's added rounds stored as a run tagged
//! `adds-to=<run id>`; both sides are returned as the union of their runs' rounds, for the
//! command line (`cli::compare_precision`) to compare again and print per row what it
//! reached. When neither side can be re-measured it refuses (exit 2) with each side's
//! reason and writes nothing. Ctrl-C keeps what was measured (stored) and says so.

use crate::bench::Benchmark;
use crate::compare::stats::added_rounds::{self, ADDS_TO_TAG};
use crate::compare::stats::noise_model::{self, Basis, RowNoise, RowTest};
use crate::compare::stats::round_plan::{self, First, Plan, SideNow};
use crate::compare::stats::verdict::History;
use crate::compare::{comparability, matching};
use crate::error::Interrupted;
use crate::result::{BenchResult, RunDocument};
use crate::session::add_rounds::AddRounds;
use crate::session::precision::{why_short, MAX_ROUNDS};
use crate::store::Location;
use std::collections::BTreeMap;

/// The sides' names as the lines on stderr say them.
pub const SIDE: [&str; 2] = ["A", "B"];

/// `--precision` and `--budget`.
pub struct Precision {
    pub target: f64,
    pub budget_s: f64,
}

/// A comparable pair of results with the noise it is tested against and its test.
pub struct Tested<'a> {
    pub r: [&'a BenchResult; 2],
    pub noise: RowNoise,
    pub test: RowTest,
}

/// Every comparable row of B against A that `compare_at` tests (a row with no noise to be
/// judged by is not: a side of an earlier version's document without rounds to add to, and
/// nothing measured of the host).
pub fn tested<'a>(a: &'a RunDocument, b: &'a RunDocument, model: &History) -> Vec<Tested<'a>> {
    matching::pair_up(a, b)
        .matched
        .iter()
        .filter(|m| comparability::problems(m.a, m.b).is_empty())
        .filter_map(|m| {
            let noise = crate::compare::row_noise(model, (a, m.a), (b, m.b));
            Some(Tested {
                r: [m.a, m.b],
                test: noise_model::test(m.a, m.b, &noise)?,
                noise,
            })
        })
        .collect()
}

/// The benchmark of this truebench that measured `r` (same id and version).
fn benchmark_of(r: &BenchResult) -> Option<&'static dyn Benchmark> {
    crate::bench::REGISTRY
        .iter()
        .copied()
        .find(|b| b.id() == r.benchmark && b.in_rounds())
}

/// A row short of the target: its sides, why a side cannot grow, and its plan.
pub struct Short {
    /// Each side's row key (`BenchResult::key`; B's may differ from A's: pinned pairs).
    pub keys: [String; 2],
    pub label: String,
    pub rounds: [usize; 2],
    pub fixed_why: [Option<String>; 2],
    pub plan: Plan,
}

/// One side of a short row as the plan sees it, and why it cannot grow when it cannot;
/// None for a side with no noise (a row `tested` leaves out).
fn side_now(
    r: &BenchResult,
    noise: &RowNoise,
    here: &Result<(), String>,
) -> Option<(SideNow, Option<String>)> {
    let s = noise_model::side(r, noise)?;
    let floor = noise.sigma.map_or(0.0, |s| s.powi(2));
    let why = if let Err(why) = here {
        Some(why.clone())
    } else if r.run_noise().is_none() {
        Some(why_short(None, 0, 0, false, 0.0, noise_model::RUN_SIGMA))
    } else if benchmark_of(r).is_none() {
        Some(format!(
            "its benchmark {} is not one this truebench measures in rounds",
            r.benchmark
        ))
    } else if s.basis != Basis::Rounds {
        Some(format!("its noise is the host's {}", s.basis.text()))
    } else {
        None
    };
    let first = match (&why, r.run_noise()) {
        (None, Some(n)) => Some(First {
            sigma: n.sigma,
            df: n.df,
            kept: n.kept,
            rounds: r.rounds.as_ref().map(|x| x.rounds.len()).unwrap_or(0),
        }),
        _ => None,
    };
    Some((
        SideNow {
            var: s.var,
            df: s.df,
            first,
            floor,
            run: if s.basis == Basis::Rounds {
                noise
                    .run
                    .unwrap_or_else(|| noise_model::run_sigma(r, &[]))
                    .powi(2)
            } else {
                0.0
            },
        },
        why,
    ))
}

/// The rows above the target, each with its plan.
fn short_rows(rows: &[Tested], here: &[Result<(), String>; 2], target: f64) -> Vec<Short> {
    rows.iter()
        .filter(|t| t.test.mde() > target)
        .filter_map(|t| {
            let (sa, wa) = side_now(t.r[0], &t.noise, &here[0])?;
            let (sb, wb) = side_now(t.r[1], &t.noise, &here[1])?;
            Some(Short {
                keys: t.r.map(|r| r.key()),
                label: t.r[0].label(),
                rounds: t
                    .r
                    .map(|r| r.rounds.as_ref().map(|x| x.rounds.len()).unwrap_or(0)),
                fixed_why: [wa, wb],
                plan: round_plan::plan([&sa, &sb], target, MAX_ROUNDS),
            })
        })
        .collect()
}

/// What one side's added run measures: per benchmark (registry order) its rounds, the
/// rows to keep, and the samples per round of the run it adds to.
fn side_work(doc: &RunDocument, shorts: &[Short], side: usize) -> Option<AddRounds> {
    let mut rounds: BTreeMap<usize, usize> = BTreeMap::new();
    let mut keep = vec![];
    // Per benchmark (registry index): how many of its rounds drew each count of samples.
    let mut per_round: BTreeMap<usize, BTreeMap<usize, usize>> = BTreeMap::new();
    for s in shorts {
        let Plan::Add(add) = &s.plan else { continue };
        if add[side] == 0 {
            continue;
        }
        let Some(r) = doc.results.iter().find(|r| r.key() == s.keys[side]) else {
            continue;
        };
        let Some(b) = benchmark_of(r) else { continue };
        let i = crate::bench::REGISTRY
            .iter()
            .position(|x| x.id() == b.id())?;
        let e = rounds.entry(i).or_insert(0);
        *e = (*e).max(add[side]);
        keep.push(r.key());
        for round in r.rounds.iter().flat_map(|x| &x.rounds) {
            *per_round
                .entry(i)
                .or_default()
                .entry(round.samples)
                .or_insert(0) += 1;
        }
    }
    if rounds.is_empty() {
        return None;
    }
    // What later benchmarks of a suite use (the latency sweep) runs once first.
    let suites: Vec<&str> = rounds
        .keys()
        .map(|i| crate::bench::REGISTRY[*i].suite())
        .collect();
    for (i, b) in crate::bench::REGISTRY.iter().enumerate() {
        if b.feeds_its_suite() && suites.contains(&b.suite()) {
            rounds.entry(i).or_insert(0);
        }
    }
    let benches: Vec<(&'static dyn Benchmark, usize)> = rounds
        .iter()
        .map(|(i, k)| (crate::bench::REGISTRY[*i], *k))
        .collect();
    let round_s = benches
        .iter()
        .map(|(b, _)| added_rounds::seconds_per_round(doc, b.id()))
        .collect();
    // Each benchmark's rounds draw the samples most of its rounds in the run drew.
    let samples = rounds
        .keys()
        .zip(&benches)
        .map(|(i, (b, _))| {
            per_round
                .get(i)
                .and_then(|n| n.iter().max_by_key(|(n, count)| (**count, **n)))
                .map(|(n, _)| *n)
                .unwrap_or(b.min_samples_per_round())
        })
        .collect();
    Some(AddRounds::new(
        &doc.run_id,
        benches,
        round_s,
        samples,
        keep,
        0.0,
    ))
}

/// Refuse when neither side can be re-measured here: one line with each side's reason.
fn refuse(ids: [&str; 2], here: &[Result<(), String>; 2]) -> anyhow::Result<()> {
    if let [Err(wa), Err(wb)] = here {
        return Err(crate::error::usage(format!(
            "--precision cannot add rounds to either run on this machine: A ({}) was {wa}; B ({}) was {wb}",
            ids[0], ids[1]
        )));
    }
    Ok(())
}

/// What `--precision` measured for a comparison: the rows that were short, each side's
/// added run (asked and stored), both sides with their added rounds, and whether Ctrl-C
/// stopped the measuring.
pub struct Added {
    pub shorts: Vec<Short>,
    pub work: Vec<Option<AddRounds>>,
    pub added: [Option<RunDocument>; 2],
    pub merged: Vec<RunDocument>,
    pub interrupted: bool,
}

/// Add rounds to `a` and `b` (compared with `model`) where rows are short of the target,
/// on the side(s) this machine can re-measure, within the budget.
pub fn add_rounds(
    a: &RunDocument,
    b: &RunDocument,
    model: &History,
    p: &Precision,
    db: Option<&Location>,
) -> anyhow::Result<Added> {
    let here_env = crate::session::probe(&crate::probe::sysroot::SysRoot::live());
    let here = [
        added_rounds::remeasurable(a, &here_env),
        added_rounds::remeasurable(b, &here_env),
    ];
    refuse([&a.run_id, &b.run_id], &here)?;
    let rows = tested(a, b, model);
    let shorts = short_rows(&rows, &here, p.target);
    let docs = [a, b];
    let mut work: Vec<Option<AddRounds>> = vec![None, None];
    for (side, doc) in docs.iter().enumerate() {
        work[side] = side_work(doc, &shorts, side);
    }
    let total: usize = work.iter().flatten().map(planned).sum();
    eprintln!(
        "truebench: --precision {:.1}%: {} of {} above it; adding {}",
        p.target * 100.0,
        shorts.len(),
        crate::units::count(rows.len(), "row"),
        // The plan's rounds are a most: the budget may stop them first.
        if total > 0 {
            format!(
                "at most {}, as many as fit within {:.0} s",
                crate::units::count(total, "round"),
                p.budget_s
            )
        } else {
            "0 rounds".into()
        }
    );
    let t0 = std::time::Instant::now();
    let mut added: [Option<RunDocument>; 2] = [None, None];
    let mut interrupted = false;
    let mut left = total;
    for side in 0..2 {
        let Some(w) = work[side].as_mut() else {
            continue;
        };
        // Ctrl-C after the first side's run: the second is not started.
        if crate::interrupt::requested() {
            interrupted = true;
            break;
        }
        let mine = planned(w);
        // This side's share of what remains of the budget, by rounds planned.
        let remaining = p.budget_s - t0.elapsed().as_secs_f64();
        w.budget_s = remaining * mine as f64 / left.max(1) as f64;
        left -= mine;
        if w.budget_s <= 0.0 {
            w.budget_out = true;
            continue;
        }
        let common = crate::session::Common {
            start_at: None,
            tags: [(ADDS_TO_TAG.to_string(), docs[side].run_id.clone())].into(),
        };
        eprintln!(
            "truebench: adding rounds to {} ({})",
            SIDE[side], docs[side].run_id
        );
        let outcome = crate::session::run_with(w, db, &common);
        added[side] = w.stored.borrow_mut().take();
        match outcome {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<Interrupted>().is_some() => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let merged: Vec<RunDocument> = (0..2)
        .map(|i| match &added[i] {
            Some(x) => added_rounds::with_added(docs[i], x),
            None => docs[i].clone(),
        })
        .collect();
    Ok(Added {
        shorts,
        work,
        added,
        merged,
        interrupted,
    })
}

/// Rounds an added run was asked for.
pub fn planned(w: &AddRounds) -> usize {
    w.benches.iter().map(|b| b.1).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_only_when_neither_side_can_grow_with_both_reasons() {
        let host = Err("measured on host db1, this is vm".to_string());
        let setting = Err("measured in another setting: kernel \"a\" then, \"b\" now".to_string());
        let e = refuse(["ra", "rb"], &[host.clone(), setting]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
        assert_eq!(
            e.to_string(),
            "--precision cannot add rounds to either run on this machine: A (ra) was measured on host db1, this is vm; B (rb) was measured in another setting: kernel \"a\" then, \"b\" now"
        );
        assert!(refuse(["ra", "rb"], &[host, Ok(())]).is_ok());
    }
}
