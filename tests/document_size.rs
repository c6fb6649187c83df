//! A default run's document stays small: at most 150 KB as stored from a quiet host and
//! 300 KB from a loud one, where every round is disturbed and carries other tasks' share.
//! A loud run's document was 0.78 MB: every disturbed round repeated as finding evidence
//! beside its rounds, each round an object with its words, every figure to 17 digits.
//!
//! The base is a default run of this host (tests/fixtures/documents/default-run.json,
//! 2026-11-28 07:51 UTC, 901 rounds, 123 of them disturbed: 146 KB as stored);
//! the quiet and loud documents are made from it: the quiet one keeps only its undisturbed
//! rounds, the loud one has 60% more rounds (the disturbed ones measured again), each
//! disturbed by steal and other tasks, its figures resting on all of them (twice the
//! samples), and every result a steal and a neighbour finding, as such a run writes them.

mod common;

use std::collections::HashMap;
use truebench::findings::{noise, results};
use truebench::observe::sampler::Sample;
use truebench::result::digits::{Digits, SAMPLE};
use truebench::result::rounds::{noise_of, Cause, Disturbance, Others, Round, Rounds};
use truebench::result::{BenchResult, RunDocument};

/// A default run's document as stored from a quiet host, at most.
const QUIET_BYTES: usize = 150_000;
/// ... and from a loud one.
const LOUD_BYTES: usize = 300_000;

