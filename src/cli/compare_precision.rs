//! `compare A B --precision P [--budget T]`: the rounds are added by the session
//! (`session::compare_precision`); this prints per row on stderr what it reached, in how
//! long, or why not, and compares the runs again with their added rounds. Ctrl-C keeps
//! what was measured, prints the comparison with it, and exits 130.

use crate::compare::stats::noise_model::{self, Basis};
use crate::compare::stats::round_plan::Plan;
use crate::compare::stats::verdict::History;
use crate::result::RunDocument;
use crate::session::add_rounds::AddRounds;
use crate::session::compare_precision::{add_rounds, tested, Short, Tested, SIDE};
use crate::session::precision::{why_short, Reached};
use crate::store::Location;

pub use crate::session::compare_precision::Precision;

/// Compare `a` and `b` with `model`, adding rounds where rows are short of the target; the
/// comparison (with the added rounds) is returned to be printed, and whether Ctrl-C
/// stopped the measuring.
pub fn compare(
    a: &RunDocument,
    b: &RunDocument,
    model: &History,
    fdr: f64,
    p: &Precision,
    db: Option<&Location>,
) -> anyhow::Result<(crate::compare::Comparison, bool)> {
    let m = add_rounds(a, b, model, p, db)?;
    let after = tested(&m.merged[0], &m.merged[1], model);
    report(&m.shorts, &after, &m.work, &m.added, p);
    Ok((
        crate::compare::compare_at(&m.merged[0], &m.merged[1], model, fdr),
        m.interrupted,
    ))
}

/// Per short row on stderr: the MDE it reached with its rounds per side and the seconds
/// its added rounds took, or why it stays short.
fn report(
    shorts: &[Short],
    after: &[Tested],
    work: &[Option<AddRounds>],
    added: &[Option<RunDocument>; 2],
    p: &Precision,
) {
    let mut lines = vec![];
    for s in shorts {
        let now = after.iter().find(|t| t.r[0].key() == s.keys[0]);
        let mde = now.map(|t| t.test.mde());
        let grown: Vec<usize> = (0..2)
            .map(|i| {
                now.and_then(|t| t.r[i].rounds.as_ref())
                    .map(|x| x.rounds.len().saturating_sub(s.rounds[i]))
                    .unwrap_or(0)
            })
            .collect();
        let rounds = (0..2)
            .map(|i| match grown[i] {
                0 => format!("{} {}", SIDE[i], s.rounds[i]),
                g => format!("{} {}+{g}", SIDE[i], s.rounds[i]),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let took: f64 = (0..2)
            .filter_map(|i| {
                let w = work[i].as_ref()?;
                let id = now?.r[i].benchmark.as_str();
                let at = w.benches.iter().position(|(b, _)| b.id() == id)?;
                Some(w.spent_s[at])
            })
            .sum();
        let reached = mde.is_some_and(|m| m <= p.target);
        let short = (!reached).then(|| why_not(s, now, work, added, &grown, p));
        lines.push(
            Reached {
                row: s.label.clone(),
                mde,
                rounds,
                took_s: (took > 0.0).then_some(took),
                short,
            }
            .line(p.target),
        );
    }
    if !lines.is_empty() {
        eprintln!("{}", lines.join("\n"));
    }
}

/// Why a short row did not reach the target.
fn why_not(
    s: &Short,
    now: Option<&Tested>,
    work: &[Option<AddRounds>],
    added: &[Option<RunDocument>; 2],
    grown: &[usize],
    p: &Precision,
) -> String {
    // What only separate runs sample for this row (its run level in the two runs).
    let run_of = |side: usize| {
        now.map_or(noise_model::RUN_SIGMA, |t| {
            t.noise
                .run
                .unwrap_or_else(|| noise_model::run_sigma(t.r[side], &[]))
        })
    };
    let fixed = || {
        (0..2)
            .filter_map(|i| {
                s.fixed_why[i]
                    .as_ref()
                    .map(|w| format!("{} cannot be given rounds ({w})", SIDE[i]))
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    match &s.plan {
        Plan::Fixed { mde } => format!(
            "{}, and what it has leaves an MDE of {:.1}%",
            fixed(),
            mde * 100.0
        ),
        Plan::Floor { mde } => match now.map(|t| t.noise.basis) {
            Some(Basis::Calibration | Basis::History) | None => format!(
                "the host's {} noise for this row, which rounds do not narrow, leaves an MDE of {:.1}%",
                now.map(|t| t.noise.basis.text()).unwrap_or("stored"),
                mde * 100.0
            ),
            Some(_) => format!(
                "what only separate runs sample ({:.1}% a run), which rounds do not narrow, leaves an MDE of {:.1}%",
                run_of(0) * 100.0,
                mde * 100.0
            ),
        },
        Plan::TooMany { side, needed } => {
            let n = now.and_then(|t| t.r[*side].run_noise());
            format!(
                "{}'s {}",
                SIDE[*side],
                why_short(n, s.rounds[*side], *needed, false, p.budget_s, run_of(*side))
            )
        }
        Plan::Add(add) => {
            let mut why = vec![];
            for i in 0..2 {
                if add[i] == 0 {
                    continue;
                }
                let budget_out = work[i].as_ref().is_some_and(|w| w.budget_out);
                let measured = added[i].is_some() && grown[i] > 0;
                let text = if !measured && added[i].is_some() {
                    "the added run did not measure this row (options of the original run, such as --placement or --array-size, are not repeated)".to_string()
                } else {
                    let rounds = s.rounds[i] + grown[i];
                    let n = now.and_then(|t| t.r[i].run_noise());
                    let out = budget_out || added[i].is_none();
                    why_short(n, rounds, 0, out, p.budget_s, run_of(i))
                };
                why.push(format!("{}: {text}", SIDE[i]));
            }
            if why.is_empty() {
                why.push("its noise moved to the host's stored noise as rounds narrowed it".into());
            }
            why.join("; ")
        }
    }
}
