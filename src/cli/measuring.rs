//! The options every measuring command (`run`, `record`, `loadstep`) shares, defined once
//! and flattened into each: `--start-at` (when measuring begins) and `--tag` (labels stored
//! in the run). Bad values are refused by clap with one `error:` line and exit 2, before
//! anything is probed or written.

use crate::error::usage;
use crate::session::Common;

#[derive(clap::Args, Debug, Clone, Default)]
#[group(skip)]
pub struct Args {
    /// Probe first, then wait and begin measuring at this wall-clock time: RFC 3339
    /// (2026-11-23T15:00:00Z) or +SECONDS from now; at most a day ahead. The run records the
    /// requested and actual start and the clock's synchronisation (adjtimex), so runs on
    /// many hosts can measure together. Ctrl-C while waiting stores nothing.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    start_at: Option<chrono::DateTime<chrono::Utc>>,
    /// A label stored with the run (repeatable): KEY is letters, digits and _ . -, VALUE is
    /// 1 to 256 characters (e.g. --tag host=web-01 --tag rack=b4). Shown by history, show
    /// and the report; `history --tag KEY=VALUE` selects by it.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    tags: Vec<(String, String)>,
}

fn parse_start_at(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    crate::session::start_at::parse(s, chrono::Utc::now())
}

/// `KEY=VALUE` as `--tag` and `history --tag` take it.
pub(crate) fn parse_tag(s: &str) -> Result<(String, String), String> {
    crate::result::tags::parse(s)
}

impl Args {
    /// The checked options for the session (a key given twice is a usage error).
    pub fn common(&self) -> anyhow::Result<Common> {
        Ok(Common {
            start_at: self.start_at,
            tags: crate::result::tags::collect(&self.tags)
                .map_err(|e| usage(format!("--tag: {e}")))?,
        })
    }
}
