//! A comparison as text: the summary per suite, the rows (medians, ratio, rank test,
//! verdict, and the status of its explanation), each explained row's causes with their
//! evidence, the classic index's shares, and the environment differences. Several runs:
//! the ranking per benchmark, then each run's summary against the baseline.

use super::views::wrap;
use crate::compare::causes::explain::Status;
use crate::compare::stats::verdict::Verdict;
use crate::compare::{Comparison, Row};
use crate::fleet::ranking::Fleet;
use crate::units::num;

/// Whether a row has no ratio: not comparable (a ratio of two different experiments, or of
/// a median that is not positive, is no figure: it showed as `inf`).
fn no_ratio(r: &Row) -> bool {
    r.verdict == Verdict::NotComparable || !r.ratio.is_finite()
}

/// Why a row has no ratio: its first reason.
fn no_ratio_why(r: &Row) -> &str {
    r.comparability
        .first()
        .map(String::as_str)
        .unwrap_or("not comparable")
}

/// The B/A cell: the ratio with its 95% interval, or "-" with the reason when the row has
/// no ratio (`-v`; the narrow table gives the reason below it).
fn ratio_cell(r: &Row) -> String {
    if no_ratio(r) {
        return format!("- ({})", no_ratio_why(r));
    }
    match r.ci {
        Some([lo, hi]) => format!("{:.3} ({lo:.3}-{hi:.3})", r.ratio),
        None => format!("{:.3}", r.ratio),
    }
}

/// Columns the default table fits in (as benchstat's does); `-v` prints every column.
pub const WIDTH: u16 = 100;

/// A row's full name, as `-v` shows it: benchmark, placement and every param.
fn full_name(r: &Row) -> String {
    format!("{} [{}] {}", r.benchmark, r.placement, r.params)
}

/// The narrow table's columns: their headers and widths with their padding, [`WIDTH`]
/// with the table's six borders. Each cell takes at most two lines for almost every row: a
/// row's name (the longest, "bandwidth triad 2T non-temporal 128 MiB spread", and
/// "clock_gettime(MONOTONIC_COARSE)", 31 characters, whole on one line), a median with its
/// unit ("51.76" above "ns/read", "ns/round-trip" the widest unit), the ratio above its
/// interval, the verdict in a few words ("cannot tell" above "(MDE 2.6%)").
const NARROW: [(&str, u16); 5] = [
    ("row", 33),
    ("A", 15),
    ("B", 15),
    ("B/A (95% CI)", 15),
    ("verdict", 16),
];

/// The narrow table: row, A, B, B/A with its 95% interval, and the verdict in a few words.
fn narrow(c: &Comparison) -> comfy_table::Table {
    let header: Vec<&str> = NARROW.iter().map(|(h, _)| *h).collect();
    let mut t = super::table(&header);
    t.set_width(WIDTH);
    for (i, (_, w)) in NARROW.iter().enumerate() {
        if let Some(col) = t.column_mut(i) {
            col.set_constraint(comfy_table::ColumnConstraint::Absolute(
                comfy_table::Width::Fixed(*w),
            ));
        }
    }
    for r in &c.rows {
        let [a, b] = medians(r);
        let ratio = if no_ratio(r) {
            "-".into()
        } else {
            ratio_cell(r)
        };
        t.add_row(vec![
            crate::compare::summary::row_name(r),
            a,
            b,
            ratio,
            r.brief.clone(),
        ]);
    }
    t
}

/// A's and B's medians, each in its own run's unit.
fn medians(r: &Row) -> [String; 2] {
    [
        format!("{} {}", num(r.medians.a), r.unit),
        format!(
            "{} {}",
            num(r.medians.b),
            r.unit_b.as_ref().unwrap_or(&r.unit)
        ),
    ]
}

/// A comparison as text: the narrow table by default, every column with `verbose`.
pub fn render(c: &Comparison, verbose: bool) -> String {
    if verbose {
        render_full(c)
    } else {
        render_with(c, narrow(c), false)
    }
}

fn render_full(c: &Comparison) -> String {
    let mut t = super::table(&[
        "benchmark",
        "params",
        "placement",
        "A median",
        "B median",
        "B/A (95% CI)",
        "MDE (noise)",
        "CIs overlap",
        "p (rank test)",
        "p (noise)",
        "verdict",
        "explained",
    ]);
    for r in &c.rows {
        let [a, b] = medians(r);
        t.add_row(vec![
            r.benchmark.clone(),
            match &r.role {
                Some(role) => format!("{} ({role})", r.params),
                None => r.params.clone(),
            },
            r.placement.clone(),
            a,
            b,
            ratio_cell(r),
            format!(
                "{} ({})",
                r.mde
                    .map(crate::compare::stats::noise_model::mde_text)
                    .unwrap_or_else(|| "-".into()),
                r.noise.basis.text()
            ),
            if r.ci_overlap { "yes" } else { "no" }.into(),
            r.p.map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "n/a (<3 samples)".into()),
            r.p_noise
                .map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "-".into()),
            r.why.clone(),
            if r.status == Status::Nothing {
                "-".into()
            } else {
                r.status.text().to_string()
            },
        ]);
    }
    render_with(c, t, true)
}

