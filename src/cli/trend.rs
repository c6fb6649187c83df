//! `truebench trend`: each host's stored runs as series, one per row, oldest first; the
//! change points in them, the rows that change together as one change, each explained by
//! the explained compare of the runs either side; `--fleet` groups the hosts' changes of
//! about the same time and cause. Reads the rows of every selected run in one query
//! (`store::Store::points`) and only the documents of the runs each change compares.

use crate::error::usage_hint;
use crate::store::{default_path, Location, Selection, Store};
use crate::trend::{analyse, fleet, series, text, Method};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench trend                                every host's change points\n  \
truebench trend --host web-01 --suite memory --since 2026-11-01\n  \
truebench trend --fleet --within 2             hosts that changed alike within 2 days")]
pub struct Args {
    /// Only this host (repeatable; default: every host in the database).
    #[arg(long = "host", value_name = "H")]
    hosts: Vec<String>,
    /// Only runs carrying this tag (repeatable: every one).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::measuring::parse_tag)]
    tags: Vec<(String, String)>,
    /// Only runs started on or after this day or time (2026-11-01, or RFC 3339).
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    since: Option<String>,
    /// Only rows of this suite (repeatable).
    #[arg(long = "suite", value_name = "SUITE")]
    suites: Vec<String>,
    /// Only rows whose `benchmark [placement] params` contains this text (repeatable: any).
    #[arg(long = "row", value_name = "TEXT")]
    rows: Vec<String>,
    /// Also group the hosts' changes of about the same time with the same cause, largest
    /// first.
    #[arg(long)]
    fleet: bool,
    /// With --fleet: changes whose first runs after lie within this many days (above 0, at
    /// most 365; fractions allowed) of the group's previous one are one.
    #[arg(long, value_name = "DAYS", default_value_t = fleet::WITHIN_DAYS, value_parser = parse_days)]
    within: f64,
    /// Every row of each change, all the evidence, the fleet's hosts.
    #[arg(short, long)]
    verbose: bool,
    /// Print the trend as JSON (schema truebench.trend/1).
    #[arg(long)]
    json: bool,
}

/// A day (`2026-11-01`) or an RFC 3339 time, kept as the text runs' start times are
/// compared with.
fn parse_since(s: &str) -> Result<String, String> {
    if chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
        || chrono::DateTime::parse_from_rfc3339(s).is_ok()
    {
        Ok(s.to_string())
    } else {
        Err(format!(
            "'{s}' is not a day (2026-11-01) or an RFC 3339 time"
        ))
    }
}

fn parse_days(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|d| d.is_finite() && *d > 0.0 && *d <= 365.0)
        .ok_or_else(|| format!("'{s}' is not a number of days above 0 and at most 365"))
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    super::distinct("--host", &a.hosts)?;
    super::distinct("--suite", &a.suites)?;
    let path = default_path(db)?;
    let Some(store) = Store::open_ro(&path)? else {
        return Err(usage_hint(
            format!(
                "no runs to read: the results database {} does not exist yet",
                path.display()
            ),
            "run `truebench run` first, or pass --db",
        ));
    };
    let sel = Selection {
        hosts: a.hosts.clone(),
        since: a.since.clone(),
        tags: a.tags.clone(),
        suites: a.suites.clone(),
    };
    let points = store.points(&sel)?;
    let keep = |k: &series::RowKey| {
        a.rows.is_empty() || {
            let t = k.text();
            a.rows.iter().any(|r| t.contains(r.as_str()))
        }
    };
    let hosts = series::hosts(&points, &keep);
    if hosts.iter().all(|h| h.rows.is_empty()) {
        return Err(usage_hint(
            "no stored run of a named host matches: there is no series to read",
            "see `truebench history`; runs without a host name are not read",
        ));
    }
    let load = |id: &str| {
        store
            .document(id)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
    };
    let mut trend = analyse(&hosts, &Method::default(), &load);
    if a.fleet {
        trend.fleet = Some(fleet::group(&trend.changes, a.within));
    }
    if a.json {
        super::print_json(&trend)
    } else {
        crate::stdout::write(&text::render(&trend, a.verbose))
    }
}
