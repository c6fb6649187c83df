//! `compare --precision`: which side of a comparison can be given more rounds on this
//! machine, and a side's row as the union of its run's rounds and the rounds added to it
//! later (stored as a run of their own, tagged `adds-to=<run id>`).
//!
//! A side can be re-measured here when its run was measured on this host (its hostname is a
//! fresh probe's) in the setting the machine is in now (`compare::same_setting`: CPU,
//! quota, clocksource, kernel...): rounds measured now then belong to the same
//! measurement. The merged row keeps the rule `run --precision` follows (Stein's two-stage
//! rule, `session::precision`): σ and its degrees of freedom stay those of the original
//! run's rounds (the first stage, which alone decided how many rounds to add), the added
//! kept rounds only narrow the standard error σ/√kept. Each run's own disturbed and outlier
//! rounds stay as that run judged them: re-judging the first stage's rounds against the
//! added ones would let the second stage choose the first stage's spread.

use crate::probe::ProbeDoc;
use crate::result::rounds::{RoundNoise, Rounds};
use crate::result::{BenchResult, RunDocument};

/// The tag of a run of rounds added by `compare --precision`: the run it adds to.
pub use crate::result::tags::ADDS_TO as ADDS_TO_TAG;

/// Whether `doc` can be given more rounds on the machine probed as `here`; the reason in
/// words when it cannot ("measured on host db1, this is vm"; "measured in another
/// setting: clocksource \"tsc\" then, \"hpet\" now").
pub fn remeasurable(doc: &RunDocument, here: &ProbeDoc) -> Result<(), String> {
    let name = |h: Option<&str>| h.unwrap_or("(unknown)").to_string();
    if doc.host.is_none() || doc.host != here.hostname {
        return Err(format!(
            "measured on host {}, this is {}",
            name(doc.host.as_deref()),
            name(here.hostname.as_deref())
        ));
    }
    let diffs = crate::compare::setting_differences(&doc.env, here);
    if !diffs.is_empty() {
        let what: Vec<String> = diffs
            .iter()
            .map(|d| format!("{} {} then, {} now", d.what, d.a, d.b))
            .collect();
        return Err(format!("measured in another setting: {}", what.join(", ")));
    }
    if !doc.results.iter().any(|r| r.run_noise().is_some()) {
        return Err("measured in one piece (none of its rows has rounds to add to)".into());
    }
    Ok(())
}

/// The seconds a round of `benchmark` took in `doc` (the median over its rounds of the time
/// to the run's next round: `at_s` of round seq + 1 less its own); None when no round of it
/// has a next one. What `compare --precision` expects a round added to it to take.
pub fn seconds_per_round(doc: &RunDocument, benchmark: &str) -> Option<f64> {
    let all = doc.results.iter().filter_map(|r| r.rounds.as_ref());
    let at: std::collections::BTreeMap<usize, f64> = all
        .flat_map(|rs| rs.rounds.iter().map(|r| (r.seq, r.at_s)))
        .collect();
    let mut mine: Vec<usize> = doc
        .results
        .iter()
        .filter(|r| r.benchmark == benchmark)
        .filter_map(|r| r.rounds.as_ref())
        .flat_map(|rs| rs.rounds.iter().map(|r| r.seq))
        .collect();
    mine.sort_unstable();
    mine.dedup();
    let took: Vec<f64> = mine
        .iter()
        .filter_map(|s| Some(at.get(&(s + 1))? - at.get(s)?))
        .filter(|t| *t >= 0.0)
        .collect();
    crate::measure::stats::Stats::of(&took).map(|s| s.median)
}

/// The seconds from `from` to `to` (RFC 3339 times); 0 when either cannot be read.
fn seconds_between(from: &str, to: &str) -> f64 {
    let t = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    match (t(from), t(to)) {
        (Some(a), Some(b)) => (b - a).num_milliseconds() as f64 / 1e3,
        _ => 0.0,
    }
}

