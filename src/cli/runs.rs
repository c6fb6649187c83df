//! The stored runs: `history`, `show RUN`, `export RUN`, `import FILE`.

use crate::error::{usage, usage_hint};
use crate::store::{default_path, load_run, Location, Store};
use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// At most this many runs, newest first.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    limit: u32,
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// Run id, a unique prefix of one, or `latest`.
    run: String,
    /// Print the run document as JSON.
    #[arg(long)]
    json: bool,
    /// Print every result in one table and each suite's full tables, instead of the summary.
    #[arg(long)]
    all: bool,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Run id, a unique prefix of one, or `latest`.
    run: String,
    /// Write to FILE instead of standard output (refuses to overwrite).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// A truebench.result/1 JSON document, as `export` writes it.
    file: PathBuf,
}

pub fn history(a: HistoryArgs, db: Option<&Location>) -> anyhow::Result<()> {
    let path = default_path(db)?;
    let runs = match Store::open_ro(&path)? {
        Some(s) => s.list(a.limit as usize)?,
        None => vec![],
    };
    if a.json {
        super::print_json(&runs)
    } else {
        crate::stdout::write(&crate::report::text::render_history(&runs))
    }
}

pub fn show(a: ShowArgs, db: Option<&Location>) -> anyhow::Result<()> {
    let doc = load_run(&default_path(db)?, &a.run)?;
    if a.json {
        super::print_json(&doc)
    } else {
        crate::stdout::write(&crate::report::text::render(&doc, super::detail(a.all)))
    }
}

pub fn export(a: ExportArgs, db: Option<&Location>) -> anyhow::Result<()> {
    let doc = load_run(&default_path(db)?, &a.run)?;
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    match a.output {
        None => {
            crate::stdout::write(&text)?;
        }
        Some(p) => {
            super::output::write_file(&p, text.as_bytes(), false)?;
            eprintln!("truebench: wrote run {} to {}", doc.run_id, p.display());
        }
    }
    Ok(())
}

pub fn import(a: ImportArgs, db: Option<&Location>) -> anyhow::Result<()> {
    let bytes = crate::bounded::read_file(&a.file, crate::result::MAX_DOCUMENT_BYTES, None)
        .map_err(|e| usage(format!("cannot read {}: {e}", a.file.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| usage(format!("{} is not UTF-8 text", a.file.display())))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| usage(format!("{} is not valid JSON: {e}", a.file.display())))?;
    let doc = crate::result::validate(&value)
        .and_then(|d| crate::store::check_identity(&d).map(|()| d))
        .map_err(|why| usage(format!("{} refused: {why}", a.file.display())))?;
    let path = default_path(db)?;
    let mut store = Store::open_rw(&path)?;
    if store.contains(&doc.run_id)? {
        return Err(usage_hint(
            format!("run {} is already in {}", doc.run_id, path.display()),
            "nothing was imported",
        ));
    }
    store
        .insert(&doc)
        .with_context(|| format!("importing {}", a.file.display()))?;
    crate::stdout::line(&format!(
        "imported run {} ({} results) into {}",
        doc.run_id,
        doc.results.len(),
        path.display()
    ))
}
