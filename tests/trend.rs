//! `trend` on a history built from a real run document of this machine
//! (tests/fixtures/documents/timers.json): 36 daily runs of host `vm` with 1.5% noise per
//! row and run, the clocksource switched from tsc to kvm-clock at run 12 (the vDSO clock
//! rows 25% slower, the probe's read costs with them), the kernel release bumped at run 24
//! (the system-call rows 15% slower), and run 6 disturbed (every row 30% slower, that run
//! only). Both changes must be found at their runs and explained by their causes; the
//! disturbed run must not be a change. Imported with `truebench import` into a temp db.
//! The report draws the changed rows of that history; `--fleet` groups hosts' changes of
//! one time and cause on synthetic fleets built the same way.

mod common;

use common::TestEnv;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use truebench::result::RunDocument;
use truebench::store::Point;
use truebench::trend::explain::day as day_of;
use truebench::trend::{analyse, fleet, series, Method};

const RUNS: usize = 36;
const CLOCKSOURCE_AT: usize = 12;
const KERNEL_AT: usize = 24;
const DISTURBED: usize = 6;

fn base() -> Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents/timers.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A deterministic normal draw (xorshift and Box-Muller).
struct Noise(u64);

impl Noise {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.unit(), self.unit());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Every figure of a result's statistics and samples times `f`.
fn scale(r: &mut Value, f: f64) {
    for k in ["median", "ci95_low", "ci95_high", "mean", "min", "max"] {
        let v = r["stats"][k].as_f64().unwrap();
        r["stats"][k] = (v * f).into();
    }
    if let Some(s) = r["samples"].as_array_mut() {
        s.iter_mut()
            .for_each(|v| *v = (v.as_f64().unwrap() * f).into());
    }
}

fn param<'a>(r: &'a Value, k: &str) -> &'a str {
    r["params"][k].as_str().unwrap_or("")
}

/// The vDSO clock rows that read the clocksource (not the coarse clock, not rdtsc).
fn reads_clocksource(r: &Value) -> bool {
    param(r, "path") == "vdso" && param(r, "clock") != "monotonic_coarse"
}

/// Run i's day: one a day from 2026-10-01.
fn day(i: usize) -> String {
    if i < 31 {
        format!("2026-10-{:02}", i + 1)
    } else {
        format!("2026-11-{:02}", i - 30)
    }
}

/// What happens in one host's history: the clocksource switched from tsc to kvm-clock at
/// run `clock` (the vDSO clock rows 25% slower, the probe's read costs with them), the
/// kernel release bumped at run `kernel` (the system-call rows 15% slower), run `disturbed`
/// 30% slower in every row.
#[derive(Default)]
struct Plan {
    clock: Option<usize>,
    kernel: Option<usize>,
    disturbed: Option<usize>,
}

/// `RUNS` daily runs of `host` (run ids `{prefix}-00` ...) with 1.5% noise per row and run
/// drawn from `seed`, and what `plan` says.
fn host_history(host: &str, prefix: &str, seed: u64, plan: &Plan) -> Vec<Value> {
    let mut noise = Noise(seed);
    let from = |at: Option<usize>, i: usize| at.is_some_and(|a| i >= a);
    (0..RUNS)
        .map(|i| {
            let mut d = base();
            d["host"] = host.into();
            d["run_id"] = format!("{prefix}-{i:02}").into();
            d["started_at"] = format!("{}T03:00:00Z", day(i)).into();
            d["finished_at"] = format!("{}T03:01:00Z", day(i)).into();
            if from(plan.clock, i) {
                d["env"]["clock"]["clocksource"] = "kvm-clock".into();
                for c in ["monotonic", "monotonic_raw", "realtime", "boottime"] {
                    let v = d["env"]["clock"]["read_cost_ns"][c].as_f64().unwrap();
                    d["env"]["clock"]["read_cost_ns"][c] = (v * 1.25).into();
                }
            }
            if from(plan.kernel, i) {
                d["env"]["kernel"]["release"] = "6.19.2-fc-v700".into();
            }
            for r in d["results"].as_array_mut().unwrap() {
                let mut f = (0.015 * noise.normal()).exp();
                if from(plan.clock, i) && reads_clocksource(r) {
                    f *= 1.25;
                }
                if from(plan.kernel, i) && param(r, "path") == "syscall" {
                    f *= 1.15;
                }
                if plan.disturbed == Some(i) {
                    f *= 1.3;
                }
                scale(r, f);
            }
            d
        })
        .collect()
}

