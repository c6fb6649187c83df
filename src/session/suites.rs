//! `truebench run`: the suites' benchmarks, one after the other, inside the session; each
//! finished result is kept at once (so Ctrl-C keeps it), cases that cannot run here are
//! kept with their reason, and a classic run gets its suite indexes.

use super::{progress::Progress, Measurement, Measuring};
use crate::bench::{self, Benchmark, Emitted, RunContext, RunOptions};
use crate::error::{usage, usage_hint};
use crate::measure::batch::{min_interval_ns, timing_clock_cost_ns};
use crate::probe::ProbeDoc;
use crate::result::suite_cost::{self, SuiteMeter};
use crate::result::{RunDocument, SpeedPoint};
use crate::store::Location;

/// Shortest timed batch, whatever the clock costs.
const BATCH_FLOOR_NS: f64 = 2e6;

/// A run of suites, as the command line asked for it.
pub struct SuiteRun {
    /// The suite (or benchmark) names asked for.
    pub names: Vec<String>,
    pub benches: Vec<&'static dyn Benchmark>,
    pub options: RunOptions,
    /// Samples (timed batches) per result.
    pub samples: usize,
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
        let ctx = RunContext {
            probe: m.env,
            options: &self.options,
            samples: self.samples,
            clock_cost_ns,
            min_batch_ns: min_interval_ns(clock_cost_ns, BATCH_FLOOR_NS),
            measured: &measured,
        };
        let total: usize = self.benches.iter().map(|b| b.planned(&ctx)).sum();
        let mut progress = Progress::new(total as u64, self.json);
        // The effective CPU speed at the start and end of each suite (each stretch of
        // benchmarks of one suite, in run order).
        let mut suite: Option<&str> = None;
        let mut meter: Option<SuiteMeter> = None;
        for b in &self.benches {
            if suite != Some(b.suite()) {
                if let Some(prev) = suite {
                    m.speed(prev, SpeedPoint::End);
                }
                if let Some(c) = meter.take() {
                    suite_cost::add(&mut m.doc.suite_costs, c.finish());
                }
                meter = Some(SuiteMeter::start(b.suite()));
                progress.running(&format!("{}: CPU speed at the start", b.suite()));
                m.speed(b.suite(), SpeedPoint::Start);
                suite = Some(b.suite());
            }
            progress.running(b.id());
            let outcome = b.run(&ctx, &mut |e| match e {
                Emitted::Running(case) => progress.running(&format!("{} {case}", b.id())),
                Emitted::Result(r) => {
                    progress.finished(&format!("{} {}", r.key(), r.unit));
                    m.finished(*r);
                }
                Emitted::Skipped(s) => {
                    progress.finished(&format!("{} {}: skipped", s.benchmark, s.case));
                    m.doc.skipped.push(s);
                }
            });
            match outcome {
                Ok(()) => {}
                Err(e) if e.downcast_ref::<crate::error::Interrupted>().is_some() => {
                    m.interrupted = true;
                    break;
                }
                Err(e) => return Err(e.context(format!("{} failed; nothing was stored", b.id()))),
            }
        }
        if let Some(last) = suite {
            progress.running(&format!("{last}: CPU speed at the end"));
            m.speed(last, SpeedPoint::End);
        }
        if let Some(c) = meter.take() {
            suite_cost::add(&mut m.doc.suite_costs, c.finish());
        }
        progress.finish();
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
