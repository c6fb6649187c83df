//! A shift within a run as a cause: a stretch of one run's rounds of a row, consecutive in
//! its time, at another level than the rest of that run's rounds, with nothing recorded
//! disturbing them (`compare::stats::shift`). The host changed for a while during that run
//! (another guest busy, the host's sibling hyperthread taken: nothing a guest can see but
//! its own speed), and the row's figure took the stretch in.
//!
//! What it predicts: the run's level without the stretch is its usual state (the larger
//! part of its rounds; for a run with no shift, all of them). Held equal, B against A is
//! the two usual states' difference. Within the noise of those rounds (1.96 standard
//! errors, with the run level `RUN_SIGMA` added), the shift **explains** the call; the
//! same direction and smaller, **partly**; otherwise it is **ruled out**, with its figures.

use crate::compare::causes::explain::{holding_equal, mean, var_of_mean, Explanation, RowCtx};
use crate::compare::stats::noise_model::RUN_SIGMA;
use crate::compare::stats::shift::{self, Shift, PERMUTATIONS};
use crate::result::rounds::Round;
use crate::result::BenchResult;
use crate::units::num;

/// This cause, as the JSON names it.
pub const RUN_SHIFT: &str = "run-shift";

/// One side's rounds of a row, in the run's order, and the shift found in them.
struct Side<'a> {
    rounds: Vec<&'a Round>,
    logs: Vec<f64>,
    shift: Option<Shift>,
}

fn side(r: &BenchResult) -> Option<Side<'_>> {
    let rs = r.rounds.as_ref()?;
    let mut rounds: Vec<&Round> = rs
        .pooled()
        .into_iter()
        .filter(|x| x.median > 0.0 && x.median.is_finite())
        .collect();
    rounds.sort_by_key(|x| x.seq);
    let logs: Vec<f64> = rounds.iter().map(|x| x.median.ln()).collect();
    let shift = shift::find(&logs);
    Some(Side {
        rounds,
        logs,
        shift,
    })
}

impl Side<'_> {
    /// The log rounds of its usual state: those outside the shift's stretch, or inside it
    /// when the stretch is the larger part; every round without a shift.
    fn usual(&self) -> Vec<f64> {
        match &self.shift {
            None => self.logs.clone(),
            Some(s) => {
                let inside = s.to - s.from > s.rounds - (s.to - s.from);
                (0..self.logs.len())
                    .filter(|&i| (s.from..s.to).contains(&i) == inside)
                    .map(|i| self.logs[i])
                    .collect()
            }
        }
    }

    /// Variance of the usual state's mean log.
    fn usual_var(&self) -> f64 {
        var_of_mean(&self.usual()) + RUN_SIGMA.powi(2)
    }

    /// "A's rounds 11-21 of 29 (12-24 s into the run) ran 20% slower than its other
    /// rounds", for a side with a shift.
    fn words(&self, name: &str, lower_is_better: bool) -> Option<String> {
        let s = self.shift.as_ref()?;
        let r = s.ratio();
        let slower = (r > 1.0) == lower_is_better;
        let by = r - 1.0;
        let at = |i: usize| self.rounds[i].at_s;
        Some(format!(
            "{name}'s rounds {}-{} of {} ({:.0}-{:.0} s into its run) ran {:.0}% {} than its other rounds, one stretch of the run with nothing recorded disturbing it (the host changed for a while)",
            s.from + 1,
            s.to,
            s.rounds,
            at(s.from),
            at(s.to - 1),
            by.abs() * 100.0,
            if slower { "slower" } else { "faster" }
        ))
    }

    fn evidence(&self, name: &str, unit: &str) -> String {
        match &self.shift {
            Some(s) => format!(
                "{name}: rounds {}-{} of {} at {} {unit} (geometric mean), the others at {} {unit}; a stretch that far from the rest in {:.1}% of {PERMUTATIONS} shuffles of the same rounds",
                s.from + 1,
                s.to,
                s.rounds,
                num(s.stretch_level.exp()),
                num(s.rest_level.exp()),
                s.p * 100.0,
            ),
            None => format!(
                "{name}: its {} rounds show no stretch apart from the rest (geometric mean {} {unit})",
                self.logs.len(),
                num(mean(&self.logs).exp())
            ),
        }
    }
}

pub fn explain(c: &RowCtx) -> Option<Explanation> {
    let (a, b) = (side(c.ra)?, side(c.rb)?);
    if a.shift.is_none() && b.shift.is_none() {
        return None;
    }
    if a.logs.len() < 2 || b.logs.len() < 2 {
        return None;
    }
    let lib = c.ra.lower_is_better;
    let measured = mean(&b.logs) - mean(&a.logs);
    let (ua, ub) = (a.usual(), b.usual());
    let held = mean(&ub) - mean(&ua);
    let se = (a.usual_var() + b.usual_var()).sqrt();
    let because: Vec<String> = [a.words("A", lib), b.words("B", lib)]
        .into_iter()
        .flatten()
        .collect();
    let usual = format!(
        "with each run's usual rounds ({} of A's, {} of B's), B/A is {:.3}",
        ua.len(),
        ub.len(),
        held.exp()
    );
    let mut e = holding_equal(RUN_SHIFT, because.join("; "), measured, held, se, usual);
    e.evidence = vec![a.evidence("A", &c.ra.unit), b.evidence("B", &c.rb.unit)];
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::causes::explain::Claim;
    use crate::compare::causes::testing::judged_timers;

    fn said(a: &[f64], b: &[f64]) -> Option<Explanation> {
        judged_timers(a, b, 3, explain)
    }

    fn steady(n: usize, at: f64) -> Vec<f64> {
        (0..n)
            .map(|i| at * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0)))
            .collect()
    }

    /// The 2026-11-28 pair: A's system-call rounds 11-21 of 29 at 300 ns, the rest and all
    /// of B's at 250: the call is the stretch's, and says where it was.
    #[test]
    fn a_slow_stretch_of_one_run_explains_the_call_and_says_where() {
        let mut a = steady(29, 250.0);
        for v in &mut a[10..21] {
            *v *= 1.2;
        }
        let e = said(&a, &steady(29, 250.0)).unwrap();
        assert_eq!(e.claim, Claim::Explains, "{e:?}");
        assert!(
            e.because
                .contains("A's rounds 11-21 of 29 (10-20 s into its run) ran 20% slower"),
            "{}",
            e.because
        );
        assert!((e.residual.unwrap() - 1.0).abs() < 0.02, "{e:?}");
        assert!(e.evidence[1].contains("no stretch"), "{:?}", e.evidence);
    }

    /// B slower in every round (a real change): no shift in either run, nothing to say.
    #[test]
    fn a_difference_in_every_round_is_no_shift() {
        assert!(said(&steady(29, 250.0), &steady(29, 300.0)).is_none());
    }

    /// B slower in every round (300 ns against 250), and a stretch of A's run at another
    /// speed: held equal, B is still 20% slower. A's stretch faster made the gap look
    /// larger (part of it); A's stretch slower made it look smaller (ruled out).
    #[test]
    fn a_shift_beside_a_real_difference_is_part_of_it_or_ruled_out() {
        for (factor, want) in [(0.8, Claim::Partly), (1.2, Claim::RuledOut)] {
            let mut a = steady(29, 250.0);
            for v in &mut a[10..21] {
                *v *= factor;
            }
            let e = said(&a, &steady(29, 300.0)).unwrap();
            assert_eq!(e.claim, want, "{factor}: {e:?}");
            assert!((e.residual.unwrap() - 1.2).abs() < 0.01, "{e:?}");
        }
    }
}
