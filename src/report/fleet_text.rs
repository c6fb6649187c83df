//! The fleet view as text, at most 100 columns: a header saying what the baseline and an
//! outlier are and whose noise the tests used, each group of outliers in the order a person
//! acts on them (`fleet::groups`) with its count, factor range and rows, and its first
//! [`GROUP_LINES`] hosts (one line each: rank, host, score, the rows farthest from the
//! fleet), one line for the hosts within the fleet's spread, the tag groups; with `verbose`,
//! every host of every group, the per-row table, each outlier's cause with its evidence,
//! and the typical hosts one by one. `--top N` caps every list.

use crate::compare::stats::verdict::in_words;
use crate::fleet::{FleetView, Host};
use crate::units::{count, noun, num};

/// What a fleet without a row common to enough hosts says instead of scores and ranks.
pub const NO_ROWS: &str =
    "No row was measured comparably by enough hosts (left out above): no host is scored or ranked.";

/// Host lines per group without `-v`.
pub const GROUP_LINES: usize = 8;

/// The widest line written.
pub const WIDTH: usize = 100;

/// A line of prose wrapped to [`WIDTH`] (its words whole), as lines of `out`.
fn wrapped(s: &str) -> String {
    crate::report::views::wrap(s).trim_end().to_string()
}

/// A one-line entry of a list cut at [`WIDTH`] (the JSON holds it whole).
fn clip(s: String) -> String {
    if s.chars().count() <= WIDTH {
        s
    } else {
        let mut t: String = s.chars().take(WIDTH - 1).collect();
        t.push('…');
        t
    }
}

fn name(h: &Host) -> String {
    h.name()
}

/// What a member of the fleet is called: a host, or a run when runs of one host are
/// compared together (each run is judged as a member).
fn member(f: &FleetView) -> &'static str {
    if f.distinct_hosts < f.runs.len() {
        "run"
    } else {
        "host"
    }
}

/// Outlier runs of hosts with other runs in the fleet: the hosts off in most of their runs
/// (the host) and those off in one run only (a fluke of that run), worst case per host.
fn runs_of_one_host(f: &FleetView, verbose: bool) -> Vec<String> {
    let mut per_host: std::collections::BTreeMap<String, crate::fleet::consistency::Runs> =
        Default::default();
    for h in f.hosts.iter() {
        if let Some(r) = h.runs_off {
            let e = per_host.entry(name(h)).or_insert(r);
            if r.off > e.off {
                *e = r;
            }
        }
    }
    if per_host.is_empty() {
        return vec![];
    }
    let list = |keep: &dyn Fn(&crate::fleet::consistency::Runs) -> bool| {
        let all: Vec<String> = per_host
            .iter()
            .filter(|(_, r)| keep(r))
            .map(|(h, r)| format!("{h} ({} of {})", r.off, r.runs))
            .collect();
        let n = all.len();
        let shown = if verbose { n } else { n.min(GROUP_LINES) };
        let more = if shown < n {
            format!(", … {} more (-v)", n - shown)
        } else {
            String::new()
        };
        (n, format!("{}{more}", all[..shown].join(", ")))
    };
    let mut parts = vec![];
    let (n, hosts) = list(&|r| r.consistent());
    if n > 0 {
        parts.push(format!(
            "{} off in most of their runs (the host, not a run): {hosts}",
            count(n, "host")
        ));
    }
    let (n, hosts) = list(&|r| r.fluke());
    if n > 0 {
        parts.push(format!(
            "{} off in one run only (a fluke of that run; its other runs are not off alike): {hosts}",
            count(n, "host")
        ));
    }
    let (n, hosts) = list(&|r| !r.consistent() && !r.fluke());
    if n > 0 {
        parts.push(format!(
            "{} off in half their runs or fewer (rerun to tell the host from its runs): {hosts}",
            count(n, "host")
        ));
    }
    vec![
        String::new(),
        wrapped(&format!(
            "Outlier runs of hosts with several runs here (runs off alike of the host's runs): {}.",
            parts.join("; ")
        )),
    ]
}

/// A host's row name in a line: the fleet row's short name.
fn row_name(f: &FleetView, key: &str) -> String {
    f.rows
        .iter()
        .find(|r| r.def.key == key)
        .map(|r| r.def.short())
        .unwrap_or_else(|| key.to_string())
}

