//! `--format csv`: one row per result with its statistics, for spreadsheets and
//! `pandas.read_csv`. Written by the csv crate (RFC 4180 quoting); the params and tags,
//! whose keys vary from run to run, are one JSON object each.
//!
//! Safe for spreadsheets (OWASP's advice on CSV injection): every text cell is quoted,
//! and one that would start a formula (`=`, `+`, `-`, `@`, tab, carriage return) gets a
//! single quote in front, so a host named `=HYPERLINK(...)` is shown, never run. Numbers
//! are written as numbers, unquoted, negative ones too.

use super::Export;
use crate::result::RunDocument;
use serde::Serialize;
use std::borrow::Cow;

/// The characters a spreadsheet reads as the start of a formula at a cell's beginning.
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell as written: with a single quote in front when it would start a formula.
pub fn text_cell(s: &str) -> Cow<'_, str> {
    if s.starts_with(FORMULA_START) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    }
}

/// A CSV writer that quotes every text cell and leaves numbers bare.
pub fn writer() -> ::csv::Writer<Vec<u8>> {
    ::csv::WriterBuilder::new()
        .quote_style(::csv::QuoteStyle::NonNumeric)
        .from_writer(Vec::new())
}

pub struct Csv;

#[derive(Serialize)]
struct Row<'a> {
    run_id: Cow<'a, str>,
    started_at: Cow<'a, str>,
    host: Option<Cow<'a, str>>,
    /// JSON object.
    tags: String,
    benchmark: Cow<'a, str>,
    /// JSON object.
    params: String,
    placement: Cow<'a, str>,
    /// `0,1`; empty when not pinned.
    cpus: String,
    unit: Cow<'a, str>,
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
        let mut w = writer();
        let mut rows = 0;
        for run in runs {
            let tags = serde_json::to_string(&run.tags)?;
            for r in &run.results {
                let s = &r.stats;
                w.serialize(Row {
                    run_id: text_cell(&run.run_id),
                    started_at: text_cell(&run.started_at),
                    host: run.host.as_deref().map(text_cell),
                    tags: text_cell(&tags).into_owned(),
                    benchmark: text_cell(&r.benchmark),
                    params: text_cell(&serde_json::to_string(&r.params)?).into_owned(),
                    placement: text_cell(&r.placement.name),
                    cpus: text_cell(&super::cpus_text(r)).into_owned(),
                    unit: text_cell(&r.unit),
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
                    findings: text_cell(
                        &r.findings
                            .iter()
                            .map(|f| f.id.as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                    )
                    .into_owned(),
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
        let mut rd = ::csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(rd.headers().unwrap(), HEADER.as_slice());
        assert_eq!(rd.records().count(), 0);
    }

    /// The OWASP cases: a cell a spreadsheet would run as a formula is quoted with a
    /// single quote in front; numbers, negative ones too, stay bare numbers.
    #[test]
    fn cells_that_would_start_a_formula_are_neutralised_and_numbers_stay_numbers() {
        let mut run = hostile::run("r1");
        let formulas = [
            "=HYPERLINK(\"http://x\",\"y\")",
            "+1+2",
            "-2+3",
            "@SUM(A1)",
            "\tx",
            "\r=1",
        ];
        run.host = Some(formulas[0].into());
        for (r, f) in run.results.iter_mut().zip(&formulas[1..]) {
            r.placement.name = f.to_string();
            r.unit = f.to_string();
        }
        run.results[0].stats.median = -1.5;
        run.results[0].stats.ci95_low = -2.0;
        let bytes = Csv.render(&[run.clone()]).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        for line in text.lines().skip(1) {
            // Every field that starts a line or follows a separator: never a formula.
            for field in line.split(',') {
                assert!(
                    !field.starts_with(FORMULA_START) || field.parse::<f64>().is_ok(),
                    "a cell starts a formula: {field:?} in {line}"
                );
            }
        }
        assert!(text.contains(",\"'=HYPERLINK("), "{text}");
        assert!(
            text.contains(",-1.5,-2.0,"),
            "negative numbers quoted: {text}"
        );
        let mut rd = ::csv::Reader::from_reader(bytes.as_slice());
        let rows: Vec<::csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(&rows[0][2], format!("'{}", formulas[0]));
        for (row, f) in rows.iter().zip(&formulas[1..]) {
            assert_eq!(&row[6], format!("'{f}"));
            assert_eq!(&row[8], format!("'{f}"));
        }
        assert_eq!(rows[0][11].parse::<f64>().unwrap(), -1.5);
        // Text that starts no formula is unchanged.
        assert_eq!(text_cell("os"), "os");
        assert_eq!(text_cell("a-b"), "a-b");
    }
}
