//! The classic suite through the binary: execl execs a small embedded program, copies are
//! counted from the usable CPUs, results carry their index, UnixBench-style figures and
//! scaling efficiency from their rounds, the run carries the indexes (partial when a test
//! did not run), the context-switch test says where its pair ran, and classic-only options
//! are refused elsewhere.

mod common;

use common::TestEnv;

#[test]
fn a_short_classic_run_scores_and_scales() {
    let env = TestEnv::new();
    let doc = env.run(&[
        "classic.syscall,classic.execl,classic.context-switch,classic.process-creation",
        "--copies",
        "1,2",
        "--rounds",
        "3",
        // The allocation's extra rounds are not tested here; this budget leaves the three.
        "--budget",
        "30s",
    ]);
    truebench::result::validate(&doc).unwrap();
    let all = doc["results"].as_array().unwrap();
    // The context-switch pair also ran pinned to one CPU and split over two, and process
    // creation with its children on the copy's CPU, 1 and 2 copies.
    let (pinned, results): (Vec<_>, Vec<_>) =
        all.iter().partition(|r| r["params"].get("pair").is_some());
    assert_eq!(results.len(), 8, "4 tests x 2 copy counts");
    let usable = doc["env"]["cpus"]["usable"].as_array().unwrap().len();
    assert_eq!(pinned.len(), if usable >= 2 { 6 } else { 4 }, "{pinned:?}");
    for r in &pinned {
        if r["benchmark"] == "classic.process-creation@3" {
            assert_eq!(r["params"]["pair"], "same-cpu");
        } else {
            assert_eq!(r["benchmark"], "classic.context-switch@1");
        }
        let (pair, together) = match r["params"]["pair"].as_str().unwrap() {
            "same-cpu" => ("same-cpu", 1.0),
            "cross-cpu" => ("cross-cpu", 0.0),
            p => panic!("pair {p}"),
        };
        assert_eq!(r["placement"]["name"], pair);
        // Pinned: every observation saw the pair where it was put.
        assert_eq!(
            r["placement"]["observed"]["colocated_fraction"].as_f64(),
            Some(together),
            "{pair}: {}",
            r["placement"]["observed"]
        );
    }
    for r in &results {
        let copies = r["params"]["copies"].as_u64().unwrap();
        let median = r["stats"]["median"].as_f64().unwrap();
        let baseline = r["derived"]["baseline"].as_f64().unwrap();
        let index = r["derived"]["index"].as_f64().unwrap();
        assert!((index - 10.0 * median / baseline).abs() < 1e-6 * index);
        assert!(r["derived"]["unixbench_index"].as_f64().unwrap() > 0.0);
        // A pass of each case a round, in rounds interleaved with the other tests': the
        // passes of its kept rounds (at least two of the three, or every round when fewer
        // were undisturbed; `validate` checks that they add up).
        // Rounds are stored as columns, one figure per round (a column whose figures are
        // all alike as that one figure).
        let seq = r["rounds"]["seq"].as_array().unwrap();
        assert!(seq.len() >= 3, "{}", r["rounds"]);
        let samples = &r["rounds"]["samples"];
        assert!(
            samples == 1 || samples.as_array().is_some_and(|s| s.iter().all(|x| x == 1)),
            "{}",
            r["rounds"]
        );
        assert_eq!(r["params"]["passes_per_round"], 1);
        assert!(r["samples"].as_array().unwrap().len() >= 2);
        assert!(r["rounds"]["noise"]["se"].as_f64().unwrap() >= 0.0);
        assert_eq!(
            r["placement"]["observed"]["copies"]
                .as_array()
                .unwrap()
                .len() as u64,
            copies
        );
        // Two clock reads per copy per pass: the timer's share is negligible.
        assert!(r["quality"]["timer_share"].as_f64().unwrap() < 0.001);
        let (lo, hi) = match r["benchmark"].as_str().unwrap() {
            // Five system calls a loop.
            "classic.syscall@2" => (1e3, 4e7),
            // A fork and ten execs of the 20 KB kernel worker per chain.
            "classic.execl@3" => {
                assert_eq!(r["params"]["exec_target"], "kernel-worker");
                let bytes = r["params"]["exec_target_bytes"].as_u64().unwrap();
                assert!((1_000..100_000).contains(&bytes), "exec'd {bytes} bytes");
                (5.0, 1e5)
            }
            "classic.context-switch@1" => (100.0, 2e7),
            // A fork of the small kernel worker: 10 µs to 100 ms.
            "classic.process-creation@3" => (10.0, 1e5),
            b => panic!("unexpected {b}"),
        };
        assert!((lo..hi).contains(&median), "{}: {median}", r["benchmark"]);
        if copies == 2 {
            let eff = r["derived"]["scaling_efficiency"].as_f64().unwrap();
            assert!(eff > 0.0, "{eff}");
        } else {
            assert!(r["derived"].get("scaling_efficiency").is_none());
        }
    }
    // The context-switch pair and the forks' children were watched, and their placement
    // explained.
    for name in ["classic.context-switch@1", "classic.process-creation@3"] {
        let r = results.iter().find(|r| r["benchmark"] == name).unwrap();
        assert!(
            r["placement"]["observed"]["observations"].as_u64().unwrap() > 0,
            "{name}"
        );
        let ids = common::finding_ids(&r["findings"]);
        assert!(
            ids.iter().any(|i| i.starts_with("os-placement-")),
            "{name}: {ids:?}"
        );
    }
    // Indexes for 1 and N copies, partial: 4 of the 12 tests ran.
    let ix = &doc["indexes"];
    assert!(ix["1"].as_f64().unwrap() > 0.0);
    assert!(ix["N"].as_f64().unwrap() > 0.0);
    assert_eq!(ix["partial"], true);
    assert_eq!(ix["tests"]["1"], 4);
    // The index's placement range: same-CPU and cross-CPU context-switch in the same run.
    let range = &ix["placement_range"]["1"];
    assert!(range["ci95_low"].as_f64().unwrap() <= ix["1"].as_f64().unwrap());
    assert!(range["same_cpu"].as_f64().unwrap() > 0.0, "{range}");
    if usable >= 2 {
        assert!(range["cross_cpu"].as_f64().unwrap() > 0.0, "{range}");
    }
    assert_eq!(ix["n"].as_u64().unwrap(), usable.max(1) as u64);
}

