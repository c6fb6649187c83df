//! `--format ndjson`: newline-delimited JSON, one object per sample, every field flat
//! except `params` and `tags` (objects), so DuckDB's `read_json`, BigQuery's
//! NEWLINE_DELIMITED_JSON loads, Elasticsearch's bulk-free ingest and pandas'
//! `read_json(lines=True)` take it as it is. Samples carry no time of their own in the run
//! document: `timestamp` is the run's start.

use super::Export;
use crate::result::{Params, RunDocument};
use serde::Serialize;
use std::collections::BTreeMap;

pub struct Ndjson;

/// One sample, as one line.
#[derive(Serialize)]
struct Line<'a> {
    run_id: &'a str,
    /// When the run started (RFC 3339); the samples have no timestamp of their own.
    timestamp: &'a str,
    host: Option<&'a str>,
    tags: &'a BTreeMap<String, String>,
    benchmark: &'a str,
    params: &'a Params,
    /// The params as `k=v,k=v`, for stores that want one column of one type.
    params_text: String,
    placement: &'a str,
    cpus: Option<&'a [u32]>,
    unit: &'a str,
    lower_is_better: bool,
    /// The sample's position in its result (0-based), in the order they were measured.
    sample_index: usize,
    /// How many samples the result has.
    samples: usize,
    value: f64,
}

impl Export for Ndjson {
    fn render(&self, runs: &[RunDocument]) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        for run in runs {
            for r in &run.results {
                for (i, &value) in r.samples.iter().enumerate() {
                    serde_json::to_writer(
                        &mut out,
                        &Line {
                            run_id: &run.run_id,
                            timestamp: &run.started_at,
                            host: run.host.as_deref(),
                            tags: &run.tags,
                            benchmark: &r.benchmark,
                            params: &r.params,
                            params_text: r.params_text(),
                            placement: &r.placement.name,
                            cpus: r.placement.cpus.as_deref(),
                            unit: &r.unit,
                            lower_is_better: r.lower_is_better,
                            sample_index: i,
                            samples: r.samples.len(),
                            value,
                        },
                    )?;
                    out.push(b'\n');
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::hostile;
    use serde_json::Value;

    #[test]
    fn one_line_per_sample_and_hostile_text_stays_inside_its_string() {
        let runs = [hostile::run("r1"), hostile::run("r2")];
        let text = String::from_utf8(Ndjson.render(&runs).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let want: usize = runs
            .iter()
            .flat_map(|r| &r.results)
            .map(|r| r.samples.len())
            .sum();
        assert_eq!(lines.len(), want);
        assert!(text.ends_with('\n'));
        let first: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(first["host"], hostile::NASTY);
        assert_eq!(first["tags"][hostile::NASTY], "x");
        assert_eq!(first["params"]["note"], hostile::NASTY);
        assert_eq!(first["params"]["offset"], -3);
        assert_eq!(first["cpus"], Value::Null);
        assert_eq!(first["timestamp"], runs[0].started_at);
        assert_eq!(first["value"], runs[0].results[0].samples[0]);
        let last: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
        assert_eq!(last["run_id"], "r2");
        assert_eq!(last["cpus"], serde_json::json!([0]));
        assert_eq!(last["lower_is_better"], false);
    }
}
