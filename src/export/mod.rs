//! `truebench export RUN... --format FORMAT`: stored runs written in the formats the tools
//! engineers already use read. One [`Export`] per format, each in a module of its own:
//! `json` (the run document itself, `truebench.result/1`), `ndjson` (one line per sample,
//! for DuckDB, BigQuery, Elasticsearch, pandas), `openmetrics` (medians and CI bounds as
//! gauges, for node_exporter's textfile collector and the Pushgateway), `gobench` (the Go
//! benchmark format, for `benchstat`) and `csv` (one row per result with its statistics).
//! docs/export.md describes every field.

mod csv;
mod gobench;
mod json;
mod ndjson;
mod openmetrics;

use crate::result::{BenchResult, RunDocument};

/// One export format: runs in, the bytes of one stream (or exposition) out.
pub trait Export {
    /// Render `runs` (at least one, each a distinct run) as one stream.
    fn render(&self, runs: &[RunDocument]) -> anyhow::Result<Vec<u8>>;

    /// Whether the format holds one run only (the JSON document).
    fn single_run(&self) -> bool {
        false
    }

    /// Whether `-o FILE` replaces an existing FILE (atomically) rather than refusing: for a
    /// file a collector rereads, rewritten in place on every export, the text every file
    /// of this format holds (an existing file without it is never replaced); None refuses.
    fn replaces_file(&self) -> Option<&'static str> {
        None
    }
}

/// The formats of `export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The run document (truebench.result/1), as `import` reads it; one run.
    Json,
    /// One JSON object per line, one line per sample.
    Ndjson,
    /// OpenMetrics text: medians and 95% CI bounds as gauges, ending in `# EOF`.
    Openmetrics,
    /// The Go benchmark format, one line per sample, for benchstat.
    Gobench,
    /// One row per result with its statistics.
    Csv,
}

impl Format {
    pub fn exporter(self) -> &'static dyn Export {
        match self {
            Format::Json => &json::Json,
            Format::Ndjson => &ndjson::Ndjson,
            Format::Openmetrics => &openmetrics::OpenMetrics,
            Format::Gobench => &gobench::GoBench,
            Format::Csv => &csv::Csv,
        }
    }
}

/// The CPUs a result's tasks were pinned to, as `0,1`; empty when not pinned.
fn cpus_text(r: &BenchResult) -> String {
    r.placement
        .cpus
        .as_ref()
        .map(|c| c.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
        .unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod hostile {
    //! A run whose user-supplied text (host, tags, params, placement) holds what breaks
    //! naive writers: quotes, backslashes, newlines, separators, unicode.
    use crate::result::testing;
    use crate::result::RunDocument;
    use serde_json::json;

    pub const NASTY: &str = "a \"quoted\" \\ back,slash\nnew line; tab\t=x/y ☃ é";

    pub fn run(id: &str) -> RunDocument {
        let mut a = testing::result(
            "timers.clock-read@1",
            "os",
            None,
            json!({"clock": "monotonic", "note": NASTY, "offset": -3}),
            25.0,
        );
        a.unit = "ns/read".into();
        let mut b = testing::result(
            "ctx.pipe@1",
            NASTY,
            Some(vec![0, 1]),
            json!({NASTY: 1, "mode": "thread"}),
            4000.0,
        );
        b.unit = "ns/round-trip".into();
        let mut c = testing::result(
            "memory.bandwidth@1",
            "compact",
            Some(vec![0]),
            json!({"kernel": "copy"}),
            9000.0,
        );
        c.unit = "MB/s".into();
        c.lower_is_better = false;
        let mut doc = testing::run(id, vec![a, b, c], testing::env());
        doc.host = Some(NASTY.into());
        doc.tags.insert("rack".into(), NASTY.into());
        doc.tags.insert(NASTY.into(), "x".into());
        doc.tags.insert("Rack".into(), "upper".into());
        doc
    }
}
