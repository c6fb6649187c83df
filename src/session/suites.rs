//! `truebench run`: the suites' benchmarks, one after the other, inside the session; each
//! finished result is kept at once (so Ctrl-C keeps it), cases that cannot run here are
//! kept with their reason, and a classic run gets its suite indexes (from its rows pooled
//! from their rounds).

use super::allocate;
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
    /// `--precision`: the MDE every row should reach (0.05 = 5%), instead of its family's
    /// target (`Benchmark::mde_target`), rounds added until it does or the budget ends
    /// (`session::precision`).
    pub precision: Option<f64>,
    /// The run's time budget (`Budget`).
    pub budget: Budget,
    /// When the command started (for `run`, the process's start, `deadline::process_start`):
    /// the budget counts the probe too (`check` turns it into the probe's time, so a wait
    /// for `--start-at` after it is not counted).
    pub started: std::time::Instant,
    /// Seconds from the command's start to the probed machine's check.
    pub probe_s: f64,
    /// When the session resumed after the check and any `--start-at` wait (`start`): the
    /// lock, the database's opening and the sampler's start count against the budget too.
    pub resumed: Option<std::time::Instant>,
    /// Print the document as JSON.
    pub json: bool,
    /// The text detail: a summary per suite, or every result (`--verbose`).
    pub detail: crate::report::text::Detail,
}

/// How long a run may take: a ceiling on its whole time, process start to stored document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    /// The chosen benchmarks' shares (`default_budget_s`).
    Default,
    /// `--budget`: seconds.
    Seconds(f64),
    /// No deadline and no allocation: every benchmark's rounds as asked (`calibrate`,
    /// whose runs must be alike).
    Off,
}

/// Seconds kept at the end of the budget for pooling the rounds, the findings and storing
/// the document.
pub const FINISH_RESERVE_S: f64 = 1.5;

/// CPU seconds the finish takes (pooling, findings, storing): a run starved of CPU (a
/// cgroup of the lowest weight beside busy neighbours got 0.16% of a CPU here, 2026-12-07,
/// and its finish took 10 s for about 16 ms of CPU) keeps this over the share it got.
pub const FINISH_CPU_S: f64 = 0.03;

/// The seconds kept for the finish when the thread that runs the rounds got `got` (0..=1,
/// None: not read) of the CPU it wanted so far: [`FINISH_RESERVE_S`], or the finish's CPU
/// time at that share where that is longer.
pub fn finish_reserve_s(got: Option<f64>) -> f64 {
    FINISH_RESERVE_S.max(FINISH_CPU_S / got.unwrap_or(1.0).max(1e-3))
}

