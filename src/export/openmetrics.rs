//! `--format openmetrics`: each result's median and 95% CI bounds as gauges, one family
//! per benchmark, statistic and unit (`truebench_timers_clock_read_median_seconds`), the
//! value converted to the base unit the name ends in (ns to seconds, MB/s to bytes per
//! second), with labels run_id, host, benchmark, placement, cpus, params, unit (the run
//! document's) and one `tag_KEY` per tag; and each run's start as
//! `truebench_run_start_timestamp_seconds`.
//!
//! The text is OpenMetrics 1.0 (`# TYPE`, `# UNIT`, `# HELP` once per family, before its
//! samples; `# EOF` last) and, because it uses nothing OpenMetrics adds but the `# UNIT`
//! and `# EOF` lines (which the older parser reads as comments), also valid Prometheus text
//! format 0.0.4: the format node_exporter's textfile collector, the Pushgateway and
//! `promtool check metrics` read. No sample carries a timestamp (the textfile collector
//! refuses them; the two formats write them differently).

use super::Export;
use crate::result::{BenchResult, RunDocument};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

pub struct OpenMetrics;

/// A truebench unit's OpenMetrics base unit: value × `mul` / `div`, named `name`.
struct BaseUnit {
    name: String,
    mul: f64,
    div: f64,
}

/// The base unit of a run document's unit. Time per thing becomes seconds, data rates
/// bytes per second; a unit with no base unit keeps its value and its sanitised name
/// (`lps` becomes `loops_per_second`, as UnixBench means it).
fn base_unit(unit: &str) -> BaseUnit {
    let (name, mul, div) = match unit {
        u if u == "ns" || u.starts_with("ns/") => ("seconds", 1.0, 1e9),
        u if u == "us" || u.starts_with("us/") => ("seconds", 1.0, 1e6),
        u if u == "ms" || u.starts_with("ms/") => ("seconds", 1.0, 1e3),
        "MB/s" => ("bytes_per_second", 1e6, 1.0),
        "GB/s" => ("bytes_per_second", 1e9, 1.0),
        // UnixBench's file-copy KBps counts KiB.
        "KBps" => ("bytes_per_second", 1024.0, 1.0),
        "lps" => ("loops_per_second", 1.0, 1.0),
        "lpm" => ("loops_per_minute", 1.0, 1.0),
        "MWIPS" => ("whetstone_instructions_per_second", 1e6, 1.0),
        other => {
            return BaseUnit {
                name: snake(other),
                mul: 1.0,
                div: 1.0,
            }
        }
    };
    BaseUnit {
        name: name.into(),
        mul,
        div,
    }
}

/// `text` as a metric-name part: lower case, every run of characters outside
/// `[a-z0-9]` one `_`, none at either end (`timers.clock-read` → `timers_clock_read`).
fn snake(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_');
    if out.is_empty() {
        "unnamed".into()
    } else {
        out.into()
    }
}

/// A label value as both formats escape it: backslash, double quote, newline.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A number as both formats read it (stored samples are finite; the rest for safety).
fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else if x.is_nan() {
        "NaN".into()
    } else if x > 0.0 {
        "+Inf".into()
    } else {
        "-Inf".into()
    }
}

/// The run's labels: run_id, host, and `tag_KEY` per tag (keys made label names; one
/// that would repeat an earlier one gets `_2`, `_3`...).
fn run_labels(run: &RunDocument) -> Vec<(String, String)> {
    let mut labels = vec![
        ("run_id".to_string(), run.run_id.clone()),
        ("host".to_string(), run.host.clone().unwrap_or_default()),
    ];
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for (k, v) in &run.tags {
        let base = format!("tag_{}", label_name(k));
        let mut name = base.clone();
        let mut n = 1;
        while !taken.insert(name.clone()) {
            n += 1;
            name = format!("{base}_{n}");
        }
        labels.push((name, v.clone()));
    }
    labels
}

