//! Run documents written by earlier versions (tests/fixtures/documents, exported by the
//! version before the run document was typed: one per kind of run) keep loading: each is
//! imported, shown (summary and full), compared, reported, and exported; the export holds
//! everything the original held, and export -> import -> export gives the same bytes.

mod common;

use common::{documents as fixtures, TestEnv};
use serde_json::Value;

/// Equal as JSON, numbers to f32 precision (probe loads are f32), every key on both sides.
fn is_empty_default(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) | Value::Bool(true) => false,
    }
}

fn same(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() <= 1e-6 * x.abs().max(y.abs()) {
                Ok(())
            } else {
                Err(format!("{at}: {x} became {y}"))
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            // Every key kept; a key added by a later version holds only its empty default
            // (a field the old document could not have had).
            let lost: Vec<_> = x.keys().filter(|k| !y.contains_key(*k)).collect();
            let added: Vec<_> = y
                .iter()
                .filter(|(k, v)| !x.contains_key(*k) && !is_empty_default(v))
                .map(|(k, _)| k)
                .collect();
            if !lost.is_empty() || !added.is_empty() {
                return Err(format!(
                    "{at}: keys lost {lost:?}, added with values {added:?}"
                ));
            }
            x.iter()
                .try_for_each(|(k, v)| same(v, &y[k], &format!("{at}.{k}")))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .try_for_each(|(i, (p, q))| same(p, q, &format!("{at}[{i}]"))),
        _ if a == b => Ok(()),
        _ => Err(format!("{at}: {a} became {b}")),
    }
}

#[test]
fn documents_of_every_kind_of_run_load_show_compare_report_and_export_unchanged() {
    let env = TestEnv::new();
    let mut ids = Vec::new();
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let original: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let id = original["run_id"].as_str().unwrap().to_string();
        env.cmd().arg("import").arg(&path).assert().success();

        let summary = env.text(&["show", &id]);
        assert!(summary.contains(&id), "{name}: {summary}");
        let wide: Vec<&str> = summary
            .lines()
            .filter(|l| l.chars().count() > 100)
            .collect();
        assert!(
            wide.is_empty(),
            "{name}: lines wider than 100 columns: {wide:#?}"
        );
        let full = env.text(&["show", &id, "--all"]);
        assert!(full.len() >= summary.len() / 2, "{name}: {full}");

        let exported = env.text(&["export", &id]);
        let back: Value = serde_json::from_str(&exported).unwrap();
        same(&original, &back, &name).unwrap_or_else(|e| panic!("{e}"));

        // export -> import -> export: the same bytes.
        let again = TestEnv::new();
        let file = again.file("doc.json", &exported);
        again.cmd().arg("import").arg(&file).assert().success();
        assert_eq!(again.text(&["export", &id]), exported, "{name}");
        ids.push((name, id));
    }
    assert!(ids.len() >= 8, "fixtures: {ids:?}");
    let id = |n: &str| ids.iter().find(|(f, _)| f == n).unwrap().1.as_str();

    // Each kind of run shows its own summary.
    for (file, want) in [
        ("timers.json", "Clock read cost"),
        ("ctx.json", "Pipe round trip per placement"),
        ("c2c.json", "median ns"),
        ("memory.json", "Measured levels"),
        ("classic.json", "Index, 1 copy"),
        ("record.json", "command: sleep 1"),
        ("record-numa.json", "home node 0"),
        ("loadstep.json", "Knee"),
        ("loadstep-variants.json", "Winner:"),
    ] {
        let text = env.text(&["show", id(file)]);
        assert!(text.contains(want), "{file}: no '{want}' in\n{text}");
    }

    let cmp = env.text(&["compare", id("timers.json"), id("timers.json")]);
    assert!(cmp.contains("no difference called"), "{cmp}");
    let cmp = env.json(&["compare", id("ctx.json"), id("c2c.json"), "--json"]);
    assert_eq!(cmp["rows"].as_array().unwrap().len(), 0, "{cmp}");

    let all: Vec<&str> = ids.iter().map(|(_, id)| id.as_str()).collect();
    let html = env.text(&[&["report"], all.as_slice()].concat());
    for want in [
        "Clock read cost",
        "Recording: CPU use",
        "Latency against load",
        "sleep 1",
    ] {
        assert!(html.contains(want), "report: no {want}");
    }
}

