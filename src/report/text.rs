//! A run as terminal text. By default a concise summary per suite (each view's, no line
//! wider than 100 columns), then the cases not run and the findings, warnings first; in
//! full (`run --verbose`, `show --all`) the per-result table (median, 95% CI, CV, n, unit,
//! timer share, placement and what was observed) and each view's full sections. Also the
//! run history as a table.

use super::views::{classic::is_classic, wrap, VIEWS};
use crate::finding::{Finding, Severity};
use crate::result::{BenchResult, Observed, RunDocument};
use crate::store::RunSummary;
use crate::units::{num, pct};

/// How much of a run to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Each suite's summary, no wider than 100 columns.
    Summary,
    /// Every result in one table, and each suite's full sections.
    Full,
}

/// The same-cpu result with the same benchmark and params, when the run has one.
fn same_cpu_of<'a>(doc: &'a RunDocument, r: &BenchResult) -> Option<&'a BenchResult> {
    doc.results.iter().find(|o| {
        o.placement.name == "same-cpu" && o.benchmark == r.benchmark && o.params == r.params
    })
}

/// "A[0] B[0,1] together 90%, migrations 0/3": what a pair's `placement.observed` says.
pub fn observed_summary(obs: &Observed) -> String {
    let Observed::Pair(p) = obs else {
        return String::new();
    };
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let m = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "n/a".into());
    format!(
        "A[{}] B[{}] together {:.0}%, migrations {}/{}",
        list(&p.tasks.a.cpus_seen),
        list(&p.tasks.b.cpus_seen),
        p.colocated_fraction * 100.0,
        m(p.tasks.a.migrations),
        m(p.tasks.b.migrations)
    )
}

/// Every result but the classic ones (their own table holds them) in one table.
fn results_table(doc: &RunDocument) -> Option<String> {
    let others: Vec<&BenchResult> = doc.results.iter().filter(|r| !is_classic(r)).collect();
    if others.is_empty() {
        return None;
    }
    let matrix = others.iter().any(|r| r.placement.name == "same-cpu");
    let observed = others
        .iter()
        .any(|r| matches!(r.placement.observed, Some(Observed::Pair(_))));
    let mut header = vec![
        "benchmark",
        "params",
        "placement",
        "median",
        "95% CI",
        "CV",
        "n",
        "unit",
    ];
    if matrix {
        header.push("vs same-cpu");
    }
    header.push("timer share");
    if observed {
        header.push("observed");
    }
    let mut t = super::table(&header);
    for r in others {
        let s = &r.stats;
        let mut row = vec![
            r.benchmark.clone(),
            r.params_text(),
            match &r.placement.cpus {
                Some(c) => format!("{} {:?}", r.placement.name, c),
                None => r.placement.name.clone(),
            },
            num(s.median),
            format!("{} – {}", num(s.ci95_low), num(s.ci95_high)),
            pct(s.cv),
            s.n.to_string(),
            r.unit.clone(),
        ];
        if matrix {
            row.push(
                same_cpu_of(doc, r)
                    .map(|b| format!("{:.2}x", s.median / b.stats.median))
                    .unwrap_or_default(),
            );
        }
        row.push(pct(r.quality.timer_share));
        if observed {
            row.push(
                r.placement
                    .observed
                    .as_ref()
                    .map(observed_summary)
                    .unwrap_or_default(),
            );
        }
        t.add_row(row);
    }
    Some(format!("{t}\n"))
}

