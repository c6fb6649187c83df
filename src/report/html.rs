//! The self-contained HTML report (`truebench report`): the environment and topology, one
//! section per suite view (its headline and charts), every result with its CI, findings
//! with evidence (warnings first), a comparison when several runs are given, and the trend
//! of each host's runs when one changed (`trend_html`). No scripts and no
//! external resources; the template auto-escapes every string from the machine or the user.

use super::svg;
use super::text::all_findings;
use super::views::VIEWS;
use crate::compare::compare;
use crate::result::RunDocument;
use crate::units::{num, pct};
use minijinja::value::Serde;
use minijinja::{context, Environment, UndefinedBehavior, Value};
use serde::Serialize;

const TEMPLATE: &str = include_str!("templates/report.html");

/// One suite view's section: its title, headline lines and charts (SVG, escaped by svg.rs).
#[derive(Serialize)]
struct Section {
    title: &'static str,
    headline: Vec<String>,
    charts: Vec<String>,
}

fn sections(doc: &RunDocument) -> Vec<Section> {
    // The prediction is a section of the report only (`truebench predict` prints it).
    let predict: &dyn super::views::View = &super::views::predict::Predict;
    VIEWS
        .iter()
        .copied()
        .chain(std::iter::once(predict))
        .filter(|v| v.applies(doc))
        .map(|v| Section {
            title: v.title(),
            headline: v.headline(doc),
            charts: v
                .charts(doc)
                .iter()
                .map(|c| c.svg())
                .filter(|s| !s.is_empty())
                .collect(),
        })
        .collect()
}

/// One row of the results table, formatted.
#[derive(Serialize)]
struct ResultRow {
    benchmark: String,
    params: String,
    placement: String,
    median: String,
    ci: String,
    cv: String,
    n: usize,
    unit: String,
    timer_share: String,
}

/// What the template shows of one run.
#[derive(Serialize)]
struct RunView<'a> {
    run_id: &'a str,
    host: Option<&'a str>,
    started_at: &'a str,
    suites: &'a [String],
    interrupted: bool,
    /// The run's labels, `k=v` each.
    tags: Vec<String>,
    /// The `--start-at` line, when the run was scheduled.
    scheduled_start: Option<String>,
    env_text: String,
    results: Vec<ResultRow>,
    skipped: &'a [crate::result::Skipped],
    findings: Vec<crate::finding::Finding>,
    sections: Vec<Section>,
    /// Our SVG; the template marks it safe.
    topology_svg: String,
}

fn env_text(doc: &RunDocument) -> String {
    let e = &doc.env;
    let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "null".into());
    let speed: String = super::cpu_speed::lines(doc)
        .iter()
        .map(|l| format!("\n{l}"))
        .collect();
    format!(
        "host {} · {} · kernel {} · cmdline {}\nVM {} · container {} · clocksource {} · CPUs usable {} (capacity {}) · packages {}, cores {}, threads {} · LLC groups {} · NUMA nodes {}",
        s(&e.hostname),
        s(&e.kernel.cpu_model),
        s(&e.kernel.release),
        s(&e.kernel.cmdline),
        s(&e.virtualization.vm),
        s(&e.virtualization.container),
        s(&e.clock.clocksource),
        crate::probe::cpulist::format_list(&e.cpus.usable),
        num(e.cpus.capacity),
        e.topology.packages,
        e.topology.cores,
        e.topology.threads,
        e.topology
            .llc_groups
            .iter()
            .map(|g| format!("[{}]", crate::probe::cpulist::format_list(g)))
            .collect::<Vec<_>>()
            .join(" "),
        e.numa.nodes.len(),
    ) + &speed
}

fn run_view(doc: &RunDocument) -> RunView<'_> {
    let results = doc
        .results
        .iter()
        .map(|r| ResultRow {
            benchmark: r.benchmark.clone(),
            params: r.params_text(),
            placement: match &r.placement.cpus {
                Some(c) => format!("{} {c:?}", r.placement.name),
                None => r.placement.name.clone(),
            },
            median: num(r.stats.median),
            ci: format!("{} – {}", num(r.stats.ci95_low), num(r.stats.ci95_high)),
            cv: pct(r.stats.cv),
            n: r.stats.n,
            unit: r.unit.clone(),
            timer_share: pct(r.quality.timer_share),
        })
        .collect();
    RunView {
        run_id: &doc.run_id,
        host: doc.host.as_deref(),
        started_at: &doc.started_at,
        suites: &doc.suites,
        interrupted: doc.interrupted,
        tags: doc.tags.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        scheduled_start: doc
            .scheduled_start
            .as_ref()
            .map(crate::report::text::scheduled_start_line),
        env_text: env_text(doc),
        results,
        skipped: &doc.skipped,
        findings: all_findings(doc),
        sections: sections(doc),
        topology_svg: svg::topology(&doc.env),
    }
}