/// A fixture document, checked as `import` checks it.
fn load(path: &std::path::Path) -> truebench::result::RunDocument {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    truebench::result::validate(&v).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `doc` measured again on a changed machine: every sample 100x, another kernel and
/// clocksource. Its comparison with `doc` has real differences, explained by causes with
/// and without a prediction (a missing `predicted` crashed the report), where the document
/// has rounds to judge its rows by (a document of an earlier version, without them, cannot
/// tell any row with no calibration or history, however far it moved).
fn changed(doc: &truebench::result::RunDocument) -> truebench::result::RunDocument {
    let mut d = doc.clone();
    d.run_id = format!("{}-changed", doc.run_id);
    d.env.kernel.release = Some("9.9.9-changed".into());
    d.env.clock.clocksource = Some("hpet".into());
    for r in &mut d.results {
        for s in &mut r.samples {
            *s *= 100.0;
        }
        r.stats = truebench::measure::stats::Stats::of(&r.samples).unwrap();
        for x in r.rounds.iter_mut().flat_map(|x| &mut x.rounds) {
            x.median *= 100.0;
        }
    }
    d
}

/// A default run written by the version before a row's rounds were stored as columns
/// (5d845a2, 2026-11-28 05:25 UTC, its results cut to seven: an object per round, each
/// disturbance with its words, every figure to 17 digits) imports with nothing dropped,
/// shows, compares with itself and with a run of this version, and exports its rounds as
/// columns holding the same rounds, each figure to the digits a document keeps.
#[test]
fn a_document_with_an_object_per_round_loads_shows_compares_and_exports_its_rounds() {
    let env = TestEnv::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let path = dir.join("rounds-per-object.json");
    let original: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let id = original["run_id"].as_str().unwrap();
    let out = env.cmd().arg("import").arg(&path).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("not stored"), "{said}");
    assert!(env.text(&["show", id]).contains(id));
    let current = dir.join("documents/default-run.json");
    env.cmd().arg("import").arg(&current).assert().success();
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&current).unwrap()).unwrap();
    for b in [id, now["run_id"].as_str().unwrap()] {
        let text = env.text(&["compare", id, b]);
        let rows = env.json(&["compare", id, b, "--json"])["rows"]
            .as_array()
            .unwrap()
            .len();
        assert!(rows >= 7, "{rows} rows: {text}");
        fits(&text, rows, &format!("{id} vs {b}"));
    }
    let exported: Value = serde_json::from_str(&env.text(&["export", id])).unwrap();
    let rounds = |doc: &Value| -> Vec<truebench::result::rounds::Rounds> {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| common::rounds_of(r).unwrap())
            .collect()
    };
    let (was, now) = (rounds(&original), rounds(&exported));
    assert!(exported["results"][0]["rounds"].get("seq").is_some());
    let mut disturbances = 0;
    for (a, b) in was.iter().zip(&now) {
        assert_eq!(a.rounds.len(), b.rounds.len());
        assert_eq!(a.causes(), b.causes());
        for (x, y) in a.rounds.iter().zip(&b.rounds) {
            assert_eq!((x.seq, x.samples), (y.seq, y.samples));
            assert!((x.median / y.median - 1.0).abs() <= 5e-6, "{x:?} {y:?}");
            assert!((x.at_s - y.at_s).abs() <= 0.05, "{x:?} {y:?}");
            assert_eq!(x.disturbed.len(), y.disturbed.len(), "{x:?} {y:?}");
            disturbances += x.disturbed.len();
            for (d, e) in x.disturbed.iter().zip(&y.disturbed) {
                // Their words, made from the figures, are the same.
                assert_eq!(x.text(d), y.text(e));
            }
        }
    }
    assert!(disturbances > 0);
    // Its rounds as this version stores them, a third of the size: the 17 digits and the
    // words of each round are gone.
    let size = |v: &Value| -> usize {
        let rs = v["results"].as_array().unwrap();
        rs.iter().map(|r| r["rounds"].to_string().len()).sum()
    };
    assert!(
        size(&exported) * 3 < size(&original),
        "{} vs {}",
        size(&exported),
        size(&original)
    );
}