/// The row `orig` (of a run measured in rounds) with the rounds of `added` (the same row of
/// a run that adds to it, started `later_s` seconds after it): samples and statistics from
/// both runs' kept samples, every round of both (the added ones numbered and timed after
/// the original's), and the two-stage noise: σ and df of the original's first stage, the
/// standard error over every kept round. None when `orig` has no round noise (fewer than
/// two kept rounds: no first-stage spread to rest on).
pub fn merge(orig: &BenchResult, added: &BenchResult, later_s: f64) -> Option<BenchResult> {
    let first = orig.run_noise()?;
    let (Some(ro), Some(ra)) = (orig.rounds.as_ref(), added.rounds.as_ref()) else {
        return None;
    };
    let mut out = orig.clone();
    out.quality.pages_per_round &= added.quality.pages_per_round;
    out.samples.extend_from_slice(&added.samples);
    out.stats = crate::measure::stats::Stats::of(&out.samples)?;
    let scale = out.stats.median / orig.stats.median;
    for v in out.derived.values_mut() {
        *v *= scale;
    }
    let next_seq = ro.rounds.iter().map(|r| r.seq + 1).max().unwrap_or(0);
    let mut rounds = ro.rounds.clone();
    rounds.extend(ra.rounds.iter().map(|r| {
        let mut r = r.clone();
        r.seq += next_seq;
        r.at_s += later_s;
        r
    }));
    // A row whose figures rest on every round (fewer than two undisturbed) counts every
    // added round too, as its samples do.
    let counted = if first.includes_disturbed {
        ra.rounds.len()
    } else {
        ra.kept()
    };
    let kept = first.kept + counted;
    out.rounds = Some(Rounds {
        noise: Some(RoundNoise {
            kept,
            sigma: first.sigma,
            se: first.sigma / (kept as f64).sqrt(),
            df: first.df,
            stage1: first.stage1.or(Some(ro.rounds.len())),
            includes_disturbed: first.includes_disturbed,
        }),
        rounds,
    });
    // What the benchmark derives other than in proportion to the median (a classic test's
    // baseline, UnixBench's combination of its passes) is derived again.
    if let Some(b) = crate::bench::REGISTRY
        .iter()
        .find(|b| b.id() == out.benchmark)
    {
        b.refresh(&mut out);
    }
    Some(out)
}

