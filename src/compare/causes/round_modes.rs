//! Rounds in two modes as a cause: the two runs' rounds of a row fall in two modes far
//! apart (`compare::stats::modes`), and the runs drew them in different shares. A fresh
//! process's system call cost one of two figures on the host of 2026-11-28, whichever
//! process it was; a run whose processes landed in the slow one more often reads slower,
//! while within each mode its rounds and the other run's agree.
//!
//! What it predicts: held equal is the difference within the modes (each mode where both
//! runs have at least two rounds, weighted by its precision). Within the noise of those
//! rounds (1.96 standard errors, the run level `RUN_SIGMA` added), the modes **explain** the
//! call: the runs differ in which mode their rounds landed in, not within either; the same
//! direction and smaller, **partly**; otherwise **ruled out**. Where no mode holds two
//! rounds of each run, nothing within a mode compares them, and it says nothing.

use crate::compare::causes::explain::{holding_equal, mean, var_of_mean, Explanation, RowCtx};
use crate::compare::stats::modes::{self, Modes};
use crate::compare::stats::noise_model::RUN_SIGMA;
use crate::result::BenchResult;
use crate::units::num;

/// This cause, as the JSON names it.
pub const ROUND_MODES: &str = "round-modes";

/// The log medians of the rounds a row's figures rest on.
fn logs(r: &BenchResult) -> Option<Vec<f64>> {
    let rs = r.rounds.as_ref()?;
    Some(
        rs.pooled()
            .iter()
            .filter(|x| x.median > 0.0 && x.median.is_finite())
            .map(|x| x.median.ln())
            .collect(),
    )
}

