//! Rounds through the binary: a run in rounds keeps each row's rounds and its own noise in
//! the document, and `run --precision` says for every row what it reached, or why not.
//! Short runs (timers: about 3 s), bounds loose: the machine is shared.

mod common;

use common::{rounds_of, TestEnv};
use serde_json::Value;

fn rows(doc: &Value) -> &Vec<Value> {
    doc["results"].as_array().unwrap()
}

#[test]
fn every_row_of_a_run_in_rounds_keeps_its_rounds_and_its_noise() {
    let env = TestEnv::new();
    let doc = env.json(&["run", "timers", "--rounds", "4", "--json"]);
    assert!(!rows(&doc).is_empty());
    for r in rows(&doc) {
        let all = rounds_of(r).unwrap();
        let rounds = &all.rounds;
        // Five times the four rounds (the clock reads are cheap: `Benchmark::round_weight`),
        // re-measured disturbed ones and the budget's rounds after them, at most 60 (the
        // first stage cut to fit the budget keeps at least 3).
        assert!((3..=60).contains(&rounds.len()), "{r}");
        // The run's 10 samples over the clock reads' 20 rounds: one each (a sample is a
        // whole measurement in a fresh process: `Benchmark::min_samples_per_round`).
        for x in rounds {
            assert_eq!(x.samples, 1, "{x:?}");
            assert!(x.median > 0.0, "{x:?}");
        }
        let kept = all.kept();
        if kept >= 2 {
            let noise = all.noise.as_ref().unwrap();
            assert_eq!(noise.kept, kept, "{r}");
            // σ's degrees of freedom are its first stage's (Stein's rule: the budget's
            // rounds after it were planned from that stage alone).
            let first = noise
                .stage1
                .map_or(kept, |n| rounds.iter().take(n).filter(|x| x.kept()).count());
            assert_eq!(noise.df, first as f64 - 1.0, "{r}");
            // σ and se are written to 4 significant digits.
            let want = noise.sigma / (kept as f64).sqrt();
            assert!((noise.se / want - 1.0).abs() < 1e-3, "{noise:?}");
        }
        // Each round ran in a fresh process of truebench, not in the run's own.
        let findings = r["findings"].as_array().unwrap();
        assert!(
            findings.iter().all(|f| f["id"] != "round-in-process"),
            "{findings:?}"
        );
        // Rounds start in time order of their sequence numbers.
        let starts: Vec<f64> = rounds.iter().map(|x| x.at_s).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
    }
}

#[test]
fn precision_says_for_every_row_what_it_reached_or_why_not() {
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args([
            "run",
            "timers",
            "--rounds",
            "3",
            "--precision",
            "5%",
            "--budget",
            "3s",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--precision 5.0%: "), "{err}");
    for r in rows(&doc) {
        let label = format!(
            "{} [{}] {}",
            r["benchmark"].as_str().unwrap(),
            r["placement"]["name"].as_str().unwrap(),
            r["params"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| format!(
                    "{k}={}",
                    v.as_str().map(String::from).unwrap_or(v.to_string())
                ))
                .collect::<Vec<_>>()
                .join(",")
        );
        // The row's line and its continuation lines (wrapped to 100 columns, indented).
        let lines: Vec<&str> = err.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with(&format!("{label}: MDE ")))
            .unwrap_or_else(|| panic!("no precision line for {label}:\n{err}"));
        let more = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("      "))
            .map(|l| l.trim());
        let line = std::iter::once(lines[at].trim_end())
            .chain(more)
            .collect::<Vec<_>>()
            .join(" ");
        let line = line.as_str();
        // "MDE 3.1% in 8 rounds", or short of the target with the reason.
        let mde: f64 = line
            .split("MDE ")
            .nth(1)
            .and_then(|x| x.split(['%', 'x']).next())
            .and_then(|x| x.trim().parse().ok())
            .unwrap_or(f64::INFINITY);
        if line.contains("short of 5.0%: ") {
            let why = line.split("short of 5.0%: ").nth(1).unwrap();
            assert!(
                ["budget", "rounds disagree", "no spread", "disturbed rounds"]
                    .iter()
                    .any(|w| why.contains(w)),
                "{line}"
            );
        } else {
            assert!(mde <= 5.0, "{line}");
        }
        let n = rounds_of(r).unwrap().rounds.len();
        assert!(
            line.contains(&format!(" in {n} rounds")),
            "{line} vs {n} rounds in the document"
        );
    }
}
