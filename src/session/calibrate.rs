//! `truebench calibrate`: the suites run K times, each time as an ordinary run of its own
//! through the session (probe, lock, progress on stderr, stored at once), with its
//! benchmarks in a new shuffled order (so no benchmark always follows the same one) and
//! tagged `calibration=<id>`. Ctrl-C keeps the runs finished so far. Then, per row, the
//! between-run spread of the runs' medians and the minimum detectable effect it gives a
//! later `compare` of one run each on this host; `compare` finds these runs in the store.

use super::suites::SuiteRun;
use super::{Measurement, Measuring};
use crate::bench::Benchmark;
use crate::compare::stats::noise_model::{self, RowNoise, CALIBRATION_TAG};
use crate::error::Interrupted;
use crate::probe::ProbeDoc;
use crate::result::RunDocument;
use crate::store::Location;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

pub const SCHEMA: &str = "truebench.calibration/1";

/// One calibration run: a suite run that prints one line instead of its tables and keeps
/// its document for the calibration's table.
struct CalibrationRun {
    run: SuiteRun,
    index: usize,
    of: usize,
    /// The document once stored (printing is where the session hands it over).
    done: std::cell::RefCell<Option<RunDocument>>,
}

impl Measurement for CalibrationRun {
    fn suites(&self) -> Vec<String> {
        self.run.suites()
    }

    fn holder(&self) -> String {
        format!(
            "truebench calibrate {} (run {} of {})",
            self.run.names.join(","),
            self.index + 1,
            self.of
        )
    }

    fn check(&mut self, env: &ProbeDoc) -> anyhow::Result<()> {
        self.run.check(env)
    }

    fn measure(&mut self, m: &mut Measuring) -> anyhow::Result<()> {
        // Said once the first run has its lock and database: a refused calibration is one
        // `error:` line.
        if self.index == 0 {
            eprintln!(
                "truebench: calibrating {} with {} (each stored as a run tagged {CALIBRATION_TAG}=...)",
                self.run.names.join(","),
                crate::units::count(self.of, "run")
            );
        }
        self.run.measure(m)
    }

    fn print(&self, doc: &RunDocument, stored: Option<&Location>) -> anyhow::Result<()> {
        *self.done.borrow_mut() = Some(doc.clone());
        eprintln!(
            "truebench: calibration run {} of {}: {}{}{}",
            self.index + 1,
            self.of,
            crate::units::count(doc.results.len(), "result"),
            if doc.interrupted {
                " (interrupted)"
            } else {
                ""
            },
            stored
                .map(|l| format!(", stored as {} in {}", doc.run_id, l.display()))
                .unwrap_or_default()
        );
        Ok(())
    }
}

/// One row of a calibration: the between-run spread of its medians and the MDE it gives.
#[derive(Debug, Clone, Serialize)]
pub struct CalibratedRow {
    pub benchmark: String,
    pub params: String,
    pub placement: String,
    pub unit: String,
    /// The median of the runs' medians.
    pub median: f64,
    /// Runs that measured it.
    pub runs: usize,
    /// Standard deviation of the runs' log medians (0.02 = about 2%); null with fewer than
    /// 3 runs.
    pub sigma: Option<f64>,
    /// The smallest B/A difference a compare of one run each can detect on this host
    /// (two-sided α 0.05, power 0.8); null with fewer than 3 runs.
    pub mde: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub schema: &'static str,
    pub id: String,
    pub host: Option<String>,
    pub runs: Vec<String>,
    pub interrupted: bool,
    /// The runs asked for.
    pub asked: usize,
    /// Whether it is whole (every run asked for, none interrupted): only then may
    /// `compare` use it (`crate::store::calibration`).
    pub whole: bool,
    /// The calibration `compare` uses for this host now (this one, an older whole one,
    /// or none); absent when the store could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare_uses: Option<InUse>,
    pub rows: Vec<CalibratedRow>,
}

