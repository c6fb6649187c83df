//! The trend section of the HTML report: the runs given, per host in time order, read as
//! `truebench trend` reads the store (`trend::series`, `trend::group`, `trend::explain`).
//! Per host with a change: its changes in one line each, then per row with a change one
//! chart: the run medians (dots), each segment's level between change points (solid lines)
//! and the change points (dashed), labelled with the day of the first run after and the
//! factor after/before. Rows and hosts with no change are counted, not drawn; with no
//! change at all there is no section. Escaped SVG (`svg::esc`); no scripts.

use super::svg::esc;
use crate::result::rounds::median;
use crate::result::RunDocument;
use crate::store::Point;
use crate::trend::changepoint::Kind;
use crate::trend::explain::{self, day};
use crate::trend::group::{self, HostChange, RowChange};
use crate::trend::series::{self, HostSeries, Series};
use crate::trend::{Method, ALGORITHM};
use crate::units::count;
use std::collections::HashMap;
use std::fmt::Write;

const W: f64 = 640.0;
const H: f64 = 210.0;
const ML: f64 = 64.0;
const MR: f64 = 24.0;
/// Above the plot: the title, then two lanes of change labels.
const MT: f64 = 46.0;
const LANES: [f64; 2] = [30.0, 41.0];
const MB: f64 = 30.0;
/// Host names listed of the hosts with no change.
const NAMES_SHOWN: usize = 20;

/// The section for `docs` (any order); empty when no host changed.
pub fn section(docs: &[RunDocument]) -> String {
    let method = Method::default();
    if docs.len() < 2 * method.params.min_segment {
        return String::new();
    }
    let mut order: Vec<&RunDocument> = docs.iter().collect();
    order.sort_by(|a, b| (&a.host, &a.started_at).cmp(&(&b.host, &b.started_at)));
    let points: Vec<Point> = order.iter().flat_map(|d| Point::of_doc(d)).collect();
    let hosts = series::hosts(&points, &|_| true);
    let by_id: HashMap<&str, &RunDocument> = docs.iter().map(|d| (d.run_id.as_str(), d)).collect();
    let load = |id: &str| by_id.get(id).map(|d| (*d).clone());
    let mut body = String::new();
    let mut quiet: Vec<&str> = vec![];
    for h in &hosts {
        let changes = group::changes(h, &method);
        if changes.is_empty() {
            quiet.push(&h.host);
            continue;
        }
        host_part(&mut body, h, &changes, &load);
    }
    if body.is_empty() {
        return String::new();
    }
    let p = method.params;
    let mut s = format!(
        "<h2>Trend</h2>\n<p>The runs of this report per host in time order, read as \
         <code>truebench trend</code> reads the store (docs/trend.md): per row with a change, \
         its run medians (dots), the level of each segment between change points (lines, the \
         median of the segment's runs) and each change point (dashed, between the last run \
         before and the first after, labelled with the day of the first run after and the \
         factor after/before; a drift is marked as such). Method: {}; min_segment {}, \
         max_p {}, window {}, sigma_floor {}, group_within {}.</p>\n",
        esc(ALGORITHM),
        p.min_segment,
        p.max_p,
        p.window,
        p.sigma_floor,
        method.group_within
    );
    s.push_str(&body);
    if !quiet.is_empty() {
        let shown: Vec<String> = quiet.iter().take(NAMES_SHOWN).map(|h| esc(h)).collect();
        let _ = writeln!(
            s,
            "<p>{} with no change, not drawn: {}{}.</p>",
            count(quiet.len(), "host"),
            shown.join(", "),
            if quiet.len() > NAMES_SHOWN {
                ", ..."
            } else {
                ""
            }
        );
    }
    s
}

/// One host's changes in words and a chart per changed row.
fn host_part(
    s: &mut String,
    h: &HostSeries,
    changes: &[HostChange],
    load: &dyn Fn(&str) -> Option<RunDocument>,
) {
    let first = h.runs.first().map_or("", |r| day(&r.started_at));
    let last = h.runs.last().map_or("", |r| day(&r.started_at));
    let _ = writeln!(
        s,
        "<h3>Host {}: {}, {first} to {last}</h3>\n<ul class=\"summary\">",
        esc(&h.host),
        count(h.runs.len(), "run")
    );
    for c in changes {
        let e = explain::explain(h, c, load);
        let _ = writeln!(s, "<li>{}</li>", esc(&e.summary));
    }
    s.push_str("</ul>\n");
    // Every change of each changed row, by the row's place in the host's series.
    let mut per_row: Vec<(usize, Vec<&RowChange>)> = vec![];
    for r in changes.iter().flat_map(|c| &c.rows) {
        match per_row.iter_mut().find(|x| x.0 == r.series) {
            Some(x) => x.1.push(r),
            None => per_row.push((r.series, vec![r])),
        }
    }
    per_row.sort_by_key(|x| x.0);
    let left = h.rows.len() - per_row.len();
    let _ = writeln!(
        s,
        "<p>{} of {} changed and {} drawn; {} with no change {} not.</p>\n<div class=\"charts\">",
        per_row.len(),
        count(h.rows.len(), "row"),
        if per_row.len() == 1 { "is" } else { "are" },
        count(left, "row"),
        if left == 1 { "is" } else { "are" }
    );
    for (i, rc) in &mut per_row {
        rc.sort_by_key(|r| r.change.at);
        s.push_str(&chart(h, &h.rows[*i], rc));
    }
    s.push_str("</div>\n");
}