fn render_with(c: &Comparison, t: comfy_table::Table, verbose: bool) -> String {
    let mut s = String::new();
    for (side, id, tags) in [("A", &c.a, &c.tags[0]), ("B", &c.b, &c.tags[1])] {
        s.push_str(&format!("{side} = {id}"));
        if !tags.is_empty() {
            s.push_str(&format!(" (tags {})", crate::result::tags::text(tags)));
        }
        s.push('\n');
    }
    if !c.summary.is_empty() {
        s.push_str("Summary:\n");
        // Each sentence wrapped to the table's 100 columns.
        for line in &c.summary {
            s.push_str(&super::views::wrap(&format!("  {line}")));
        }
    }
    if c.rows.is_empty() {
        // Two recordings, or ctx against memory: no table of nothing.
        s.push_str(&format!(
            "No result in common: nothing to compare ({} only in A, {} only in B).\n",
            c.only_in_a.len(),
            c.only_in_b.len()
        ));
    } else {
        s.push_str(&format!("{t}\n"));
    }
    if !verbose {
        // The reasons the narrow table has no room for.
        for r in c.rows.iter().filter(|r| no_ratio(r)) {
            s.push_str(&wrap(&format!(
                "{}: no ratio ({})",
                crate::compare::summary::row_name(r),
                no_ratio_why(r)
            )));
        }
    }
    for r in c.rows.iter().filter(|r| !r.explanations.is_empty()) {
        let name = if verbose {
            full_name(r)
        } else {
            crate::compare::summary::row_name(r)
        };
        s.push_str(&wrap(&format!(
            "{name}: {} ({})",
            r.status.text(),
            crate::compare::stats::verdict::in_words(r.ratio, r.lower_is_better)
        )));
        for e in &r.explanations {
            let mut head = format!("  {} ({}): {}", e.cause, claim(e.claim), e.because);
            if let (Some(p), Some(res)) = (e.predicted, e.residual) {
                head.push_str(&format!(
                    "; predicted B/A {p:.3}, measured {:.3}, residual {res:.2}",
                    r.ratio
                ));
            }
            if let Some(h) = &e.held_equal {
                head.push_str(&format!("; {h}"));
            }
            if let Some(rem) = &e.remains {
                head.push_str(&format!("; remains: {rem}"));
            }
            s.push_str(&wrap(&head));
            if verbose {
                for ev in &e.evidence {
                    s.push_str(&wrap(&format!("      evidence: {ev}")));
                }
            }
        }
    }
    for k in &c.only_in_a {
        s.push_str(&wrap(&format!("only in A: {k}")));
    }
    for k in &c.only_in_b {
        s.push_str(&wrap(&format!("only in B: {k}")));
    }
    if c.env_differences.is_empty() {
        s.push_str("Environment: no differences in topology, virtualization, clocksource, kernel or quota.\n");
    } else {
        s.push_str("Environment differences that could explain the results:\n");
        for d in &c.env_differences {
            s.push_str(&wrap(&format!("  {}: A {} | B {}", d.what, d.a, d.b)));
        }
    }
    let unmeasured: Vec<String> = c
        .candidates
        .iter()
        .filter(|x| x.status == "differs")
        .map(|x| format!("{} ({}: A {} | B {})", x.what, x.status, x.a, x.b))
        .collect();
    if !unmeasured.is_empty() {
        s.push_str(&wrap(&format!(
            "Candidates not measured: {}",
            unmeasured.join("; ")
        )));
    }
    if !verbose {
        s.push_str("(-v: every column, and the evidence of each cause)\n");
    }
    s
}

fn claim(c: crate::compare::causes::explain::Claim) -> &'static str {
    use crate::compare::causes::explain::Claim::*;
    match c {
        Explains => "explains",
        Partly => "explains part",
        Contributes => "contributes, no figure",
        RuledOut => "ruled out",
        NotMeasured => "not measured",
    }
}