/// One comparison as the template shows it: the comparison, its chart of B/A ratios
/// (our SVG) and each explained row's sentence.
#[derive(Serialize)]
struct CompareView {
    #[serde(flatten)]
    c: crate::compare::Comparison,
    chart: String,
    sentences: Vec<String>,
}

fn compare_view(c: crate::compare::Comparison) -> CompareView {
    let bars: Vec<(String, f64, f64, f64)> = c
        .rows
        .iter()
        .filter(|r| r.comparability.is_empty())
        .map(|r| {
            (
                format!("{} {} {}", r.benchmark, r.placement, r.params),
                r.ratio,
                r.ratio,
                r.ratio,
            )
        })
        .collect();
    let chart = if bars.is_empty() {
        String::new()
    } else {
        svg::bars("B/A per row", "ratio, 1 = equal", &bars)
    };
    let sentences = c
        .rows
        .iter()
        .filter(|r| r.verdict.is_real())
        .map(crate::compare::summary::row_sentence)
        .collect();
    CompareView {
        c,
        chart,
        sentences,
    }
}

/// Above this many runs, a report shows the fleet, and the runs and comparisons of the
/// outliers (each against the typical host) only, at most [`SHOWN_PER_GROUP`] of each
/// group of outliers (the fleet's table lists them all): 400 outliers' runs made the
/// report of 10,000 hosts 11 MiB.
pub const ALL_RUNS_MAX: usize = 10;
/// Outliers of one group whose runs a fleet report shows, in the fleet's rank order.
pub const SHOWN_PER_GROUP: usize = 3;

/// Render the report of `docs` (the first is the baseline of the comparisons; with three
/// runs or more, the fleet section first).
pub fn render(docs: &[RunDocument]) -> anyhow::Result<String> {
    let mut env = Environment::new();
    // A field the template names but the data lacks is an error, never silently empty:
    // the tests render every fixture document, alone, in pairs and all together.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_template("report.html", TEMPLATE)?;
    let fleet =
        (docs.len() >= 3).then(|| crate::fleet::view(docs, &crate::fleet::Options::default()));
    let (shown, comparisons): (Vec<&RunDocument>, Vec<CompareView>) = match &fleet {
        Some(f) if docs.len() > ALL_RUNS_MAX => {
            let typical = docs
                .iter()
                .find(|d| f.typical_host.as_deref() == Some(d.run_id.as_str()));
            let by_id: std::collections::HashMap<&str, &RunDocument> =
                docs.iter().map(|d| (d.run_id.as_str(), d)).collect();
            let group: std::collections::HashMap<&str, usize> = f
                .cause_groups
                .iter()
                .enumerate()
                .flat_map(|(g, grp)| grp.hosts.iter().map(move |r| (r.as_str(), g)))
                .collect();
            let mut shown_of = std::collections::HashMap::new();
            let outliers: Vec<&RunDocument> = f
                .hosts
                .iter()
                .filter(|h| h.outlier)
                .filter(|h| {
                    let n = shown_of.entry(group.get(h.run.as_str())).or_insert(0);
                    *n += 1;
                    *n <= SHOWN_PER_GROUP
                })
                .filter_map(|h| by_id.get(h.run.as_str()).copied())
                .collect();
            let cmp = match typical {
                Some(t) => outliers
                    .iter()
                    .map(|b| compare_view(compare(t, b)))
                    .collect(),
                None => vec![],
            };
            (typical.into_iter().chain(outliers).collect(), cmp)
        }
        _ => (
            docs.iter().collect(),
            docs.iter()
                .skip(1)
                .map(|b| compare_view(compare(&docs[0], b)))
                .collect(),
        ),
    };
    let runs: Vec<RunView> = shown.into_iter().map(run_view).collect();
    let html = env.get_template("report.html")?.render(context! {
        runs => Value::from(Serde(&runs)),
        compare => Value::from(Serde(&comparisons)),
        fleet => fleet.as_ref().map(super::fleet_html::section).unwrap_or_default(),
        trend => super::trend_html::section(docs),
        total_runs => docs.len(),
        per_group => SHOWN_PER_GROUP,
        tool => crate::result::Tool::current().version,
    })?;
    Ok(html)
}