/// Every line of `compare`'s default text within 100 columns, and its table at most two
/// lines a row on average (rows named in a few words, the verdict too: the names of the
/// params wrapped over three or four lines, 2.9 a row for the timers suite); `what` names
/// the comparison.
fn fits(text: &str, rows: usize, what: &str) {
    for l in text.lines() {
        let n = l.chars().count();
        assert!(n <= 100, "{what}: {n} columns: {l}");
    }
    let body = text
        .lines()
        .skip_while(|l| !l.starts_with('╞'))
        .take_while(|l| !l.starts_with('└'))
        .filter(|l| l.starts_with('│'))
        .count();
    assert!(
        body <= 2 * rows,
        "{what}: {body} lines for {rows} rows in\n{text}"
    );
}

/// Every template and view renders every document: `show` (summary and full), the
/// comparison text and the HTML report (whose template engine is strict: a field it names
/// that the data lacks is an error) for each fixture alone, in every ordered pair, with a
/// changed copy of itself, and all of them in one N-way comparison.
#[test]
fn every_document_renders_alone_in_every_pair_and_all_together() {
    use truebench::compare::compare;
    use truebench::fleet::ranking;
    use truebench::report::{compare_table, html, text};
    let docs: Vec<_> = fixtures().iter().map(|p| load(p)).collect();
    assert!(docs.len() >= 8);
    for d in &docs {
        for detail in [text::Detail::Summary, text::Detail::Full] {
            assert!(text::render(d, detail).contains(&d.run_id));
        }
        let page =
            html::render(std::slice::from_ref(d)).unwrap_or_else(|e| panic!("{}: {e:#}", d.run_id));
        assert!(page.contains(&d.run_id) && page.trim_end().ends_with("</html>"));
    }
    let mut unpredicted = 0;
    for a in &docs {
        let b_changed = changed(a);
        for b in docs.iter().chain(std::iter::once(&b_changed)) {
            let c = compare(a, b);
            // A side without rounds (an earlier version's document) is told by nothing
            // here: every comparable row of it cannot tell, and says so.
            for r in c.rows.iter().filter(|r| r.comparability.is_empty()) {
                if r.rounds.iter().any(Option::is_none) {
                    assert!(
                        r.verdict == truebench::compare::stats::verdict::Verdict::CannotTell
                            && r.mde.is_none()
                            && r.why
                                .contains(truebench::compare::stats::noise_model::NO_ROUNDS),
                        "{} vs {}: {}",
                        a.run_id,
                        b.run_id,
                        r.why
                    );
                }
            }
            unpredicted += c
                .rows
                .iter()
                .flat_map(|r| &r.explanations)
                .filter(|e| e.predicted.is_none())
                .count();
            let text = compare_table::render(&c, false);
            assert!(text.contains(&a.run_id));
            fits(
                &text,
                c.rows.len(),
                &format!("{} vs {}", a.run_id, b.run_id),
            );
            let page = html::render(&[a.clone(), b.clone()])
                .unwrap_or_else(|e| panic!("report {} {}: {e:#}", a.run_id, b.run_id));
            assert!(page.contains(&b.run_id) && page.trim_end().ends_with("</html>"));
        }
    }
    // The changed pairs drew explanations without a prediction: the case that crashed.
    assert!(
        unpredicted > 0,
        "no explanation without a prediction was rendered"
    );
    let fleet = ranking::rank(&docs, 0, None, None, &|_| Default::default());
    let text = compare_table::render_fleet(&fleet);
    assert!(text.contains(&docs[0].run_id));
    // The ranking fits 100 columns (its table ran to 134, its headings to 118), run ids whole.
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    for d in &docs {
        assert!(text.contains(&d.run_id), "{} cut: {text}", d.run_id);
    }
    let page = html::render(&docs).unwrap_or_else(|e| panic!("report of all: {e:#}"));
    for d in &docs {
        assert!(page.contains(&d.run_id));
    }
}

/// The timers fixture with `n` results, each the first one with a `case` param of its own.
fn with_results(n: usize) -> Value {
    let path = fixtures()
        .into_iter()
        .find(|p| p.ends_with("timers.json"))
        .unwrap();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let first = v["results"][0].clone();
    v["results"] = (0..n)
        .map(|k| {
            let mut r = first.clone();
            r["params"]["case"] = k.into();
            r
        })
        .collect();
    v["run_id"] = format!("scale-{n}").into();
    v
}

