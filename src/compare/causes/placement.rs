//! Placement as a cause: an unpinned row (ctx `os`, classic context switch, anything whose
//! pair placement was observed) whose tasks shared one CPU in a different share of the
//! observations in A and in B. With the pinned rows of the same run it predicts the
//! unpinned figure (f x same-cpu + (1 - f) x apart, mixed as times), and the pinned rows of
//! both runs give the residual at equal placement (same-cpu B/A, apart B/A, each judged).

use crate::compare::causes::explain::{matches_within, Claim, Explanation, RowCtx};
use crate::compare::matching::{sibling, skipped_reason};
use crate::compare::stats::verdict::{apart, judge, Judged, Verdict};
use crate::findings::placement::CROSS_ORDER;
use crate::result::{BenchResult, RunDocument};
use crate::units::num;

/// This cause, as the JSON names it.
pub const PLACEMENT: &str = "placement";

/// Co-location shares closer than this are the same placement.
pub const MIN_SHIFT: f64 = 0.2;
/// The classic suite's pinned pair split over two CPUs.
const CROSS_CPU: &str = "cross-cpu";

/// The same-CPU and the nearest apart sibling of an unpinned result in its run.
fn pins<'a>(
    doc: &'a RunDocument,
    r: &BenchResult,
) -> (Option<&'a BenchResult>, Option<&'a BenchResult>) {
    let same = sibling(doc, r, "same-cpu");
    let apart = CROSS_ORDER
        .iter()
        .chain(std::iter::once(&CROSS_CPU))
        .find_map(|p| sibling(doc, r, p));
    (same, apart)
}

/// The figure a pair placed together in share `f` of the time would show: times mix
/// linearly, rates harmonically. None when a needed pinned figure is missing.
fn mix(f: f64, same: Option<f64>, apart: Option<f64>, lower_is_better: bool) -> Option<f64> {
    let part = |w: f64, v: Option<f64>| -> Option<f64> {
        if w <= 0.0 {
            return Some(0.0);
        }
        let v = v?;
        Some(if lower_is_better { w * v } else { w / v })
    };
    let total = part(f, same)? + part(1.0 - f, apart)?;
    Some(if lower_is_better { total } else { 1.0 / total })
}

fn median(r: Option<&BenchResult>) -> Option<f64> {
    r.map(|r| r.stats.median)
}

