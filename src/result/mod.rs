//! The versioned result document (`truebench.result/1`): one per run, with the probe
//! document, every result's raw samples, statistics, unit, placement, quality and findings.
//! Its JSON schema lives in docs/result.schema.json; `validate` checks a document against
//! that schema and against its own content (statistics recomputed from the samples).
//!
//! Every part is a type that serializes and deserializes: the probe document, params,
//! observed placement, the recording, the classic indexes and the load-step experiment.
//! Documents written by earlier versions load (tests/fixtures/documents).

pub mod batch;
pub mod digits;
pub mod experiment;
pub mod figures;
pub mod indexes;
pub mod kept;
pub mod observed;
pub mod params;
pub mod recording;
pub mod rounds;
pub mod speed;
pub mod start;
pub mod suite_cost;
pub mod tags;
pub mod times;

pub use experiment::Experiment;
pub use indexes::{PlacementRange, SuiteIndexes};
pub use observed::Observed;
pub use params::{ParamValue, Params};
pub use recording::Recording;
pub use speed::{CanaryReading, CpuSpeed, PairCanaryReading, SpeedPoint, SpeedSample};
pub use start::{ClockSync, ScheduledStart};

use crate::finding::Finding;
use crate::measure::stats::Stats;
use crate::probe::ProbeDoc;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub const SCHEMA: &str = "truebench.result/1";
const SCHEMA_JSON: &str = include_str!("../../docs/result.schema.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// The git commit the binary was built from, or "unknown".
    pub commit: String,
}

