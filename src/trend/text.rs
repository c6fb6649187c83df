//! `trend` as text, every line within 100 columns (long ones wrapped): the method, then
//! per host its runs and changes, each with its runs either side, factor and interval,
//! cause and evidence, and its rows (the first few unless `verbose`); with `--fleet`, the
//! fleet's changes first, largest first.

use super::explain::{day, Explained};
use super::Trend;
use crate::report::views::wrap;
use crate::units::{count, num};

/// Rows listed per change unless verbose.
const ROWS: usize = 5;

fn factor(f: f64, lo: f64, hi: f64) -> String {
    format!("x{f:.3} [{lo:.3}, {hi:.3}]")
}

fn change(out: &mut String, c: &Explained, verbose: bool) {
    out.push_str(&wrap(&format!("  {}", c.summary)));
    out.push_str(&wrap(&format!(
        "    runs {} (last of {} before) -> {} (first of {} after); {}",
        c.before.run_id,
        c.runs_before,
        c.after.run_id,
        c.runs_after,
        factor(c.factor, c.factor_low, c.factor_high)
    )));
    let compared = c
        .compared
        .as_ref()
        .map(|[a, b]| format!(" (compared {a} with {b})"))
        .unwrap_or_default();
    out.push_str(&wrap(&format!(
        "    cause: {}: {}{compared}",
        c.cause.cause, c.cause.because
    )));
    for e in c
        .cause
        .evidence
        .iter()
        .take(if verbose { usize::MAX } else { 3 })
    {
        out.push_str(&wrap(&format!("      {e}")));
    }
    let shown = if verbose { c.rows.len() } else { ROWS };
    for r in c.rows.iter().take(shown) {
        out.push_str(&wrap(&format!(
            "    {}: {} -> {} {} {} {}",
            r.row,
            num(r.median_before),
            num(r.median_after),
            r.unit,
            factor(r.factor, r.factor_low, r.factor_high),
            r.direction
        )));
    }
    if c.rows.len() > shown {
        out.push_str(&format!(
            "    and {} more {} (--verbose lists them)\n",
            c.rows.len() - shown,
            crate::units::noun(c.rows.len() - shown, "row")
        ));
    }
}

/// The whole text.
pub fn render(t: &Trend, verbose: bool) -> String {
    let m = &t.method;
    let runs: usize = t.hosts.iter().map(|h| h.runs).sum();
    let mut out = wrap(&format!(
        "trend: {}, {}, {}",
        count(t.hosts.len(), "host"),
        count(runs, "run"),
        count(t.changes.len(), "change"),
    ));
    out.push_str(&wrap(&format!(
        "method: {}; segments of at least {}, p <= {} over a host's rows (each row at that / \
         rows), window {}, noise at least {}% \
         a run (or the runs' own); rows within {} are one change",
        m.algorithm,
        count(m.params.min_segment, "run"),
        m.params.max_p,
        count(m.params.window, "run"),
        m.params.sigma_floor * 100.0,
        count(m.group_within, "run")
    )));
    if let Some(fleet) = &t.fleet {
        out.push_str("\nfleet\n");
        if fleet.is_empty() {
            out.push_str("  no change on any host\n");
        }
        for f in fleet {
            out.push_str(&wrap(&format!("  {}", f.summary)));
            if verbose {
                out.push_str(&wrap(&format!("    hosts: {}", f.hosts.join(", "))));
            }
        }
    }
    let least = 2 * m.params.min_segment;
    for h in &t.hosts {
        out.push('\n');
        // "0 changes" of a host with too few runs would read as "no change".
        let changes = if h.rows_searched == 0 {
            format!(
                "too few runs to find a change (a row needs {least} runs or more: {} each side)",
                m.params.min_segment
            )
        } else if h.rows_searched < h.rows {
            format!(
                "{}, {} with fewer than {least} runs not searched",
                count(h.changes, "change"),
                h.rows - h.rows_searched
            )
        } else {
            count(h.changes, "change")
        };
        out.push_str(&wrap(&format!(
            "host {}: {} ({} .. {}), {}, {changes}",
            h.host,
            count(h.runs, "run"),
            h.first.as_deref().map(day).unwrap_or("-"),
            h.last.as_deref().map(day).unwrap_or("-"),
            count(h.rows, "row"),
        )));
        for c in t.changes.iter().filter(|c| c.host == h.host) {
            change(&mut out, c, verbose);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trend::{HostSummary, Method, Trend, SCHEMA};

    fn host(runs: usize, rows_searched: usize) -> HostSummary {
        HostSummary {
            host: "web-3".into(),
            runs,
            rows: 11,
            rows_searched,
            first: Some("2026-11-01T00:00:00Z".into()),
            last: Some("2026-11-03T00:00:00Z".into()),
            changes: 0,
        }
    }

    fn text(h: HostSummary) -> String {
        render(
            &Trend {
                schema: SCHEMA,
                method: Method::default(),
                hosts: vec![h],
                changes: vec![],
                fleet: None,
            },
            false,
        )
    }

    #[test]
    fn a_host_with_too_few_runs_says_so_rather_than_no_change() {
        let t = text(host(3, 0));
        assert!(
            t.split_whitespace().collect::<Vec<_>>().join(" ").contains(
                    "host web-3: 3 runs (2026-11-01 .. 2026-11-03), 11 rows, too few runs to find a change (a row needs 6 runs or more: 3 each side)"
                ),
            "{t}"
        );
        assert!(
            !t.contains("0 changes\n\nhost") && !t.contains("rows, 0 changes"),
            "{t}"
        );
        let t = text(host(8, 9));
        let flat = t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("11 rows, 0 changes, 2 with fewer than 6 runs not searched"),
            "{t}"
        );
        let t = text(host(8, 11));
        assert!(t.contains("11 rows, 0 changes\n"), "{t}");
        for line in t.lines() {
            assert!(line.chars().count() <= 100, "{line}");
        }
    }
}
