//! Many runs' result rows at once, for `trend`: one query joining the runs with their
//! result columns (no document is decoded), narrowed by host, start time, tags and suite,
//! ordered by host, start time and insertion.

/// Which stored runs and rows to read.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only these hosts (none: every host; runs without a host name are left out).
    pub hosts: Vec<String>,
    /// Only runs started at or after this RFC 3339 time (compared as text, as stored).
    pub since: Option<String>,
    /// Only runs carrying every one of these tags.
    pub tags: Vec<(String, String)>,
    /// Only rows of these suites (the benchmark id's first part).
    pub suites: Vec<String>,
}

/// One result row of one stored run.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub run_id: String,
    pub started_at: String,
    pub host: String,
    pub benchmark: String,
    pub placement: String,
    /// The params as the store keeps them (JSON text).
    pub params: String,
    pub unit: String,
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// The standard error of ln(median) from the run's own rounds, when it has them.
    pub se: Option<f64>,
}

/// The LIKE patterns of the suites' benchmark ids (`timers.%`), escaped with `\`.
pub fn suite_patterns(sel: &Selection) -> Vec<String> {
    sel.suites
        .iter()
        .map(|s| super::prefix_pattern(&format!("{s}.")))
        .collect()
}

impl Point {
    /// The rows of a run document as the store's `points` reads them (none without a host
    /// name): for a trend of documents already loaded, as the report draws it.
    pub fn of_doc(doc: &crate::result::RunDocument) -> Vec<Point> {
        let Some(host) = &doc.host else {
            return vec![];
        };
        doc.results
            .iter()
            .map(|r| Point {
                run_id: doc.run_id.clone(),
                started_at: doc.started_at.clone(),
                host: host.clone(),
                benchmark: r.benchmark.clone(),
                placement: r.placement.name.clone(),
                params: serde_json::to_string(&r.params).unwrap_or_default(),
                unit: r.unit.clone(),
                median: r.stats.median,
                ci95_low: r.stats.ci95_low,
                ci95_high: r.stats.ci95_high,
                se: r.run_noise().map(|n| n.se),
            })
            .collect()
    }
}