impl Tool {
    pub fn current() -> Tool {
        Tool {
            name: "truebench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            commit: option_env!("TRUEBENCH_GIT_COMMIT")
                .unwrap_or("unknown")
                .into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// `os` (not pinned), a named placement, or `cpus` for an explicit list.
    pub name: String,
    /// The CPUs the tasks were pinned to; null when not pinned.
    pub cpus: Option<Vec<u32>>,
    /// What was seen while it ran (CPUs used, migrations, switches); null when not observed.
    pub observed: Option<Observed>,
    /// On a hybrid machine, the kind of each CPU the result was pinned to (kind -> CPUs);
    /// absent elsewhere, and on unpinned results (their `observed.cpu_kinds` says where
    /// they ran, when it was watched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_kinds: Option<BTreeMap<String, Vec<u32>>>,
}

impl Placement {
    /// Name the kind of each pinned CPU (hybrid machines; nothing on machines of one kind
    /// or for unpinned results).
    pub fn set_pinned_kinds(&mut self, kinds: &[crate::probe::kinds::CpuKind]) {
        let Some(cpus) = &self.cpus else {
            return;
        };
        if kinds.is_empty() {
            return;
        }
        let mut named: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for c in cpus {
            let kind = crate::probe::kinds::kind_of(kinds, *c).unwrap_or("unknown");
            let v = named.entry(kind.to_string()).or_default();
            if !v.contains(c) {
                v.push(*c);
            }
        }
        self.cpu_kinds = Some(named);
    }
}

impl Quality {
    /// The quality of a result timed as `batches` with a clock costing `clock_cost_ns` a read.
    pub fn of(clock_cost_ns: f64, batches: &[crate::measure::batch::Batch]) -> Quality {
        let n = batches.len().max(1) as f64;
        // Written to the digits they mean (`digits::SHARE`).
        let d = digits::Digits::Significant(digits::SHARE);
        Quality {
            timer_share: d.round(crate::measure::batch::timer_share(clock_cost_ns, batches)),
            clock_cost_ns: d.round(clock_cost_ns),
            batch_iterations: batches.first().map(|b| b.iterations).unwrap_or(0),
            batch_ns: d.round(batches.iter().map(|b| b.elapsed_ns as f64).sum::<f64>() / n),
            pages_per_round: false,
        }
    }
}

impl Placement {
    /// Not pinned: the scheduler placed the tasks (`os`), nothing observed.
    pub fn os() -> Placement {
        Placement {
            cpu_kinds: None,
            name: "os".into(),
            cpus: None,
            observed: None,
        }
    }

    /// Pinned to `cpus` under the placement's `name`, nothing observed.
    pub fn on(name: impl Into<String>, cpus: Vec<u32>) -> Placement {
        Placement {
            cpu_kinds: None,
            name: name.into(),
            cpus: Some(cpus),
            observed: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    /// Measured clock-read cost x clock reads / measured time (0..1).
    pub timer_share: f64,
    /// Cost of one read of the timing clock, ns.
    pub clock_cost_ns: f64,
    /// Iterations per timed batch.
    pub batch_iterations: u64,
    /// Mean duration of a timed batch, ns.
    pub batch_ns: f64,
    /// Every round the figures rest on drew its memory's physical pages afresh (a touched
    /// spacer of random size held while it mapped: `bench::memory::region::Spacer`), so the
    /// spread between rounds holds what those pages cost and a memory row's run level is
    /// estimated from it (`noise_model::run_sigma`). False in earlier documents and where
    /// the memory left no room for a spacer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pages_per_round: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// `family.name@version`.
    pub benchmark: String,
    pub params: Params,
    pub placement: Placement,
    /// The unit of every sample and statistic, with its counting rule (`ns/read`).
    pub unit: String,
    /// Whether a lower value is better (latency) or a higher one (throughput).
    pub lower_is_better: bool,
    pub samples: Vec<f64>,
    pub stats: Stats,
    pub quality: Quality,
    pub findings: Vec<Finding>,
    /// Figures derived from the median, each key naming its unit (`round_trips_per_s`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub derived: BTreeMap<String, f64>,
    /// The rounds the samples were drawn in, and the row's own noise from them; absent
    /// from results measured in one piece (documents of earlier versions, `calibrate`'s
    /// reference runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<rounds::Rounds>,
}

impl BenchResult {
    /// A result from its raw samples, each to `digits::SAMPLE` significant digits: the
    /// statistics are computed here from them, so they always match the samples as
    /// written. None when there is no usable sample.
    pub fn new(
        benchmark: &str,
        params: Params,
        placement: Placement,
        unit: &str,
        lower_is_better: bool,
        samples: Vec<f64>,
        quality: Quality,
    ) -> Option<BenchResult> {
        let digits = digits::Digits::Significant(digits::SAMPLE);
        let samples: Vec<f64> = samples.into_iter().map(|x| digits.round(x)).collect();
        Some(BenchResult {
            benchmark: benchmark.into(),
            params,
            placement,
            unit: unit.into(),
            lower_is_better,
            stats: Stats::of(&samples)?,
            samples,
            quality,
            findings: vec![],
            derived: BTreeMap::new(),
            rounds: None,
        })
    }

    /// The params as `k=v,k=v` (strings unquoted).
    pub fn params_text(&self) -> String {
        self.params.text()
    }

    /// The row as a person reads it: `benchmark [placement] k=v,k=v`.
    pub fn label(&self) -> String {
        format!(
            "{} [{}] {}",
            self.benchmark,
            self.placement.name,
            self.params_text()
        )
    }

    /// The key that identifies "the same measurement" across runs: benchmark, placement, params.
    pub fn key(&self) -> String {
        format!(
            "{} [{}] {}",
            self.benchmark,
            self.placement.name,
            serde_json::to_string(&self.params).unwrap_or_default()
        )
    }

    /// The row's own run noise from its rounds (standard error of ln median, its degrees
    /// of freedom); None for a result measured in one piece or with fewer than two kept
    /// rounds.
    pub fn run_noise(&self) -> Option<&rounds::RoundNoise> {
        self.rounds.as_ref().and_then(|r| r.noise.as_ref())
    }

    /// `family.name` without the version.
    pub fn base_id(&self) -> &str {
        self.benchmark.split('@').next().unwrap_or(&self.benchmark)
    }

    /// The distinct CPUs the row was pinned to, ascending; empty when it was not pinned.
    pub fn pinned_cpus(&self) -> Vec<u32> {
        let mut c = self.placement.cpus.clone().unwrap_or_default();
        c.sort_unstable();
        c.dedup();
        c
    }
}

/// A case a benchmark could not run here, with the reason (never silently dropped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    pub benchmark: String,
    /// The placement or test that was skipped.
    pub case: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunDocument {
    pub schema: String,
    pub run_id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub host: Option<String>,
    pub suites: Vec<String>,
    /// True when Ctrl-C stopped the run: the results are the ones finished before it.
    pub interrupted: bool,
    pub tool: Tool,
    /// The probe document (`truebench.probe/1`) of the machine the run measured.
    pub env: ProbeDoc,
    pub findings: Vec<Finding>,
    pub results: Vec<BenchResult>,
    /// Cases not run here, each with its reason.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// A `truebench record` recording: rows per interval, summary, unavailable metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<Recording>,
    /// The classic suite's indexes: `"1"` and `"N"` (and any other copy count) → the
    /// geometric mean of the tests' indexes; `unixbench_style` the same from UnixBench's
    /// pass combination; `n` and `n_basis`; `partial` when a test did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexes: Option<SuiteIndexes>,
    /// A `truebench loadstep` experiment: its plan, per variant the steps, knee and fits,
    /// the scaling curve and the comparison of variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadstep: Option<Experiment>,
    /// A `truebench experiment`: a batch command under each policy variant, its runs,
    /// medians and the winner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<batch::BatchExperiment>,
    /// The user's labels (`--tag KEY=VALUE`), e.g. inventory name and groups in a fleet.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// The effective CPU speed sampled at the start and end of each suite; absent in runs
    /// that did not measure it (documents of earlier versions, record, import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_speed: Option<CpuSpeed>,
    /// When `--start-at` scheduled the run: the requested and the actual start and the
    /// clock's synchronisation; absent in runs started at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_start: Option<ScheduledStart>,
    /// Per suite run, its wall time and the process's peak RSS (`run`); empty in other
    /// commands' runs and in documents of earlier versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suite_costs: Vec<suite_cost::SuiteCost>,
}

impl RunDocument {
    /// A short line for `history`: the first result's median with its unit.
    pub fn headline(&self) -> String {
        match self.results.first() {
            Some(r) => {
                format!(
                    "{} {} {} {}",
                    r.benchmark,
                    r.params_text(),
                    crate::units::num(r.stats.median),
                    r.unit
                )
            }
            None => "no results".into(),
        }
    }
}

/// The schema document (docs/result.schema.json).
pub fn schema_value() -> Value {
    serde_json::from_str(SCHEMA_JSON).expect("docs/result.schema.json is valid JSON")
}

/// The probe part of the schema, as a schema of its own.
pub fn probe_schema_value() -> Value {
    let mut s = schema_value();
    let defs = s["$defs"].take();
    serde_json::json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "$ref": "#/$defs/probe"})
}

/// The compiled schema of a whole document, built once per process: compiling takes far
/// longer than checking one document (`import` of many files).
fn document_validator() -> &'static jsonschema::Validator {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    V.get_or_init(|| compile(schema_value()))
}

/// The compiled schema of the probe part, built once per process (only when a probe
/// document is checked: `import` does not pay for it).
fn probe_validator() -> &'static jsonschema::Validator {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    V.get_or_init(|| compile(probe_schema_value()))
}