/// One pinned placement compared at equal placement, or why it could not be.
enum Equal {
    Judged(&'static str, String, Judged),
    Missing(String),
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    if c.ra.placement.cpus.is_some() || c.rb.placement.cpus.is_some() {
        return None;
    }
    let oa = c.ra.placement.observed.as_ref()?;
    let ob = c.rb.placement.observed.as_ref()?;
    let (fa, fb) = (oa.colocated_fraction()?, ob.colocated_fraction()?);
    if (fa - fb).abs() < MIN_SHIFT {
        return None;
    }
    let lib = c.ra.lower_is_better;
    let (same_a, apart_a) = pins(c.a, c.ra);
    let (same_b, apart_b) = pins(c.b, c.rb);
    let pct = |f: f64| format!("{:.0}%", f * 100.0);
    let mut e = Explanation::new(
        PLACEMENT,
        Claim::Contributes,
        format!(
            "its tasks shared one CPU in {} of observations and A's in {}",
            pct(fb),
            pct(fa)
        ),
    )
    .evidence(format!(
        "A: both tasks on one CPU in {} of {}",
        pct(fa),
        crate::units::count(oa.observations(), "observation")
    ))
    .evidence(format!(
        "B: both tasks on one CPU in {} of {}",
        pct(fb),
        crate::units::count(ob.observations(), "observation")
    ));
    // Each run's own prediction of its unpinned figure, beside the measured one.
    for (side, f, r, same, apart) in [
        ("A", fa, c.ra, same_a, apart_a),
        ("B", fb, c.rb, same_b, apart_b),
    ] {
        match mix(f, median(same), median(apart), lib) {
            Some(p) => e.evidence.push(format!(
                "{side}: {} x same-cpu {} + {} x {} {} predicts {} {}, measured {}",
                pct(f),
                median(same).map(num).unwrap_or_else(|| "-".into()),
                pct(1.0 - f),
                apart.map(|x| x.placement.name.as_str()).unwrap_or("apart"),
                median(apart).map(num).unwrap_or_else(|| "-".into()),
                num(p),
                r.unit,
                num(r.stats.median)
            )),
            None => e.evidence.push(format!(
                "{side}: no prediction (the run measured no pinned {} row)",
                if same.is_none() { "same-cpu" } else { "apart" }
            )),
        }
    }
    // The ratio placement alone predicts: both shares applied to one run's pinned figures.
    let predicted = [(same_a, apart_a), (same_b, apart_b)]
        .into_iter()
        .find_map(|(s, x)| {
            Some(mix(fb, median(s), median(x), lib)? / mix(fa, median(s), median(x), lib)?)
        });
    // Equal placement: the pinned rows of both runs.
    let mut equal = vec![];
    for (name, pa, pb) in [("on one CPU", same_a, same_b), ("apart", apart_a, apart_b)] {
        match (pa, pb) {
            (Some(x), Some(y)) => equal.push(Equal::Judged(
                name,
                x.placement.name.clone(),
                judge(x, y, c.drift),
            )),
            (Some(x), None) => equal.push(Equal::Missing(format!(
                "{} not measured in B{}",
                x.placement.name,
                skipped_reason(c.b, x)
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ))),
            (None, Some(y)) => equal.push(Equal::Missing(format!(
                "{} not measured in A{}",
                y.placement.name,
                skipped_reason(c.a, y)
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            ))),
            (None, None) => {}
        }
    }
    let judged: Vec<(&str, &String, &Judged)> = equal
        .iter()
        .filter_map(|q| match q {
            Equal::Judged(n, p, j) => Some((*n, p, j)),
            Equal::Missing(_) => None,
        })
        .collect();
    for q in &equal {
        e.evidence.push(match q {
            Equal::Judged(_, p, j) => {
                format!("pinned {p}: B/A {:.3} ({})", j.ratio, j.verdict.text())
            }
            Equal::Missing(why) => format!("pinned {why}"),
        });
    }
    if let Some(p) = predicted {
        e.predicted = Some(p);
        e.residual = Some(c.ratio() / p);
    }
    let prediction_fits = e.residual.is_none_or(matches_within);
    let same_way = predicted.is_none_or(|p| p.ln().signum() == c.ratio().ln().signum());
    let real_at_equal: Vec<_> = judged
        .iter()
        .filter(|(_, _, j)| j.verdict.is_real())
        .collect();
    e.held_equal = held_equal_clause(&judged, &equal);
    // Held equal: every pinned comparison settled as no real difference (or drift); or,
    // without pinned rows in both runs, the prediction alone.
    let settled = if judged.is_empty() {
        predicted.is_some()
    } else {
        judged
            .iter()
            .all(|(_, _, j)| matches!(j.verdict, Verdict::Same | Verdict::Drift))
    };
    e.claim = if !same_way {
        Claim::RuledOut
    } else if settled && prediction_fits {
        Claim::Explains
    } else {
        e.remains = Some(match real_at_equal.first() {
            Some((_, p, j)) => format!("pinned {p} B/A {:.3} ({})", j.ratio, j.verdict.text()),
            None => match e.residual {
                Some(r) => format!("{r:.2}x beyond what the co-location predicts"),
                None => "no pinned rows to hold placement equal".into(),
            },
        });
        if predicted.is_some() || !judged.is_empty() {
            Claim::Partly
        } else {
            Claim::Contributes
        }
    };
    Some(e)
}

/// "pinned, the two are within 3% (no real difference)", naming the pinned placements
/// that could not be compared.
fn held_equal_clause(judged: &[(&str, &String, &Judged)], equal: &[Equal]) -> Option<String> {
    if equal.is_empty() {
        return None;
    }
    let mut parts = vec![];
    if !judged.is_empty() && judged.iter().all(|(_, _, j)| !j.verdict.is_real()) {
        let worst = judged
            .iter()
            .map(|(_, _, j)| j.ratio)
            .fold(
                1.0,
                |w: f64, r| if r.ln().abs() > w.ln().abs() { r } else { w },
            );
        let verdict = if judged.iter().any(|(_, _, j)| j.verdict == Verdict::TooFew) {
            "too few samples to tell"
        } else if judged.iter().any(|(_, _, j)| j.verdict == Verdict::Drift) {
            "drift"
        } else {
            "no real difference"
        };
        parts.push(format!("pinned, the two are {} ({verdict})", apart(worst)));
    } else {
        for (name, p, j) in judged {
            parts.push(format!(
                "pinned {name} ({p}) B/A {:.2} ({})",
                j.ratio,
                j.verdict.text()
            ));
        }
    }
    for q in equal {
        if let Equal::Missing(why) = q {
            parts.push(why.clone());
        }
    }
    Some(parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::testing::judged_ctx;
    use crate::compare::testing::ctx_run;

    #[test]
    fn colocation_that_changed_explains_and_pinned_rows_show_no_residual() {
        // A spread (0%), B colocated (100%); pinned figures equal in both.
        let a = ctx_run("a", 0.0, 52000.0, Some(4700.0), Some(51000.0));
        let b = ctx_run("b", 1.0, 4800.0, Some(4750.0), Some(51500.0));
        let e = judged_ctx(&a, &b, explain).expect("placement explains");
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.because.contains("100%") && e.because.contains("0%"),
            "{}",
            e.because
        );
        let p = e.predicted.unwrap();
        assert!((p - 4700.0 / 51000.0).abs() < 1e-3, "{p}");
        assert!(
            e.held_equal
                .as_deref()
                .unwrap()
                .contains("no real difference"),
            "{e:?}"
        );
    }

    #[test]
    fn a_residual_at_equal_placement_leaves_it_partly_explained() {
        let a = ctx_run("a", 0.0, 52000.0, Some(4700.0), Some(51000.0));
        // B's pinned same-cpu is 2x slower: placement is not the whole story.
        let b = ctx_run("b", 1.0, 9600.0, Some(9400.0), Some(51500.0));
        let e = judged_ctx(&a, &b, explain).unwrap();
        assert_eq!(e.claim, Claim::Partly, "{e:?}");
        assert!(e.remains.as_deref().unwrap().contains("same-cpu"), "{e:?}");
    }

    #[test]
    fn the_same_placement_is_no_explanation() {
        let a = ctx_run("a", 0.0, 52000.0, Some(4700.0), Some(51000.0));
        let b = ctx_run("b", 0.05, 26000.0, Some(4700.0), Some(25000.0));
        assert!(judged_ctx(&a, &b, explain).is_none());
    }

    #[test]
    fn rates_mix_harmonically() {
        // Half the time at 100/s and half at 300/s: 150/s, not 200/s.
        assert_eq!(mix(0.5, Some(100.0), Some(300.0), false), Some(150.0));
        assert_eq!(mix(0.5, Some(100.0), Some(300.0), true), Some(200.0));
        assert_eq!(mix(1.0, Some(100.0), None, true), Some(100.0));
        assert_eq!(mix(0.5, Some(100.0), None, true), None);
    }
}
