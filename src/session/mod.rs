//! One measuring session: the path every command that measures takes (`run`, `record`,
//! `loadstep`, and any later one such as `experiment`), so they cannot drift apart.
//!
//! In order: probe the machine and evaluate the probe's findings; let the command check its
//! options against the machine (usage errors, nothing written); take the run lock (a second
//! measuring command is refused, naming the holder); install the Ctrl-C handler; wait for
//! `--start-at` (start_at.rs; Ctrl-C there stores nothing); let the command start what it
//! drives; open the results database; start the sampler and take the
//! start readings (steal, clocksource); let the command measure into the run document
//! (sampling the effective CPU speed at the start and end of each suite through
//! [`Measuring::speed`]); add the run-level findings every measuring command gets
//! (`steal-time`, `clocksource-changed`, `cpu-speed-dropped`, and each result's noise
//! findings from the sampler); store the
//! document; print it; end as interrupted (exit 130) when Ctrl-C stopped it.
//!
//! A command is one type implementing [`Measurement`], in a file of its own here:
//! `suites.rs` (`run`), `record.rs` (`record`), `loadstep.rs` (`loadstep`), `ab.rs`
//! (`ab`: a suite run on two settings, stored as two documents).

pub mod ab;
pub mod add_rounds;
pub mod allocate;
pub mod calibrate;
pub mod compare_precision;
pub mod disturbance;
pub mod experiment;
pub mod loadstep;
pub mod merge;
pub mod noise_said;
pub mod precision;
pub mod progress;
pub mod record;
pub mod round_runner;
pub mod rounds;
pub mod start_at;
pub mod suites;

use crate::error::Interrupted;
use crate::measure::clocks::now_ns;
use crate::observe::sampler::Sampler;
use crate::probe::{kernel, sysroot::SysRoot, ProbeDoc, Unavailable};
use crate::result::{RunDocument, Tool, SCHEMA};
use crate::store::{default_path, Location, Store};
use std::collections::BTreeMap;