fn host_line(f: &FleetView, h: &Host) -> String {
    let real: Vec<String> = h
        .worst
        .iter()
        .filter(|w| w.real || !h.outlier)
        .take(2)
        .map(|w| format!("{} {}", row_name(f, &w.row), in_words(w.speed, false)))
        .collect();
    let more = if h.outlier {
        h.real
            .iter()
            .filter(|r| **r)
            .count()
            .saturating_sub(real.len())
    } else {
        0
    };
    let tail = if more > 0 {
        format!("; +{more} more")
    } else {
        String::new()
    };
    let runs = h
        .runs_off
        .map(|r| format!("[{} of {} runs] ", r.off, r.runs))
        .unwrap_or_default();
    clip(format!(
        "  {:>4} {:>5.1}%  {:<16} {:>6.3}  {runs}{}{tail}",
        h.rank,
        h.percentile,
        name(h),
        h.score,
        real.join("; ")
    ))
}

/// The false discovery rate and the tests it is held over.
pub fn fdr_words(f: &FleetView) -> String {
    format!(
        "FDR {:.0}% over the means of {} and, apart, over the {} of the hosts whose mean is not off",
        f.fdr_q * 100.0,
        crate::units::count(f.fdr_tests.hosts, "host"),
        crate::units::count(f.fdr_tests.host_rows, "host x row"),
    )
}

/// Whose noise the tests used, in a sentence.
pub fn noise_words(n: &crate::fleet::NoiseUse) -> String {
    let all = n.rounds + n.model + n.fleet_only;
    if n.fleet_only == all {
        return "No host's own noise is known (no rounds, calibration or history): fleet spread alone."
            .into();
    }
    let mut parts = vec![];
    if n.rounds > 0 {
        parts.push(format!("rounds of its run {}", n.rounds));
    }
    if n.model > 0 {
        parts.push(format!("calibration/history {}", n.model));
    }
    if n.fleet_only > 0 {
        parts.push(format!("none (fleet spread alone) {}", n.fleet_only));
    }
    format!("Own noise, of {all} host x rows: {}.", parts.join(", "))
}

/// The fleet's hardware classes when it has more than one: every host is judged against the
/// whole fleet, so a class other than the typical host's stands out by its hardware.
pub fn hardware_words(f: &FleetView) -> Option<String> {
    if f.hardware.len() < 2 {
        return None;
    }
    let classes: Vec<String> = f
        .hardware
        .iter()
        .map(|c| format!("{} ({})", c.class, count(c.runs, member(f))))
        .collect();
    Some(format!(
        "Hardware: {} classes, {}. Every {} is judged against the whole fleet: a {} of \
         other hardware than the typical host's is an outlier labelled 'different hardware' \
         (rank one class with --tag).",
        f.hardware.len(),
        classes.join("; "),
        member(f),
        member(f)
    ))
}

/// The runs that did not measure every row, in one paragraph (the first
/// [`GROUP_LINES`] without `verbose`).
fn incomplete_words(f: &FleetView, verbose: bool) -> Option<String> {
    if f.incomplete.is_empty() {
        return None;
    }
    let n = f.incomplete.len();
    let shown = if verbose { n } else { n.min(GROUP_LINES) };
    let list: Vec<String> = f.incomplete[..shown]
        .iter()
        .map(|x| {
            let suites: Vec<String> = x.suites.iter().map(|(s, k)| format!("{s} {k}")).collect();
            format!(
                "{} {} of {} ({})",
                x.host,
                x.rows_missing,
                f.rows.len(),
                suites.join(", ")
            )
        })
        .collect();
    let more = if shown < n {
        format!("; … {} more (-v)", n - shown)
    } else {
        String::new()
    };
    Some(format!(
        "Rows not measured by {} (each is scored over the rows it has): {}{more}.",
        count(n, member(f)),
        list.join("; ")
    ))
}