/// Several runs: the ranking per benchmark, then each run against the baseline.
pub fn render_fleet(f: &Fleet) -> String {
    let mut s = format!(
        "Baseline = {} ({})\n",
        f.baseline,
        crate::units::count(f.runs.len(), "run")
    );
    for r in &f.ranking {
        s.push('\n');
        s.push_str(&wrap(&format!(
            "{} ({}, {} is better)",
            r.label,
            r.unit,
            if r.lower_is_better { "lower" } else { "higher" }
        )));
        // Within 100 columns: the unit is in the heading above, the group column only when
        // a run has one, and the run id kept whole (cells of the others wrap).
        let grouped = r.entries.iter().any(|e| e.group.is_some());
        let mut header = vec!["rank", "run", "host"];
        if grouped {
            header.push("group");
        }
        header.extend(["median", "95% CI", "vs baseline", "verdict", "explained"]);
        let mut t = super::views::narrow_table(&header);
        if let Some(c) = t.column_mut(1) {
            c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
        let row = |e: &crate::fleet::ranking::Entry| {
            let mut cells = vec![
                e.rank.to_string(),
                e.run.clone(),
                e.host.clone().unwrap_or_default(),
            ];
            if grouped {
                cells.push(e.group.clone().unwrap_or_default());
            }
            cells.extend([
                num(e.median),
                format!("{} – {}", num(e.ci95_low), num(e.ci95_high)),
                format!("{:.3}", e.ratio),
                e.verdict.clone(),
                e.status.clone(),
            ]);
            cells
        };
        let half = if r.omitted > 0 {
            r.entries.len() / 2
        } else {
            r.entries.len()
        };
        for e in &r.entries[..half] {
            t.add_row(row(e));
        }
        if r.omitted > 0 {
            t.add_row(vec![
                "…".to_string(),
                format!("{} omitted (--top)", crate::units::count(r.omitted, "run")),
            ]);
            for e in &r.entries[half..] {
                t.add_row(row(e));
            }
        }
        s.push_str(&format!("{t}\n"));
        for g in &r.groups {
            s.push_str(&format!(
                "  group {}: {}, median {} {} (range {} – {})\n",
                g.group,
                crate::units::count(g.runs, "run"),
                num(g.median),
                r.unit,
                num(g.min),
                num(g.max)
            ));
        }
    }
    for c in &f.comparisons {
        s.push_str(&format!("\n{} against the baseline {}:\n", c.b, c.a));
        // Each sentence wrapped to the table's 100 columns.
        for line in &c.summary {
            s.push_str(&super::views::wrap(&format!("  {line}")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::compare::testing::{in_rounds, latency_run, timers_run};

    #[test]
    fn runs_with_no_result_in_common_say_so_instead_of_an_empty_table() {
        let a = timers_run("a", 20.0, None);
        let b = latency_run("b", 8 << 20, 4096, 1.2);
        let text = super::render(&crate::compare::compare(&a, &b), false);
        assert!(
            text.contains("No result in common: nothing to compare (1 only in A, 1 only in B)"),
            "{text}"
        );
        assert!(!text.contains("benchmark"), "{text}");
        // With a row in common, the table.
        let c = crate::compare::compare(&a, &timers_run("b", 21.0, None));
        let text = super::render(&c, true);
        assert!(text.contains("benchmark") && !text.contains("No result in common"));
        // The default table fits 100 columns; -v has every column.
        let narrow = super::render(&c, false);
        assert!(narrow.contains("B/A (95% CI)") && !narrow.contains("p (rank test)"));
        for line in narrow
            .lines()
            .filter(|l| l.starts_with(['│', '╭', '├', '┌', '└', '╰']))
        {
            assert!(line.chars().count() <= super::WIDTH as usize, "{line}");
        }
    }

    #[test]
    fn a_row_that_is_not_comparable_shows_no_ratio_but_its_reason() {
        let mut a = timers_run("a", 20.0, None);
        a.results[0].stats.median = 0.0;
        let c = crate::compare::compare(&a, &timers_run("b", 21.0, None));
        let row = &c.rows[0];
        assert_eq!(
            row.verdict,
            crate::compare::stats::verdict::Verdict::NotComparable
        );
        let cell = super::ratio_cell(row);
        assert!(
            cell.starts_with("- (A's median is 0") && cell.contains("no ratio can be taken"),
            "{cell}"
        );
        let text = super::render(&c, true);
        assert!(
            text.contains("- (A's median is 0") && !text.contains(" inf "),
            "{text}"
        );
        // The narrow table: no ratio, its reason below the table.
        let text = super::render(&c, false);
        assert!(
            text.contains(": no ratio (A's median is 0") && !text.contains(" inf "),
            "{text}"
        );
        // A comparable row keeps its ratio, with its interval.
        let c = crate::compare::compare(
            &in_rounds(timers_run("a", 20.0, None)),
            &in_rounds(timers_run("b", 21.0, None)),
        );
        assert!(super::ratio_cell(&c.rows[0]).starts_with("1.050 ("));
    }
}