/// What `compare` uses for the host after this calibration.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InUse {
    /// The calibration's id; null: none (each run's rounds, and the host's history).
    pub id: Option<String>,
}

/// The calibration `id` of `docs` (of `asked` runs): per row (in the first run's order),
/// spread and MDE.
pub fn summarise(id: &str, docs: &[RunDocument], asked: usize) -> Calibration {
    let mut rows: Vec<CalibratedRow> = vec![];
    let mut seen = std::collections::BTreeSet::new();
    for r in docs.iter().flat_map(|d| &d.results) {
        if !seen.insert(crate::compare::matching::label(r)) {
            continue;
        }
        let key = crate::compare::matching::label(r);
        let mut medians: Vec<f64> = docs
            .iter()
            .filter_map(|d| {
                d.results
                    .iter()
                    .find(|x| crate::compare::matching::label(x) == key)
            })
            .map(|x| x.stats.median)
            .collect();
        let sigma = noise_model::log_sd(&medians);
        let mde = sigma.and_then(|s| {
            let noise = RowNoise {
                basis: noise_model::Basis::Calibration,
                sigma: Some(s.max(noise_model::MIN_SIGMA)),
                runs: medians.len(),
                source: String::new(),
                run: None,
            };
            noise.mde_one_run_each()
        });
        medians.sort_by(|a, b| a.total_cmp(b));
        rows.push(CalibratedRow {
            benchmark: r.benchmark.clone(),
            params: r.params_text(),
            placement: r.placement.name.clone(),
            unit: r.unit.clone(),
            median: medians[medians.len() / 2],
            runs: medians.len(),
            sigma,
            mde,
        });
    }
    Calibration {
        schema: SCHEMA,
        id: id.to_string(),
        host: docs.first().and_then(|d| d.host.clone()),
        runs: docs.iter().map(|d| d.run_id.clone()).collect(),
        interrupted: docs.iter().any(|d| d.interrupted),
        asked,
        whole: docs.len() >= asked.max(noise_model::MIN_RUNS)
            && !docs.iter().any(|d| d.interrupted),
        compare_uses: None,
        rows,
    }
}

/// An MDE (relative) from which a row is said to tell nothing: a factor of 10.
const UNTELLABLE: f64 = 9.0;

/// The calibration as text: one line per row, the sentence a user acts on.
pub fn render(c: &Calibration) -> String {
    let mut s = format!(
        "Calibration {} of host {}: {} ({}).\n",
        c.id,
        c.host.as_deref().unwrap_or("?"),
        crate::units::count(c.runs.len(), "run"),
        c.runs.join(", ")
    );
    for r in &c.rows {
        let what = format!(
            "{} [{}] {}",
            r.benchmark.split('@').next().unwrap_or(&r.benchmark),
            r.placement,
            r.params
        );
        match (r.sigma, r.mde) {
            // Runs that disagree by several times: no comparison of this row means anything.
            (Some(sd), Some(mde)) if mde >= UNTELLABLE => s.push_str(&format!(
                "  {what}: spread {:.1}% between {} runs (median {} {}); its runs disagree so much that no difference can be told here (only one beyond {} would be)\n",
                sd * 100.0,
                r.runs,
                crate::units::num(r.median),
                r.unit,
                noise_model::mde_text(mde)
            )),
            (Some(sd), Some(mde)) => s.push_str(&format!(
                "  {what}: spread {:.1}% between {} runs (median {} {}); differences below {} cannot be told from noise here\n",
                sd * 100.0,
                r.runs,
                crate::units::num(r.median),
                r.unit,
                noise_model::mde_text(mde)
            )),
            _ => s.push_str(&format!(
                "  {what}: measured in {}, fewer than {}: no spread\n",
                crate::units::count(r.runs, "run"),
                noise_model::MIN_RUNS
            )),
        }
    }
    let host = c.host.as_deref().unwrap_or("?");
    if !c.whole {
        s.push_str(&format!(
            "This calibration is not whole ({} of {}{}): `truebench compare` does not use it.\n",
            c.runs.len(),
            crate::units::count(c.asked, "run"),
            if c.interrupted { ", interrupted" } else { "" }
        ));
    }
    match (&c.compare_uses, c.whole) {
        (Some(InUse { id: Some(id) }), _) if *id == c.id => s.push_str(&format!(
            "`truebench compare` now uses this calibration for runs of host {host}.\n"
        )),
        (Some(InUse { id: Some(id) }), _) => s.push_str(&format!(
            "`truebench compare` uses calibration {id} for runs of host {host}, the newest whole one.\n"
        )),
        (Some(InUse { id: None }), _) => s.push_str(&format!(
            "`truebench compare` uses no calibration for runs of host {host}: each run's rounds and the host's history.\n"
        )),
        (None, true) => s.push_str(&format!(
            "`truebench compare` uses this calibration for runs of host {host} once they are stored.\n"
        )),
        (None, false) => {}
    }
    s
}

