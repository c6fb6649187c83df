//! The fleet section of the HTML report (three runs or more): the groups of outliers in the
//! order a person acts on them (`fleet::groups`), each with its letter and colour; per
//! benchmark row, a strip chart of every host's ratio to the fleet median (log scale): the
//! hosts within the fleet's spread as one path of dots (each place drawn once, so 10,000
//! hosts stay small), each host off on the row as a dot in its group's colour with its name
//! on hover, and one label per group ("A ×10") placed so that no two labels overlap; then
//! the host table: every outlier with its group, and the best and worst typical hosts when
//! there are many. Built as escaped HTML (`svg::esc` on every string from a document); no
//! scripts.

use super::svg::esc;
use crate::compare::stats::verdict::in_words;
use crate::fleet::FleetView;
use crate::units::count;
use std::collections::HashMap;
use std::fmt::Write;

const W: f64 = 640.0;
const ML: f64 = 20.0;
const MR: f64 = 20.0;
/// The dots' band: y from DOT_TOP, seven rows 3 px apart.
const DOT_TOP: f64 = 34.0;
const LABEL_SIZE: f64 = 9.0;
/// A label's width per character, generous for a sans-serif at LABEL_SIZE (digits and
/// capitals are about 0.6 em), so that placed boxes do not overlap as drawn.
const CHAR_W: f64 = 0.68 * LABEL_SIZE;
/// Label lanes: two above the dots, then below them one after another as needed.
const LANES: [f64; 2] = [24.0, 66.0];
const LANE_STEP: f64 = 11.0;
/// Typical hosts' dots are drawn to this fraction of a pixel, identical ones once.
const TYPICAL_GRID: f64 = 0.5;
/// Colours of the groups, in their order; groups past the last share the last.
const COLOURS: [&str; 8] = [
    "#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
];
/// Typical hosts listed in the table, best and worst half each, when there are more.
const TABLE_TYPICAL: usize = 100;

/// The group's letter: A, B, ... Z, then A2, B2 ...
pub fn letter(g: usize) -> String {
    let l = (b'A' + (g % 26) as u8) as char;
    if g < 26 {
        l.to_string()
    } else {
        format!("{l}{}", g / 26 + 1)
    }
}

fn colour(g: usize) -> &'static str {
    COLOURS[g.min(COLOURS.len() - 1)]
}

/// A placed label: its box in the chart's coordinates.
#[derive(Debug, Clone, Copy)]
struct Placed {
    x0: f64,
    x1: f64,
    lane: usize,
}

/// The lane's baseline y.
fn lane_y(lane: usize) -> f64 {
    match lane {
        0 | 1 => LANES[lane],
        n => LANES[1] + LANE_STEP * (n - 1) as f64,
    }
}

/// Places a label of `chars` characters centred at `cx` as near it as it can: the first
/// lane with room at its place, else the nearest free place along the first lanes, else a
/// new lane. Labels never overlap: each placed box is kept apart from every other by 3 px.
fn place(placed: &[Placed], cx: f64, chars: usize) -> Placed {
    let w = chars as f64 * CHAR_W;
    let fits = |x0: f64, lane: usize| {
        x0 >= 0.0
            && x0 + w <= W
            && placed
                .iter()
                .filter(|p| p.lane == lane)
                .all(|p| x0 + w + 3.0 <= p.x0 || p.x1 + 3.0 <= x0)
    };
    let want = (cx - w / 2.0).clamp(0.0, W - w);
    let lanes = placed.iter().map(|p| p.lane + 1).max().unwrap_or(0) + 1;
    for lane in 0..lanes.max(2) {
        if fits(want, lane) {
            return Placed {
                x0: want,
                x1: want + w,
                lane,
            };
        }
    }
    for lane in 0..2 {
        for step in 1..200 {
            for x0 in [want + 4.0 * step as f64, want - 4.0 * step as f64] {
                if fits(x0, lane) {
                    return Placed {
                        x0,
                        x1: x0 + w,
                        lane,
                    };
                }
            }
        }
    }
    Placed {
        x0: want,
        x1: want + w,
        lane: lanes.max(2),
    }
}

