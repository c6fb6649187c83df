//! `truebench run`: the suites' benchmarks, one after the other, inside the session; each
//! finished result is kept at once (so Ctrl-C keeps it), cases that cannot run here are
//! kept with their reason, and a classic run gets its suite indexes.

use super::round_runner::Runner;
use super::rounds::{self, Slot};
use super::{progress::Progress, Measurement, Measuring};
use crate::bench::{self, Benchmark, RunContext, RunOptions};
use crate::error::{usage, usage_hint};
use crate::measure::batch::{min_interval_ns, timing_clock_cost_ns};
use crate::measure::clocks::now_ns;
use crate::probe::ProbeDoc;
use crate::result::{RunDocument, SpeedPoint};
use crate::store::Location;
use rand::SeedableRng;

/// Shortest timed batch, whatever the clock costs.
const BATCH_FLOOR_NS: f64 = 2e6;

/// A run of suites, as the command line asked for it.
pub struct SuiteRun {
    /// The suite (or benchmark) names asked for.
    pub names: Vec<String>,
    pub benches: Vec<&'static dyn Benchmark>,
    pub options: RunOptions,
    /// Samples (timed batches) per result, over all its rounds.
    pub samples: usize,
    /// Rounds each benchmark's samples are drawn in (`session::rounds`).
    pub rounds: usize,
    /// `--precision`: the MDE each row should reach (0.05 = 5%), rounds added until it does
    /// or `budget_s` runs out (`session::precision`).
    pub precision: Option<f64>,
    /// `--budget`: seconds the added rounds may take.
    pub budget_s: f64,
    /// Print the document as JSON.
    pub json: bool,
    /// The text detail: a summary per suite, or every result (`--verbose`).
    pub detail: crate::report::text::Detail,
}

impl SuiteRun {
    fn runs(&self, suite: &str) -> bool {
        self.benches.iter().any(|b| b.suite() == suite)
    }
}

impl Measurement for SuiteRun {
    fn suites(&self) -> Vec<String> {
        self.names.clone()
    }

    fn holder(&self) -> String {
        format!("truebench run {}", self.names.join(","))
    }

    fn check(&mut self, env: &ProbeDoc) -> anyhow::Result<()> {
        if let Some(asked) = self.options.array_bytes {
            let avail = crate::bench::memory::region::available_bytes();
            crate::bench::memory::bandwidth::array_bytes(0, None, avail, Some(asked))
                .map_err(|e| usage(format!("--array-size: {e}")))?;
        }
        if let Some(cpus) = &self.options.cpus {
            crate::placement::explicit(cpus, env).map_err(|e| usage(format!("--cpus: {e}")))?;
        }
        if self.options.clocksource_sweep && !nix::unistd::geteuid().is_root() {
            return Err(usage_hint(
                format!(
                    "--clocksource-sweep needs root: it writes {}",
                    crate::measure::clocksource::CURRENT
                ),
                "run it as root, or drop the flag",
            ));
        }
        Ok(())
    }

    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()> {
        let clock_cost_ns = timing_clock_cost_ns();
        let measured = crate::bench::Measured::default();
        let base = RunContext {
            probe: m.env,
            options: &self.options,
            samples: self.samples,
            clock_cost_ns,
            min_batch_ns: min_interval_ns(clock_cost_ns, BATCH_FLOOR_NS),
            measured: &measured,
            only: None,
        };
        // Progress counts results: each round's of a benchmark measured in rounds.
        let total: usize = self
            .benches
            .iter()
            .map(|b| {
                b.planned(&base)
                    * if b.in_rounds() {
                        rounds::rounds_of(*b, self.rounds)
                    } else {
                        1
                    }
            })
            .sum();
        let mut progress = Progress::new(total as u64, self.json);
        let seed = now_ns() ^ u64::from(std::process::id());
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let slots = rounds::schedule(&self.benches, self.rounds, &mut rng);
        // Each benchmark's samples per round (the runner draws them; `base` holds the run's).
        let samples = self
            .benches
            .iter()
            .map(|b| rounds::samples_in_round(*b, self.samples, self.rounds))
            .collect();
        let mut state = Runner::new(&self.benches, &base, samples);
        // The effective CPU speed at the start of each suite's first round and the end of
        // its last.
        let first = |suite: &str, slots: &[Slot]| {
            slots
                .iter()
                .position(|s| self.benches[s.bench].suite() == suite)
        };
        let last = |suite: &str, slots: &[Slot]| {
            slots
                .iter()
                .rposition(|s| self.benches[s.bench].suite() == suite)
        };
        let mut outcome = Ok(());
        for (i, slot) in slots.iter().enumerate() {
            let b = self.benches[slot.bench];
            if first(b.suite(), &slots) == Some(i) {
                progress.running(&format!("{}: CPU speed at the start", b.suite()));
                m.speed(b.suite(), SpeedPoint::Start);
            }
            outcome = state.round(m, slot.bench, &base, &mut progress);
            if outcome.is_err() {
                break;
            }
            if last(b.suite(), &slots) == Some(i) {
                progress.running(&format!("{}: CPU speed at the end", b.suite()));
                m.speed(b.suite(), SpeedPoint::End);
            }
        }
        // Disturbed rounds measured again, within each benchmark's budget, shuffled.
        if outcome.is_ok() {
            let again = state.remeasure_slots(&mut rng);
            progress.add(
                again
                    .iter()
                    .map(|b| self.benches[*b].planned(&base) as u64)
                    .sum(),
            );
            for bench in again {
                outcome = state.round(m, bench, &base, &mut progress);
                if outcome.is_err() {
                    break;
                }
            }
        }
        if outcome.is_ok() {
            if let Some(target) = self.precision {
                outcome = super::precision::buy(
                    &mut state,
                    m,
                    &base,
                    target,
                    self.budget_s,
                    &mut rng,
                    &mut progress,
                );
            }
        }
        progress.finish();
        // Every benchmark's rounds pooled into its rows (also after Ctrl-C: what was
        // measured is kept).
        for (r, window) in state.finish() {
            m.finished_in_rounds(r, window);
        }
        match outcome {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<crate::error::Interrupted>().is_some() => {
                m.interrupted = true;
            }
            Err(e) => return Err(e),
        }
        if self.runs("classic") {
            let (n, basis) = crate::bench::classic::copies::full_width(&m.env.cpus);
            m.doc.indexes = Some(crate::bench::classic::score::suite_indexes(
                &m.doc.results,
                crate::bench::classic::INDEX_TESTS,
                n,
                &basis,
            ));
            let ranges = crate::bench::classic::score::placement_ranges(&m.doc.results, n);
            m.doc
                .findings
                .extend(crate::findings::classic::index_placement_sensitive(
                    &ranges, n as u64,
                ));
            if let Some(ix) = m.doc.indexes.as_mut() {
                ix.placement_range = ranges;
            }
        }
        Ok(())
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        super::print_document(doc, self.json, self.detail, stored, "run")
    }
}

/// `run --list`: the suites and their benchmarks.
pub fn list() -> String {
    let mut out = String::new();
    for s in bench::suites() {
        let default = if bench::DEFAULT_SUITES.contains(&s) {
            " (default)"
        } else {
            ""
        };
        out.push_str(&format!("{s}{default}\n"));
        for b in bench::REGISTRY.iter().filter(|b| b.suite() == s) {
            out.push_str(&format!("  {}: {}\n", b.id(), b.describe()));
        }
    }
    out
}