/// `doc` with each of its rows that `added` (a run adding to it) also measured merged with
/// it (`merge`); its other rows as they were.
pub fn with_added(doc: &RunDocument, added: &RunDocument) -> RunDocument {
    let later_s = seconds_between(&doc.started_at, &added.started_at);
    let mut out = doc.clone();
    for r in out.results.iter_mut() {
        let key = r.key();
        if let Some(m) = added
            .results
            .iter()
            .find(|x| x.key() == key)
            .and_then(|x| merge(r, x, later_s))
        {
            *r = m;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::rounds::{noise_of, Cause, Disturbance, Round};
    use crate::result::testing;
    use serde_json::json;

    fn row(medians: &[f64]) -> BenchResult {
        let mut r = testing::result("timers.clock@1", "os", None, json!({"clock": "m"}), 100.0);
        let rounds: Vec<Round> = medians
            .iter()
            .enumerate()
            .map(|(i, m)| Round {
                seq: i * 3,
                waited: None,
                at_s: i as f64,
                median: *m,
                samples: 2,
                disturbed: vec![],
                others: None,
                steal: None,
            })
            .collect();
        r.samples = medians.iter().flat_map(|m| [*m, *m]).collect();
        r.stats = crate::measure::stats::Stats::of(&r.samples).unwrap();
        let noise = noise_of(&rounds, Some(r.stats.median.ln()), None);
        r.rounds = Some(Rounds { rounds, noise });
        r
    }

    #[test]
    fn merged_rows_keep_the_first_stage_sigma_and_narrow_the_standard_error() {
        let orig = row(&[100.0, 102.0, 98.0, 101.0, 99.0]);
        let mut added = row(&[110.0, 111.0, 109.0, 90.0]);
        added.rounds.as_mut().unwrap().rounds[3]
            .disturbed
            .push(Disturbance {
                cause: Cause::Steal,
                value: 30.0,
                limit: 5.0,
                persistent: false,
            });
        let first = orig.run_noise().unwrap().clone();
        let m = merge(&orig, &added, 120.0).unwrap();
        let n = m.run_noise().unwrap();
        // σ and df of the first stage only (the added rounds lie 10% away: they do not
        // widen σ, the rule's price), the standard error over the 5 + 3 kept rounds.
        assert_eq!(
            (n.sigma, n.df, n.kept, n.stage1),
            (first.sigma, 4.0, 8, Some(5))
        );
        assert!((n.se - first.sigma / 8f64.sqrt()).abs() < 1e-15);
        let rs = &m.rounds.as_ref().unwrap().rounds;
        assert_eq!(rs.len(), 9);
        // The added rounds come after the original's, in sequence and in time.
        assert_eq!((rs[5].seq, rs[5].at_s), (13, 120.0));
        assert!(!rs[8].kept());
        // Samples of both; the median moves towards the added rounds.
        assert_eq!(m.samples.len(), orig.samples.len() + added.samples.len());
        assert!(m.stats.median > orig.stats.median);
        // A row already two-staged by `run --precision` keeps its own first stage.
        let mut staged = orig.clone();
        staged
            .rounds
            .as_mut()
            .unwrap()
            .noise
            .as_mut()
            .unwrap()
            .stage1 = Some(3);
        let m = merge(&staged, &added, 60.0).unwrap();
        assert_eq!(m.run_noise().unwrap().stage1, Some(3));
        // No first-stage spread, nothing to merge onto.
        let mut bare = orig.clone();
        bare.rounds.as_mut().unwrap().noise = None;
        assert!(merge(&bare, &added, 1.0).is_none());
    }

    #[test]
    fn a_run_merges_only_the_rows_the_added_run_measured() {
        let a = row(&[100.0, 102.0, 98.0, 101.0, 99.0]);
        let mut other = a.clone();
        other.params.insert("clock", "r");
        let doc = testing::run("a", vec![a.clone(), other.clone()], testing::env());
        let mut add = testing::run("x", vec![row(&[100.0, 100.5])], testing::env());
        add.started_at = "2026-11-22T00:02:00Z".into();
        let merged = with_added(&doc, &add);
        let rs = |r: &BenchResult| r.rounds.as_ref().unwrap().rounds.len();
        assert_eq!((rs(&merged.results[0]), rs(&merged.results[1])), (7, 5));
        assert_eq!(
            merged.results[0].rounds.as_ref().unwrap().rounds[6].at_s,
            121.0
        );
        assert_eq!(merged.results[1], other);
    }

    #[test]
    fn a_round_takes_the_time_to_the_runs_next_round() {
        // Rounds of two benchmarks interleaved: seq 0, 2, 4 of one at 0, 10, 20 s, the
        // other's seq 1, 3, 5 at 4, 12, 22 s: one takes 4, 2 and 2 s, the other 6 and 8.
        let at = |r: &mut BenchResult, seqs: [(usize, f64); 3]| {
            for (round, (seq, at_s)) in r.rounds.as_mut().unwrap().rounds.iter_mut().zip(seqs) {
                (round.seq, round.at_s) = (seq, at_s);
            }
        };
        let mut x = row(&[100.0, 101.0, 99.0]);
        at(&mut x, [(0, 0.0), (2, 10.0), (4, 20.0)]);
        let mut y = row(&[100.0, 101.0, 99.0]);
        y.benchmark = "timers.other@1".into();
        at(&mut y, [(1, 4.0), (3, 12.0), (5, 22.0)]);
        let doc = testing::run("a", vec![x, y], testing::env());
        assert_eq!(seconds_per_round(&doc, "timers.clock@1"), Some(2.0));
        assert_eq!(seconds_per_round(&doc, "timers.other@1"), Some(7.0));
        assert_eq!(seconds_per_round(&doc, "timers.none@1"), None);
    }

    #[test]
    fn a_side_is_remeasurable_only_on_its_host_in_its_setting() {
        let here = testing::env();
        let mut doc = testing::run("a", vec![row(&[100.0, 101.0, 99.0])], here.clone());
        doc.host = here.hostname.clone();
        assert_eq!(remeasurable(&doc, &here), Ok(()));
        let mut elsewhere = doc.clone();
        elsewhere.host = Some("db1".into());
        let why = remeasurable(&elsewhere, &here).unwrap_err();
        assert!(why.starts_with("measured on host db1, this is"), "{why}");
        let mut now = here.clone();
        now.clock.clocksource = Some("hpet".into());
        let why = remeasurable(&doc, &now).unwrap_err();
        assert!(
            why.starts_with("measured in another setting: clocksource")
                && why.contains("\"hpet\" now"),
            "{why}"
        );
        let mut one_piece = doc.clone();
        one_piece.results[0].rounds = None;
        assert!(remeasurable(&one_piece, &here)
            .unwrap_err()
            .starts_with("measured in one piece"));
    }
}
