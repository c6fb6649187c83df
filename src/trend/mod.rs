//! Trends: a host's stored runs read as series, one per row (benchmark, placement and
//! params), in time order (`series`); the change points in each (`changepoint`: E-divisive
//! means with a t-test); the rows of one host that change together at one point grouped
//! into one change (`group`); each change explained by the explained compare of a typical
//! run of either side (`explain`); changes on many hosts at about the same time with the
//! same cause grouped (`fleet`); the text (`text`).

pub mod changepoint;
pub mod explain;
pub mod fleet;
pub mod group;
pub mod series;
pub mod text;

use serde::Serialize;

pub const SCHEMA: &str = "truebench.trend/1";

/// How trends are read; stated in every output.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Method {
    /// The algorithm in words.
    pub algorithm: &'static str,
    #[serde(flatten)]
    pub params: changepoint::Params,
    /// Rows of one host whose change points lie within this many runs are one change.
    pub group_within: usize,
}

impl Default for Method {
    fn default() -> Method {
        Method {
            algorithm: ALGORITHM,
            params: changepoint::Params::default(),
            group_within: group::WITHIN,
        }
    }
}

pub const ALGORITHM: &str =
    "E-divisive means (alpha 1), candidates pruned by a two-sample t-test (no permutations)";

/// A host's trend in brief.
#[derive(Debug, Clone, Serialize)]
pub struct HostSummary {
    pub host: String,
    pub runs: usize,
    pub rows: usize,
    /// Rows with enough runs for a change to be found (`min_segment` each side): with
    /// fewer, "no change" would only mean "too few runs to tell".
    pub rows_searched: usize,
    pub first: Option<String>,
    pub last: Option<String>,
    pub changes: usize,
}

/// The whole answer of `trend`.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    pub schema: &'static str,
    pub method: Method,
    pub hosts: Vec<HostSummary>,
    /// Every host's changes, host by host, oldest first.
    pub changes: Vec<explain::Explained>,
    /// With `--fleet`: the changes of many hosts at about the same time with one cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Vec<fleet::FleetChange>>,
}

/// Read every host's series: its changes, each explained with documents from `load`.
pub fn analyse(
    hosts: &[series::HostSeries],
    method: &Method,
    load: &dyn Fn(&str) -> Option<crate::result::RunDocument>,
) -> Trend {
    let mut summaries = vec![];
    let mut changes = vec![];
    for h in hosts {
        let found = group::changes(h, method);
        summaries.push(HostSummary {
            host: h.host.clone(),
            runs: h.runs.len(),
            rows: h.rows.len(),
            rows_searched: group::searched(h, method),
            first: h.runs.first().map(|r| r.started_at.clone()),
            last: h.runs.last().map(|r| r.started_at.clone()),
            changes: found.len(),
        });
        changes.extend(found.iter().map(|c| explain::explain(h, c, load)));
    }
    Trend {
        schema: SCHEMA,
        method: *method,
        hosts: summaries,
        changes,
        fleet: None,
    }
}