fn default_run() -> RunDocument {
    let path = common::documents()
        .into_iter()
        .find(|p| p.ends_with("default-run.json"))
        .expect("tests/fixtures/documents/default-run.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    truebench::result::validate(&v).unwrap()
}

/// The run's findings of a result whose rounds changed, judged again.
fn judge_again(r: &mut BenchResult, extra: Vec<truebench::finding::Finding>) {
    r.findings.retain(|f| {
        !["disturbed-rounds", "noisy-neighbour", "steal-time"].contains(&f.id.as_str())
            && !results::SAMPLE_FINDINGS.contains(&f.id.as_str())
    });
    r.stats = truebench::measure::stats::Stats::of(&r.samples).unwrap();
    results::annotate(r);
    r.findings.extend(extra);
}

/// The run from a quiet host: no round disturbed, each in the figures (a disturbed round
/// kept out of them brings its samples, at its median).
fn quiet(doc: &RunDocument) -> RunDocument {
    let mut d = doc.clone();
    for r in &mut d.results {
        let Some(rs) = r.rounds.as_mut() else {
            continue;
        };
        let pooled_all = rs.kept() < 2;
        for x in &mut rs.rounds {
            if !x.kept() && !pooled_all {
                r.samples.extend(std::iter::repeat_n(x.median, x.samples));
            }
            x.disturbed.clear();
        }
        r.stats = truebench::measure::stats::Stats::of(&r.samples).unwrap();
        rs.noise = noise_of(&rs.rounds, Some(r.stats.median.ln()), None);
        judge_again(r, vec![]);
    }
    d
}

/// What the sampler saw around a result of a loud run: the hypervisor took 20% of the
/// usable CPUs' time, three other processes 30%.
fn loud_window() -> (Sample, Sample) {
    let before = Sample {
        t_ns: 0,
        others: HashMap::new(),
        steal_ticks: 0,
        total_ticks: 0,
        nr_throttled: None,
        throttled_us: None,
    };
    let mut after = before.clone();
    after.t_ns = 40_000_000_000;
    after.total_ticks = 8_000;
    after.steal_ticks = 1_600;
    after.others = [
        (1201, "cc1plus", 1_200),
        (1202, "ld", 800),
        (907, "postgres", 400),
    ]
    .into_iter()
    .map(|(pid, name, t)| (pid, (name.to_string(), t)))
    .collect();
    (before, after)
}

/// The run from a loud host: 60% more rounds, each disturbed by steal and other tasks,
/// the figures resting on all of them.
fn loud(doc: &RunDocument) -> RunDocument {
    let (before, after) = loud_window();
    let mut d = doc.clone();
    let sample = Digits::Significant(SAMPLE);
    for (k, r) in d.results.iter_mut().enumerate() {
        let Some(rs) = r.rounds.as_mut() else {
            continue;
        };
        let cpus = r.placement.cpus.clone().unwrap_or(vec![0, 1]);
        let n = rs.rounds.len() * 8 / 5;
        let per = (r.samples.len() * 2).div_ceil(n).max(1);
        let median = r.stats.median;
        let mut samples = vec![];
        rs.rounds = (0..n)
            .map(|i| {
                let share = 10.0 + ((i * 7 + k) % 50) as f64 + 0.123_456_789;
                let m = sample.round(median * (1.0 + 0.002 * ((i * 13 + k) % 11) as f64));
                samples.extend((0..per).map(|j| sample.round(m * (1.0 + 0.001 * j as f64))));
                Round {
                    seq: i * 7 + k % 7,
                    // The canaries' waiting for a CPU, a figure in every round.
                    waited: Some(share / 7.0),
                    at_s: i as f64 * 1.337_123_4,
                    median: m,
                    samples: per,
                    disturbed: vec![
                        Disturbance {
                            cause: Cause::Steal,
                            value: share / 2.0,
                            limit: 2.0,
                            persistent: false,
                        },
                        Disturbance {
                            cause: Cause::OtherTasks,
                            value: share,
                            limit: 10.0,
                            persistent: false,
                        },
                    ],
                    others: Some(Others {
                        cpus: cpus.clone(),
                        percent: share,
                    }),
                    steal: Some(share / 2.0),
                }
            })
            .collect();
        r.samples = samples;
        r.stats = truebench::measure::stats::Stats::of(&r.samples).unwrap();
        rs.noise = noise_of(&rs.rounds, Some(r.stats.median.ln()), None);
        let window = noise::evaluate(&before, &after, 2, 100.0);
        judge_again(r, window);
    }
    d
}

/// `d` with the run's own findings judged again over its rows' rounds, as a run writes them.
fn run_findings(mut d: RunDocument) -> RunDocument {
    d.findings.retain(|f| f.id != "disturbed-rounds");
    d.findings.extend(results::disturbed_rounds(&d.results));
    d
}

/// The document as the store keeps it, and as `export` and `--json` print it.
fn sizes(d: &RunDocument) -> (usize, usize) {
    (
        serde_json::to_string(d).unwrap().len(),
        truebench::json_text::pretty(d).unwrap().len(),
    )
}

#[test]
fn a_default_runs_document_stays_small_on_a_quiet_host_and_on_a_loud_one() {
    let base = default_run();
    let rounds = |d: &RunDocument| -> (usize, usize) {
        let all = d.results.iter().filter_map(|r| r.rounds.as_ref());
        let n: usize = all.clone().map(|r| r.rounds.len()).sum();
        (n, all.map(Rounds::disturbed).sum())
    };
    // The base is a whole default run, not a few rows of one.
    assert!(base.results.len() >= 90, "{}", base.results.len());
    assert!(rounds(&base).0 >= 800, "{:?}", rounds(&base));
    for (what, d, limit) in [
        ("quiet", run_findings(quiet(&base)), QUIET_BYTES),
        ("loud", run_findings(loud(&base)), LOUD_BYTES),
    ] {
        let (n, disturbed) = rounds(&d);
        match what {
            "quiet" => assert_eq!(disturbed, 0),
            _ => assert_eq!(disturbed, n),
        }
        // Each is a document `import` takes.
        let v = serde_json::to_value(&d).unwrap();
        truebench::result::validate(&v).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (stored, printed) = sizes(&d);
        eprintln!(
            "{what}: {n} rounds ({disturbed} disturbed), stored {stored} bytes, printed {printed}"
        );
        assert!(
            stored <= limit && printed <= limit,
            "{what}: {stored} bytes stored, {printed} printed, more than {limit} ({n} rounds)"
        );
    }
}

/// A loud run's disturbed rounds are one finding for the run, a few lines however many rows
/// and rounds: the rows whose figures rest on them (the first few named), then a line per
/// cause; no row repeats them.
#[test]
fn a_loud_runs_disturbed_rounds_are_one_finding_of_a_line_per_cause() {
    let d = run_findings(loud(&default_run()));
    assert!(d
        .results
        .iter()
        .all(|r| r.findings.iter().all(|f| f.id != "disturbed-rounds")));
    let f: Vec<_> = d
        .findings
        .iter()
        .filter(|f| f.id == "disturbed-rounds")
        .collect();
    assert_eq!(f.len(), 1, "{f:?}");
    let rows = d.results.iter().filter(|r| r.rounds.is_some()).count();
    assert!(
        f[0].message.contains(&format!("except on {rows} rows")),
        "{}",
        f[0].message
    );
    assert_eq!(f[0].evidence.len(), 3, "{:?}", f[0].evidence);
    assert!(
        f[0].evidence[0].ends_with(&format!("and {} more", rows - 3)),
        "{:?}",
        f[0].evidence
    );
    for (line, cause) in f[0].evidence[1..].iter().zip(["steal", "other-tasks"]) {
        assert!(line.starts_with(&format!("{cause}: ")), "{line}");
    }
}