/// The run's findings and its results', each result's prefixed with what it is about;
/// warnings first.
pub fn all_findings(doc: &RunDocument) -> Vec<Finding> {
    let mut findings = doc.findings.clone();
    for r in &doc.results {
        for f in &r.findings {
            let mut f = f.clone();
            f.message = format!(
                "{} {} [{}]: {}",
                r.benchmark,
                r.params_text(),
                r.placement.name,
                f.message
            );
            findings.push(f);
        }
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

fn finding_text(f: &Finding) -> String {
    let sev = match f.severity {
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let mut s = wrap(&format!("  [{sev}] {}: {}", f.id, f.message));
    for e in &f.evidence {
        s.push_str(&wrap(&format!("      evidence: {e}")));
    }
    s
}

/// Findings wrapped to 100 columns, each with its evidence. In a summary, a finding raised
/// on several results is shown once, with how many more results raised it and which.
fn findings_wrapped(doc: &RunDocument, detail: Detail) -> String {
    let findings = all_findings(doc);
    if detail == Detail::Full {
        return findings.iter().map(finding_text).collect();
    }
    // Which results raised each finding id, in order.
    let mut raised: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in &doc.results {
        for f in &r.findings {
            match raised.iter_mut().find(|(id, _)| *id == f.id) {
                Some((_, on)) => on.push(&r.benchmark),
                None => raised.push((&f.id, vec![&r.benchmark])),
            }
        }
    }
    let mut s = String::new();
    let mut shown: Vec<&str> = Vec::new();
    for f in &findings {
        let on = raised
            .iter()
            .find(|(id, _)| *id == f.id)
            .map(|(_, on)| on.as_slice())
            .unwrap_or_default();
        if on.len() > 1 && shown.contains(&f.id.as_str()) {
            continue;
        }
        s.push_str(&finding_text(f));
        if on.len() > 1 {
            shown.push(&f.id);
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for b in &on[1..] {
                match counts.iter_mut().find(|(x, _)| x == b) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((b, 1)),
                }
            }
            let list: Vec<String> = counts.iter().map(|(b, n)| format!("{b} x{n}")).collect();
            s.push_str(&wrap(&format!(
                "      and on {} more {}: {} (show --all lists each)",
                on.len() - 1,
                crate::units::noun(on.len() - 1, "result"),
                list.join(", ")
            )));
        }
    }
    s
}

/// `--start-at`: requested and actual start and how far the clock can be trusted.
pub fn scheduled_start_line(s: &crate::result::ScheduledStart) -> String {
    let clock = match (&s.clock_sync, &s.clock_sync_unavailable) {
        (Some(c), _) if c.synchronised => format!(
            "clock synchronised (estimated error {} µs, maximum {} µs)",
            c.estimated_error_us, c.maximum_error_us
        ),
        (Some(c), _) => format!(
            "clock NOT synchronised ({}, {}): hosts may not have started together",
            c.state,
            c.status.join(" ")
        ),
        (None, Some(why)) => format!("clock synchronisation unknown: {why}"),
        (None, None) => "clock synchronisation not recorded".into(),
    };
    format!(
        "Scheduled start: asked for {}, began {} ({:.3} ms late); {clock}",
        s.requested_at, s.began_at, s.late_ms
    )
}

pub fn render(doc: &RunDocument, detail: Detail) -> String {
    let mut out = format!(
        "Run {} on {} at {}{}\n",
        doc.run_id,
        doc.host.as_deref().unwrap_or("unknown host"),
        doc.started_at,
        if doc.interrupted {
            " (INTERRUPTED: partial results)"
        } else {
            ""
        }
    );
    if !doc.tags.is_empty() {
        out.push_str(&wrap(&format!(
            "Tags: {}",
            crate::result::tags::text(&doc.tags)
        )));
    }
    if let Some(s) = &doc.scheduled_start {
        out.push_str(&wrap(&scheduled_start_line(s)));
    }
    for l in super::cpu_speed::lines(doc) {
        out.push_str(&wrap(&l));
    }
    for l in crate::result::suite_cost::lines(&doc.suite_costs) {
        out.push_str(&wrap(&l));
    }
    let shown = VIEWS.iter().filter(|v| v.applies(doc));
    match detail {
        Detail::Summary => {
            for v in shown {
                out.push('\n');
                out.push_str(&v.summary(doc));
            }
        }
        Detail::Full => {
            out.push_str(&results_table(doc).unwrap_or_default());
            for v in shown {
                out.push_str(&v.full(doc));
            }
        }
    }
    // Only when no view had anything to show (a recording, a load-step or a batch
    // experiment is data of its own, not "no results").
    if doc.results.is_empty() && !VIEWS.iter().any(|v| v.applies(doc)) {
        out.push_str("No results.\n");
    }
    if !doc.skipped.is_empty() {
        out.push_str("\nNot run here:\n");
        for s in &doc.skipped {
            out.push_str(&wrap(&format!(
                "  {} {}: {}",
                s.benchmark, s.case, s.reason
            )));
        }
    }
    if !all_findings(doc).is_empty() {
        out.push_str("\nFindings (warnings first):\n");
        out.push_str(&findings_wrapped(doc, detail));
    }
    out
}

/// What `history` prints when no run matched: why, with the number of runs stored (None:
/// the database does not exist yet).
pub fn render_no_history(tags: &[(String, String)], stored: Option<usize>) -> String {
    let runs = |n: usize| format!("{} stored", crate::units::count(n, "run"));
    match stored {
        None | Some(0) => "No runs stored yet: `truebench run` makes one.\n".into(),
        Some(n) if tags.is_empty() => format!("No runs listed; {}.\n", runs(n)),
        Some(n) => {
            let wanted: Vec<String> = tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let what = match wanted.as_slice() {
                [one] => format!("the tag {one}"),
                many => format!("every one of the tags {}", many.join(", ")),
            };
            format!("No run carries {what}; {}.\n", runs(n))
        }
    }
}

/// The stored runs, newest first, each on a line of its own (id, start, host, suites,
/// results) with its headline and tags indented below, every line no wider than 100
/// columns (`views::wrap`): a table of the seven wrapped its headlines to a few letters a
/// line.
pub fn render_history(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return render_no_history(&[], None);
    }
    let mut s = String::new();
    for r in runs {
        let host = r.host.as_deref().unwrap_or("unknown host");
        let interrupted = if r.interrupted { ", interrupted" } else { "" };
        s.push_str(&super::views::wrap(&format!(
            "{}  {} UTC  {host}  {}  {}{interrupted}",
            r.run_id,
            started(&r.started_at),
            r.suites.join(","),
            crate::units::count(r.results, "result"),
        )));
        if !r.headline.is_empty() {
            s.push_str(&super::views::wrap(&format!("    {}", r.headline)));
        }
        if !r.tags.is_empty() {
            let tags = crate::result::tags::text(&r.tags);
            s.push_str(&super::views::wrap(&format!("    tags: {tags}")));
        }
    }
    s
}

/// A start time to the second (`2026-11-27 19:57:17`), from the stored RFC 3339 text; a
/// text that is not one is shown as it is.
fn started(at: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(at) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string(),
        Err(_) => at.to_string(),
    }
}