fn compile(schema: Value) -> jsonschema::Validator {
    jsonschema::validator_for(&schema).expect("the embedded schema compiles")
}

fn schema_errors(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .take(5)
        .map(|e| format!("{} at '{}'", e, e.instance_path))
        .collect()
}

/// Check a probe document against the schema.
pub fn validate_probe(doc: &Value) -> Result<(), String> {
    let errs = schema_errors(probe_validator(), doc);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("; "))
    }
}

/// The largest run document `import` reads (a stored run is a few hundred KiB).
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;
/// The most results one run document may hold (the largest suite makes a few hundred; a
/// fleet's bulk import of a hostile host's document stays bounded): more is refused.
pub const MAX_RESULTS: usize = 100_000;

/// The longest text (string or key) one document may hold: a kernel command line, a
/// recorded command or a finding's evidence is a few KiB; a longer one (a 60 MB host name)
/// made `history` lay out its table for minutes.
pub const MAX_TEXT: usize = 1 << 20;

/// The first string or object key in `v` longer than `limit` characters: its JSON
/// pointer (built only on the way back from it) and its length.
fn text_over(v: &Value, limit: usize) -> Option<(String, usize)> {
    // A text of at most `limit` bytes has at most `limit` characters: only a longer one is
    // counted (counting every string's characters was 2.5% of an import's CPU).
    let over = |s: &str| {
        (s.len() > limit)
            .then(|| s.chars().count())
            .filter(|n| *n > limit)
    };
    match v {
        Value::String(s) => over(s).map(|n| (String::new(), n)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| text_over(x, limit).map(|(p, n)| (format!("/{i}{p}"), n))),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            over(k)
                .map(|n| (format!("/{}", k.chars().take(40).collect::<String>()), n))
                .or_else(|| text_over(x, limit).map(|(p, n)| (format!("/{k}{p}"), n)))
        }),
        _ => None,
    }
}

/// Check a JSON value as a result document: its schema, then its content. Returns the
/// typed document or the reasons it is refused. Linear in the number of results (each
/// check is a pass over them, duplicates found by hashing).
pub fn validate(doc: &Value) -> Result<RunDocument, String> {
    validate_kept(doc).map(|(run, _)| run)
}