/// Each host's group (its index in `cause_groups`), None for hosts in no group.
fn host_groups(f: &FleetView) -> HashMap<&str, usize> {
    let mut m = HashMap::new();
    for (g, grp) in f.cause_groups.iter().enumerate() {
        for run in &grp.hosts {
            m.insert(run.as_str(), g);
        }
    }
    m
}

fn strip(f: &FleetView, r: usize, groups: &HashMap<&str, usize>) -> String {
    let row = &f.rows[r];
    // (log ratio, group when the host is off on this row, name)
    let pts: Vec<(f64, Option<usize>, &str)> = f
        .hosts
        .iter()
        .filter_map(|h| {
            let x = h.ratios.get(r).copied().flatten()?;
            let real = h.real.get(r).copied().unwrap_or(false);
            let g = groups.get(h.run.as_str()).copied().filter(|_| real);
            Some((x.ln(), g, h.host.as_deref().unwrap_or(&h.run)))
        })
        .collect();
    let span = pts
        .iter()
        .map(|p| p.0.abs())
        .fold(0.05f64.ln_1p(), f64::max)
        * 1.1;
    let x = |v: f64| ML + (v + span) / (2.0 * span) * (W - ML - MR);
    // Labels: one per group off on this row, at the median place of its hosts here.
    let mut labels: Vec<(Placed, usize, usize)> = vec![];
    for g in 0..f.cause_groups.len() {
        let mut xs: Vec<f64> = pts
            .iter()
            .filter(|p| p.1 == Some(g))
            .map(|p| x(p.0))
            .collect();
        let n = xs.len();
        let Some(cx) = crate::fleet::baseline::median(&mut xs) else {
            continue;
        };
        let text = format!("{} ×{n}", letter(g));
        let boxes: Vec<Placed> = labels.iter().map(|l| l.0).collect();
        labels.push((place(&boxes, cx, text.chars().count()), g, n));
    }
    let lanes = labels.iter().map(|l| l.0.lane).max().unwrap_or(0);
    let h = lane_y(lanes.max(1)) + 4.0;
    let mut s = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img"><title>{}</title>"#,
        esc(&row.def.key)
    );
    let _ = write!(
        s,
        r##"<text x="{ML}" y="12" font-size="11">{} ({}; fleet median {} {}, spread {:.1}%): host / fleet median, log scale {:.2}x to {:.2}x</text><line x1="{c:.1}" y1="16" x2="{c:.1}" y2="{}" stroke="#888"/>"##,
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
        DOT_TOP + 22.0,
        c = x(0.0)
    );
    // The hosts within the fleet's spread here: one path of dots, each place once.
    let mut seen = std::collections::HashSet::new();
    let mut path = String::new();
    for (i, (v, g, _)) in pts.iter().enumerate() {
        if g.is_some() {
            continue;
        }
        let cx = (x(*v) / TYPICAL_GRID).round() * TYPICAL_GRID;
        let cy = DOT_TOP + (i % 7) as f64 * 3.0;
        if seen.insert(((cx / TYPICAL_GRID) as i64, i % 7)) {
            let _ = write!(path, "M{cx} {cy}h0");
        }
    }
    let typical = pts.iter().filter(|p| p.1.is_none()).count();
    let _ = write!(
        s,
        r##"<path class="typical" d="{path}" stroke="#1f77b4" stroke-opacity="0.5" stroke-width="4" stroke-linecap="round"><title>{} within the fleet's spread on this row</title></path>"##,
        count(typical, "host")
    );
    // Outliers on this row: a dot each, coloured by group, named on hover.
    for (i, (v, g, name)) in pts.iter().enumerate() {
        let Some(g) = g else { continue };
        let _ = write!(
            s,
            r#"<circle class="outlier" cx="{:.1}" cy="{:.1}" r="3.5" fill="{}" fill-opacity="0.7"><title>{}: {} {:.3}</title></circle>"#,
            x(*v),
            DOT_TOP + (i % 7) as f64 * 3.0,
            colour(*g),
            letter(*g),
            esc(name),
            v.exp()
        );
    }
    for (p, g, n) in &labels {
        let _ = write!(
            s,
            r#"<text class="glabel" x="{:.1}" y="{}" font-size="{LABEL_SIZE}" font-family="sans-serif" fill="{}">{} ×{n}<title>group {}: {} off on this row</title></text>"#,
            p.x0,
            lane_y(p.lane),
            colour(*g),
            letter(*g),
            letter(*g),
            count(*n, "host")
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
        "<p>{} against the fleet median of each row; typical host {}. Outlier: a row beyond both the fleet's spread (robust z on log ratios, 1.4826 MAD) and the host's own noise, at least {:.0}% from the median ({}); called only with {}+ hosts on a row. {} {}Score: geometric mean of host/fleet over rows, &gt; 1 better.</p>\n<ul class=\"groups\">",
        count(f.runs.len(), "host"),
        esc(f.typical_host.as_deref().unwrap_or("none")),
        f.floor * 100.0,
        esc(&super::fleet_text::fdr_words(f)),
        f.min_fleet,
        esc(&super::fleet_text::noise_words(&f.noise)),
        super::fleet_text::hardware_words(f)
            .map(|w| esc(&w) + " ")
            .unwrap_or_default()
    );
    if f.rows.is_empty() {
        let _ = writeln!(s, "</ul><p>{}</p>", esc(super::fleet_text::NO_ROWS));
        return s;
    }
    for (i, g) in f.cause_groups.iter().enumerate() {
        let _ = write!(
            s,
            "<li><b style=\"color:{}\">{}</b> {}: {}; score {:.3}-{:.3}{}</li>",
            colour(i),
            letter(i),
            count(g.hosts.len(), "host"),
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
        "<li>{} within the fleet's spread: score {:.3}-{:.3}</li></ul>\n<div class=\"charts\">",
        count(f.typical.hosts, "host"),
        f.typical.score_min,
        f.typical.score_max
    );
    let groups = host_groups(f);
    for r in 0..f.rows.len() {
        s.push_str(&strip(f, r, &groups));
    }
    s.push_str("</div>\n<table><tr><th>rank</th><th>host</th><th>run</th><th>score (95% CI)</th><th>group</th><th>rows farthest from the fleet</th><th>cause (against the typical host)</th></tr>\n");
    // Every outlier; of the others the best and worst when there are many.
    let others: Vec<usize> = (0..f.hosts.len())
        .filter(|i| !f.hosts[*i].outlier)
        .collect();
    let keep: std::collections::HashSet<usize> = if others.len() > TABLE_TYPICAL {
        others[..TABLE_TYPICAL / 2]
            .iter()
            .chain(&others[others.len() - TABLE_TYPICAL / 2..])
            .copied()
            .collect()
    } else {
        others.iter().copied().collect()
    };
    for (i, h) in f.hosts.iter().enumerate() {
        if !h.outlier && !keep.contains(&i) {
            continue;
        }
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
            groups
                .get(h.run.as_str())
                .map_or("-".to_string(), |g| letter(*g)),
            esc(&worst.join("; ")),
            h.cause
                .as_ref()
                .map(|c| esc(&format!("{}: {}", c.label, c.sentence)))
                .unwrap_or_default()
        );
    }
    s.push_str("</table>\n");
    if others.len() > keep.len() {
        let _ = writeln!(
            s,
            "<p>{} within the fleet's spread not listed (the best and worst {} are).</p>",
            count(others.len() - keep.len(), "host"),
            TABLE_TYPICAL / 2
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_on_one_spot_are_placed_apart() {
        let mut placed: Vec<Placed> = vec![];
        for i in 0..30 {
            let p = place(&placed, 300.0 + (i % 3) as f64, 5);
            assert!(p.x0 >= 0.0 && p.x1 <= W, "{p:?}");
            for q in &placed {
                assert!(
                    p.lane != q.lane || p.x1 + 3.0 <= q.x0 || q.x1 + 3.0 <= p.x0,
                    "{p:?} overlaps {q:?}"
                );
            }
            placed.push(p);
        }
        // The first labels sit at their place, above and below the dots.
        assert_eq!((placed[0].lane, placed[1].lane), (0, 1));
        assert!(placed[0].x0 < 300.0 && placed[0].x1 > 300.0);
    }
}
