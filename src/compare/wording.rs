//! A row's verdict and its words: one matched row before its verdict (`Pending`), the
//! verdict its test and the false discovery rate give, why a row cannot be told, the
//! verdict in a few words and in a sentence, and the noise the test rested on.

use super::{conditions, matching, per_cycle, stats, SideRounds};
use stats::verdict::Verdict;

/// One matched row before its verdict: both results, the within-run judgement, the test
/// against the noise, and why it is not comparable.
pub(super) struct Pending<'a> {
    pub(super) m: matching::Match<'a>,
    pub(super) judged: stats::verdict::Judged,
    pub(super) noise: stats::noise_model::RowNoise,
    /// None when a side has no noise to be judged by (`stats::noise_model::test`).
    pub(super) test: Option<stats::noise_model::RowTest>,
    pub(super) comparability: Vec<String>,
    /// The run clock held out of this clock-bound row's test (`per_cycle::held_clock`).
    pub(super) per_cycle: Option<per_cycle::RunClock>,
    /// A latency point at the edge of its core's cache (the L2's size, `per_cycle::cache_edge`)
    /// resting on the runs' own rounds alone: its figure moves between runs, which one run a
    /// side cannot sample, so it is neither called nor said equivalent.
    pub(super) edge: Option<u64>,
}

/// The verdict of a row: not comparable first; then called when Benjamini-Hochberg keeps
/// it, equivalent when its interval lies inside ± its MDE, else cannot tell.
pub(super) fn verdict_of(p: &Pending, real_at_fdr: bool) -> Verdict {
    if !p.comparability.is_empty() {
        Verdict::NotComparable
    } else if p.edge.is_some() || p.test.is_none() {
        Verdict::CannotTell
    } else if real_at_fdr {
        if (p.m.b.stats.median > p.m.a.stats.median) != p.m.a.lower_is_better {
            Verdict::Better
        } else {
            Verdict::Worse
        }
    } else if p.test.is_some_and(|t| t.equivalent()) {
        Verdict::Equivalent
    } else {
        Verdict::CannotTell
    }
}

/// Why a row cannot be told: at the edge of the L2; no noise to judge it by (what each side
/// lacks: `row_noise`); the side whose rounds were mostly disturbed; else the noise that
/// makes its MDE.
pub(super) fn cannot_tell_why(p: &Pending) -> String {
    if let Some(l2) = p.edge {
        return format!(
            "at the edge of the L2 ({}): the chain stays in it or spills with what else the host keeps in that core's cache, which moves between runs; one run a side cannot tell (a stored history of the host or a calibration can)",
            crate::units::bytes(l2)
        );
    }
    let Some(test) = p.test else {
        return p.noise.source.clone();
    };
    if let Some((side, s)) = mostly_disturbed(p) {
        let r = if side == "A" { p.m.a } else { p.m.b };
        let cost = conditions::cost(r)
            .map(|c| format!("; {c} on average"))
            .unwrap_or_default();
        return format!(
            "{} of {} of {side} disturbed ({}{cost})",
            s.disturbed,
            crate::units::count(s.rounds, "round"),
            s.causes.join(", ")
        );
    }
    let what = match test.basis {
        stats::noise_model::Basis::Rounds => "rounds disagree",
        stats::noise_model::Basis::Calibration => "the calibration's runs disagree",
        stats::noise_model::Basis::History => "the stored runs disagree",
        stats::noise_model::Basis::Paired => "the paired rounds disagree",
        stats::noise_model::Basis::None => "no noise measured",
    };
    let (lo, hi) = test.ci();
    let lib = p.m.a.lower_is_better;
    let cycle = if p.per_cycle.is_some() {
        " per cycle"
    } else {
        ""
    };
    format!(
        "B between {} and {}{cycle} (95% interval), MDE {} ({what})",
        stats::verdict::in_words_fine(lo.exp(), lib),
        stats::verdict::in_words_fine(hi.exp(), lib),
        stats::noise_model::mde_text(test.mde())
    )
}