/// [`validate`], and the keys of `doc` its types do not hold (not stored: `kept::Lost`).
pub fn validate_kept(doc: &Value) -> Result<(RunDocument, kept::Lost), String> {
    match doc.get("schema").and_then(Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) => return Err(format!("schema is '{other}', expected '{SCHEMA}'")),
        None => return Err(format!("no 'schema' key: not a {SCHEMA} document")),
    }
    if let Some((path, n)) = text_over(doc, MAX_TEXT) {
        return Err(format!(
            "a text of {n} characters at '{path}', more than the {MAX_TEXT} any document \
             truebench writes holds"
        ));
    }
    if let Some(n) = doc["results"].as_array().map(Vec::len) {
        if n > MAX_RESULTS {
            return Err(format!(
                "{n} results, more than the {MAX_RESULTS} one document may hold"
            ));
        }
    }
    let errs = schema_errors(document_validator(), doc);
    if !errs.is_empty() {
        return Err(format!("does not match {SCHEMA}: {}", errs.join("; ")));
    }
    let run = RunDocument::deserialize(doc).map_err(|e| format!("unreadable content: {e}"))?;
    let back = serde_json::to_value(&run).map_err(|e| format!("unreadable content: {e}"))?;
    let lost = kept::lost(doc, &back);
    if let Some((path, n)) = &lost.unfit {
        return Err(format!(
            "{n} at '{path}' does not fit its field (stored, it would read back as null)"
        ));
    }
    // Each result's (benchmark, params, placement) as canonical JSON -> its first index.
    let mut seen: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(run.results.len());
    for (i, r) in run.results.iter().enumerate() {
        let key = serde_json::to_string(&(&r.benchmark, &r.params, &r.placement))
            .map_err(|e| format!("results[{i}]: {e}"))?;
        if let Some(&j) = seen.get(&key) {
            return Err(format!(
                "results[{i}] ({}) repeats results[{j}]: the same benchmark, params and \
                 placement twice (compare would match one of them and drop the other)",
                r.benchmark
            ));
        }
        seen.insert(key, i);
        let Some(s) = Stats::of(&r.samples) else {
            return Err(format!("results[{i}] ({}): no usable samples", r.benchmark));
        };
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12);
        let recorded = &r.stats;
        // Every statistic, not only the stable ones: views and exports print the mean, the
        // spread and the extremes as recorded.
        let differs = [
            ("n", recorded.n as f64, s.n as f64),
            ("median", recorded.median, s.median),
            ("ci95_low", recorded.ci95_low, s.ci95_low),
            ("ci95_high", recorded.ci95_high, s.ci95_high),
            ("ci_level", recorded.ci_level, s.ci_level),
            ("cv", recorded.cv, s.cv),
            ("mean", recorded.mean, s.mean),
            ("min", recorded.min, s.min),
            ("max", recorded.max, s.max),
            ("outliers", recorded.outliers as f64, s.outliers as f64),
        ]
        .into_iter()
        .find(|&(_, a, b)| !close(a, b));
        if let Some((name, a, b)) = differs {
            return Err(format!(
                "results[{i}] ({}): stats do not match the samples ({name} {a} recorded, \
                 {b} recomputed from the {})",
                r.benchmark,
                crate::units::count(s.n, "sample")
            ));
        }

        if let Some(why) = r.rounds.as_ref().and_then(|ro| ro.check(&r.samples).err()) {
            return Err(format!("results[{i}] ({}): {why}", r.benchmark));
        }
    }
    if let Some(why) = run.loadstep.as_ref().and_then(experiment::check) {
        return Err(why);
    }
    Ok((run, lost))
}

/// Builders of synthetic results and runs for unit tests.
#[cfg(test)]
pub mod testing {
    use super::*;

    /// A result of `bench` at `placement` whose samples spread ±4.5 around `median`.
    pub fn result(
        bench: &str,
        placement: &str,
        cpus: Option<Vec<u32>>,
        params: Value,
        median: f64,
    ) -> BenchResult {
        let params: Params = serde_json::from_value(params).unwrap_or_default();
        let q = Quality {
            timer_share: 0.0,
            clock_cost_ns: 20.0,
            batch_iterations: 1,
            batch_ns: 1e7,
            pages_per_round: false,
        };
        let samples: Vec<f64> = (0..10).map(|i| median + i as f64 - 4.5).collect();
        let p = Placement {
            cpu_kinds: None,
            name: placement.into(),
            cpus,
            observed: None,
        };
        BenchResult::new(bench, params, p, "ns", true, samples, q).unwrap()
    }

    /// A speed sample of `ghz` adds per ns on `cpu` (of `kind`), over 2 ms.
    pub fn speed_sample(
        suite: &str,
        point: SpeedPoint,
        cpu: u32,
        kind: Option<&str>,
        ghz: f64,
    ) -> SpeedSample {
        SpeedSample {
            suite: suite.into(),
            point,
            cpu,
            cpu_kind: kind.map(Into::into),
            cycles_per_ns: ghz,
            elapsed_ns: 2e6,
        }
    }