pub fn render(f: &FleetView, verbose: bool) -> String {
    let mut out: Vec<String> = vec![];
    let typical = f
        .typical_host
        .as_ref()
        .and_then(|r| f.hosts.iter().find(|h| &h.run == r))
        .map(name)
        .or_else(|| f.typical_host.clone())
        .unwrap_or_else(|| "none".into());
    // Runs of one host compared together are members of the fleet too: say so (a host is
    // its name, with the `--by` tag's value when that tells runs of one name apart).
    let members = if f.distinct_hosts == f.runs.len() {
        count(f.runs.len(), "host")
    } else {
        format!(
            "{} of {}",
            count(f.runs.len(), "run"),
            count(f.distinct_hosts, "host")
        )
    };
    out.push(wrapped(&format!(
        "Fleet of {members}, {}; baseline: the fleet median of each row; typical host {typical}",
        count(f.rows.len(), "row")
    )));
    out.push(wrapped(&format!(
        "Score: geometric mean over rows of host/fleet, > 1 better. Outlier: a host's mean over \
         its rows, or a row, beyond both the fleet's spread (robust z) and the host's own noise, \
         {:.0}% or more from the median; {}; called only with {}+ hosts on a row.",
        f.floor * 100.0,
        fdr_words(f),
        f.min_fleet,
    )));
    out.push(wrapped(&noise_words(&f.noise)));
    if let Some(line) = hardware_words(f) {
        out.push(wrapped(&line));
    }
    if let Some(line) = incomplete_words(f, verbose) {
        out.push(wrapped(&line));
    }
    // The first few of each reason whole, the rest counted (a fleet of many rows each
    // measured by too few hosts); the JSON lists every one.
    for line in crate::repeated::Repeated::lines(f.rows_left_out.iter().map(|why| {
        let reason = why.rsplit_once(": ").map_or(why.as_str(), |(_, r)| r);
        (crate::repeated::kind_of(reason), format!("Left out: {why}"))
    })) {
        out.push(wrapped(&line));
    }
    if f.rows.is_empty() {
        // No score exists without a row: not "score inf--inf" for every host.
        out.push(String::new());
        out.push(NO_ROWS.into());
        return out.join("\n") + "\n";
    }
    let outliers: usize = f.cause_groups.iter().map(|g| g.hosts.len()).sum();
    out.push(String::new());
    if let Some(why) = &f.outlier_calls {
        out.push(wrapped(&format!("Outlier calls {why}.")));
    } else if outliers == 0 {
        out.push("No outlier: every host is within the fleet's spread.".into());
    } else {
        out.push(clip(format!(
            "{} in {}: uniformly off first, then by recorded cause (against the",
            count(outliers, "outlier"),
            count(f.cause_groups.len(), "group")
        )));
        out.push("typical host), then off on a few rows:".into());
    }
    let by_run: std::collections::HashMap<&str, &Host> =
        f.hosts.iter().map(|h| (h.run.as_str(), h)).collect();
    if outliers > 0 {
        out.push("  rank  pctl   host              score  rows farthest from the fleet".into());
    }
    for g in &f.cause_groups {
        for line in textwrap::wrap(
            &format!(
                "{}, score {:.3}-{:.3}: {}",
                count(g.hosts.len(), member(f)),
                g.score_min,
                g.score_max,
                g.label
            ),
            WIDTH,
        )
        .iter()
        .take(if verbose { usize::MAX } else { 3 })
        {
            out.push(clip(line.to_string()));
        }
        if !g.rows.is_empty() {
            let shown: Vec<&String> = g.rows.iter().take(3).collect();
            let more = g.rows.len() - shown.len();
            out.push(clip(format!(
                "    {}{}",
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
                if more > 0 {
                    format!("; +{}", count(more, "row"))
                } else {
                    String::new()
                }
            )));
        }
        let listed: Vec<&Host> = g
            .hosts
            .iter()
            .filter_map(|r| by_run.get(r.as_str()).copied())
            .collect();
        let shown = if verbose {
            listed.len()
        } else {
            listed.len().min(GROUP_LINES)
        };
        for h in &listed[..shown] {
            out.push(host_line(f, h));
        }
        if shown < g.hosts.len() {
            out.push(format!(
                "         … {} more of this group ({})",
                g.hosts.len() - shown,
                if shown < listed.len() { "-v" } else { "--top" }
            ));
        }
    }
    let t = &f.typical;
    if t.hosts > 0 {
        out.push(clip(format!(
            "{} within the fleet's spread: score {:.3}-{:.3}",
            count(t.hosts, member(f)),
            t.score_min,
            t.score_max
        )));
    }
    out.extend(runs_of_one_host(f, verbose));
    if !f.tag_groups.is_empty() {
        out.push(String::new());
        out.push(format!(
            "By {} (best median score first):",
            f.by.as_deref().unwrap_or("tag")
        ));
        for g in &f.tag_groups {
            out.push(clip(format!(
                "  {:<20} {:>4} {:<6} score {:.3} ({:.3}-{:.3}), {}",
                g.group,
                g.hosts,
                format!("{},", noun(g.hosts, member(f))),
                g.score_median,
                g.score_min,
                g.score_max,
                count(g.outliers, "outlier")
            )));
        }
    }
    if verbose {
        verbose_part(f, &mut out);
    } else if !f.hosts.is_empty() {
        out.push(String::new());
        out.push("Per-row table, each outlier's evidence and every host: -v. JSON: --json.".into());
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

fn verbose_part(f: &FleetView, out: &mut Vec<String>) {
    out.push(String::new());
    let mut t = super::table(&["row", "unit", "hosts", "fleet median", "spread", "outliers"]);
    t.set_width(WIDTH as u16);
    for r in &f.rows {
        t.add_row(vec![
            r.def.short(),
            format!(
                "{} ({} better)",
                r.def.unit,
                if r.def.lower_is_better {
                    "lower"
                } else {
                    "higher"
                }
            ),
            r.hosts.to_string(),
            num(r.fleet_median),
            format!("{:.1}%", r.spread * 100.0),
            r.outliers.to_string(),
        ]);
    }
    out.extend(t.to_string().lines().map(String::from));
    for h in f.hosts.iter().filter(|h| h.cause.is_some()) {
        let c = h.cause.as_ref().expect("filtered");
        out.push(String::new());
        out.push(wrapped(&format!(
            "{} ({}), score {:.3}, against the typical host {}: {} of {} differing rows explained by {}",
            name(h),
            h.run,
            h.score,
            c.against,
            c.rows_explained,
            c.rows_real,
            c.cause
        )));
        for line in textwrap::wrap(&c.sentence, WIDTH - 4) {
            out.push(format!("    {line}"));
        }
        for e in &c.evidence {
            for line in textwrap::wrap(&format!("evidence: {e}"), WIDTH - 6) {
                out.push(format!("      {line}"));
            }
        }
    }
    let others: Vec<&Host> = f.hosts.iter().filter(|h| !h.outlier).collect();
    if !others.is_empty() {
        out.push(String::new());
        out.push(format!(
            "Hosts within the fleet's spread{}:",
            if f.hosts_omitted > 0 {
                format!(" (best and worst; {} omitted by --top)", f.hosts_omitted)
            } else {
                String::new()
            }
        ));
        out.push("  rank  pctl   host              score  rows farthest from the fleet".into());
        for h in others {
            out.push(host_line(f, h));
        }
    }
}

/// The words the fleet view's cases get, on the fleet's own fixtures (`fleet::*::tests`):
/// each view's facts are tested there, the text a reader sees here.
#[cfg(test)]
mod tests {
    use super::render;
    use crate::fleet::{consistency, hardware, missing, noise, view, Options};
    use crate::result::RunDocument;

    /// The text of the default view of `docs`, every line within 100 columns.
    fn text_of(docs: &[RunDocument]) -> String {
        let text = render(&view(docs, &Options::default()), false);
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "{line}");
        }
        text
    }

    #[test]
    fn a_host_slow_in_every_run_and_one_slow_in_one_run_are_told_apart_in_words() {
        let text = text_of(&consistency::view_tests::fleet());
        assert!(text.contains("Fleet of 36 runs of 12 hosts"), "{text}");
        assert!(text.contains("4 runs, score"), "{text}");
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("1 host off in most of their runs (the host, not a run): h2 (3 of 3)"),
            "{text}"
        );
        assert!(
            flat.contains("1 host off in one run only (a fluke of that run"),
            "{text}"
        );
        assert!(flat.contains("h5 (1 of 3)"), "{text}");
        assert!(
            text.contains("[1 of 3 runs]") && text.contains("[3 of 3 runs]"),
            "{text}"
        );
    }

    #[test]
    fn a_fleet_of_two_cpu_models_names_its_hardware_classes() {
        let text = text_of(&hardware::tests::two_models());
        assert!(
            text.contains("Hardware: 2 classes, AMD EPYC 7B13, "),
            "{text}"
        );
    }

    #[test]
    fn a_host_that_skipped_a_suite_is_named_with_the_rows_it_lacks() {
        let text = text_of(&missing::tests::one_skipped_ctx());
        assert!(
            text.contains("Rows not measured by 1 host (each is scored over the rows it has): h3 1 of 2 (ctx 1)."),
            "{text}"
        );
    }

    #[test]
    fn a_fleet_below_the_minimum_says_it_calls_no_outlier_and_counts_runs_of_one_host() {
        let docs = noise::tests::four_hosts();
        let text = text_of(&docs);
        assert!(text.contains("Outlier calls refused: 4 hosts"), "{text}");
        // The refusal is wrapped whole within 100 columns, not cut.
        assert!(text.contains("(ranks only)."), "{text}");
        assert!(text.starts_with("Fleet of 4 hosts,"), "{text}");
        // Four runs of one host are four runs, not four hosts.
        let one: Vec<RunDocument> = docs
            .into_iter()
            .map(|mut d| {
                d.host = Some("vm".into());
                d
            })
            .collect();
        let text = text_of(&one);
        assert!(text.starts_with("Fleet of 4 runs of 1 host,"), "{text}");
    }
}