/// The side most of whose rounds were disturbed, A first.
pub(super) fn mostly_disturbed(p: &Pending) -> Option<(&'static str, SideRounds)> {
    [("A", p.m.a), ("B", p.m.b)]
        .into_iter()
        .find_map(|(side, r)| {
            SideRounds::of(r)
                .filter(|s| s.disturbed * 2 > s.rounds)
                .map(|s| (side, s))
        })
}

/// The verdict in a few words (`Row::brief`): a call as `why` says it; an equivalence by
/// its MDE ("same ±4%"); a row not comparable only so (the reason is said below the
/// table); a row that cannot be told with its MDE, or the side whose rounds were mostly
/// disturbed (the B/A cell holds the interval `why` spells out, per cycle or not).
pub(super) fn brief_of(p: &Pending, verdict: Verdict, why: &str) -> String {
    let mde = p
        .test
        .map_or_else(|| "-".into(), |t| stats::noise_model::mde_text(t.mde()));
    match verdict {
        Verdict::NotComparable => "not comparable".into(),
        Verdict::Equivalent => {
            let cycle = if p.per_cycle.is_some() {
                " per cycle"
            } else {
                ""
            };
            format!("same ±{mde}{cycle}")
        }
        Verdict::CannotTell => {
            if p.edge.is_some() {
                "cannot tell (L2 edge)".into()
            } else if p.test.is_none() {
                if p.m.a.rounds.is_none() || p.m.b.rounds.is_none() {
                    "cannot tell (no rounds)".into()
                } else {
                    "cannot tell (too few rounds)".into()
                }
            } else if let Some((side, _)) = mostly_disturbed(p) {
                format!("cannot tell ({side} disturbed)")
            } else {
                format!("cannot tell (MDE {mde})")
            }
        }
        _ => why.to_string(),
    }
}

/// The noise a row's test rested on: the model's, or each run's own rounds (σ here is the
/// standard error of the log ratio over √2, a per-run figure comparable with the others).
pub(super) fn noise_used(p: &Pending) -> stats::noise_model::RowNoise {
    let Some(test) = p
        .test
        .filter(|t| t.basis == stats::noise_model::Basis::Rounds)
    else {
        return p.noise.clone();
    };
    let side = |name: &str, r: &crate::result::BenchResult| match r.run_noise() {
        Some(n) => format!(
            "{name} {} rounds, {:.1}% between them",
            n.kept,
            n.sigma * 100.0
        ),
        None => format!("{name} {}", p.noise.source),
    };
    stats::noise_model::RowNoise {
        basis: stats::noise_model::Basis::Rounds,
        sigma: Some(test.se / std::f64::consts::SQRT_2),
        runs: [p.m.a, p.m.b]
            .iter()
            .filter_map(|r| r.run_noise().map(|n| n.kept))
            .sum(),
        source: format!("rounds: {}; {}", side("A", p.m.a), side("B", p.m.b)),
        run: p.noise.run,
    }
}

/// The verdict in words.
pub(super) fn why_of(p: &Pending, verdict: Verdict) -> String {
    let cycle = if p.per_cycle.is_some() {
        " per cycle"
    } else {
        ""
    };
    match verdict {
        Verdict::Better | Verdict::Worse => match (p.per_cycle, p.test) {
            (Some(_), Some(t)) => format!(
                "B {} per cycle",
                stats::verdict::in_words(t.d.exp(), p.m.a.lower_is_better)
            ),
            _ => format!(
                "B {}",
                stats::verdict::in_words(p.judged.ratio, p.m.a.lower_is_better)
            ),
        },
        Verdict::Equivalent => format!(
            "same within ±{}{cycle}",
            p.test
                .map_or_else(|| "-".into(), |t| stats::noise_model::mde_text(t.mde()))
        ),
        Verdict::NotComparable => format!("not comparable ({})", p.comparability.join("; ")),
        _ => format!("cannot tell: {}", cannot_tell_why(p)),
    }
}