/// What one measuring command does inside the session.
pub trait Measurement {
    /// The suites the run document names (`timers,ctx`; `record`; `loadstep`).
    fn suites(&self) -> Vec<String>;
    /// Who holds the run lock while this runs, as a second command will be told.
    fn holder(&self) -> String;
    /// Check the options against the probed machine; an error here is a usage error and
    /// nothing has been written or started yet.
    fn check(&mut self, _env: &ProbeDoc) -> anyhow::Result<()> {
        Ok(())
    }
    /// Start what the command drives (a child process), under the lock, before the
    /// database is opened: a command that cannot start writes nothing. Whatever it starts
    /// must be stopped when the measurement is dropped.
    fn start(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Whether the sampler (other processes' CPU time every 250 ms) runs beside, for the
    /// per-result noise findings. Off where this process's own CPU time is measured.
    fn samples_noise(&self) -> bool {
        true
    }
    /// Measure, filling `m.doc` (results, skipped cases, recording, experiment, findings of
    /// its own). Return `Err(Interrupted)` (or set `m.interrupted`) when Ctrl-C stopped it
    /// with finished results kept; any other error stores nothing.
    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()>;
    /// Documents measured beside the run's own and stored after it (`ab`'s side B).
    fn companions(&mut self) -> Vec<RunDocument> {
        vec![]
    }
    /// Print the document: as JSON, or as text with where it was stored (`stored` is None
    /// when storing failed and the document was spilled to a file instead).
    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()>;
    /// How the command ends once its run is stored and printed: `record` passes on the exit
    /// status of the command it started.
    fn outcome(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// What a command measures with, and into.
pub struct Measuring<'a> {
    pub env: &'a ProbeDoc,
    /// The document being built: machine, findings of the probe, no results yet.
    pub doc: RunDocument,
    /// Each result's measurement window on CLOCK_MONOTONIC (see `finished`); None for a
    /// result pooled from rounds, whose rounds carry what disturbed them.
    result_windows: Vec<Option<(u64, u64)>>,
    /// When the last result finished (or the measurement began).
    last_end_ns: u64,
    /// Ctrl-C stopped the measurement; what was finished is kept.
    pub interrupted: bool,
    /// The effective CPU speed samples taken so far (see `speed`).
    speed: crate::bench::cpu_speed::Recorder,
}

impl Measuring<'_> {
    /// Keep a finished result; its measurement window ends now (for its noise findings).
    /// On a hybrid machine the kind of each CPU it was pinned to is recorded here, for
    /// every benchmark alike.
    pub fn finished(&mut self, mut r: crate::result::BenchResult) {
        r.placement.set_pinned_kinds(&self.env.topology.cpu_kinds);
        let end = now_ns();
        self.doc.results.push(r);
        self.result_windows.push(Some((self.last_end_ns, end)));
        self.last_end_ns = end;
    }

    /// Keep a result pooled from rounds, with the span of its rounds as its window (the
    /// sampler's noise findings over it, beside its rounds' own disturbances).
    pub fn finished_in_rounds(&mut self, mut r: crate::result::BenchResult, window: (u64, u64)) {
        r.placement.set_pinned_kinds(&self.env.topology.cpu_kinds);
        self.doc.results.push(r);
        self.result_windows
            .push((window.1 > window.0).then_some(window));
        self.last_end_ns = now_ns();
    }

    /// Sample the effective CPU speed (a few ms on one CPU of each kind) at the start or
    /// end of `suite`; the session puts the samples into `doc.cpu_speed`.
    pub fn speed(&mut self, suite: &str, point: crate::result::SpeedPoint) {
        self.speed.sample(self.env, suite, point);
    }
}

/// Probe the machine under `root` and evaluate the probe's findings.
pub fn probe(root: &SysRoot) -> ProbeDoc {
    let mut doc = crate::probe::probe(root);
    doc.findings = crate::findings::probe::evaluate(&doc);
    doc
}

/// What every measuring command may be given besides its own options: `--start-at`
/// (already checked to be ahead) and `--tag` (already validated).
#[derive(Debug, Clone, Default)]
pub struct Common {
    pub start_at: Option<chrono::DateTime<chrono::Utc>>,
    pub tags: BTreeMap<String, String>,
}

/// Run one measuring command through the session, started at once and untagged.
pub fn run(what: &mut dyn Measurement, db: Option<&Location>) -> anyhow::Result<()> {
    run_with(what, db, &Common::default())
}

/// Run one measuring command through the session; `db` is `--db`.
pub fn run_with(
    what: &mut dyn Measurement,
    db: Option<&Location>,
    common: &Common,
) -> anyhow::Result<()> {
    let live = SysRoot::live();
    let env = probe(&live);
    what.check(&env)?;
    let db_path = default_path(db)?;
    let _lock = crate::lock::acquire(&what.holder())?;
    crate::interrupt::install()?;
    // A scheduled run opens the database before waiting: its errors are known before the
    // wait, and the open (a migration on a new file) does not make the start late.
    let opened = match common.start_at {
        Some(_) => Some(Store::open_rw(&db_path)?),
        None => None,
    };
    let waited = match common.start_at {
        Some(at) => {
            let t = std::time::Instant::now();
            if !start_at::wait_until(at) {
                eprintln!("truebench: cancelled while waiting for --start-at; nothing was measured or stored");
                return Err(crate::error::CommandExit(crate::error::EXIT_INTERRUPTED).into());
            }
            Some((at, t.elapsed()))
        }
        None => None,
    };
    what.start()?;
    let mut store = match opened {
        Some(s) => s,
        None => Store::open_rw(&db_path)?,
    };

    let started = chrono::Utc::now();
    let scheduled_start =
        waited.map(|(at, w)| start_at::record(at, started, w, start_at::clock_sync()));
    if let Some(s) = scheduled_start
        .as_ref()
        .filter(|s| s.late_ms >= crate::findings::run::LATE_MS)
    {
        eprintln!(
            "truebench: measuring began {:.1} s after --start-at {} (probing took longer than the wait)",
            s.late_ms / 1e3,
            s.requested_at
        );
    }
    let t0 = std::time::Instant::now();
    let steal_before = kernel::steal(&live, &mut Unavailable::default());
    let sampler = what.samples_noise().then(|| {
        Sampler::start(
            env.cpus.usable.clone(),
            env.cgroup
                .as_ref()
                .and_then(|c| c.cpu_stat_path.clone())
                .map(Into::into),
        )
    });
    let mut m = Measuring {
        env: &env,
        doc: RunDocument {
            tags: common.tags.clone(),
            scheduled_start,
            ..document(&started, &env, what.suites())?
        },
        result_windows: Vec::new(),
        last_end_ns: now_ns(),
        interrupted: false,
        speed: Default::default(),
    };
    match what.measure(&mut m) {
        Ok(()) => {}
        Err(e) if e.downcast_ref::<Interrupted>().is_some() => m.interrupted = true,
        Err(e) => return Err(e),
    }
    let mut doc = m.doc;
    doc.interrupted = m.interrupted || crate::interrupt::requested();
    doc.cpu_speed = m.speed.finish();
    // Disturbed rounds, counted once for the run (each row's rounds hold which and why).
    doc.findings
        .extend(crate::findings::results::disturbed_rounds(&doc.results));
    doc.findings
        .extend(crate::findings::results::condition_throughout(&doc.results));
    if let Some(speed) = &doc.cpu_speed {
        doc.findings
            .extend(crate::findings::run::cpu_speed_dropped(speed));
    }
    if let Some(sampler) = sampler {
        crate::findings::noise::annotate(
            &mut doc.results,
            &m.result_windows,
            sampler.finish(),
            env.cpus.usable.len(),
        );
    }
    if let Some(s) = &doc.scheduled_start {
        doc.findings
            .extend(crate::findings::run::scheduled_start(s));
    }
    doc.findings
        .extend(crate::findings::run::clocksource_changed(
            env.clock.clocksource.as_deref(),
            &live,
        ));
    let steal_after = kernel::steal(&live, &mut Unavailable::default());
    doc.findings.extend(crate::findings::run::steal_during(
        steal_before.as_ref(),
        steal_after.as_ref(),
        t0.elapsed().as_secs_f64(),
        env.topology.threads,
    ));
    doc.findings.extend(crate::findings::memory::memory_limit(
        &env.memory,
        env.memory.oom_kills_now(),
        &doc.skipped,
        &doc.results,
    ));
    doc.finished_at = Some(timestamp(&chrono::Utc::now()));

    // Never lost: a document the store refuses is written to a file whose path the error
    // names; it is printed either way.
    let mut saved = crate::store::save_or_spill(&mut store, &doc);
    for other in what.companions() {
        let also = crate::store::save_or_spill(&mut store, &other);
        saved = saved.and(also);
    }
    what.print(&doc, saved.is_ok().then_some(&db_path))?;
    saved?;
    if doc.interrupted {
        return Err(Interrupted.into());
    }
    what.outcome()
}

fn timestamp(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A run id: the start time to the second and 16 bits that tell apart runs started in the
/// same second (process id and nanoseconds, hashed).
pub fn run_id(started: &chrono::DateTime<chrono::Utc>) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_i64(started.timestamp_nanos_opt().unwrap_or_default());
    format!(
        "{}-{:04x}",
        started.format("%Y%m%dT%H%M%SZ"),
        h.finish() & 0xffff
    )
}

/// The document a session starts from: the machine and its findings, no results yet.
fn document(
    started: &chrono::DateTime<chrono::Utc>,
    env: &ProbeDoc,
    suites: Vec<String>,
) -> anyhow::Result<RunDocument> {
    Ok(RunDocument {
        schema: SCHEMA.into(),
        run_id: run_id(started),
        started_at: timestamp(started),
        finished_at: None,
        host: env.hostname.clone(),
        suites,
        interrupted: false,
        tool: Tool::current(),
        env: env.clone(),
        findings: env.findings.clone(),
        results: vec![],
        skipped: vec![],
        recording: None,
        indexes: None,
        loadstep: None,
        experiment: None,
        tags: Default::default(),
        cpu_speed: None,
        scheduled_start: None,
        suite_costs: vec![],
    })
}

/// The usual print: the document as JSON, or its tables and where it was stored.
pub fn print_document(
    doc: &RunDocument,
    json: bool,
    detail: crate::report::text::Detail,
    stored: Option<&Location>,
    what: &str,
) -> anyhow::Result<()> {
    if json {
        return print_json(doc);
    }
    crate::stdout::write(&crate::report::text::render(doc, detail))?;
    if let Some(db_path) = stored {
        eprintln!(
            "truebench: stored {what} {} in {}",
            doc.run_id,
            db_path.display()
        );
    }
    Ok(())
}

/// Print a value as one pretty JSON document on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    crate::stdout::json(v)
}
