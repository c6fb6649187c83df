//! A comparison as text: the summary per suite, the rows (medians, ratio, rank test,
//! verdict, and the status of its explanation), each explained row's causes with their
//! evidence, the classic index's shares, and the environment differences. Several runs:
//! the ranking per benchmark, then each run's summary against the baseline.

use crate::compare::explain::Status;
use crate::compare::ranking::Fleet;
use crate::compare::verdict::Verdict;
use crate::compare::{Comparison, Row};
use crate::units::num;

/// The B/A cell: the ratio, or "-" with the reason when the row is not comparable (a ratio
/// of two different experiments, or of a median that is not positive, is no figure: it
/// showed as `inf`).
fn ratio_cell(r: &Row) -> String {
    if r.verdict != Verdict::NotComparable {
        return format!("{:.3}", r.ratio);
    }
    match r.comparability.first() {
        Some(why) => format!("- ({why})"),
        None => "- (not comparable)".into(),
    }
}

pub fn render(c: &Comparison) -> String {
    let mut t = super::table(&[
        "benchmark",
        "params",
        "placement",
        "A median",
        "B median",
        "B/A",
        "MDE (noise)",
        "CIs overlap",
        "p (rank test)",
        "verdict",
        "explained",
    ]);
    for r in &c.rows {
        t.add_row(vec![
            r.benchmark.clone(),
            match &r.role {
                Some(role) => format!("{} ({role})", r.params),
                None => r.params.clone(),
            },
            r.placement.clone(),
            format!("{} {}", num(r.medians.a), r.unit),
            format!(
                "{} {}",
                num(r.medians.b),
                r.unit_b.as_ref().unwrap_or(&r.unit)
            ),
            ratio_cell(r),
            format!(
                "{} ({})",
                crate::compare::noise_model::mde_text(r.mde),
                r.noise.basis.text()
            ),
            if r.ci_overlap { "yes" } else { "no" }.into(),
            r.p.map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "n/a (<3 samples)".into()),
            match &r.warning {
                Some(w) => format!("{} ({w})", r.verdict.text()),
                None => r.verdict.text().to_string(),
            },
            if r.status == Status::Nothing {
                "-".into()
            } else {
                r.status.text().to_string()
            },
        ]);
    }
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
        for line in &c.summary {
            s.push_str(&format!("  {line}\n"));
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
    for r in c.rows.iter().filter(|r| !r.explanations.is_empty()) {
        s.push_str(&format!(
            "{} [{}] {}: {} ({})\n",
            r.benchmark,
            r.placement,
            r.params,
            r.status.text(),
            crate::compare::verdict::in_words(r.ratio, r.lower_is_better)
        ));
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
            s.push_str(&head);
            s.push('\n');
            for ev in &e.evidence {
                s.push_str(&format!("      evidence: {ev}\n"));
            }
        }
    }
    for k in &c.only_in_a {
        s.push_str(&format!("only in A: {k}\n"));
    }
    for k in &c.only_in_b {
        s.push_str(&format!("only in B: {k}\n"));
    }
    if c.env_differences.is_empty() {
        s.push_str("Environment: no differences in topology, virtualization, clocksource, kernel or quota.\n");
    } else {
        s.push_str("Environment differences that could explain the results:\n");
        for d in &c.env_differences {
            s.push_str(&format!("  {}: A {} | B {}\n", d.what, d.a, d.b));
        }
    }
    let unmeasured: Vec<String> = c
        .candidates
        .iter()
        .filter(|x| x.status == "differs")
        .map(|x| format!("{} ({}: A {} | B {})", x.what, x.status, x.a, x.b))
        .collect();
    if !unmeasured.is_empty() {
        s.push_str(&format!(
            "Candidates not measured: {}\n",
            unmeasured.join("; ")
        ));
    }
    s
}

fn claim(c: crate::compare::explain::Claim) -> &'static str {
    use crate::compare::explain::Claim::*;
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
    let mut s = format!("Baseline = {} ({} runs)\n", f.baseline, f.runs.len());
    for r in &f.ranking {
        s.push_str(&format!(
            "\n{} [{}] {} ({}, {} is better)\n",
            r.benchmark,
            r.placement,
            r.params,
            r.unit,
            if r.lower_is_better { "lower" } else { "higher" }
        ));
        let mut t = super::table(&[
            "rank",
            "run",
            "host",
            "group",
            "median",
            "95% CI",
            "vs baseline",
            "verdict",
            "explained",
        ]);
        let row = |e: &crate::compare::ranking::Entry| {
            vec![
                e.rank.to_string(),
                e.run.clone(),
                e.host.clone().unwrap_or_default(),
                e.group.clone().unwrap_or_default(),
                format!("{} {}", num(e.median), r.unit),
                format!("{} – {}", num(e.ci95_low), num(e.ci95_high)),
                format!("{:.3}", e.ratio),
                e.verdict.clone(),
                e.status.clone(),
            ]
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
                format!("{} runs omitted (--top)", r.omitted),
            ]);
            for e in &r.entries[half..] {
                t.add_row(row(e));
            }
        }
        s.push_str(&format!("{t}\n"));
        for g in &r.groups {
            s.push_str(&format!(
                "  group {}: {} run(s), median {} {} (range {} – {})\n",
                g.group,
                g.runs,
                num(g.median),
                r.unit,
                num(g.min),
                num(g.max)
            ));
        }
    }
    for c in &f.comparisons {
        s.push_str(&format!("\n{} against the baseline {}:\n", c.b, c.a));
        for line in &c.summary {
            s.push_str(&format!("  {line}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::compare::testing::{latency_run, timers_run};

    #[test]
    fn runs_with_no_result_in_common_say_so_instead_of_an_empty_table() {
        let a = timers_run("a", 20.0, None);
        let b = latency_run("b", 8 << 20, 4096, 1.2);
        let text = super::render(&crate::compare::compare(&a, &b));
        assert!(
            text.contains("No result in common: nothing to compare (1 only in A, 1 only in B)"),
            "{text}"
        );
        assert!(!text.contains("benchmark"), "{text}");
        // With a row in common, the table.
        let text = super::render(&crate::compare::compare(&a, &timers_run("b", 21.0, None)));
        assert!(text.contains("benchmark") && !text.contains("No result in common"));
    }

    #[test]
    fn a_row_that_is_not_comparable_shows_no_ratio_but_its_reason() {
        let mut a = timers_run("a", 20.0, None);
        a.results[0].stats.median = 0.0;
        let c = crate::compare::compare(&a, &timers_run("b", 21.0, None));
        let row = &c.rows[0];
        assert_eq!(row.verdict, crate::compare::verdict::Verdict::NotComparable);
        let cell = super::ratio_cell(row);
        assert!(
            cell.starts_with("- (A's median is 0") && cell.contains("no ratio can be taken"),
            "{cell}"
        );
        let text = super::render(&c);
        assert!(text.contains(&cell) && !text.contains(" inf "), "{text}");
        // A comparable row keeps its ratio.
        let c = crate::compare::compare(&timers_run("a", 20.0, None), &timers_run("b", 21.0, None));
        assert_eq!(super::ratio_cell(&c.rows[0]), "1.050");
    }
}
