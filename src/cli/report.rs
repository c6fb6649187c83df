//! `truebench report RUN... [-o FILE.html]`: one self-contained HTML file.

use crate::store::{default_path, load_runs, Location};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Runs to report (ids, unique prefixes, or `latest`); the first is the baseline of the
    /// comparisons when several are given.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Write to FILE (replaced atomically) instead of standard output (`-`: standard output).
    #[arg(short, long, value_name = "FILE.html")]
    output: Option<PathBuf>,
}

pub fn exec(a: Args, db: Option<&Location>) -> anyhow::Result<()> {
    let docs = load_runs(&default_path(db)?, &a.runs)?;
    let html = crate::report::html::render(&docs)?;
    match super::output::output_file(a.output) {
        None => crate::stdout::write(&html)?,
        Some(p) => {
            super::output::write_file(&p, html.as_bytes(), true)?;
            eprintln!(
                "truebench: wrote the report of {} to {}",
                crate::units::count(docs.len(), "run"),
                p.display()
            );
        }
    }
    Ok(())
}
