//! Hand-made inline SVG charts for the HTML report: line charts (optionally log-scaled),
//! horizontal bars with confidence intervals, a heatmap, and the topology drawn as nested
//! boxes. No scripts, no external resources; every label is escaped.

use std::fmt::Write;

/// Escape text for SVG/HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const W: f64 = 640.0;
const H: f64 = 300.0;
const ML: f64 = 70.0;
const MR: f64 = 150.0;
const MT: f64 = 30.0;
const MB: f64 = 40.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn fmt_num(v: f64) -> String {
    crate::units::num(v)
}

/// How the x axis labels its ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XAxis {
    Number,
    Bytes,
}

/// A line chart: named series of (x, y) points, optional log scales, and vertical marks.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    pub log_x: bool,
    pub log_y: bool,
    /// Vertical dashed lines at x, labelled.
    pub marks: Vec<(f64, String)>,
    pub x_axis: XAxis,
}

impl LineChart {
    /// A linear chart with numbered axes and no series yet.
    pub fn new(title: impl Into<String>, x_label: &str, y_label: &str) -> LineChart {
        LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: vec![],
            log_x: false,
            log_y: false,
            marks: vec![],
            x_axis: XAxis::Number,
        }
    }

    pub fn series(mut self, name: impl Into<String>, points: Vec<(f64, f64)>) -> LineChart {
        self.series.push((name.into(), points));
        self
    }

    /// Add the series only when it has points.
    pub fn series_if_any(self, name: impl Into<String>, points: Vec<(f64, f64)>) -> LineChart {
        if points.is_empty() {
            self
        } else {
            self.series(name, points)
        }
    }

    pub fn log(mut self, log_x: bool, log_y: bool) -> LineChart {
        self.log_x = log_x;
        self.log_y = log_y;
        self
    }

    pub fn marks(mut self, marks: Vec<(f64, String)>) -> LineChart {
        self.marks = marks;
        self
    }

    pub fn bytes_axis(mut self) -> LineChart {
        self.x_axis = XAxis::Bytes;
        self
    }
}

/// One bar: label, median, and its 95% CI.
pub type Bar = (String, f64, f64, f64);

/// A square heatmap: labels, and the value of each (row, column) cell when there is one.
pub struct Heatmap {
    pub title: String,
    pub unit: String,
    pub labels: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
}

/// A chart a view asks for; [`Chart::svg`] draws it.
pub enum Chart {
    Lines(LineChart),
    Bars {
        title: String,
        unit: String,
        bars: Vec<Bar>,
    },
    Heatmap(Heatmap),
}

impl Chart {
    pub fn bars(title: impl Into<String>, unit: &str, bars: Vec<Bar>) -> Chart {
        Chart::Bars {
            title: title.into(),
            unit: unit.into(),
            bars,
        }
    }

    /// The chart as inline SVG; empty when it has nothing to draw.
    pub fn svg(&self) -> String {
        match self {
            Chart::Lines(l) => lines(l),
            Chart::Bars { title, unit, bars } if !bars.is_empty() => self::bars(title, unit, bars),
            Chart::Bars { .. } => String::new(),
            Chart::Heatmap(h) => heatmap(&h.title, &h.unit, &h.labels, &|i, j| h.cells[i][j]),
        }
    }
}

