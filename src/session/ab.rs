//! `truebench ab`: one host under two settings (A: as found, or `--a`; B: the settings
//! given), measured round by round in one run. It is a suite run (`suites::SuiteRun`: the
//! same schedule, budget, allocation, disturbance rules and `--precision` spending) whose
//! runner measures every round on both sides in a fresh random order, the host switched
//! between them (`policy::sides`), so the host's drift over the run falls on both sides
//! alike. The default budget is twice the run's (every round is measured twice).
//!
//! Stored as two run documents, A and B, each with its side's rows and the machine as
//! probed under its setting (so `compare`'s causes see what the setting changed), tagged
//! `ab=<A's run id>`, `ab-side=a|b` and `ab-settings=<the side's settings>`; `compare A B`
//! of such a pair tests each row on its paired rounds (`compare::stats::paired`), which is
//! what `ab` prints. `show`, `export` and `report` read either document as any run.

use super::suites::SuiteRun;
use super::{Measurement, Measuring};
use crate::error::usage;
use crate::policy::setting::{self, Settings};
use crate::policy::sides::Sides;
use crate::probe::{sysroot::SysRoot, ProbeDoc};
use crate::result::RunDocument;
use crate::store::Location;

use crate::compare::stats::paired::{SETTINGS_TAG, SIDE_TAG, TAG};

/// An ab run as the command line asked for it.
pub struct Ab {
    pub run: SuiteRun,
    /// A's settings (`--a`; empty: the host as found) and B's.
    pub sides: [Settings; 2],
    /// The false discovery rate the printed comparison controls.
    pub fdr: f64,
    pub verbose: bool,
    /// B's document, once measured (stored beside A's).
    b: Option<RunDocument>,
}

impl Ab {
    pub fn new(run: SuiteRun, a: Settings, b: Settings, fdr: f64, verbose: bool) -> Ab {
        Ab {
            run,
            sides: [a, b],
            fdr,
            verbose,
            b: None,
        }
    }
}

/// The machine as probed with the host in `side`'s setting: the system-wide and cgroup
/// parts entered, the per-thread ones on the probing thread.
fn probe_under(sides: &mut Sides, side: usize) -> anyhow::Result<ProbeDoc> {
    sides.enter(side).map_err(anyhow::Error::msg)?;
    let sides: &Sides = sides;
    std::thread::scope(|s| {
        s.spawn(|| {
            sides.on_thread(side).map_err(anyhow::Error::msg)?;
            Ok(super::probe(&SysRoot::live()))
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// Tag a side's document.
fn tag(doc: &mut RunDocument, ab: &str, side: &str, settings: &Settings) {
    doc.tags.insert(TAG.into(), ab.into());
    doc.tags.insert(SIDE_TAG.into(), side.into());
    doc.tags.insert(SETTINGS_TAG.into(), settings.to_string());
}

impl Measurement for Ab {
    fn suites(&self) -> Vec<String> {
        self.run.suites()
    }

    fn holder(&self) -> String {
        format!(
            "truebench ab {} {}",
            self.sides[1],
            self.run.names.join(",")
        )
    }

    fn check(&mut self, env: &ProbeDoc) -> anyhow::Result<()> {
        setting::check(
            [&self.sides[0], &self.sides[1]],
            env,
            &setting::Host::live(),
        )
        .map_err(usage)?;
        self.run.check(env)
    }

    fn start(&mut self) -> anyhow::Result<()> {
        self.run.start()
    }

    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()> {
        let seed = crate::measure::clocks::now_ns() ^ u64::from(std::process::id());
        let mut sides = Sides::new(
            self.sides[0].clone(),
            self.sides[1].clone(),
            m.env.cpus.usable_mems.clone(),
            seed,
        )
        .map_err(anyhow::Error::msg)?;
        // Each side's machine as its rows were measured on it.
        let env_b = probe_under(&mut sides, 1)?;
        if !self.sides[0].0.is_empty() {
            let env_a = probe_under(&mut sides, 0)?;
            m.doc.findings = env_a.findings.clone();
            m.doc.env = env_a;
        }
        let started = chrono::Utc::now();
        let mut b = RunDocument {
            tags: m.doc.tags.clone(),
            scheduled_start: m.doc.scheduled_start.clone(),
            ..super::document(&started, &env_b, self.run.suites())?
        };
        let measured = self.run.measure_sides(m, Some((&mut sides, &env_b)));
        // The host back as found (knobs, cgroups, affinity) before anything else.
        drop(sides);
        let side_b = match measured {
            Ok(s) => s,
            Err(e) if e.downcast_ref::<crate::error::Interrupted>().is_some() => {
                m.interrupted = true;
                Default::default()
            }
            Err(e) => return Err(e),
        };
        for (mut r, _) in side_b.rows {
            r.placement.set_pinned_kinds(&env_b.topology.cpu_kinds);
            b.results.push(r);
        }
        b.skipped = side_b.skipped;
        b.suite_costs = m.doc.suite_costs.clone();
        self.run.finish_doc(&mut b, &env_b);
        b.findings
            .extend(crate::findings::results::disturbed_rounds(&b.results));
        b.interrupted = m.interrupted || crate::interrupt::requested();
        b.finished_at = Some(super::timestamp(&chrono::Utc::now()));
        let id = m.doc.run_id.clone();
        tag(&mut m.doc, &id, "a", &self.sides[0]);
        tag(&mut b, &id, "b", &self.sides[1]);
        self.b = Some(b);
        Ok(())
    }

    fn companions(&mut self) -> Vec<RunDocument> {
        self.b.iter().cloned().collect()
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        let Some(b) = &self.b else {
            return Ok(());
        };
        let c = crate::compare::compare_at(
            doc,
            b,
            &crate::compare::stats::verdict::History::default(),
            self.fdr,
        );
        if self.run.json {
            super::print_json(&c)?;
        } else {
            crate::stdout::write(&crate::report::compare_table::render(&c, self.verbose))?;
        }
        if let Some(db) = stored {
            eprintln!(
                "truebench: stored A ({}) as run {} and B ({}) as run {} in {}; `truebench compare {} {}` shows this again",
                self.sides[0],
                doc.run_id,
                self.sides[1],
                b.run_id,
                db.display(),
                doc.run_id,
                b.run_id
            );
        }
        Ok(())
    }
}