    /// The probe of this project's own VM fixture, as a run's environment.
    pub fn env() -> ProbeDoc {
        crate::probe::fixture("this-vm")
    }

    /// A run holding `results`, measured on a machine described by `env`.
    pub fn run(id: &str, results: Vec<BenchResult>, env: ProbeDoc) -> RunDocument {
        RunDocument {
            schema: SCHEMA.into(),
            run_id: id.into(),
            started_at: "2026-11-22T00:00:00Z".into(),
            finished_at: None,
            host: None,
            suites: vec![],
            interrupted: false,
            tool: Tool::current(),
            env,
            findings: vec![],
            results,
            skipped: vec![],
            recording: None,
            indexes: None,
            loadstep: None,
            experiment: None,
            tags: BTreeMap::new(),
            cpu_speed: None,
            scheduled_start: None,
            suite_costs: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/documents")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn fields_added_after_a_kind_of_run_first_shipped_may_be_absent() {
        let mut rec = fixture("record.json");
        let r = rec["recording"].as_object_mut().unwrap();
        r.remove("last_short_interval_dropped");
        r.remove("counter_notes");
        for row in r["rows"].as_array_mut().unwrap() {
            row["target"]
                .as_object_mut()
                .unwrap()
                .remove("events_per_s");
        }
        let doc: RunDocument = serde_json::from_value(rec).unwrap();
        let rec = doc.recording.unwrap();
        assert!(!rec.last_short_interval_dropped);
        assert!(rec.rows[0].target.as_ref().unwrap().events_per_s.is_empty());

        let mut ls = fixture("loadstep.json");
        let strip = |steps: &mut Value| {
            for s in steps.as_array_mut().unwrap() {
                let s = s.as_object_mut().unwrap();
                for gone in ["failed", "reconnects", "interval_points", "first_failure"] {
                    s.remove(gone);
                }
            }
        };
        for v in ls["loadstep"]["variants"].as_array_mut().unwrap() {
            strip(&mut v["steps"]);
        }
        strip(&mut ls["loadstep"]["steps"]);
        let doc: RunDocument = serde_json::from_value(ls).unwrap();
        let ex = doc.loadstep.unwrap();
        assert_eq!(ex.single.unwrap().steps[0].failed, 0);
    }

    #[test]
    fn pinned_results_name_the_kind_of_each_cpu_on_hybrid_machines_only() {
        let h = crate::probe::fixture("hybrid-laptop");
        let k = &h.topology.cpu_kinds;
        let (core, atom) = (k[0].cpus[0], k[1].cpus[0]);
        let mut p = testing::result(
            "c2c.cacheline@1",
            "cross-llc",
            Some(vec![core, atom]),
            Value::Null,
            1.0,
        )
        .placement;
        p.set_pinned_kinds(k);
        let kinds = p.cpu_kinds.clone().unwrap();
        assert_eq!(kinds[&k[0].kind], vec![core]);
        assert_eq!(kinds[&k[1].kind], vec![atom]);
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["cpu_kinds"][&k[1].kind][0], atom);
        // Unpinned, or a machine of one kind: nothing recorded, no key written.
        let mut os = Placement::os();
        os.set_pinned_kinds(k);
        assert!(os.cpu_kinds.is_none());
        let mut one = p.clone();
        one.cpu_kinds = None;
        one.set_pinned_kinds(&[]);
        assert!(serde_json::to_value(&one)
            .unwrap()
            .get("cpu_kinds")
            .is_none());
    }

    #[test]
    fn each_kind_of_observed_placement_keeps_its_shape() {
        let ctx: RunDocument = serde_json::from_value(fixture("ctx.json")).unwrap();
        let classic: RunDocument = serde_json::from_value(fixture("classic.json")).unwrap();
        assert!(ctx
            .results
            .iter()
            .all(|r| matches!(r.placement.observed, Some(Observed::Pair(_)))));
        assert!(classic
            .results
            .iter()
            .all(|r| matches!(r.placement.observed, Some(Observed::Copies(_)))));
        let switch = classic
            .results
            .iter()
            .find(|r| r.base_id() == "classic.context-switch")
            .unwrap();
        let obs = switch.placement.observed.as_ref().unwrap();
        assert!(obs.colocated_fraction().is_some() && obs.sides().is_some());
        let ix = classic.indexes.unwrap();
        assert_eq!(ix.keys(), vec!["1", "2", "N"]);
        assert_eq!(ix.n, 2);
    }
}