/// A line chart of named series; log scales take log10 of the values.
pub fn lines(chart: &LineChart) -> String {
    let LineChart {
        title,
        x_label,
        y_label,
        series,
        log_x,
        log_y,
        marks,
        x_axis,
    } = chart;
    let (log_x, log_y, x_axis) = (*log_x, *log_y, *x_axis);
    let tx = |v: f64| if log_x { v.max(1e-12).log10() } else { v };
    let ty = |v: f64| if log_y { v.max(1e-12).log10() } else { v };
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| (tx(p.0), ty(p.1))))
        .collect();
    if pts.is_empty() {
        return String::new();
    }
    let (mut x0, mut x1) = pts
        .iter()
        .fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (mut y0, mut y1) = pts
        .iter()
        .fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    if !log_y {
        y0 = y0.min(0.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
        x0 -= 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let sx = |v: f64| ML + (v - x0) / (x1 - x0) * (W - ML - MR);
    let sy = |v: f64| H - MB - (v - y0) / (y1 - y0) * (H - MT - MB);
    let mut s = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><title>{}</title>"#,
        esc(title)
    );
    let _ = write!(
        s,
        r#"<text x="{ML}" y="18" font-size="14" font-weight="bold">{}</text>"#,
        esc(title)
    );
    let _ = write!(
        s,
        r##"<line x1="{ML}" y1="{}" x2="{}" y2="{}" stroke="#333"/><line x1="{ML}" y1="{MT}" x2="{ML}" y2="{}" stroke="#333"/>"##,
        H - MB,
        W - MR,
        H - MB,
        H - MB
    );
    for i in 0..=4 {
        let v = y0 + (y1 - y0) * i as f64 / 4.0;
        let shown = if log_y { 10f64.powf(v) } else { v };
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-size="10" text-anchor="end">{}</text>"##,
            ML - 4.0,
            sy(v) + 3.0,
            esc(&fmt_num(shown))
        );
        let v = x0 + (x1 - x0) * i as f64 / 4.0;
        let shown = if log_x { 10f64.powf(v) } else { v };
        let tick = match x_axis {
            XAxis::Bytes => crate::units::bytes(shown.round() as u64),
            XAxis::Number => fmt_num(shown),
        };
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-size="10" text-anchor="middle">{}</text>"##,
            sx(v),
            H - MB + 14.0,
            esc(&tick)
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>"##,
        (ML + W - MR) / 2.0,
        H - 6.0,
        esc(x_label)
    );
    let _ = write!(
        s,
        r##"<text x="12" y="{}" font-size="11" transform="rotate(-90 12 {})" text-anchor="middle">{}</text>"##,
        (MT + H - MB) / 2.0,
        (MT + H - MB) / 2.0,
        esc(y_label)
    );
    for (x, label) in marks {
        let mx = sx(tx(*x));
        let _ = write!(
            s,
            r##"<line x1="{mx}" y1="{MT}" x2="{mx}" y2="{}" stroke="#999" stroke-dasharray="4 3"/><text x="{}" y="{}" font-size="9" fill="#555">{}</text>"##,
            H - MB,
            mx + 2.0,
            MT + 10.0,
            esc(label)
        );
    }
    for (i, (name, p)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = p
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", sx(tx(*x)), sy(ty(*y))))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{}"/>"#,
            path.join(" ")
        );
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" font-size="11" fill="{c}">{}</text>"#,
            W - MR + 8.0,
            MT + 14.0 * i as f64 + 10.0,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// Horizontal bars with their 95% CI: (label, median, ci_low, ci_high).
pub fn bars(title: &str, unit: &str, bars: &[(String, f64, f64, f64)]) -> String {
    let row = 22.0;
    let h = MT + row * bars.len() as f64 + 30.0;
    let max = bars
        .iter()
        .map(|b| b.3.max(b.1))
        .fold(0.0, f64::max)
        .max(1e-12);
    let left = 230.0;
    let width = W - left - 90.0;
    let mut s = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img"><title>{}</title>"#,
        esc(title)
    );
    let _ = write!(
        s,
        r#"<text x="10" y="18" font-size="14" font-weight="bold">{} ({})</text>"#,
        esc(title),
        esc(unit)
    );
    for (i, (label, med, lo, hi)) in bars.iter().enumerate() {
        let y = MT + row * i as f64;
        let w = med / max * width;
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text><rect x="{left}" y="{y}" width="{w:.1}" height="{}" fill="{}"/>"##,
            left - 6.0,
            y + 13.0,
            esc(label),
            row - 6.0,
            COLORS[0]
        );
        let (a, b) = (left + lo / max * width, left + hi / max * width);
        let _ = write!(
            s,
            r##"<line x1="{a:.1}" y1="{}" x2="{b:.1}" y2="{}" stroke="#000"/><text x="{}" y="{}" font-size="10">{}</text>"##,
            y + 8.0,
            y + 8.0,
            left + w.max(b - left) + 6.0,
            y + 13.0,
            esc(&fmt_num(*med))
        );
    }
    s.push_str("</svg>");
    s
}

