//! `compare --precision`'s measuring: rounds added to some benchmarks of an earlier run of
//! this host, inside the session like any run (lock, Ctrl-C, sampler, stored), as a run of
//! its own tagged `adds-to=<run id>` that keeps only the rows it was asked for
//! (`compare::added_rounds` merges them into that run's rows). Each benchmark gets the
//! rounds it was given, shuffled across the benchmarks, none started once it would likely
//! overrun the budget; a benchmark whose suite's later benchmarks depend on it (the
//! latency sweep sizes the bandwidth arrays) runs once first when only those are asked for.

use super::progress::Progress;
use super::round_runner::Runner;
use super::{Measurement, Measuring};
use crate::bench::{Benchmark, RunContext, RunOptions};
use crate::measure::batch::{min_interval_ns, timing_clock_cost_ns};
use crate::result::RunDocument;
use crate::store::Location;
use std::cell::RefCell;

/// Shortest timed batch, whatever the clock costs (as `run`'s).
const BATCH_FLOOR_NS: f64 = 2e6;

/// Rounds to add to one earlier run.
pub struct AddRounds {
    /// The run they add to.
    pub adds_to: String,
    /// The benchmarks to measure, and the rounds each gets (0: measured once first, for
    /// what later benchmarks of its suite use, its rows not kept).
    pub benches: Vec<(&'static dyn Benchmark, usize)>,
    /// Samples per round (the earlier run's).
    pub samples_per_round: usize,
    /// The keys (`BenchResult::key`) of the rows to keep.
    pub keep: Vec<String>,
    /// Seconds the added rounds may take.
    pub budget_s: f64,
    /// After measuring: seconds each benchmark's rounds took, in `benches`' order.
    pub spent_s: Vec<f64>,
    /// Whether a round was left unstarted for the budget.
    pub budget_out: bool,
    /// The stored document (set when it is printed).
    pub stored: RefCell<Option<RunDocument>>,
}

impl AddRounds {
    pub fn new(
        adds_to: &str,
        benches: Vec<(&'static dyn Benchmark, usize)>,
        samples_per_round: usize,
        keep: Vec<String>,
        budget_s: f64,
    ) -> AddRounds {
        AddRounds {
            adds_to: adds_to.to_string(),
            spent_s: vec![0.0; benches.len()],
            benches,
            samples_per_round,
            keep,
            budget_s,
            budget_out: false,
            stored: RefCell::new(None),
        }
    }
}

/// The order of the rounds: each feeder (0 rounds asked) once first, then every asked round
/// of every benchmark, shuffled.
fn slots(asked: &[usize], rng: &mut impl rand::Rng) -> Vec<usize> {
    let mut first: Vec<usize> = (0..asked.len()).filter(|i| asked[*i] == 0).collect();
    first.extend(super::precision::shuffled(asked, rng));
    first
}

impl Measurement for AddRounds {
    fn suites(&self) -> Vec<String> {
        let mut s: Vec<String> = self
            .benches
            .iter()
            .map(|(b, _)| b.suite().to_string())
            .collect();
        s.dedup();
        s
    }

    fn holder(&self) -> String {
        format!(
            "truebench compare --precision (adding rounds to {})",
            self.adds_to
        )
    }

    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()> {
        let clock_cost_ns = timing_clock_cost_ns();
        let measured = crate::bench::Measured::default();
        let options = RunOptions::default();
        let ctx = RunContext {
            probe: m.env,
            options: &options,
            samples: self.samples_per_round,
            clock_cost_ns,
            min_batch_ns: min_interval_ns(clock_cost_ns, BATCH_FLOOR_NS),
            measured: &measured,
        };
        let benches: Vec<&'static dyn Benchmark> = self.benches.iter().map(|b| b.0).collect();
        let asked: Vec<usize> = self.benches.iter().map(|b| b.1).collect();
        let order = slots(&asked, &mut rand::thread_rng());
        let mut progress = Progress::new(
            order.iter().map(|b| benches[*b].planned(&ctx) as u64).sum(),
            false,
        );
        let mut state = Runner::new(&benches, &ctx);
        let t0 = std::time::Instant::now();
        let mut outcome = Ok(());
        for b in order {
            // A round is not started when it would likely overrun the budget (a feeder's
            // first round always is: the others need it).
            let done = state.of(b).len();
            if done > 0 || asked[b] > 0 {
                let per_round = state.spent_s[b] / done.max(1) as f64;
                if t0.elapsed().as_secs_f64() + per_round > self.budget_s {
                    self.budget_out = true;
                    break;
                }
            }
            outcome = state.round(m, b, &ctx, &mut progress);
            if outcome.is_err() {
                break;
            }
        }
        progress.finish();
        self.spent_s = state.spent_s.clone();
        for (r, window) in state.finish() {
            if self.keep.contains(&r.key()) {
                m.finished_in_rounds(r, window);
            }
        }
        match outcome {
            Err(e) if e.downcast_ref::<crate::error::Interrupted>().is_some() => {
                m.interrupted = true;
                Ok(())
            }
            other => other,
        }
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        if let Some(db) = stored {
            // Wrapped to 100 columns: a store's path makes it long.
            eprint!(
                "{}",
                crate::report::views::wrap(&format!(
                    "truebench: stored the added rounds as run {} (adds to {}) in {}",
                    doc.run_id,
                    self.adds_to,
                    db.display()
                ))
            );
        }
        *self.stored.borrow_mut() = Some(doc.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn feeders_run_once_first_and_the_asked_rounds_are_shuffled_after() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let s = slots(&[3, 0, 2], &mut rng);
        assert_eq!(s[0], 1);
        assert_eq!(s.len(), 6);
        assert_eq!(s.iter().filter(|b| **b == 0).count(), 3);
        assert_eq!(s.iter().filter(|b| **b == 2).count(), 2);
    }
}
