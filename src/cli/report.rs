//! `truebench report RUN... [-o FILE.html]`: one self-contained HTML file.

use crate::store::{default_path, load_runs, Location};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Runs to report (ids, unique prefixes, or `latest`); the first is the baseline of the
    /// comparisons when several are given.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Write to FILE instead of standard output (`-`: standard output); an existing FILE is
    /// replaced atomically when it is a truebench report, else refused.
    #[arg(short, long, value_name = "FILE.html")]
    output: Option<PathBuf>,
}

/// A file `report -o` replaces: a report it wrote before (its title says so).
const REPORT: super::output::Ours = super::output::Ours {
    what: "truebench report",
    marker: "<title>truebench report",
};

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    if let Some(p) = a
        .output
        .as_deref()
        .filter(|p| p.as_os_str() != super::output::STDIO)
    {
        super::output::refuse_existing(p, Some(REPORT))?;
    }
    let docs = load_runs(&default_path(db)?, &a.runs)?;
    let html = crate::report::html::render(&docs)?;
    match super::output::output_file(a.output) {
        None => crate::stdout::write(&html)?,
        Some(p) => {
            super::output::write_file(&p, html.as_bytes(), Some(REPORT))?;
            eprintln!(
                "truebench: wrote the report of {} to {}",
                crate::units::count(docs.len(), "run"),
                p.display()
            );
        }
    }
    Ok(())
}