fn history() -> Vec<Value> {
    let plan = Plan {
        clock: Some(CLOCKSOURCE_AT),
        kernel: Some(KERNEL_AT),
        disturbed: Some(DISTURBED),
    };
    host_history("vm", "trend", 0x9E37_79B9_7F4A_7C15, &plan)
}

fn imported() -> TestEnv {
    let env = TestEnv::new();
    let text: String = history()
        .iter()
        .map(|d| serde_json::to_string(d).unwrap() + "\n")
        .collect();
    let file = env.dir.path().join("history.ndjson");
    std::fs::write(&file, text).unwrap();
    env.text(&["import", file.to_str().unwrap()]);
    env
}

fn rows(c: &Value) -> Vec<String> {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["params"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_clocksource_switch_and_a_kernel_bump_are_found_at_their_runs_and_explained() {
    let env = imported();
    let t = env.json(&["trend", "--json"]);
    assert_eq!(t["schema"], "truebench.trend/1");
    assert_eq!(t["method"]["min_segment"], 3);
    assert_eq!(t["hosts"][0]["runs"], RUNS);
    let changes = t["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{changes:#?}");

    let clock = &changes[0];
    assert_eq!(
        clock["after"]["run_id"],
        format!("trend-{CLOCKSOURCE_AT:02}")
    );
    assert_eq!(
        clock["before"]["run_id"],
        format!("trend-{:02}", CLOCKSOURCE_AT - 1)
    );
    let mut want: Vec<String> = ["boottime", "monotonic", "monotonic_raw", "realtime"]
        .iter()
        .map(|c| format!("clock={c},path=vdso"))
        .collect();
    let mut got = rows(clock);
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(clock["direction"], "slower");
    let (lo, hi) = (
        clock["factor_low"].as_f64().unwrap(),
        clock["factor_high"].as_f64().unwrap(),
    );
    assert!(lo < 1.25 && 1.25 < hi, "{lo} {hi}");
    let changed: Vec<&str> = clock["cause"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(changed, ["clocksource: tsc -> kvm-clock"], "{clock:#}");
    assert_eq!(clock["cause"]["cause"], "timer", "{:#}", clock["cause"]);

    let kernel = &changes[1];
    assert_eq!(kernel["after"]["run_id"], format!("trend-{KERNEL_AT:02}"));
    assert!(
        rows(kernel).iter().all(|p| p.ends_with("path=syscall")),
        "{kernel:#}"
    );
    assert_eq!(rows(kernel).len(), 5);
    assert_eq!(
        (&kernel["direction"], &kernel["kind"]),
        (&"slower".into(), &"step".into())
    );
    let changed = kernel["cause"]["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert!(changed[0]
        .as_str()
        .unwrap()
        .starts_with("kernel: 6.18.44-fc-v669 -> 6.19.2"));

    // The disturbed run is in no change's place.
    for c in changes {
        for r in c["rows"].as_array().unwrap() {
            let at = r["at"].as_str().unwrap();
            assert!(
                !at.starts_with("2026-10-07") && !at.starts_with("2026-10-08"),
                "{r}"
            );
        }
    }

    // The text says the same within 100 columns.
    let text = env.text(&["trend"]);
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(text.contains("clocksource: tsc -> kvm-clock"), "{text}");
    assert!(
        text.contains("2026-10-12 -> 2026-10-13: 4 of 11 timers rows 2"),
        "{text}"
    );
    assert!(
        text.contains("2026-10-24 -> 2026-10-25: 5 of 11 timers rows 1"),
        "{text}"
    );
    assert!(!text.contains("drift"), "{text}");
}

#[test]
fn narrowing_by_suite_row_since_and_host() {
    let env = imported();
    let t = env.json(&["trend", "--json", "--row", "path=syscall"]);
    assert_eq!(t["changes"].as_array().unwrap().len(), 1);
    let t = env.json(&["trend", "--json", "--since", "2026-10-20"]);
    let c = t["changes"].as_array().unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0]["after"]["run_id"], format!("trend-{KERNEL_AT:02}"));
    let out = env
        .cmd()
        .args(["trend", "--host", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
    let out = env
        .cmd()
        .args(["trend", "--since", "yesterday"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A suite no run holds: no series, said as such.
    let out = env
        .cmd()
        .args(["trend", "--suite", "memory"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let t = env.json(&["trend", "--json", "--suite", "timers", "--host", "vm"]);
    assert_eq!(t["changes"].as_array().unwrap().len(), 2);
}

#[test]
fn postgresql_reads_the_same_changes_as_sqlite() {
    let env = imported();
    let pg = common::pg::PgServer::start();
    let url = pg.database("trend");
    let file = env.dir.path().join("history.ndjson");
    env.text(&["--db", &url, "import", file.to_str().unwrap()]);
    let at = |t: &Value| -> Vec<(String, usize)> {
        t["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let id = c["after"]["run_id"].as_str().unwrap().to_string();
                (id, c["rows"].as_array().unwrap().len())
            })
            .collect()
    };
    let lite = env.json(&["trend", "--json"]);
    let pgt = env.json(&["--db", &url, "trend", "--json"]);
    assert_eq!(at(&lite), at(&pgt));
    assert_eq!(at(&pgt).len(), 2);
    assert_eq!(pgt["changes"][0]["cause"]["cause"], "timer");
}

/// The report of runs `ids`, with a script added here only (the report has none) that
/// writes, per trend chart, its title and the centre x of each run's dot and each change
/// point's line as the browser laid them out.
fn report_drawn(env: &TestEnv, ids: &[String]) -> (String, Value) {
    let mut args = vec!["report"];
    args.extend(ids.iter().map(String::as_str));
    let html = env.text(&args);
    let probe = r#"<pre id="drawn"></pre><script>
const x = e => { const r = e.getBoundingClientRect(); return (r.left + r.right) / 2; };
document.getElementById('drawn').textContent = JSON.stringify(
  Array.from(document.querySelectorAll('svg.trend')).map(s => ({
    title: s.querySelector('title').textContent,
    runs: Array.from(s.querySelectorAll('circle.run')).map(c => [c.dataset.run, x(c)]),
    changes: Array.from(s.querySelectorAll('line.change')).map(l => [l.dataset.after, x(l)]),
    labels: Array.from(s.querySelectorAll('text.change')).map(t => t.textContent),
  })));
</script>"#;
    let path = env.dir.path().join("report.html");
    std::fs::write(&path, html.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let (dom, log) = common::browser::render(&path);
    assert!(!log.contains("Uncaught"), "{log}");
    let start = dom.find("<pre id=\"drawn\">").unwrap() + "<pre id=\"drawn\">".len();
    let json = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    (html, serde_json::from_str(json).unwrap())
}

fn ids(runs: std::ops::Range<usize>) -> Vec<String> {
    runs.map(|i| format!("trend-{i:02}")).collect()
}

#[test]
fn the_report_draws_each_changed_row_with_its_change_point_between_the_right_runs() {
    let env = imported();
    let (html, charts) = report_drawn(&env, &ids(0..RUNS));
    assert!(html.contains("<h2>Trend</h2>"), "no trend section");
    assert!(html.contains("<h3>Host vm: 36 runs, 2026-10-01 to 2026-11-05</h3>"));
    // The 4 clock rows and the 5 system-call rows; the other 2 are counted, not drawn.
    assert!(
        html.contains("9 of 11 rows changed and are drawn; 2 rows with no change are not."),
        "{html}"
    );
    let charts = charts.as_array().unwrap();
    assert_eq!(charts.len(), 9);
    let mut at: Vec<(String, String)> = vec![];
    for c in charts {
        let title = c["title"].as_str().unwrap();
        let runs = c["runs"].as_array().unwrap();
        assert_eq!(runs.len(), RUNS, "{title}: a dot per run");
        let x_of = |id: &str| {
            runs.iter()
                .find(|r| r[0] == id)
                .unwrap_or_else(|| panic!("{title}: no dot of {id}"))[1]
                .as_f64()
                .unwrap()
        };
        let changes = c["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "{title}: {changes:?}");
        let after = changes[0][0].as_str().unwrap();
        let n: usize = after["trend-".len()..].parse().unwrap();
        let x = changes[0][1].as_f64().unwrap();
        let before = format!("trend-{:02}", n - 1);
        assert!(
            x_of(&before) < x && x < x_of(after),
            "{title}: the change at {x} is not between {before} and {after}"
        );
        let label = c["labels"][0].as_str().unwrap();
        at.push((
            after.to_string(),
            label[..label.find(' ').unwrap()].to_string(),
        ));
        let want = if title.contains("path=syscall") {
            format!("trend-{KERNEL_AT:02}")
        } else {
            assert!(title.contains("path=vdso"), "{title}");
            format!("trend-{CLOCKSOURCE_AT:02}")
        };
        assert_eq!(after, want, "{title}");
        // The factor the label gives is the planted one, within the noise.
        let f: f64 = label[label.find('×').unwrap() + '×'.len_utf8()..]
            .parse()
            .unwrap();
        let planted = if title.contains("path=syscall") {
            1.15
        } else {
            1.25
        };
        assert!((f / planted - 1.0).abs() < 0.03, "{title}: {label}");
    }
    // Labelled with the day of the first run after.
    assert!(at.contains(&(format!("trend-{CLOCKSOURCE_AT:02}"), day(CLOCKSOURCE_AT))));
    assert!(at.contains(&(format!("trend-{KERNEL_AT:02}"), day(KERNEL_AT))));
    // Each host change in words above its charts.
    assert!(html.contains("clocksource: tsc -&gt; kvm-clock"), "{html}");
}

#[test]
fn the_report_of_a_history_without_a_change_has_no_trend_section() {
    // The runs before the clocksource switch, the disturbed run among them.
    let env = imported();
    let (html, charts) = report_drawn(&env, &ids(0..CLOCKSOURCE_AT));
    assert!(!html.contains("<h2>Trend</h2>"));
    assert_eq!(charts.as_array().unwrap().len(), 0);
}

/// `trend --fleet` of the hosts' histories read as the store reads them (host by host,
/// oldest first), in memory: the same series, changes and explanations as the command.
fn fleet_of(histories: Vec<Vec<Value>>, within_days: f64) -> Vec<fleet::FleetChange> {
    let mut docs: Vec<RunDocument> = histories
        .into_iter()
        .flatten()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    docs.sort_by(|a, b| (&a.host, &a.started_at).cmp(&(&b.host, &b.started_at)));
    let points: Vec<Point> = docs.iter().flat_map(Point::of_doc).collect();
    let hosts = series::hosts(&points, &|_| true);
    let by_id: HashMap<&str, &RunDocument> = docs.iter().map(|d| (d.run_id.as_str(), d)).collect();
    let load = |id: &str| by_id.get(id).map(|d| (*d).clone());
    let t = analyse(&hosts, &Method::default(), &load);
    fleet::group(&t.changes, within_days)
}

/// Host `name`'s history with its own noise.
fn fleet_host(name: &str, seed: u64, plan: &Plan) -> Vec<Value> {
    host_history(
        name,
        name,
        0x9E37_79B9_7F4A_7C15 ^ (seed + 1).wrapping_mul(0x2545_F491_4F6C_DD1D),
        plan,
    )
}

fn names(f: &fleet::FleetChange) -> Vec<String> {
    let mut h = f.hosts.clone();
    h.sort();
    h
}

#[test]
fn the_fleet_groups_30_hosts_switching_clocksource_apart_from_5_with_a_kernel_bump() {
    // 30 hosts switch clocksource over three days (runs 12, 13, 14), 5 others get a new
    // kernel in the same days: same time, another cause. Each host has a disturbed run.
    let mut histories = vec![];
    for h in 0..30 {
        let plan = Plan {
            clock: Some(12 + h % 3),
            disturbed: Some(5 + h % 7),
            ..Plan::default()
        };
        histories.push(fleet_host(&format!("c{h:02}"), h as u64, &plan));
    }
    for h in 0..5 {
        let plan = Plan {
            kernel: Some(12 + h % 3),
            disturbed: Some(20 + h),
            ..Plan::default()
        };
        histories.push(fleet_host(&format!("k{h:02}"), 100 + h as u64, &plan));
    }
    let groups = fleet_of(histories, fleet::WITHIN_DAYS);
    assert_eq!(groups.len(), 2, "{groups:#?}");
    let (clock, kernel) = (&groups[0], &groups[1]);
    assert_eq!(
        names(clock),
        (0..30).map(|h| format!("c{h:02}")).collect::<Vec<_>>()
    );
    assert_eq!(clock.changed, ["clocksource: tsc -> kvm-clock"]);
    assert_eq!(
        (clock.direction, clock.suites.as_slice()),
        ("slower", &["timers".to_string()][..])
    );
    assert!((clock.factor / 1.25 - 1.0).abs() < 0.03, "{}", clock.factor);
    // The switches' first runs after span runs 12 to 14; a disturbed run just before the
    // switch pulls a host's change point a run or two earlier (single linkage keeps it in).
    assert_eq!(clock.to, format!("{}T03:00:00Z", day(14)));
    assert!(
        clock.from >= format!("{}T03:00:00Z", day(10))
            && clock.from <= format!("{}T03:00:00Z", day(12)),
        "{}",
        clock.from
    );
    let when = format!(
        "slower between {} and {}; clocksource: tsc -> kvm-clock",
        day_of(&clock.from),
        day_of(&clock.to)
    );
    assert!(
        clock.summary.starts_with("30 hosts: timers rows 2") && clock.summary.ends_with(&when),
        "{}",
        clock.summary
    );
    assert_eq!(
        names(kernel),
        (0..5).map(|h| format!("k{h:02}")).collect::<Vec<_>>()
    );
    assert_eq!(kernel.changed.len(), 1);
    assert!(
        kernel.changed[0].starts_with("kernel: "),
        "{:?}",
        kernel.changed
    );
    assert!(
        (kernel.factor / 1.15 - 1.0).abs() < 0.03,
        "{}",
        kernel.factor
    );
}

#[test]
fn the_fleet_keeps_the_same_change_at_different_times_apart() {
    // The same clocksource switch on 5 hosts at run 8 and on 5 others 18 days later: two
    // changes of 5 hosts, oldest first as they are as large; one of 10 when --within
    // spans the 18 days.
    let mut histories = vec![];
    for h in 0..10 {
        let plan = Plan {
            clock: Some(if h < 5 { 8 } else { 26 }),
            ..Plan::default()
        };
        histories.push(fleet_host(&format!("h{h:02}"), 200 + h as u64, &plan));
    }
    let groups = fleet_of(histories.clone(), fleet::WITHIN_DAYS);
    assert_eq!(groups.len(), 2, "{groups:#?}");
    assert_eq!(
        names(&groups[0]),
        (0..5).map(|h| format!("h{h:02}")).collect::<Vec<_>>()
    );
    assert_eq!(
        names(&groups[1]),
        (5..10).map(|h| format!("h{h:02}")).collect::<Vec<_>>()
    );
    assert_eq!(groups[0].from, format!("{}T03:00:00Z", day(8)));
    assert_eq!(groups[1].from, format!("{}T03:00:00Z", day(26)));
    let groups = fleet_of(histories, 20.0);
    assert_eq!(groups.len(), 1, "{groups:#?}");
    assert_eq!(groups[0].hosts.len(), 10);
}

#[test]
fn trend_fleet_prints_the_largest_change_first() {
    // The command on a stored history: 4 hosts switch clocksource, 2 get a new kernel.
    let env = TestEnv::new();
    let mut text = String::new();
    for h in 0..6 {
        let plan = if h < 4 {
            Plan {
                clock: Some(12 + h % 2),
                ..Plan::default()
            }
        } else {
            Plan {
                kernel: Some(20),
                ..Plan::default()
            }
        };
        for d in fleet_host(&format!("f{h}"), 300 + h as u64, &plan) {
            text += &(serde_json::to_string(&d).unwrap() + "\n");
        }
    }
    let file = env.dir.path().join("fleet.ndjson");
    std::fs::write(&file, text).unwrap();
    env.text(&["import", file.to_str().unwrap()]);
    let t = env.json(&["trend", "--fleet", "--json"]);
    let fleet = t["fleet"].as_array().unwrap();
    assert_eq!(fleet.len(), 2, "{fleet:#?}");
    assert_eq!(fleet[0]["hosts"].as_array().unwrap().len(), 4);
    assert_eq!(fleet[1]["hosts"].as_array().unwrap().len(), 2);
    let out = env.text(&["trend", "--fleet"]);
    assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
    let first = out
        .find("4 hosts: timers rows")
        .unwrap_or_else(|| panic!("{out}"));
    let second = out
        .find("2 hosts: timers rows")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(first < second, "{out}");
}