/// The calibration `compare` uses now for `host`, from the store at `db`; None when it
/// cannot be read.
fn in_use(db: Option<&Location>, host: &str) -> Option<InUse> {
    let path = crate::store::default_path(db).ok()?;
    let store = crate::store::Store::open_ro(&path).ok()??;
    let list = store.list(crate::store::calibration::SCAN).ok()?;
    let (chosen, _) = crate::store::calibration::choose(&list, host, chrono::Utc::now());
    Some(InUse {
        id: chosen.map(|f| f.id),
    })
}

/// Shuffle a run's benchmarks, then move each one that feeds its suite (the memory latency
/// sweep, whose measured LLC sizes the bandwidth arrays) ahead of the first benchmark of its
/// suite, so a calibration run measures what an ordinary run does.
fn shuffle(benches: &mut Vec<&'static dyn Benchmark>, rng: &mut impl rand::Rng) {
    benches.shuffle(rng);
    for i in 0..benches.len() {
        if !benches[i].feeds_its_suite() {
            continue;
        }
        let suite = benches[i].suite();
        if let Some(first) = benches[..i].iter().position(|b| b.suite() == suite) {
            let b = benches.remove(i);
            benches.insert(first, b);
        }
    }
}

/// Run the calibration: `runs` suite runs built by `make` (one per run), shuffled, tagged.
pub fn calibrate(
    make: &dyn Fn() -> SuiteRun,
    runs: usize,
    json: bool,
    db: Option<&Location>,
    common: &super::Common,
) -> anyhow::Result<()> {
    let started = chrono::Utc::now();
    let id = super::run_id(&started);
    let seed = started.timestamp_nanos_opt().unwrap_or_default() as u64 ^ std::process::id() as u64;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut done: Vec<RunDocument> = vec![];
    let mut interrupted = false;
    for i in 0..runs {
        let mut run = make();
        shuffle(&mut run.benches, &mut rng);
        let mut tags = common.tags.clone();
        tags.insert(CALIBRATION_TAG.into(), id.clone());
        tags.insert(crate::store::calibration::RUNS_TAG.into(), runs.to_string());
        let common_i = super::Common {
            // Only the first run waits for --start-at.
            start_at: if i == 0 { common.start_at } else { None },
            tags,
        };
        let mut m = CalibrationRun {
            run,
            index: i,
            of: runs,
            done: Default::default(),
        };
        let outcome = super::run_with(&mut m, db, &common_i);
        done.extend(m.done.into_inner());
        match outcome {
            Ok(()) => {}
            Err(e) if e.downcast_ref::<Interrupted>().is_some() => {
                interrupted = true;
                break;
            }
            Err(e) => {
                if done.is_empty() {
                    return Err(e);
                }
                eprintln!(
                    "truebench: calibration run {} failed ({}); the {} finished runs are kept",
                    i + 1,
                    crate::error::one_line(&e),
                    done.len()
                );
                break;
            }
        }
    }
    let mut c = summarise(&id, &done, runs);
    if let Some(host) = c.host.clone() {
        c.compare_uses = in_use(db, &host);
    }
    if json {
        super::print_json(&c)?;
    } else {
        crate::stdout::write(&render(&c))?;
    }
    if interrupted {
        return Err(Interrupted.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testing;
    use serde_json::json;

    fn run(id: &str, medians: &[f64]) -> RunDocument {
        let results = medians
            .iter()
            .enumerate()
            .map(|(i, m)| {
                testing::result(
                    "memory.latency@1",
                    "cpus",
                    Some(vec![0]),
                    json!({"size_bytes": 1 << (20 + i), "pages": "4k"}),
                    *m,
                )
            })
            .collect();
        let mut d = testing::run(id, results, testing::env());
        d.run_id = id.into();
        d
    }

    #[test]
    fn the_shuffle_keeps_the_latency_sweep_ahead_of_the_bandwidth_arrays_it_sizes() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for _ in 0..200 {
            let mut benches: Vec<&'static dyn Benchmark> = crate::bench::REGISTRY.to_vec();
            shuffle(&mut benches, &mut rng);
            assert_eq!(benches.len(), crate::bench::REGISTRY.len());
            let at = |id: &str| benches.iter().position(|b| b.id().starts_with(id)).unwrap();
            assert!(at("memory.latency") < at("memory.bandwidth"));
            assert!(at("memory.latency") < at("memory.numa"));
        }
        // Without a benchmark that feeds its suite, the order is the shuffle's alone: over
        // many shuffles each benchmark is seen first.
        let mut first = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let mut benches: Vec<&'static dyn Benchmark> = crate::bench::REGISTRY
                .iter()
                .copied()
                .filter(|b| b.suite() != "memory")
                .collect();
            shuffle(&mut benches, &mut rng);
            first.insert(benches[0].id());
        }
        assert!(first.len() > 5, "{first:?}");
    }

    #[test]
    fn each_row_gets_its_spread_and_mde_and_a_row_of_two_runs_none() {
        let docs = vec![
            run("r1", &[10.0, 100.0]),
            run("r2", &[10.1, 140.0]),
            run("r3", &[9.9, 90.0]),
            run("r4", &[10.0]),
        ];
        let c = summarise("cal", &docs, 3);
        assert_eq!(c.rows.len(), 2);
        let (quiet, loud) = (&c.rows[0], &c.rows[1]);
        assert_eq!((quiet.runs, loud.runs), (4, 3));
        assert!(quiet.mde.unwrap() < loud.mde.unwrap());
        assert!(loud.sigma.unwrap() > 0.2, "{loud:?}");
        let text = render(&c);
        assert!(
            text.contains("cannot be told from noise here") && text.contains("pages=4k"),
            "{text}"
        );
        let short = summarise("cal", &docs[..2], 3);
        assert!(short.rows.iter().all(|r| r.mde.is_none()));
        assert!(render(&short).contains("no spread"));
        // Two of three runs: not whole, and said so instead of "now uses".
        assert!(!short.whole && summarise("cal", &docs, 3).whole);
        let said = render(&short);
        assert!(
            said.contains("not whole (2 of 3 runs)") && said.contains("does not use it"),
            "{said}"
        );
        assert!(!said.contains("now uses"), "{said}");
    }

    #[test]
    fn a_row_whose_runs_disagree_by_several_times_is_said_to_tell_nothing() {
        // The LLC-edge latency rows on a VM whose usable cache moves between runs.
        let docs = vec![
            run("r1", &[10.0, 20.0]),
            run("r2", &[10.1, 190.0]),
            run("r3", &[9.9, 35.0]),
        ];
        let text = render(&summarise("cal", &docs, 3));
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("spread")).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].contains("cannot be told from noise here"),
            "{text}"
        );
        assert!(!lines[0].contains("no difference can be told"), "{text}");
        assert!(
            lines[1].contains("no difference can be told here"),
            "{text}"
        );
    }
}