/// One row's series: dots, segment levels, change points.
fn chart(h: &HostSeries, row: &Series, changes: &[&RowChange]) -> String {
    let n = h.runs.len().max(2) as f64 - 1.0;
    let sx = |run: f64| ML + run / n * (W - ML - MR);
    let (lo, hi) = row
        .median
        .iter()
        .fold((f64::MAX, f64::MIN), |a, &m| (a.0.min(m), a.1.max(m)));
    let pad = ((hi - lo) * 0.08)
        .max(hi.abs() * 1e-3)
        .max(f64::MIN_POSITIVE);
    let (y0, y1) = (lo - pad, hi + pad);
    let sy = |v: f64| H - MB - (v - y0) / (y1 - y0) * (H - MT - MB);
    let title = format!("{} ({})", row.key.text(), row.unit);
    let mut s = format!(
        r#"<svg class="chart trend" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{}</title><text x="{ML}" y="16" font-size="12" font-weight="bold">{}</text>"#,
        esc(&title),
        esc(&title)
    );
    let _ = write!(
        s,
        r##"<line x1="{ML}" y1="{b}" x2="{r}" y2="{b}" stroke="#333"/><line x1="{ML}" y1="{MT}" x2="{ML}" y2="{b}" stroke="#333"/>"##,
        b = H - MB,
        r = W - MR
    );
    for v in [y0 + pad, (y0 + y1) / 2.0, y1 - pad] {
        let _ = write!(
            s,
            r#"<text x="{}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"#,
            ML - 4.0,
            sy(v) + 3.0,
            esc(&crate::units::num(v))
        );
    }
    for (x, anchor) in [(0usize, "start"), (h.runs.len() - 1, "end")] {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" font-size="10" text-anchor="{anchor}">{}</text>"#,
            sx(x as f64),
            H - MB + 13.0,
            esc(day(&h.runs[x].started_at))
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" font-size="10" text-anchor="middle">run, oldest first ({})</text>"#,
        (ML + W - MR) / 2.0,
        H - 4.0,
        count(h.runs.len(), "run")
    );
    // The segments' levels, between the change points.
    let mut cuts: Vec<usize> = vec![0];
    cuts.extend(changes.iter().map(|c| c.change.at));
    cuts.push(row.median.len());
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b <= a {
            continue;
        }
        let level = median(&row.median[a..b]);
        let _ = write!(
            s,
            r##"<line class="level" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#1f77b4" stroke-width="2"><title>{} at {}</title></line>"##,
            sx(row.run[a] as f64),
            sx(row.run[b - 1] as f64),
            count(b - a, "run"),
            esc(&crate::units::num(level)),
            y = sy(level)
        );
    }
    for (k, c) in changes.iter().enumerate() {
        let at = c.change.at;
        let after = &h.runs[row.run[at]];
        let x = sx((row.run[at - 1] + row.run[at]) as f64 / 2.0);
        let (f, flo, fhi) = c.factor();
        let label = format!(
            "{} ×{f:.3}{}",
            day(&after.started_at),
            if c.change.kind == Kind::Drift {
                " drift"
            } else {
                ""
            }
        );
        let anchor = if x > W - MR - 110.0 { "end" } else { "start" };
        let tx = if anchor == "end" { x - 2.0 } else { x + 2.0 };
        let _ = write!(
            s,
            r##"<line class="change" data-after="{}" x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{}" stroke="#d62728" stroke-dasharray="4 3"><title>{} [{flo:.3}, {fhi:.3}], p {:.1e}</title></line><text class="change" x="{tx:.1}" y="{}" font-size="10" fill="#d62728" text-anchor="{anchor}">{}</text>"##,
            esc(&after.run_id),
            LANES[k % 2] + 2.0,
            H - MB,
            esc(&label),
            c.change.p,
            LANES[k % 2],
            esc(&label)
        );
    }
    for (i, &m) in row.median.iter().enumerate() {
        let r = &h.runs[row.run[i]];
        let _ = write!(
            s,
            r##"<circle class="run" data-run="{}" cx="{:.1}" cy="{:.1}" r="2.2" fill="#444"><title>{} {}: {}</title></circle>"##,
            esc(&r.run_id),
            sx(row.run[i] as f64),
            sy(m),
            esc(&r.run_id),
            esc(&r.started_at),
            esc(&crate::units::num(m))
        );
    }
    s.push_str("</svg>");
    s
}
