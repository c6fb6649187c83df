//! `compare --precision`'s measuring: rounds added to some benchmarks of an earlier run of
//! this host, inside the session like any run (lock, Ctrl-C, sampler, stored), as a run of
//! its own tagged `adds-to=<run id>` that keeps only the rows it was asked for
//! (`compare::stats::added_rounds` merges them into that run's rows). Each benchmark gets the
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
    /// Per benchmark, in `benches`' order: samples per round (the earlier run's).
    pub samples_per_round: Vec<usize>,
    /// The keys (`BenchResult::key`) of the rows to keep.
    pub keep: Vec<String>,
    /// Seconds the added rounds may take.
    pub budget_s: f64,
    /// Per benchmark, in `benches`' order: the seconds a round of it took in the run it adds
    /// to (`compare::stats::added_rounds::seconds_per_round`), what the progress's total expects
    /// of a round not yet measured; None when unknown (counted as taking no time).
    pub round_s: Vec<Option<f64>>,
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
        round_s: Vec<Option<f64>>,
        samples_per_round: Vec<usize>,
        keep: Vec<String>,
        budget_s: f64,
    ) -> AddRounds {
        AddRounds {
            adds_to: adds_to.to_string(),
            spent_s: vec![0.0; benches.len()],
            round_s,
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

/// Whether a round starts: a feeder's first round always (the others need it); any other
/// when the seconds spent and its benchmark's seconds per round so far (0 before its first
/// round) stay within the budget.
fn starts(feeder_first: bool, spent_s: f64, per_round_s: f64, budget_s: f64) -> bool {
    feeder_first || spent_s + per_round_s <= budget_s
}

/// How many of the rounds in `order` (benchmark indexes, `asked` rounds each) start
/// within `budget_s` by the rule `measure` follows ([`starts`]), when a round of benchmark
/// b takes `round_s[b]` seconds, `done[b]` of its rounds were measured and `spent_s`
/// seconds spent: the rounds the progress expects.
fn rounds_within(
    order: &[usize],
    asked: &[usize],
    round_s: &[f64],
    done: &[usize],
    spent_s: f64,
    budget_s: f64,
) -> usize {
    let mut done = done.to_vec();
    let mut spent = spent_s;
    for (n, &b) in order.iter().enumerate() {
        let per_round = if done[b] > 0 { round_s[b] } else { 0.0 };
        if !starts(done[b] == 0 && asked[b] == 0, spent, per_round, budget_s) {
            return n;
        }
        spent += round_s[b];
        done[b] += 1;
    }
    order.len()
}

impl AddRounds {
    /// The pieces of work (results) the progress expects from the rounds of `order` still
    /// to come (from `from`), with `done` rounds per benchmark measured in `spent_s`
    /// seconds: a measured benchmark's rounds take what its own took so far, the others
    /// what they took in the run added to.
    fn expected(
        &self,
        order: &[usize],
        from: usize,
        pieces: &[u64],
        spent_per_bench: &[f64],
        done: &[usize],
        spent_s: f64,
    ) -> u64 {
        let asked: Vec<usize> = self.benches.iter().map(|b| b.1).collect();
        let round_s: Vec<f64> = (0..self.benches.len())
            .map(|b| match done[b] {
                0 => self.round_s.get(b).copied().flatten().unwrap_or(0.0),
                n => spent_per_bench[b] / n as f64,
            })
            .collect();
        let rest = &order[from..];
        let n = rounds_within(rest, &asked, &round_s, done, spent_s, self.budget_s);
        rest[..n].iter().map(|b| pieces[*b]).sum()
    }
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
            samples: crate::bench::MIN_SAMPLES_PER_ROUND,
            clock_cost_ns,
            min_batch_ns: min_interval_ns(clock_cost_ns, BATCH_FLOOR_NS),
            measured: &measured,
            only: None,
        };
        let benches: Vec<&'static dyn Benchmark> = self.benches.iter().map(|b| b.0).collect();
        let asked: Vec<usize> = self.benches.iter().map(|b| b.1).collect();
        let order = slots(&asked, &mut rand::thread_rng());
        let pieces: Vec<u64> = benches.iter().map(|b| b.planned(&ctx) as u64).collect();
        // The total is what is expected to start within the budget (not every round the
        // plan asked for), re-estimated after each round from the rounds' own times.
        let none = vec![0; benches.len()];
        let mut progress = Progress::new(
            self.expected(&order, 0, &pieces, &self.spent_s, &none, 0.0),
            false,
        );
        let mut state = Runner::new(&benches, &ctx, self.samples_per_round.clone());
        let t0 = std::time::Instant::now();
        let mut outcome = Ok(());
        for (i, &b) in order.iter().enumerate() {
            // A round is not started when it would likely overrun the budget.
            let done = state.of(b).len();
            let per_round = state.spent_s[b] / done.max(1) as f64;
            let feeder_first = done == 0 && asked[b] == 0;
            if !starts(
                feeder_first,
                t0.elapsed().as_secs_f64(),
                per_round,
                self.budget_s,
            ) {
                self.budget_out = true;
                break;
            }
            outcome = state.round(m, b, &ctx, &mut progress);
            if outcome.is_err() {
                break;
            }
            let done: Vec<usize> = (0..benches.len()).map(|k| state.of(k).len()).collect();
            let spent = t0.elapsed().as_secs_f64();
            let rest = self.expected(&order, i + 1, &pieces, &state.spent_s, &done, spent);
            progress.set_total(progress.done() + rest);
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
    fn the_progress_counts_the_rounds_the_budget_lets_start() {
        // Benchmark 0 takes 10 s a round, 1 takes 5 s; 25 s of budget. Its first round
        // starts (nothing known of it yet), the second at 10 + 10 s, then 1's first at
        // 20 s; its second would pass 25 s: 3 of the 5 rounds asked.
        let order = [0, 0, 1, 1, 0];
        let (asked, round_s) = ([3, 2], [10.0, 5.0]);
        assert_eq!(
            rounds_within(&order, &asked, &round_s, &[0, 0], 0.0, 25.0),
            3
        );
        // A generous budget starts them all; a spent one none of the benchmarks measured.
        assert_eq!(
            rounds_within(&order, &asked, &round_s, &[0, 0], 0.0, 1e3),
            5
        );
        assert_eq!(
            rounds_within(&order, &asked, &round_s, &[1, 1], 30.0, 25.0),
            0
        );
        // A feeder's first round starts whatever the budget.
        assert_eq!(
            rounds_within(&[1, 0], &[1, 0], &round_s, &[0, 0], 30.0, 25.0),
            1
        );
        // The plan's total in pieces (results): 4 per round of 0, 2 of 1, for a small
        // budget, against the 16 every asked round would give.
        let bench = crate::bench::REGISTRY[0];
        let mut w = AddRounds::new(
            "a",
            vec![(bench, 3), (bench, 2)],
            vec![Some(10.0), Some(5.0)],
            vec![4, 4],
            vec![],
            25.0,
        );
        let (pieces, none) = ([4, 2], [0, 0]);
        assert_eq!(w.expected(&order, 0, &pieces, &[0.0, 0.0], &none, 0.0), 10);
        // After 0's first round took 20 s, its own time replaces the run's 10: 1's first
        // round starts at 20 s, its second would pass 25 s.
        let rest = w.expected(&[1, 1, 0], 0, &pieces, &[20.0, 0.0], &[1, 0], 20.0);
        assert_eq!(rest, 2);
        assert_eq!(
            w.expected(&order, 1, &pieces, &[20.0, 0.0], &[1, 0], 20.0),
            0
        );
        // 1's time unknown: taken as none, so every round of it is expected.
        w.round_s[1] = None;
        assert_eq!(
            w.expected(&[1, 1, 1], 0, &pieces, &[0.0, 0.0], &none, 0.0),
            6
        );
    }

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
