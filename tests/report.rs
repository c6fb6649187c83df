//! `truebench report`: one self-contained HTML file for a run of each suite and a
//! recording; no scripts or external resources; strings from the machine or the user
//! escaped; rendered by headless Chromium (installed by .ci/run) with its charts and no
//! console errors.

mod common;

use common::browser::render;
use common::TestEnv;

#[test]
fn the_report_of_a_recording_shows_its_command_exit_status_and_summary() {
    let env = TestEnv::new();
    let out = env
        .cmd()
        .args(["record", "--interval", "0.2", "--json", "--"])
        .args(["sh", "-c", "sleep 0.5; exit 3"])
        .output()
        .unwrap();
    // record passes the command's exit status on, as `time` does.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let html_path = env.dir.path().join("record.html");
    common::succeeded(
        env.cmd()
            .args(["report", rec["run_id"].as_str().unwrap(), "-o"])
            .arg(&html_path),
    );
    let (dom, _) = render(&html_path);
    for want in [
        "command: sh -c sleep 0.5; exit 3",
        "exit status 3",
        "Recording: ",
        // "2 intervals of 0.2 s" (one when the command's start was slow: the host's load).
        " of 0.2 s over ",
        "recorder",
        "Recording: CPU use",
        // The NUMA view, drawn by the same lines as the text view.
        "NUMA: ",
        "memory of pid",
        "thread ",
    ] {
        assert!(dom.contains(want), "the rendered report lacks '{want}'");
    }
}

#[test]
fn a_report_of_every_suite_renders_in_chromium_and_escapes_what_it_shows() {
    let env = TestEnv::new();
    let a = env.run(&["timers,ctx,c2c", "--samples", "3", "--mode", "thread"]);
    let m = env.run(&[
        "memory.latency,memory.per-event,memory.numa",
        "--samples",
        "3",
    ]);
    let b = env.run(&["memory.bandwidth", "--samples", "3", "--array-size", "16M"]);
    let cl = env.run(&["classic.syscall", "--copies", "1"]);
    let ls = env.json(&[
        "loadstep",
        "--rates",
        "1000,2000,3000,4000",
        "--step-duration",
        "0.3",
        "--warmup",
        "0.1",
        "--json",
    ]);
    let out = env
        .cmd()
        .args(["record", "--interval", "0.2", "--json", "--", "sleep", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // A run from a machine whose command line and host name carry markup.
    let mut evil = a.clone();
    evil["run_id"] = "20990101T000000Z-e71l".into();
    evil["host"] = "<img src=x onerror=alert(2)>".into();
    evil["env"]["kernel"]["cmdline"] = "quiet <script>alert(1)</script>".into();
    let f = env.file("evil.json", &evil.to_string());
    env.cmd().arg("import").arg(&f).assert().success();

    let html_path = env.dir.path().join("report.html");
    let ids: Vec<&str> = [&a, &m, &b, &cl, &ls, &rec, &evil]
        .iter()
        .map(|d| d["run_id"].as_str().unwrap())
        .collect();
    common::succeeded(env.cmd().arg("report").args(&ids).arg("-o").arg(&html_path));
    let html = std::fs::read_to_string(&html_path).unwrap();

    // Self-contained: no script, no fetched resource (the SVG namespace is a name, not a fetch).
    assert!(
        !html.to_lowercase().contains("<script"),
        "a script element in the report"
    );
    for attr in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(attr), "external resource: {attr}");
    }
    assert!(
        html.contains("quiet &lt;script&gt;alert(1)&lt;"),
        "the command line is not shown as text"
    );
    assert!(
        html.contains("&lt;img src=x onerror=alert(2)&gt;"),
        "the host name is not shown as text"
    );
    for title in [
        "Clock read cost",
        "Pipe round trip per placement (thread mode)",
        "Cache-line one-way latency between CPUs",
        "Load latency by working set",
        "Memory bandwidth by kernel",
        "Recording: CPU use",
        "Classic index per test and copy count",
        "Classic suite index",
        "Latency against load",
        "Cost per message against load",
        "<title>topology</title>",
    ] {
        assert!(html.contains(title), "missing chart: {title}");
    }
    assert!(html.contains("Comparison"));

    let (dom, log) = render(&html_path);
    assert!(
        dom.matches("<svg").count() >= 10,
        "charts missing from the rendered DOM"
    );
    assert!(
        dom.contains("&lt;script&gt;alert(1)"),
        "the rendered page does not show the markup as text"
    );
    assert!(
        !dom.contains("<script>alert(1)"),
        "markup became an element"
    );
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
}

/// Two real `run timers` of this machine report together (the report died with "cannot
/// round value (undefined)" when an explanation had no prediction), and the page says
/// where they differ or that they do not.
#[test]
fn two_timers_runs_report_together() {
    let env = TestEnv::new();
    let a = env.run(&["timers", "--samples", "3"]);
    let b = env.run(&["timers", "--samples", "3"]);
    let (a, b) = (a["run_id"].as_str().unwrap(), b["run_id"].as_str().unwrap());
    let html = env.text(&["report", a, b]);
    assert!(
        html.contains(&format!("{a} (A) vs {b} (B)")),
        "no comparison"
    );
    assert!(
        html.contains("No real difference to explain.") || html.contains("<h4>Explanations</h4>"),
        "{html}"
    );
    assert!(html.trim_end().ends_with("</html>"));
}

#[test]
fn the_fleet_picture_of_10000_hosts_is_small_and_renders_with_no_two_labels_overlapping() {
    use common::fleet::{kind_of, planted};
    let fleet = planted(10_000, 40, kind_of);
    let docs: Vec<truebench::result::RunDocument> = fleet.into_iter().map(|x| x.0).collect();
    let v = truebench::fleet::view(&docs, &truebench::fleet::Options::default());
    let section = truebench::report::fleet_html::section(&v);
    assert!(section.len() < 3 << 20, "{} bytes", section.len());
    // The groups above the strips in their order, each with its letter.
    let legend = &section[..section.find("<svg").unwrap()];
    let a = legend
        .find("<b style=\"color:#d62728\">A</b> 200 hosts: slower on")
        .unwrap();
    let b = legend
        .find("<b style=\"color:#ff7f0e\">B</b> 200 hosts")
        .unwrap();
    assert!(a < b, "{legend}");
    // The page, with a script added here only (the report has none) that writes every
    // label's box as the browser laid it out.
    let probe = r#"<pre id="boxes"></pre><script>
document.getElementById('boxes').textContent = JSON.stringify(
  Array.from(document.querySelectorAll('text.glabel')).map(t => {
    const r = t.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom, t.textContent];
  }));
</script>"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.html");
    std::fs::write(
        &path,
        format!("<!doctype html><html><head><meta charset=\"utf-8\"></head><body>{section}{probe}</body></html>"),
    )
    .unwrap();
    let (dom, _) = render(&path);
    let start = dom.find("<pre id=\"boxes\">").unwrap() + "<pre id=\"boxes\">".len();
    let json = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let boxes: Vec<(f64, f64, f64, f64, String)> = serde_json::from_str(json).unwrap();
    // Every row has its groups labelled: A and B on every row at least.
    assert!(boxes.len() >= 2 * 11, "{boxes:?}");
    for (i, x) in boxes.iter().enumerate() {
        assert!(x.2 > x.0 && x.3 > x.1, "an empty box: {x:?}");
        for y in &boxes[i + 1..] {
            let apart = x.2 <= y.0 || y.2 <= x.0 || x.3 <= y.1 || y.3 <= x.1;
            assert!(apart, "labels overlap: {x:?} and {y:?}");
        }
    }
}
