//! `--format csv`: one row per result with its statistics, for spreadsheets and
//! `pandas.read_csv`. Written by the csv crate (RFC 4180 quoting); the params and tags,
//! whose keys vary from run to run, are one JSON object each.

use super::Export;
use crate::result::RunDocument;
use serde::Serialize;

pub struct Csv;

#[derive(Serialize)]
struct Row<'a> {
    run_id: &'a str,
    started_at: &'a str,
    host: Option<&'a str>,
    /// JSON object.
    tags: String,
    benchmark: &'a str,
    /// JSON object.
    params: String,
    placement: &'a str,
    /// `0,1`; empty when not pinned.
    cpus: String,
    unit: &'a str,
    lower_is_better: bool,
    n: usize,
    median: f64,
    ci95_low: f64,
    ci95_high: f64,
    ci_level: f64,
    cv: f64,
    mean: f64,
    min: f64,
    max: f64,
    outliers: usize,
    timer_share: f64,
    /// The ids of the result's findings, space-separated.
    findings: String,
}

impl Export for Csv {
    fn render(&self, runs: &[RunDocument]) -> anyhow::Result<Vec<u8>> {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        let mut rows = 0;
        for run in runs {
            let tags = serde_json::to_string(&run.tags)?;
            for r in &run.results {
                let s = &r.stats;
                w.serialize(Row {
                    run_id: &run.run_id,
                    started_at: &run.started_at,
                    host: run.host.as_deref(),
                    tags: tags.clone(),
                    benchmark: &r.benchmark,
                    params: serde_json::to_string(&r.params)?,
                    placement: &r.placement.name,
                    cpus: super::cpus_text(r),
                    unit: &r.unit,
                    lower_is_better: r.lower_is_better,
                    n: s.n,
                    median: s.median,
                    ci95_low: s.ci95_low,
                    ci95_high: s.ci95_high,
                    ci_level: s.ci_level,
                    cv: s.cv,
                    mean: s.mean,
                    min: s.min,
                    max: s.max,
                    outliers: s.outliers,
                    timer_share: r.quality.timer_share,
                    findings: r
                        .findings
                        .iter()
                        .map(|f| f.id.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                })?;
                rows += 1;
            }
        }
        if rows == 0 {
            // serialize writes the header with the first row: a run without results
            // still gets one, so a reader sees the columns.
            w.write_record(HEADER)?;
        }
        Ok(w.into_inner()?)
    }
}

const HEADER: [&str; 22] = [
    "run_id",
    "started_at",
    "host",
    "tags",
    "benchmark",
    "params",
    "placement",
    "cpus",
    "unit",
    "lower_is_better",
    "n",
    "median",
    "ci95_low",
    "ci95_high",
    "ci_level",
    "cv",
    "mean",
    "min",
    "max",
    "outliers",
    "timer_share",
    "findings",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::hostile;

    #[test]
    fn one_row_per_result_with_its_stats_and_hostile_text_quoted() {
        let runs = [hostile::run("r1"), hostile::run("r2")];
        let bytes = Csv.render(&runs).unwrap();
        let mut rd = ::csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(rd.headers().unwrap(), HEADER.as_slice());
        let rows: Vec<::csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 6);
        let r = &runs[0].results[1];
        let row = &rows[1];
        assert_eq!(&row[2], hostile::NASTY);
        assert_eq!(&row[6], hostile::NASTY);
        assert_eq!(&row[7], "0,1");
        let params: serde_json::Value = serde_json::from_str(&row[5]).unwrap();
        assert_eq!(params[hostile::NASTY], 1);
        assert_eq!(row[11].parse::<f64>().unwrap(), r.stats.median);
        assert_eq!(row[12].parse::<f64>().unwrap(), r.stats.ci95_low);
        assert_eq!(row[10].parse::<usize>().unwrap(), r.samples.len());
        assert_eq!(&rows[5][0], "r2");

        let mut empty = hostile::run("r3");
        empty.results.clear();
        let bytes = Csv.render(&[empty]).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap().trim_end(),
            HEADER.join(",")
        );
    }
}
