//! `truebench record` end to end: intervals of a short command, the JSON document with its
//! rows and unavailable metrics, the stored run, a business metric, and bad inputs.

mod common;

use common::TestEnv;

#[test]
fn recording_a_short_command_prints_and_stores_its_intervals() {
    let env = TestEnv::new();
    let text = env.text(&["record", "--interval", "0.5", "--", "sleep", "3"]);
    let rows = text
        .lines()
        .filter(|l| l.trim_end().ends_with("ms/s") || l.contains('|'))
        .count();
    assert!(rows >= 6, "{rows} interval lines:\n{text}");
    assert!(text.lines().next().unwrap().contains("%usr"), "{text}");
    let hist = env.json(&["history", "--json"]);
    assert_eq!(hist[0]["suites"], serde_json::json!(["record"]));
    let shown = env.cmd().args(["show", "latest"]).output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("Recording:"));
}

/// A recording of a "server" that does 100 units of work every 0.1 s for 1.5 s, counted
/// in a file given as --metric-file; its validated JSON document.
fn record_a_counting_server(env: &TestEnv) -> serde_json::Value {
    let counter = env.file("work", "0");
    let script = format!(
        "i=0; while [ $i -lt 15 ]; do i=$((i+1)); echo $((i*100)) > {}; sleep 0.1; done",
        counter.display()
    );
    let doc = env.json(&[
        "record",
        "--interval",
        "0.3",
        "--metric-file",
        counter.to_str().unwrap(),
        "--json",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    truebench::result::validate(&doc).unwrap();
    doc
}

#[test]
fn json_carries_rows_unavailable_metrics_and_the_work_rate() {
    let env = TestEnv::new();
    let doc = record_a_counting_server(&env);
    let rec = &doc["recording"];
    let rows = rec["rows"].as_array().unwrap();
    assert!(rows.len() >= 4, "{} rows", rows.len());
    assert!(!rows[0]["cpus"].as_array().unwrap().is_empty());
    assert!(rows[0]["target"]["threads"].as_u64().unwrap() >= 1);
    let rates: Vec<f64> = rows
        .iter()
        .filter_map(|r| r["metric_per_s"].as_f64())
        .collect();
    assert!(
        rates.iter().any(|r| (300.0..=1500.0).contains(r)),
        "work rates {rates:?}"
    );
    assert!(rec["summary"]["units"].as_f64().unwrap() > 0.0);
    let share = rec["recorder_cpu_share"].as_f64().unwrap();
    assert!(share < 0.05, "recorder used {:.1}% of a CPU", share * 100.0);
    // Unreadable hardware counters are listed, never zeros.
    if doc["env"]["pmu"]["available"] == false {
        for k in ["cycles", "instructions", "llc_misses"] {
            assert!(rec["unavailable"][format!("target.{k}_per_s")].is_string());
            assert!(rows
                .iter()
                .all(|r| r["target"]["events_per_s"].get(k).is_none()));
        }
    }
}

#[test]
fn bad_record_inputs_exit_2_and_write_nothing() {
    let env = TestEnv::new();
    for args in [
        vec!["record", "--interval", "0"],
        vec!["record", "--interval", "soon"],
        vec!["record", "--pid", "999999999"],
        vec!["record", "--", "/nonexistent/program"],
        vec!["record", "--pid", "1", "--", "sleep", "1"],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        common::assert_refused(&env, &out, &args);
    }
}

#[test]
fn a_record_beside_a_run_is_refused_naming_the_holder() {
    let env = TestEnv::new();
    let held = env.hold_lock("truebench run timers");
    let marker = env.dir.path().join("started");
    let out = env
        .cmd()
        .args(["record", "--interval", "0.2", "--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    common::assert_lock_refused(&out, "truebench run timers");
    assert!(!marker.exists(), "the command was started beside the run");
    assert!(!env.db().exists(), "a refused record created the database");
    drop(held);
    // Once free, a record takes the lock itself and names itself in it.
    env.text(&["record", "--interval", "0.2", "--duration", "0.4"]);
    let holder = std::fs::read_to_string(env.lock()).unwrap();
    assert!(holder.contains("truebench record"), "{holder}");
}

/// As root the raw_syscalls tracepoint counts the command's system calls (the shell, and
/// the echo and sleep it starts, by inheritance); they are costed per unit of work.
#[test]
#[ignore = "needs root"]
fn as_root_the_commands_system_calls_are_counted_per_unit_of_work() {
    common::needs_root();
    let env = TestEnv::new();
    let doc = record_a_counting_server(&env);
    let rec = &doc["recording"];
    let rows = rec["rows"].as_array().unwrap();
    assert!(
        rec["unavailable"].get("target.syscalls_per_s").is_none(),
        "{}",
        rec["unavailable"]
    );
    let calls: f64 = rows
        .iter()
        .filter_map(|r| r["target"]["events_per_s"]["syscalls"].as_f64())
        .sum();
    assert!(
        calls > 100.0,
        "{calls} system calls per second summed over rows"
    );
    assert!(
        rec["summary"]["per_unit"]["target_syscalls"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// `--csv`: one line per CPU per interval under a header, parsed by a CSV reader; an
/// unreadable figure is an empty cell, never 0.
#[test]
fn csv_has_one_line_per_cpu_and_interval() {
    let env = TestEnv::new();
    let text = env.text(&["record", "--interval", "0.2", "--duration", "0.6", "--csv"]);
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[..3], ["t_s", "interval_s", "cpu"], "{header:?}");
    assert_eq!(header.last().unwrap(), "metric_per_s");
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(
        rows.len() >= 3 * cpus.min(2),
        "{} lines:\n{text}",
        rows.len()
    );
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for r in &rows {
        let user: f64 = r[col("user_pct")].parse().unwrap();
        let idle: f64 = r[col("idle_pct")].parse().unwrap();
        assert!(
            (0.0..=100.0).contains(&user) && (0.0..=100.0).contains(&idle),
            "{r:?}"
        );
        // No target and no metric: those cells are empty, not zero.
        assert_eq!(&r[col("target_cpu_pct")], "", "{r:?}");
        assert_eq!(&r[col("metric_per_s")], "", "{r:?}");
    }
}

/// The NUMA view of a process that mallocs and touches 64 MiB, then sleeps: that memory is
/// resident anonymous memory on the node(s) of the machine, the thread has a home node, and
/// on a one-node machine everything is on node 0, cross-node migrations are 0 (exactly), and
/// `memory-remote` is unavailable with its reason, never raised.
#[test]
fn the_numa_view_shows_a_known_amount_of_touched_memory_and_the_threads_home() {
    const TOUCHED: u64 = 64 << 20;
    let env = TestEnv::new();
    let helper = common::touch_memory_helper(env.dir.path());
    let doc = env.json(&[
        "record",
        "--interval",
        "0.3",
        "--json",
        "--",
        helper.to_str().unwrap(),
        "64",
        "2",
    ]);
    truebench::result::validate(&doc).unwrap();
    let rec = &doc["recording"];
    let numa = &rec["numa"];
    let pid = rec["target"]["pid"].as_i64().unwrap();
    let env_nodes = doc["env"]["numa"]["nodes"].as_array().unwrap().len();
    assert_eq!(numa["nodes"].as_u64().unwrap() as usize, env_nodes);
    let mem = &numa["memory"];
    assert_eq!(mem["pid"].as_i64(), Some(pid), "{mem}");
    let nodes = mem["nodes"].as_array().unwrap();
    let anon: u64 = nodes
        .iter()
        .map(|n| n["anon_bytes"].as_u64().unwrap())
        .sum();
    assert!(anon >= TOUCHED, "{anon} anonymous bytes resident: {mem}");
    // Not more than the touched memory and the helper's own small share (libc, stack).
    assert!(anon < TOUCHED + (16 << 20), "{anon} anonymous bytes: {mem}");
    let threads = numa["threads"].as_array().unwrap();
    let main = threads
        .iter()
        .find(|t| t["tid"].as_i64() == Some(pid))
        .unwrap_or_else(|| panic!("the helper's thread is not listed: {threads:?}"));
    assert_eq!(main["name"], "touch_memory");
    // Touching 64 MiB takes CPU time: the thread ran, so it has a home.
    assert!(main["run_ms"].as_f64().unwrap() > 0.0, "{main}");
    assert!(main["home_node"].is_u64(), "{main}");
    // Balancing counters: each expected counter is in the rows or listed as unavailable.
    for k in ["numa_hit", "numa_miss", "numa_local", "numa_pages_migrated"] {
        let in_rows = rec["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["numa_events"][k].is_u64());
        let why = &rec["unavailable"][format!("numa_events.{k}")];
        assert!(
            in_rows != why.is_string(),
            "{k}: in rows {in_rows}, unavailable {why}"
        );
    }
    let ids = common::finding_ids(&doc["findings"]);
    if env_nodes == 1 {
        // Everything on node 0; the thread never crossed a node, and that is exact.
        assert_eq!(nodes.len(), 1, "{mem}");
        assert_eq!(nodes[0]["node"], 0);
        assert!(nodes[0]["anon_bytes"].as_u64().unwrap() >= TOUCHED);
        for t in threads {
            assert_eq!(t["cross_node_migrations"], 0, "{t}");
            assert_eq!(t["cross_node_basis"], "counted", "{t}");
        }
        assert_eq!(main["home_node"], 0);
        assert!(rec["unavailable"]["finding.memory-remote"]
            .as_str()
            .unwrap()
            .contains("one NUMA node"));
        assert!(!ids.contains(&"memory-remote"), "{ids:?}");
    }
    // The text view shows the memory per node in units and the thread's home.
    let shown = env.text(&["show", "latest"]);
    assert!(shown.contains("home node"), "{shown}");
    assert!(
        shown
            .lines()
            .any(|l| l.contains("node 0:") && l.contains("MiB")),
        "{shown}"
    );
}

#[test]
fn a_metric_that_never_holds_a_number_is_unavailable_and_said_once() {
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args([
            "record",
            "--interval",
            "0.5",
            "--metric-file",
            "/dev/zero",
            "--json",
            "--",
            "sleep",
            "1.2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("--metric-file /dev/zero: no number in the first 4 KiB"))
        .collect();
    assert_eq!(said.len(), 1, "once on stderr: {err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["recording"];
    assert_eq!(
        r["unavailable"]["metric_per_s"],
        "--metric-file /dev/zero: no number in the first 4 KiB"
    );
    let rows = r["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        assert!(row["metric_per_s"].is_null(), "{row}");
        assert_eq!(row["metric_missing"], "no number in the first 4 KiB");
    }
}

#[test]
fn a_metric_that_stops_parsing_mid_run_is_marked_in_each_interval_without_it() {
    let env = TestEnv::new();
    let file = env.dir.path().join("done");
    let f = file.display().to_string();
    // Counts for about 1.5 s, then the file holds text for the last 1.5 s (each write
    // replaces the file whole, so no read sees it half written).
    let script = format!(
        "i=0; while [ $i -lt 15 ]; do echo $((i*10)) > {f}.new; mv {f}.new {f}; i=$((i+1)); sleep 0.1; done; \
         echo 'n/a' > {f}.new; mv {f}.new {f}; sleep 1.5"
    );
    std::fs::write(&file, "0\n").unwrap();
    let out = env
        .cmd()
        .args(["record", "--interval", "0.5", "--metric-file", &f, "--json"])
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["recording"];
    let rows = r["rows"].as_array().unwrap();
    let rated = rows.iter().filter(|x| x["metric_per_s"].is_f64()).count();
    let marked: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|x| !x["metric_missing"].is_null())
        .collect();
    assert!(rated >= 1, "{rows:?}");
    assert!(!marked.is_empty(), "{rows:?}");
    for m in &marked {
        assert!(m["metric_per_s"].is_null());
        assert_eq!(m["metric_missing"], "no number in its 4 bytes");
    }
    // Not unavailable as a whole: some intervals had it.
    assert!(
        r["unavailable"].get("metric_per_s").is_none(),
        "{}",
        r["unavailable"]
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("no number in its 4 bytes").count(),
        1,
        "said once: {err}"
    );
}
