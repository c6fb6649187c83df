//! `--format gobench`: the Go benchmark format (golang.org/design/14313-benchmark-format),
//! so `benchstat old.txt new.txt` compares two truebench runs with its own statistics.
//!
//! Each run is a block: a `#` line naming it (benchstat ignores it), configuration lines
//! for what it ran on (`goos`, `pkg`, `cpu`, `host`, `clocksource`), one `Unit` line per
//! unit saying which way is better, then one line per sample:
//! `BenchmarkTimers.clock-read@1/clock=monotonic/path=vdso/placement=os-2  1000  22.5 ns/read`
//! (the params and the placement as `/key=value` parts, `-N` the CPUs the result could
//! use, the iterations of one timed batch, the sample in the run document's unit).
//!
//! benchstat puts results whose configuration differs in separate tables, so the keys
//! that identify a run (`run`, `started`, `tag-KEY`) are written only when one stream
//! holds several runs, where they keep them apart; a file of one run is told apart by its
//! file name, as benchstat's `.file` column does. The document does not record the
//! machine's architecture, so there is no `goarch` line.

use super::Export;
use crate::result::{BenchResult, RunDocument};
use std::collections::BTreeSet;
use std::fmt::Write;

pub struct GoBench;

/// A configuration value on one line: control characters (newlines) and bidirectional
/// controls shown escaped (`\u000a`, `crate::stdout::field`).
fn config_value(text: &str) -> String {
    crate::stdout::field(text.trim()).into_owned()
}