/// Seconds `import`'s check and `compare` take for a document of `n` results: the fastest
/// of `tries` (a neighbour on the machine only ever makes it slower).
fn check_and_compare_s(n: usize, tries: usize) -> f64 {
    let v = with_results(n);
    (0..tries)
        .map(|_| {
            let t = std::time::Instant::now();
            let a = truebench::result::validate(&v).unwrap();
            let c = truebench::compare::compare(&a, &changed(&a));
            assert_eq!(c.rows.len(), n);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Import's checks and compare's matching cost linear time in the number of results: four
/// times the results take about four times as long, far from the sixteen of a quadratic
/// cost (a duplicate check and a matching that scanned every result for each one: 85 s to
/// compare 4,000 results with 8,000). Timed fastest of three, measured again when a
/// neighbour may have slowed the small one.
#[test]
fn checking_and_comparing_cost_linear_time_in_the_number_of_results() {
    let small = check_and_compare_s(1_000, 3);
    let mut large = check_and_compare_s(4_000, 1);
    if large / small >= 8.0 {
        large = large.min(check_and_compare_s(4_000, 2));
    }
    assert!(
        large / small < 8.0,
        "1,000 results: {small:.3} s, 4,000: {large:.3} s ({:.1}x)",
        large / small
    );
}

/// A document over the cap on results is refused (exit 2, nothing stored).
#[test]
fn a_document_over_the_results_cap_is_refused() {
    let env = TestEnv::new();
    let n = truebench::result::MAX_RESULTS + 1;
    let doc = serde_json::json!({"schema": "truebench.result/1", "results": vec![serde_json::json!({}); n]});
    let file = env.file("big.json", &doc.to_string());
    let args = ["import", file.to_str().unwrap()];
    let out = env.cmd().args(args).output().unwrap();
    common::assert_refused(&env, &out, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("more than the 100000 one document may hold"),
        "{err}"
    );
}

/// A selection that matches nothing says so, with what is stored (it said "No runs stored
/// yet" with runs stored, none of them tagged so).
#[test]
fn a_selection_that_matches_nothing_says_what_is_stored() {
    let env = TestEnv::new();
    let history = |args: &[&str]| env.text(&[&["history"], args].concat());
    assert!(history(&["--tag", "k=v"]).starts_with("No runs stored yet"));
    for p in fixtures().iter().take(3) {
        env.cmd().arg("import").arg(p).assert().success();
    }
    assert_eq!(
        history(&["--tag", "k=v"]),
        "No run carries the tag k=v; 3 runs stored.\n"
    );
    assert_eq!(
        history(&["--tag", "k=v", "--tag", "rack=b4"]),
        "No run carries every one of the tags k=v, rack=b4; 3 runs stored.\n"
    );
    let out = env.cmd().args(["show", "nosuchrun"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no run 'nosuchrun' in the database (3 runs stored)"),
        "{err}"
    );
}

/// A default run written before disturbed rounds were counted once for the run
/// (tests/fixtures/documents/default-run.json, 2026-11-28 07:51 UTC: a `disturbed-rounds`
/// finding on each row whose rounds were disturbed, printed a line per member) loads as it
/// was written: its rows keep their findings (nothing judged again on import), `show`
/// names the finding, and the document printed in this version's layout (a line per
/// record) reads back the same, in fewer lines.
#[test]
fn a_document_with_disturbed_rounds_on_each_row_loads_as_written() {
    let env = TestEnv::new();
    let path = fixtures()
        .into_iter()
        .find(|p| p.ends_with("default-run.json"))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let original: Value = serde_json::from_str(&text).unwrap();
    let per_row = |doc: &Value| -> usize {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["findings"].as_array().unwrap())
            .filter(|f| f["id"] == "disturbed-rounds")
            .count()
    };
    assert!(per_row(&original) >= 50, "{}", per_row(&original));
    let id = original["run_id"].as_str().unwrap();
    env.cmd().arg("import").arg(&path).assert().success();
    let exported = env.text(&["export", id]);
    let back: Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(per_row(&back), per_row(&original));
    same(&original, &back, "default-run.json").unwrap_or_else(|e| panic!("{e}"));
    // A line per result, not per member: the old layout had a dozen lines or more a row.
    let rows = original["results"].as_array().unwrap().len();
    assert!(
        exported.lines().count() < text.lines().count() / 4,
        "{} lines, {} before",
        exported.lines().count(),
        text.lines().count()
    );
    assert!(exported.lines().count() > rows, "{exported}");
    let shown = env.text(&["show", id, "--all"]);
    assert!(shown.contains("disturbed-rounds"), "{shown}");
}