/// The default budget of a run: the sum of its benchmarks' shares (`Benchmark::
/// budget_share_s`; about 40 s for the default suites on a small machine, growing with the
/// machine's CPUs, caches and memory).
pub fn default_budget_s(benches: &[&'static dyn Benchmark], ctx: &RunContext) -> f64 {
    benches.iter().map(|b| b.budget_share_s(ctx)).sum()
}

/// What an `ab` run measured on side B (`SuiteRun::measure_sides`): its rows, each with
/// its window, and the cases it could not run.
#[derive(Default)]
pub struct SideB {
    pub rows: Vec<(crate::result::BenchResult, (u64, u64))>,
    pub skipped: Vec<crate::result::Skipped>,
}

/// Clears the run's deadline when dropped (a run ended by an error too).
struct DeadlineGuard;

impl Drop for DeadlineGuard {
    fn drop(&mut self) {
        crate::deadline::clear();
    }
}

/// How much a run measures, as asked (`run`, `ab`, `calibrate`).
pub struct Asked {
    pub samples: usize,
    pub rounds: usize,
    pub precision: Option<f64>,
    pub budget: Budget,
}

impl Asked {
    /// As `run` and `ab` take it: `--samples`, `--rounds`, `--precision`, `--budget`.
    pub fn options(
        samples: u32,
        rounds: u32,
        precision: Option<f64>,
        budget: Option<f64>,
    ) -> Asked {
        Asked {
            samples: samples as usize,
            rounds: rounds as usize,
            precision,
            budget: Budget::asked(budget),
        }
    }
}

impl Budget {
    /// `--budget SECONDS` when given, else the default budget.
    pub fn asked(seconds: Option<f64>) -> Budget {
        seconds.map_or(Budget::Default, Budget::Seconds)
    }
}

impl SuiteRun {
    /// A run of `benches` (asked for as `names`) from `started`, printed as JSON or at
    /// `detail`; the probe's time and the resumption are set as the session goes.
    pub fn new(
        names: Vec<String>,
        benches: Vec<&'static dyn Benchmark>,
        options: RunOptions,
        asked: Asked,
        started: std::time::Instant,
        json: bool,
        detail: crate::report::text::Detail,
    ) -> SuiteRun {
        SuiteRun {
            names,
            benches,
            options,
            samples: asked.samples,
            rounds: asked.rounds,
            precision: asked.precision,
            budget: asked.budget,
            started,
            probe_s: 0.0,
            resumed: None,
            json,
            detail,
        }
    }

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

    fn start(&mut self) -> anyhow::Result<()> {
        self.resumed = Some(std::time::Instant::now());
        Ok(())
    }

    fn check(&mut self, env: &ProbeDoc) -> anyhow::Result<()> {
        self.probe_s = self.started.elapsed().as_secs_f64();
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
        self.measure_sides(m, None).map(|_| ())
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        super::print_document(doc, self.json, self.detail, stored, "run")
    }
}

impl SuiteRun {
    /// The run's measurement into `m`; with `sides` (`ab`: the sides and the machine
    /// probed under B) every round is measured on both sides, A's rows go into `m` and B's
    /// are returned with the cases B skipped (none without sides), each row with its
    /// window. The default budget is then twice the run's: each round is measured twice.
    pub fn measure_sides(
        &mut self,
        m: &mut Measuring,
        sides: Option<(&mut crate::policy::sides::Sides, &ProbeDoc)>,
    ) -> anyhow::Result<SideB> {
        let per_round = if sides.is_some() { 2.0 } else { 1.0 };
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
        // This thread runs the rounds: how long it waits for a CPU over the run tells a
        // starved cgroup's run the budget ends after a round or two (`cpu_starved`).
        let own_before = crate::measure::run_delay::own_times();
        // This thread has run the command from its start (the probe included): the share
        // of the CPU it wanted that it got so far (schedstat is counted from the thread's
        // start) tells a starved run to keep more for its finish.
        let since_start = crate::measure::run_delay::wanted_share(Some((0, 0)), own_before);
        let reserve_s = finish_reserve_s(since_start.map(|w| 1.0 - w));
        let mut state = Runner::new(&self.benches, &base, samples);
        if let Some((s, env_b)) = sides {
            state = state.with_sides(s, m.env, env_b);
        }
        // The budget: a deadline every benchmark checks, set from the command's start.
        let budget_s = match self.budget {
            Budget::Off => None,
            Budget::Seconds(s) => Some(s),
            Budget::Default => Some(per_round * default_budget_s(&self.benches, &base)),
        };
        let _guard = DeadlineGuard;
        // Measuring time: the budget less the probe and the finish; the default budget
        // keeps at least three quarters of its shares for measuring (a run of one cheap
        // benchmark, whose share is a second or two, still measures it).
        let left_s = budget_s.map(|t| {
            let since_resumed = self.resumed.map_or(0.0, |r| r.elapsed().as_secs_f64());
            let left = t - self.probe_s - since_resumed - reserve_s;
            match self.budget {
                Budget::Default => left.max(0.75 * t),
                _ => left,
            }
        });
        if let Some(left) = left_s {
            crate::deadline::set_in(left.max(0.0));
        }
        // The first stage's rounds per benchmark: as asked, fewer for the most expensive
        // ones when the costs seen so far (each benchmark's rounds' mean) would take more
        // than the first stage's share of the budget (`allocate::first_stage`).
        let desired: Vec<usize> = slots.iter().fold(vec![0; self.benches.len()], |mut n, s| {
            n[s.bench] += 1;
            n
        });
        let stage_allowance = left_s.map(|l| l * allocate::FIRST_STAGE_SHARE);
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
        let mut cut = 0u64;
        let mut ended: Vec<&str> = vec![];
        for (i, slot) in slots.iter().enumerate() {
            let b = self.benches[slot.bench];
            let have = state.of(slot.bench).len();
            if let Some(allow) = stage_allowance {
                let cost: Vec<Option<f64>> = (0..self.benches.len())
                    .map(|j| {
                        let n = state.of(j).len();
                        (n > 0).then(|| state.spent_s[j] / n as f64)
                    })
                    .collect();
                let cap = allocate::first_stage(&desired, &cost, allow);
                if have > 0 && have >= cap[slot.bench] || crate::deadline::expired() {
                    cut += b.planned(&base) as u64;
                    continue;
                }
            }
            if first(b.suite(), &slots) == Some(i) {
                progress.running(&format!("{}: CPU speed at the start", b.suite()));
                m.speed(b.suite(), SpeedPoint::Start);
            }
            outcome = state.round(m, slot.bench, &base, &mut progress);
            if outcome.is_err() {
                break;
            }
            if last(b.suite(), &slots) == Some(i) && !crate::deadline::expired() {
                progress.running(&format!("{}: CPU speed at the end", b.suite()));
                m.speed(b.suite(), SpeedPoint::End);
                ended.push(b.suite());
            }
        }
        // A suite whose last rounds the budget cut: its speed at the end of what it ran.
        for (i, slot) in slots.iter().enumerate() {
            let suite = self.benches[slot.bench].suite();
            if first(suite, &slots) == Some(i)
                && !ended.contains(&suite)
                && outcome.is_ok()
                && !crate::deadline::expired()
            {
                m.speed(suite, SpeedPoint::End);
                ended.push(suite);
            }
        }
        // The rounds the budget cut leave the count.
        progress.set_total(progress.total().saturating_sub(cut));
        // Disturbed rounds measured again, within each benchmark's budget and a share of the
        // run's, shuffled.
        if outcome.is_ok() {
            let again = state.remeasure_slots(&mut rng);
            progress.add(
                again
                    .iter()
                    .map(|b| self.benches[*b].planned(&base) as u64)
                    .sum(),
            );
            let t0 = std::time::Instant::now();
            let cap = budget_s.map(|t| t * allocate::REMEASURE_SHARE);
            for bench in again {
                let per_round = state.spent_s[bench] / state.of(bench).len().max(1) as f64;
                let over = cap.is_some_and(|c| t0.elapsed().as_secs_f64() + per_round > c);
                if over || crate::deadline::would_overrun(per_round) {
                    break;
                }
                outcome = state.round(m, bench, &base, &mut progress);
                if outcome.is_err() {
                    break;
                }
            }
        }
        // The rest of the budget on the rows furthest from their target.
        let mut short = vec![];
        if outcome.is_ok() && (budget_s.is_some() || self.precision.is_some()) {
            let allowance = crate::deadline::remaining_s().unwrap_or(0.0);
            let (o, s) = super::precision::spend(
                &mut state,
                m,
                &base,
                super::precision::Spending {
                    precision: self.precision,
                    budget_s: budget_s.unwrap_or(allowance),
                    allowance_s: allowance,
                },
                &mut rng,
                &mut progress,
            );
            outcome = o;
            short = s;
        }
        let ended = crate::deadline::expired();
        if let Some(t) = budget_s {
            m.doc
                .findings
                .extend(crate::findings::run::budget_short(&short, t, ended));
        }
        progress.finish();
        // Over the whole run (the probe too: a starved run can end before a round).
        let own = crate::measure::run_delay::wanted_share(
            Some((0, 0)),
            crate::measure::run_delay::own_times(),
        );
        let starved = crate::findings::run::cpu_starved(
            &state.waits(),
            m.env.cgroup.as_ref().and_then(|c| c.cpu_weight.as_ref()),
            own.map(|s| crate::findings::run::RunWait { percent: 100.0 * s }),
        );
        let unmeasured: Vec<usize> = (0..self.benches.len())
            .filter(|&i| state.of(i).iter().all(|r| r.results.is_empty()))
            .collect();
        // Every benchmark's rounds pooled into its rows (also after Ctrl-C: what was
        // measured is kept).
        let skipped_b = if state.sides() > 1 {
            state.skipped(1).to_vec()
        } else {
            vec![]
        };
        let mut per_side = state.finish_sides();
        let side_b = if per_side.len() > 1 {
            per_side.pop().unwrap_or_default()
        } else {
            vec![]
        };
        for (r, window) in per_side.swap_remove(0) {
            m.finished_in_rounds(r, window);
        }
        // A benchmark the budget ended before any of its rounds gave a row is said, not
        // silently missing (a starved cgroup's run can spend its whole budget on a few).
        if let Some(t) = budget_s.filter(|_| ended) {
            for i in unmeasured {
                let b = self.benches[i];
                if m.doc.skipped.iter().any(|s| s.benchmark == b.id()) {
                    continue;
                }
                let why = match &starved {
                    Some(_) => "; this cgroup was starved of CPU (cpu-starved)",
                    None => "",
                };
                m.doc.skipped.push(crate::result::Skipped {
                    benchmark: b.id().into(),
                    case: "every case".into(),
                    reason: format!(
                        "the run's budget of {t:.0} s ended before a round of it gave a result{why}"
                    ),
                });
            }
        }
        m.doc.findings.extend(starved);
        // How noisy the host was, and what would reach each family's target here.
        m.doc
            .findings
            .extend(super::noise_said::host_noise_finding(&m.doc));
        m.doc
            .findings
            .extend(super::noise_said::reach_finding(&m.doc, self.precision));
        match outcome {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<crate::error::Interrupted>().is_some() => {
                m.interrupted = true;
            }
            Err(e) => return Err(e),
        }
        self.finish_doc(&mut m.doc, m.env);
        Ok(SideB {
            rows: side_b,
            skipped: skipped_b,
        })
    }

    /// What a run document gets once its rows are in: a classic run its suite indexes
    /// (from its rows pooled from their rounds).
    pub fn finish_doc(&self, doc: &mut RunDocument, env: &ProbeDoc) {
        if self.runs(crate::bench::classic::SUITE) {
            crate::bench::classic::finish(&mut doc.results, env);
            let (n, basis) = crate::bench::classic::copies::full_width(&env.cpus);
            doc.indexes = Some(crate::bench::classic::score::suite_indexes(
                &doc.results,
                crate::bench::classic::INDEX_TESTS,
                n,
                &basis,
            ));
            let ranges = crate::bench::classic::score::placement_ranges(&doc.results, n);
            doc.findings
                .extend(crate::findings::classic::index_placement_sensitive(
                    &ranges, n as u64,
                ));
            if let Some(ix) = doc.indexes.as_mut() {
                ix.placement_range = ranges;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_starved_run_keeps_its_finish_cpu_time_over_its_share() {
        assert_eq!(finish_reserve_s(None), FINISH_RESERVE_S);
        assert_eq!(finish_reserve_s(Some(1.0)), FINISH_RESERVE_S);
        assert_eq!(finish_reserve_s(Some(0.5)), FINISH_RESERVE_S);
        assert!((finish_reserve_s(Some(0.0016)) - FINISH_CPU_S / 0.0016).abs() < 1e-9);
        assert_eq!(finish_reserve_s(Some(0.0)), FINISH_CPU_S / 1e-3);
    }
}