#[test]
fn the_classic_table_shows_rates_indexes_and_the_n_basis() {
    let env = TestEnv::new();
    let text = env.text(&["run", "classic.pipe-throughput", "--copies", "1"]);
    for want in [
        "Classic suite",
        "pipe-throughput",
        "lps",
        "UnixBench-style",
        "Index, 1 copy",
        "PARTIAL",
    ] {
        assert!(text.contains(want), "missing {want}:\n{text}");
    }
}

#[test]
fn classic_options_elsewhere_and_bad_copy_counts_are_refused() {
    let env = TestEnv::new();
    for args in [
        vec!["run", "timers", "--copies", "2"],
        vec!["run", "ctx", "--full"],
        vec!["run", "classic", "--copies", "0"],
        vec!["run", "classic", "--copies", "two"],
        vec!["run", "classic", "--copies", "0x"],
        vec!["run", "classic", "--copies", "1000x"],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        common::assert_refused(&env, &out, &args);
    }
}

#[test]
fn more_copies_than_cpus_run_and_say_their_copies_per_cpu() {
    let env = TestEnv::new();
    let doc = env.run(&["classic.syscall", "--copies", "2x,1"]);
    let n = doc["indexes"]["n"].as_u64().unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "2x and 1, each once");
    let over = &results[0];
    assert_eq!(over["params"]["copies"].as_u64(), Some(2 * n));
    assert_eq!(over["params"]["copies_per_cpu"].as_f64(), Some(2.0));
    assert!(
        over["params"]["copies_basis"]
            .as_str()
            .unwrap()
            .contains("2x"),
        "{}",
        over["params"]["copies_basis"]
    );
    assert_eq!(
        over["placement"]["observed"]["copies"]
            .as_array()
            .unwrap()
            .len() as u64,
        2 * n
    );
    let one = &results[1];
    assert_eq!(one["params"]["copies"].as_u64(), Some(1));
    assert_eq!(
        one["params"]["copies_per_cpu"].as_f64(),
        Some(1.0 / n as f64)
    );
    let text = env.text(&["show", "latest"]);
    assert!(
        text.contains(&format!("{} copies (2 per CPU)", 2 * n)),
        "{text}"
    );
}

#[test]
fn pinned_copies_stay_on_their_own_cpus() {
    let env = TestEnv::new();
    let doc = env.run(&["classic.syscall", "--copies", "2", "--pin"]);
    let r = &doc["results"][0];
    let usable = doc["env"]["cpus"]["usable"].as_array().unwrap().len();
    let pins: Vec<u64> = r["placement"]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(r["placement"]["name"], "per-copy");
    assert_eq!(pins.len(), 2);
    if usable >= 2 {
        assert_ne!(pins[0], pins[1], "two copies on one CPU: {pins:?}");
    }
    // Every observation of copy i saw it on its pinned CPU.
    for (i, c) in r["placement"]["observed"]["copies"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        assert_eq!(c["cpus_seen"], serde_json::json!([pins[i]]), "copy {i}");
    }
}