/// A configuration key: lower case, no space, no colon (the format's rule), so
/// characters outside `[a-z0-9._-]` become `_`.
fn config_key(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A part of a benchmark name: no space (fields are split on it) and no `/` (it separates
/// the parts); each becomes `_`.
fn name_part(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_whitespace() || c == '/' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The benchmark's name: `Benchmark`, the id with a capital first letter (the format's
/// rule), the params and placement as `/key=value`, and `-N`.
fn bench_name(r: &BenchResult, usable: usize) -> String {
    let id = name_part(&r.benchmark);
    let mut chars = id.chars();
    let mut name = String::from("Benchmark");
    if let Some(first) = chars.next() {
        name.extend(first.to_uppercase());
        name.push_str(chars.as_str());
    }
    for (k, v) in &r.params.0 {
        let k = name_part(k).replace('=', "_");
        write!(name, "/{k}={}", name_part(&v.to_string())).expect("a String takes writes");
    }
    write!(name, "/placement={}", name_part(&r.placement.name)).expect("a String");
    let n = match &r.placement.cpus {
        Some(c) => c.iter().collect::<BTreeSet<_>>().len(),
        None => usable,
    };
    format!("{name}-{}", n.max(1))
}

/// A unit as one field (`/` kept: `ns/read`).
fn unit(text: &str) -> String {
    let u: String = text
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    if u.is_empty() {
        "unitless".into()
    } else {
        u
    }
}

/// The configuration lines of a run, as (key, value) with empty values left out.
fn config(run: &RunDocument, several: bool) -> Vec<(String, String)> {
    let env = &run.env;
    let mut c: Vec<(String, String)> = vec![
        ("goos".into(), "linux".into()),
        ("pkg".into(), "truebench".into()),
    ];
    let optional = [
        ("cpu", env.kernel.cpu_model.as_deref()),
        ("host", run.host.as_deref()),
        ("clocksource", env.clock.clocksource.as_deref()),
    ];
    c.extend(
        optional
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v?.to_string()))),
    );
    if several {
        c.push(("run".into(), run.run_id.clone()));
        c.push(("started".into(), run.started_at.clone()));
        for (k, v) in &run.tags {
            c.push((format!("tag-{}", config_key(k)), v.clone()));
        }
    }
    c.into_iter()
        .map(|(k, v)| (k, config_value(&v)))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

impl Export for GoBench {
    fn render(&self, runs: &[RunDocument]) -> anyhow::Result<Vec<u8>> {
        let several = runs.len() > 1;
        let mut out = String::new();
        let mut set_before: Vec<String> = vec![];
        let mut units_said: BTreeSet<String> = BTreeSet::new();
        for (i, run) in runs.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let tags: Vec<String> = run.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
            writeln!(
                out,
                "# truebench run {} started {}{}",
                run.run_id,
                run.started_at,
                if tags.is_empty() {
                    String::new()
                } else {
                    format!(" tags {}", config_value(&tags.join(",")))
                }
            )?;
            let config = config(run, several);
            // A key the previous run set and this one does not is cleared (`key:`).
            for k in &set_before {
                if !config.iter().any(|(c, _)| c == k) {
                    writeln!(out, "{k}:")?;
                }
            }
            for (k, v) in &config {
                writeln!(out, "{k}: {v}")?;
            }
            set_before = config.into_iter().map(|(k, _)| k).collect();
            for r in &run.results {
                let u = unit(&r.unit);
                if units_said.insert(u.clone()) {
                    let better = if r.lower_is_better { "lower" } else { "higher" };
                    writeln!(out, "Unit {u} better={better}")?;
                }
                let name = bench_name(r, run.env.cpus.usable_width);
                let iterations = r.quality.batch_iterations.max(1);
                for x in &r.samples {
                    writeln!(out, "{name}\t{iterations}\t{x} {u}")?;
                }
            }
        }
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::hostile;

    #[test]
    fn one_line_per_sample_with_names_and_config_kept_on_their_line() {
        let runs = [hostile::run("r1"), hostile::run("r2")];
        let text = String::from_utf8(GoBench.render(&runs).unwrap()).unwrap();
        let bench: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("Benchmark"))
            .collect();
        assert_eq!(bench.len(), 2 * 3 * 10, "{text}");
        for l in &bench {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 4, "{l}");
            assert!(f[1].parse::<u64>().unwrap() >= 1, "{l}");
            f[2].parse::<f64>().unwrap();
        }
        assert!(bench[0].starts_with(
            "BenchmarkTimers.clock-read@1/clock=monotonic/note=a_\"quoted\"_\\_back,slash_new_line;_tab_=x_y_☃_é/offset=-3/placement=os-2\t1\t"
        ), "{}", bench[0]);
        assert!(bench[10].contains("/placement=a_\"quoted\""));
        assert!(bench[10].contains("-2\t"), "two pinned CPUs: {}", bench[10]);
        assert!(text.contains("\nUnit MB/s better=higher\n"));
        assert_eq!(text.matches("Unit ns/read").count(), 1);
        assert!(text
            .contains("\nhost: a \"quoted\" \\ back,slash\\u000anew line; tab\\u0009=x/y ☃ é\n"));
        assert!(text.contains("\nrun: r2\n") && text.contains("\ntag-rack: "));
        assert!(
            text.contains("\ntag-a__quoted____back_slash_new_line__tab__x_y____: x\n"),
            "{text}"
        );
        // Every line is one of the format's kinds.
        for l in text.lines() {
            assert!(
                l.is_empty()
                    || l.starts_with('#')
                    || l.starts_with("Benchmark")
                    || l.starts_with("Unit ")
                    || l.split_once(": ").is_some_and(|(k, _)| !k.contains(' ')),
                "{l}"
            );
        }
        // One run alone: nothing that would set it apart from another file's run.
        let one = String::from_utf8(GoBench.render(&runs[..1]).unwrap()).unwrap();
        assert!(!one.contains("\nrun:") && !one.contains("\ntag-"), "{one}");
    }

    #[test]
    fn a_key_one_run_set_is_cleared_before_the_next() {
        let mut a = hostile::run("r1");
        a.tags.insert("only_a".into(), "1".into());
        let mut b = hostile::run("r2");
        b.host = None;
        let text = String::from_utf8(GoBench.render(&[a, b]).unwrap()).unwrap();
        let second = text.split("# truebench run r2").nth(1).unwrap();
        assert!(second.contains("\nhost:\n") && second.contains("\ntag-only_a:\n"));
    }
}
