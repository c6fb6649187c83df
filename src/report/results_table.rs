//! A run's results as a table (per result: median, 95% CI, CV, n, unit, timer share,
//! placement), followed by findings; and the run history as a table.

use super::units::{num, pct};
use crate::result::RunDocument;
use crate::store::RunSummary;

pub fn render(doc: &RunDocument) -> String {
    let mut t = super::table(&[
        "benchmark",
        "params",
        "placement",
        "median",
        "95% CI",
        "CV",
        "n",
        "unit",
        "timer share",
    ]);
    for r in &doc.results {
        let s = &r.stats;
        t.add_row(vec![
            r.benchmark.clone(),
            r.params_text(),
            r.placement.name.clone(),
            num(s.median),
            format!("{} – {}", num(s.ci95_low), num(s.ci95_high)),
            pct(s.cv),
            s.n.to_string(),
            r.unit.clone(),
            pct(r.quality.timer_share),
        ]);
    }
    let mut out = format!(
        "Run {} on {} at {}{}\n{t}\n",
        doc.run_id,
        doc.host.as_deref().unwrap_or("unknown host"),
        doc.started_at,
        if doc.interrupted {
            " (INTERRUPTED: partial results)"
        } else {
            ""
        }
    );
    let mut findings = doc.findings.clone();
    for r in &doc.results {
        for f in &r.findings {
            let mut f = f.clone();
            f.message = format!("{} {}: {}", r.benchmark, r.params_text(), f.message);
            findings.push(f);
        }
    }
    if !findings.is_empty() {
        out.push_str("Findings:\n");
        out.push_str(&super::findings_text(&findings));
    }
    out
}

pub fn render_history(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "No runs stored yet: `truebench run` makes one.\n".into();
    }
    let mut t = super::table(&[
        "run",
        "started (UTC)",
        "host",
        "suites",
        "results",
        "headline",
    ]);
    for r in runs {
        t.add_row(vec![
            r.run_id.clone(),
            r.started_at.clone(),
            r.host.clone().unwrap_or_default(),
            r.suites.join(","),
            format!(
                "{}{}",
                r.results,
                if r.interrupted { " (interrupted)" } else { "" }
            ),
            r.headline.clone(),
        ]);
    }
    format!("{t}\n")
}