/// A tag key as a label name: `[a-zA-Z0-9_]` kept, everything else `_`.
fn label_name(key: &str) -> String {
    key.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// One family: its unit, help and samples (label set, value) in the order written.
struct Family {
    unit: String,
    help: String,
    samples: Vec<(String, f64)>,
}

fn label_set(labels: &[(String, String)]) -> String {
    let body: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// The statistics each result exports, with the words of their help text.
const STATS: [(&str, &str); 3] = [
    ("median", "median of the samples"),
    (
        "ci95_low",
        "lower bound of the 95% confidence interval of the median",
    ),
    (
        "ci95_high",
        "upper bound of the 95% confidence interval of the median",
    ),
];

fn stat(r: &BenchResult, name: &str) -> f64 {
    match name {
        "median" => r.stats.median,
        "ci95_low" => r.stats.ci95_low,
        _ => r.stats.ci95_high,
    }
}

impl Export for OpenMetrics {
    fn render(&self, runs: &[RunDocument]) -> anyhow::Result<Vec<u8>> {
        let mut families: BTreeMap<String, Family> = BTreeMap::new();
        for run in runs {
            let labels = run_labels(run);
            if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&run.started_at) {
                families
                    .entry("truebench_run_start_timestamp_seconds".into())
                    .or_insert_with(|| Family {
                        unit: "seconds".into(),
                        help: "When the truebench run started, in seconds since the Unix epoch."
                            .into(),
                        samples: vec![],
                    })
                    .samples
                    .push((label_set(&labels), t.timestamp_millis() as f64 / 1000.0));
            }
            let mut seen: BTreeSet<String> = BTreeSet::new();
            for (i, r) in run.results.iter().enumerate() {
                let unit = base_unit(&r.unit);
                let bench = snake(r.base_id());
                let mut l = labels.clone();
                l.extend([
                    ("benchmark".to_string(), r.benchmark.clone()),
                    ("placement".to_string(), r.placement.name.clone()),
                    ("cpus".to_string(), super::cpus_text(r)),
                    ("params".to_string(), r.params_text()),
                    ("unit".to_string(), r.unit.clone()),
                ]);
                // Two results of one run with the same labels (a document that repeats
                // a measurement) stay two series.
                if !seen.insert(format!("{bench} {}", label_set(&l))) {
                    l.push(("result".to_string(), i.to_string()));
                }
                let set = label_set(&l);
                for (name, words) in STATS {
                    let family = format!("truebench_{bench}_{name}_{}", unit.name);
                    families
                        .entry(family)
                        .or_insert_with(|| Family {
                            unit: unit.name.clone(),
                            help: format!(
                                "truebench {bench}: {words}, in {}; the unit label is the \
                                 run document's unit.",
                                unit.name.replace('_', " ")
                            ),
                            samples: vec![],
                        })
                        .samples
                        .push((set.clone(), stat(r, name) * unit.mul / unit.div));
                }
            }
        }
        let mut out = String::new();
        for (name, f) in &families {
            writeln!(out, "# TYPE {name} gauge")?;
            writeln!(out, "# UNIT {name} {}", f.unit)?;
            writeln!(out, "# HELP {name} {}", f.help)?;
            for (labels, value) in &f.samples {
                writeln!(out, "{name}{labels} {}", number(*value))?;
            }
        }
        out.push_str("# EOF\n");
        Ok(out.into_bytes())
    }

    fn replaces_file(&self) -> Option<&'static str> {
        Some("# TYPE truebench_")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::hostile;

    /// The OpenMetrics rules a reader checks: each family's metadata once and before its
    /// samples, UNIT a suffix of the name, names in the grammar, `# EOF` last and once.
    fn check_grammar(text: &str) -> Vec<String> {
        let name_ok = |n: &str| {
            let mut c = n.chars();
            c.next()
                .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == ':')
                && c.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        };
        let mut errs = vec![];
        let mut done: BTreeSet<String> = BTreeSet::new();
        let mut current = String::new();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.last(), Some(&"# EOF"));
        assert_eq!(lines.iter().filter(|l| **l == "# EOF").count(), 1);
        for l in &lines[..lines.len() - 1] {
            if let Some(rest) = l.strip_prefix("# TYPE ") {
                let name = rest.split(' ').next().unwrap().to_string();
                if !name_ok(&name) || !done.insert(name.clone()) {
                    errs.push(format!("bad or repeated family {name}"));
                }
                current = name;
            } else if let Some(rest) = l.strip_prefix("# UNIT ") {
                let (name, unit) = rest.split_once(' ').unwrap();
                if name != current || !name.ends_with(&format!("_{unit}")) {
                    errs.push(format!("unit {unit} of {name}"));
                }
            } else if let Some(rest) = l.strip_prefix("# HELP ") {
                if !rest.starts_with(&format!("{current} ")) || rest.contains('"') {
                    errs.push(format!("help {rest}"));
                }
            } else {
                let name = l.split(['{', ' ']).next().unwrap();
                if name != current {
                    errs.push(format!("sample of {name} outside its family"));
                }
                if l.contains('\n') || !l.ends_with(|c: char| c.is_ascii_digit()) {
                    errs.push(format!("sample line {l}"));
                }
            }
        }
        errs
    }

    #[test]
    fn families_follow_the_grammar_and_hostile_labels_are_escaped() {
        let runs = [hostile::run("r1"), hostile::run("r2")];
        let text = String::from_utf8(OpenMetrics.render(&runs).unwrap()).unwrap();
        assert_eq!(check_grammar(&text), Vec::<String>::new(), "{text}");
        // Three families per benchmark (median, ci95_low, ci95_high) and the run start.
        assert_eq!(text.matches("# TYPE").count(), 3 * 3 + 1, "{text}");
        let median = text
            .lines()
            .find(|l| l.starts_with("truebench_timers_clock_read_median_seconds{run_id=\"r1\""))
            .unwrap();
        assert!(
            median.contains(r#"host="a \"quoted\" \\ back,slash\nnew line; tab	=x/y ☃ é""#),
            "{median}"
        );
        assert!(median.contains(r#"tag_rack=""#) && median.contains(r#"tag_Rack="upper""#));
        assert!(median.contains(r#"unit="ns/read""#));
        let value: f64 = median.rsplit(' ').next().unwrap().parse().unwrap();
        assert!((value - runs[0].results[0].stats.median / 1e9).abs() < 1e-18);
        let bw = text
            .lines()
            .find(|l| l.starts_with("truebench_memory_bandwidth_ci95_high_bytes_per_second{"))
            .unwrap();
        let value: f64 = bw.rsplit(' ').next().unwrap().parse().unwrap();
        assert_eq!(value, runs[0].results[2].stats.ci95_high * 1e6);
        assert!(text.contains("truebench_run_start_timestamp_seconds{run_id=\"r2\""));
    }

    #[test]
    fn names_and_units_are_sanitised() {
        assert_eq!(snake("timers.clock-read"), "timers_clock_read");
        assert_eq!(snake("☃"), "unnamed");
        assert_eq!(snake("a ☃ B--c"), "a_b_c");
        assert_eq!(base_unit("ns/round-trip").name, "seconds");
        assert_eq!(base_unit("odd unit/☃").name, "odd_unit");
        assert_eq!(label_name("rack id☃"), "rack_id_");
        let mut run = hostile::run("r1");
        run.tags.insert("a b".into(), "1".into());
        run.tags.insert("a_b".into(), "2".into());
        let names: Vec<String> = run_labels(&run).into_iter().map(|(k, _)| k).collect();
        assert!(names.contains(&"tag_a_b".into()) && names.contains(&"tag_a_b_2".into()));
    }

    #[test]
    fn a_repeated_measurement_stays_a_distinct_series() {
        let mut run = hostile::run("r1");
        let again = run.results[0].clone();
        run.results.push(again);
        let text = String::from_utf8(OpenMetrics.render(&[run]).unwrap()).unwrap();
        assert!(text.contains(",result=\"3\"}"), "{text}");
        assert_eq!(check_grammar(&text), Vec::<String>::new());
    }
}