#[cfg(test)]
mod history_tests {
    use super::render_history;
    use crate::store::RunSummary;

    #[test]
    fn history_fits_100_columns_and_counts_grammatically() {
        let run = |id: &str, results, interrupted, tags: &[(&str, &str)]| RunSummary {
            run_id: id.into(),
            started_at: "2026-11-27T19:57:12.497Z".into(),
            host: Some("web-01".into()),
            suites: vec!["timers".into(), "ctx".into(), "c2c".into(), "memory".into()],
            results,
            interrupted,
            headline: format!(
                "timers.clock-read@1 clock=monotonic,path=vdso 21.39 ns/read {}",
                "x ".repeat(40)
            ),
            tags: tags
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let text = render_history(&[
            run(
                "20261127T195712Z-361f",
                1,
                true,
                &[("group", "db,web"), ("host", "web-01")],
            ),
            run("20261127T195709Z-5363", 11, false, &[]),
        ]);
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{line}");
        }
        assert!(text.starts_with("20261127T195712Z-361f  2026-11-27 19:57:12 UTC  web-01  timers,ctx,c2c,memory  1 result, interrupted\n"), "{text}");
        assert!(
            text.contains("\n20261127T195709Z-5363  2026-11-27 19:57:12 UTC"),
            "{text}"
        );
        assert!(text.contains("  11 results\n"), "{text}");
        assert!(
            text.contains("    tags: group=db,web, host=web-01\n"),
            "{text}"
        );
        assert!(
            text.contains("\n    timers.clock-read@1 clock=monotonic,path=vdso 21.39 ns/read x"),
            "{text}"
        );
    }
}