/// One side's rounds split by mode: (low, high).
fn split(logs: &[f64], m: &Modes) -> (Vec<f64>, Vec<f64>) {
    logs.iter().partition(|v| !m.is_high(**v))
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let (la, lb) = (logs(c.ra)?, logs(c.rb)?);
    let pooled: Vec<f64> = la.iter().chain(&lb).copied().collect();
    let m = modes::find(&pooled)?;
    let ((a_lo, a_hi), (b_lo, b_hi)) = (split(&la, &m), split(&lb, &m));
    // Modes are of a run's own rounds: some run draws both, each in at least
    // `MIN_SHARE` of its rounds. Two runs each in a mode of its own are two levels, which
    // the pooled split cannot tell from modes: a host 1.35x slower whose rounds' low tail
    // reached the other run's mode read as explained by it.
    let both = |lo: &[f64], hi: &[f64]| {
        lo.len().min(hi.len()) as f64 >= modes::MIN_SHARE * (lo.len() + hi.len()) as f64
    };
    if !both(&a_lo, &a_hi) && !both(&b_lo, &b_hi) {
        return None;
    }
    // Within each mode both runs hold at least two rounds of: B's mean less A's, weighted
    // by precision.
    let within: Vec<(f64, f64)> = [(&a_lo, &b_lo), (&a_hi, &b_hi)]
        .into_iter()
        .filter(|(x, y)| x.len() >= 2 && y.len() >= 2)
        .map(|(x, y)| {
            let var = var_of_mean(x) + var_of_mean(y) + 2.0 * RUN_SIGMA.powi(2);
            (mean(y) - mean(x), 1.0 / var)
        })
        .collect();
    if within.is_empty() {
        return None;
    }
    let weight: f64 = within.iter().map(|w| w.1).sum();
    let held = within.iter().map(|(d, w)| d * w).sum::<f64>() / weight;
    let se = weight.recip().sqrt();
    let measured = mean(&lb) - mean(&la);
    // The slow mode: the high one for a time, the low one for a rate.
    let lib = c.ra.lower_is_better;
    let unit = &c.ra.unit;
    let slow_share = |lo: &[f64], hi: &[f64]| {
        let slow = if lib { hi.len() } else { lo.len() };
        100.0 * slow as f64 / (lo.len() + hi.len()) as f64
    };
    let (slow, fast) = if lib {
        (m.high, m.low)
    } else {
        (m.low, m.high)
    };
    let because = format!(
        "the rounds fall in two modes, {} and {} {unit}: B's rounds landed in the slow one {:.0}% of the time, A's {:.0}%",
        num(fast.exp()),
        num(slow.exp()),
        slow_share(&b_lo, &b_hi),
        slow_share(&a_lo, &a_hi),
    );
    let side = |name: &str, lo: &[f64], hi: &[f64]| {
        let at = |v: &[f64]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                format!("{} at {} {unit}", v.len(), num(mean(v).exp()))
            }
        };
        format!(
            "{name}: {} of {} rounds in the low mode ({}), in the high mode {}",
            lo.len(),
            lo.len() + hi.len(),
            at(lo),
            at(hi)
        )
    };
    let words = format!("within the modes, B/A is {:.3}", held.exp());
    let mut e = holding_equal(ROUND_MODES, because, measured, held, se, words);
    e.evidence = vec![
        side("A", &a_lo, &a_hi),
        side("B", &b_lo, &b_hi),
        format!(
            "the modes' means are {:.1} pooled standard deviations apart (two modes from {:.1}), each holding at least {:.0}% of the {} rounds",
            m.d,
            modes::MIN_D,
            modes::MIN_SHARE * 100.0,
            pooled.len()
        ),
    ];
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::explain::Claim;
    use crate::compare::causes::testing::judged_timers;

    /// `slow` of 28 rounds at 300 ns (every so often), the rest at 250, each 1% about.
    fn drawn(slow: usize, shift: f64) -> Vec<f64> {
        (0..28)
            .map(|i| {
                let at = if i * slow % 28 < slow { 300.0 } else { 250.0 };
                at * shift * (1.0 + 0.01 * ((i * 5 % 3) as f64 - 1.0))
            })
            .collect()
    }

    fn said(a: &[f64], b: &[f64]) -> Option<Explanation> {
        judged_timers(a, b, 1, explain)
    }

    fn slow_count(v: &[f64]) -> usize {
        v.iter().filter(|x| **x > 275.0).count()
    }

    /// The pair of 2026-11-28: A's processes landed in the slow mode in half its rounds,
    /// B's in a tenth; within each mode they agree, so the modes explain the call.
    #[test]
    fn runs_that_drew_the_modes_in_other_shares_are_explained_by_them() {
        let (a, b) = (drawn(14, 1.0), drawn(3, 1.0));
        assert_eq!((slow_count(&a), slow_count(&b)), (14, 3));
        let e = said(&a, &b).unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.because.contains("two modes, 249.9 and 300.0 ns")
                && e.because.contains("B's rounds landed in the slow one 11%")
                && e.because.contains("A's 50%"),
            "{}",
            e.because
        );
        assert!((e.residual.unwrap() - 1.0).abs() < 0.01, "{e:?}");
        assert!(
            e.evidence[0].starts_with("A: 14 of 28 rounds in the low mode (14 at 250"),
            "{:?}",
            e.evidence
        );
    }

    /// B 5% slower within both modes (a real change, the shares alike): not explained.
    #[test]
    fn a_difference_within_the_modes_is_not_explained_by_them() {
        let e = said(&drawn(14, 1.0), &drawn(14, 1.05)).unwrap();
        assert_eq!(e.claim, Claim::RuledOut, "{e:?}");
        assert!((e.residual.unwrap() - 1.05).abs() < 0.01, "{e:?}");
    }

    /// Each run in a mode of its own (A's rounds at 250 ns, B's at 300): no mode holds
    /// rounds of both, so nothing within a mode compares them, and it says nothing.
    #[test]
    fn each_run_in_a_mode_of_its_own_says_nothing() {
        assert!(said(&drawn(0, 1.0), &drawn(0, 1.2)).is_none());
        // B a level 20% above A whose two lowest rounds reach A's: the pooled rounds split
        // in two, yet neither run draws both modes (B 2 of 28 low): two levels, no modes.
        let mut b = drawn(0, 1.2);
        b[0] = 252.0;
        b[1] = 251.0;
        assert!(said(&drawn(0, 1.0), &b).is_none());
    }
}