/// A square heatmap of `cells` ((row label, column label) -> value), with values printed.
pub fn heatmap(
    title: &str,
    unit: &str,
    labels: &[String],
    value: &dyn Fn(usize, usize) -> Option<f64>,
) -> String {
    let n = labels.len();
    let cell = (420.0 / n.max(1) as f64).clamp(8.0, 48.0);
    let size = 60.0 + cell * n as f64;
    let vals: Vec<f64> = (0..n)
        .flat_map(|i| (0..n).filter_map(move |j| value(i, j)))
        .collect();
    let (lo, hi) = vals
        .iter()
        .fold((f64::MAX, f64::MIN), |a, v| (a.0.min(*v), a.1.max(*v)));
    let mut s = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}" role="img"><title>{}</title>"#,
        size + 10.0,
        size + 30.0,
        size + 10.0,
        size + 30.0,
        esc(title)
    );
    let _ = write!(
        s,
        r#"<text x="4" y="16" font-size="13" font-weight="bold">{} ({})</text>"#,
        esc(title),
        esc(unit)
    );
    for (i, l) in labels.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" font-size="9" text-anchor="end">{}</text>"#,
            54.0,
            40.0 + cell * i as f64 + cell / 2.0 + 3.0,
            esc(l)
        );
        let _ = write!(
            s,
            r#"<text x="{}" y="34" font-size="9" text-anchor="middle">{}</text>"#,
            60.0 + cell * i as f64 + cell / 2.0,
            esc(l)
        );
        for j in 0..n {
            let Some(v) = value(i, j) else { continue };
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            let color = format!(
                "rgb({},{},{})",
                (255.0 * t) as u8,
                (80.0 + 100.0 * (1.0 - t)) as u8,
                (255.0 * (1.0 - t)) as u8
            );
            let (x, y) = (60.0 + cell * j as f64, 40.0 + cell * i as f64);
            let _ = write!(
                s,
                r#"<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{color}"><title>{}</title></rect>"#,
                esc(&fmt_num(v))
            );
            if cell >= 28.0 {
                let _ = write!(
                    s,
                    r##"<text x="{}" y="{}" font-size="8" text-anchor="middle" fill="#fff">{}</text>"##,
                    x + cell / 2.0,
                    y + cell / 2.0 + 3.0,
                    esc(&fmt_num(v))
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

/// The topology as nested boxes: packages > LLC groups > cores (with their CPUs).
pub fn topology(env: &crate::probe::ProbeDoc) -> String {
    let t = &env.topology;
    let mut packages: Vec<i64> = t.cpus.iter().map(|c| c.package).collect();
    packages.sort_unstable();
    packages.dedup();
    let core_w = 46.0;
    let mut s = String::new();
    let mut y = 10.0;
    let mut width: f64 = 300.0;
    let mut body = String::new();
    for p in &packages {
        let pkg_cpus: Vec<u32> = t
            .cpus
            .iter()
            .filter(|c| c.package == *p)
            .map(|c| c.cpu)
            .collect();
        let groups: Vec<&Vec<u32>> = t
            .llc_groups
            .iter()
            .filter(|g| g.iter().any(|c| pkg_cpus.contains(c)))
            .collect();
        let mut x = 20.0;
        let mut inner = String::new();
        for g in &groups {
            let mut cores: Vec<Vec<u32>> = Vec::new();
            for c in g.iter() {
                let core: Vec<u32> = t
                    .place(*c)
                    .map(|x| x.core_cpus.clone())
                    .unwrap_or_else(|| vec![*c]);
                if !cores.contains(&core) {
                    cores.push(core);
                }
            }
            let shown = cores.len().min(16);
            let gw =
                12.0 + (core_w + 4.0) * shown as f64 + if cores.len() > shown { 40.0 } else { 0.0 };
            let _ = write!(
                inner,
                r##"<rect x="{x}" y="{}" width="{gw}" height="62" fill="#e8f0fe" stroke="#5b7bd5"/><text x="{}" y="{}" font-size="9">LLC [{}]</text>"##,
                y + 24.0,
                x + 4.0,
                y + 34.0,
                esc(&crate::probe::cpulist::format_list(g))
            );
            for (k, core) in cores.iter().take(shown).enumerate() {
                let cx = x + 6.0 + (core_w + 4.0) * k as f64;
                let label = crate::probe::cpulist::format_list(core);
                let _ = write!(
                    inner,
                    r##"<rect x="{cx}" y="{}" width="{core_w}" height="36" fill="#fff" stroke="#888"/><text x="{}" y="{}" font-size="9" text-anchor="middle">{}</text>"##,
                    y + 42.0,
                    cx + core_w / 2.0,
                    y + 63.0,
                    esc(&label)
                );
            }
            if cores.len() > shown {
                let _ = write!(
                    inner,
                    r#"<text x="{}" y="{}" font-size="9">+{}</text>"#,
                    x + gw - 36.0,
                    y + 63.0,
                    cores.len() - shown
                );
            }
            x += gw + 10.0;
        }
        width = width.max(x + 10.0);
        let _ = write!(
            body,
            r##"<rect x="10" y="{y}" width="{}" height="100" fill="none" stroke="#333"/><text x="16" y="{}" font-size="11" font-weight="bold">Package {p}</text>{inner}"##,
            x,
            y + 14.0
        );
        y += 110.0;
    }
    let _ = write!(
        s,
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {y}" width="{width}" height="{y}" role="img"><title>topology</title>{body}</svg>"#
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped() {
        let s = bars(
            "<b>",
            "ns",
            &[("<script>alert(1)</script>".into(), 1.0, 0.5, 1.5)],
        );
        assert!(!s.contains("<script>") && s.contains("&lt;script&gt;"));
        let l = lines(
            &LineChart::new("t", "x", "y")
                .series("a&b", vec![(1.0, 2.0), (2.0, 3.0)])
                .log(true, true)
                .marks(vec![(1.5, "L1".into())])
                .bytes_axis(),
        );
        assert!(l.contains("a&amp;b") && l.contains("<polyline"));
        assert!(lines(&LineChart::new("t", "x", "y")).is_empty());
    }
}
