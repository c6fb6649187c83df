//! The fleet section of the HTML report (three runs or more): per benchmark row, a strip
//! chart of every host's ratio to the fleet median (log scale, one dot per host, outliers
//! red and labelled with their host), then the host table: rank, host, score, outlier,
//! rows farthest from the fleet and the cause. Built as escaped HTML (`svg::esc` on every
//! string from a document); no scripts.

use super::svg::esc;
use crate::compare::fleet::FleetView;
use crate::compare::verdict::in_words;
use std::fmt::Write;

const W: f64 = 640.0;
const H: f64 = 70.0;
const ML: f64 = 20.0;
const MR: f64 = 20.0;

fn strip(f: &FleetView, r: usize) -> String {
    let row = &f.rows[r];
    let pts: Vec<(f64, bool, String)> = f
        .hosts
        .iter()
        .filter_map(|h| {
            let x = h.ratios.get(r).copied().flatten()?;
            let real = h.real.get(r).copied().unwrap_or(false);
            Some((
                x.ln(),
                real,
                h.host.clone().unwrap_or_else(|| h.run.clone()),
            ))
        })
        .collect();
    let span = pts
        .iter()
        .map(|p| p.0.abs())
        .fold(0.05f64.ln_1p(), f64::max)
        * 1.1;
    let x = |v: f64| ML + (v + span) / (2.0 * span) * (W - ML - MR);
    let mut s = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{}</title>"#,
        esc(&row.def.key)
    );
    let _ = write!(
        s,
        r##"<text x="{ML}" y="12" font-size="11">{} ({}; fleet median {} {}, spread {:.1}%): host / fleet median, log scale {:.2}x to {:.2}x</text><line x1="{c:.1}" y1="18" x2="{c:.1}" y2="{}" stroke="#888"/>"##,
        esc(&row.def.short()),
        if row.def.lower_is_better {
            "lower is better"
        } else {
            "higher is better"
        },
        crate::units::num(row.fleet_median),
        esc(&row.def.unit),
        row.spread * 100.0,
        (-span).exp(),
        span.exp(),
        H - 8.0,
        c = x(0.0)
    );
    for (i, (v, real, name)) in pts.iter().enumerate() {
        let y = 34.0 + (i % 7) as f64 * 3.0;
        let (fill, rad) = if *real {
            ("#d62728", 3.5)
        } else {
            ("#1f77b4", 2.0)
        };
        let _ = write!(
            s,
            r#"<circle cx="{:.1}" cy="{y:.1}" r="{rad}" fill="{fill}" fill-opacity="0.6"><title>{} {:.3}</title></circle>"#,
            x(*v),
            esc(name),
            v.exp()
        );
    }
    for (k, (v, _, name)) in pts.iter().filter(|p| p.1).take(12).enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" font-size="9" text-anchor="middle">{}</text>"#,
            x(*v),
            if k % 2 == 0 { H - 2.0 } else { 26.0 },
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// The fleet section: summary, strip charts, host table.
pub fn section(f: &FleetView) -> String {
    let mut s = String::from("<h2>Fleet</h2>\n");
    let _ = write!(
        s,
        "<p>{} hosts against the fleet median of each row; typical host {}. Outlier: a row beyond the fleet's spread (robust z on log ratios, 1.4826 MAD; false discovery rate {:.0}%) and at least {:.0}% from the median. Score: geometric mean of host/fleet over rows, &gt; 1 better.</p>\n<ul>",
        f.runs.len(),
        esc(f.typical_host.as_deref().unwrap_or("none")),
        f.fdr_q * 100.0,
        f.floor * 100.0
    );
    if f.rows.is_empty() {
        let _ = writeln!(s, "</ul><p>{}</p>", esc(super::fleet_text::NO_ROWS));
        return s;
    }
    for g in &f.cause_groups {
        let _ = write!(
            s,
            "<li>{} host(s): {}; score {:.3}-{:.3}{}</li>",
            g.hosts.len(),
            esc(&g.label),
            g.score_min,
            g.score_max,
            if g.rows.is_empty() {
                String::new()
            } else {
                format!(" ({})", esc(&g.rows.join("; ")))
            }
        );
    }
    let _ = write!(
        s,
        "<li>{} host(s) within the fleet's spread: score {:.3}-{:.3}</li></ul>\n<div class=\"charts\">",
        f.typical.hosts, f.typical.score_min, f.typical.score_max
    );
    for r in 0..f.rows.len() {
        s.push_str(&strip(f, r));
    }
    s.push_str("</div>\n<table><tr><th>rank</th><th>host</th><th>run</th><th>score (95% CI)</th><th>outlier</th><th>rows farthest from the fleet</th><th>cause (against the typical host)</th></tr>\n");
    for h in &f.hosts {
        let worst: Vec<String> = h
            .worst
            .iter()
            .filter(|w| w.real || !h.outlier)
            .map(|w| format!("{} {}", w.row, in_words(w.speed, false)))
            .collect();
        let _ = writeln!(
            s,
            "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{:.3} ({:.3}-{:.3})</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            h.rank,
            esc(h.host.as_deref().unwrap_or("")),
            esc(&h.run),
            h.score,
            h.score_ci95[0],
            h.score_ci95[1],
            if h.outlier { "yes" } else { "no" },
            esc(&worst.join("; ")),
            h.cause
                .as_ref()
                .map(|c| esc(&format!("{}: {}", c.label, c.sentence)))
                .unwrap_or_default()
        );
    }
    s.push_str("</table>\n");
    s
}
