//! The stored runs: `history`, `show RUN`, `export RUN... --format FORMAT`, `import FILE`.

use crate::error::{usage, usage_hint};
use crate::export::Format;
use crate::result::RunDocument;
use crate::store::{default_path, load_run, Location, Store};
use anyhow::Context;
use clap::ValueEnum;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// At most this many runs, newest first (1 to 1000000).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    limit: u32,
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
    /// Only runs carrying this tag (repeatable: runs carrying every one given).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = super::measuring::parse_tag)]
    tags: Vec<(String, String)>,
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
#[command(after_help = "Examples:
  truebench export A --format gobench -o old.txt; truebench export B --format gobench -o new.txt
  benchstat old.txt new.txt
  truebench export latest --format openmetrics -o /var/lib/prometheus/node-exporter/truebench.prom
  truebench export A B C --format ndjson > runs.ndjson
Fields, units and loading into DuckDB or pandas: docs/export.md.")]
pub struct ExportArgs {
    /// Runs: ids, unique prefixes of them, or `latest`; several go into one stream.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to FILE instead of standard output (`-`: standard output): refuses to
    /// overwrite, except with openmetrics, whose file is replaced atomically (for the
    /// textfile collector) when it holds truebench's metrics.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
truebench import run.json                      one document\n  \
truebench import results/                      every *.json and *.ndjson in it\n  \
ssh web-01 truebench export latest | truebench import -")]
pub struct ImportArgs {
    /// truebench.result/1 JSON documents, as `export` writes them: files (one document, or
    /// NDJSON with one per line), directories (their *.json and *.ndjson files), or `-`
    /// (standard input, one document or NDJSON). Many are stored in one process, one
    /// transaction per batch; a refused one is reported and the others stored (exit 2).
    #[arg(required = true, value_name = "FILE|DIR|-")]
    files: Vec<PathBuf>,
}

pub fn history(a: HistoryArgs, db: Option<&Location>) -> anyhow::Result<()> {
    let path = default_path(db)?;
    let store = Store::open_ro(&path)?;
    let runs = match &store {
        Some(s) => s.list_filtered(a.limit as usize, &a.tags)?,
        None => vec![],
    };
    if a.json {
        super::print_json(&runs)
    } else if runs.is_empty() {
        let stored = store.as_ref().map(|s| s.count()).transpose()?;
        crate::stdout::write(&crate::report::text::render_no_history(&a.tags, stored))
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
    let exporter = a.format.exporter();
    let name = a
        .format
        .to_possible_value()
        .map(|v| v.get_name().to_string());
    let name = name.unwrap_or_default();
    if exporter.single_run() && a.runs.len() > 1 {
        return Err(usage_hint(
            format!("--format {name} writes one run, {} given", a.runs.len()),
            "export one run per file, or choose ndjson, csv, gobench or openmetrics",
        ));
    }
    let path = default_path(db)?;
    let mut docs: Vec<RunDocument> = Vec::with_capacity(a.runs.len());
    for (arg, doc) in a.runs.iter().map(|r| (r, load_run(&path, r))) {
        let doc = doc?;
        if docs.iter().any(|d| d.run_id == doc.run_id) {
            return Err(usage_hint(
                format!("run {} is named twice ('{arg}')", doc.run_id),
                "give each run once",
            ));
        }
        docs.push(doc);
    }
    if a.format != Format::Json {
        let notes = docs.iter().filter(|d| d.results.is_empty()).map(|d| {
            (
                "a run without results".to_string(),
                format!(
                    "truebench: run {} has no results (its data is a recording or an experiment, \
                     in --format json only)",
                    d.run_id
                ),
            )
        });
        for line in crate::repeated::Repeated::lines(notes) {
            eprintln!("{line}");
        }
    }
    let bytes = exporter.render(&docs)?;
    match super::output::output_file(a.output) {
        None => crate::stdout::write(&String::from_utf8(bytes)?)?,
        Some(p) => {
            let ours = exporter.replaces_file().map(|marker| super::output::Ours {
                what: "file this export wrote",
                marker,
            });
            super::output::write_file(&p, &bytes, ours)?;
            let ids: Vec<&str> = docs.iter().map(|d| d.run_id.as_str()).collect();
            let runs = crate::units::noun(ids.len(), "run");
            eprintln!(
                "truebench: wrote {runs} {} to {} ({name})",
                ids.join(", "),
                p.display()
            );
        }
    }
    Ok(())
}

pub fn import(a: ImportArgs, db: Option<&Location>) -> anyhow::Result<()> {
    let one = match a.files.as_slice() {
        [f] if f.as_os_str() != super::output::STDIO
            && !f.is_dir()
            && f.extension().is_none_or(|x| x != "ndjson") =>
        {
            f.clone()
        }
        _ => return super::import_many::import(&a.files, db),
    };
    import_one(one, db)
}

/// One document file, all or nothing.
fn import_one(file: PathBuf, db: Option<&Location>) -> anyhow::Result<()> {
    let stdin = file.as_os_str() == super::output::STDIO;
    let (source, name) = match stdin {
        true => (std::path::Path::new("/dev/stdin"), "standard input".into()),
        false => (file.as_path(), file.display().to_string()),
    };
    // A named file must be a regular one: a FIFO without a writer read as empty.
    let max = crate::result::MAX_DOCUMENT_BYTES;
    let bytes = match stdin {
        true => crate::bounded::read_file(source, max, None),
        false => crate::bounded::read_regular(source, max),
    }
    .map_err(|e| usage(format!("cannot read {name}: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| usage(format!("{name} is not UTF-8 text")))?;
    // A byte order mark (an editor's) is not content.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Err(usage(format!("{name} is empty: no document in it")));
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| usage(format!("{name} is not valid JSON: {e}")))?;
    let doc = super::import_many::admit(&value, &name)
        .map_err(|why| usage(format!("{name} refused: {why}")))?;
    let path = default_path(db)?;
    let mut store = Store::open_rw(&path)?;
    if !store.stored(&[doc.run_id.as_str()])?.is_empty() {
        return Err(usage_hint(
            format!("run {} is already in {}", doc.run_id, path.display()),
            "nothing was imported",
        ));
    }
    store
        .insert(&doc)
        .with_context(|| format!("importing {name}"))?;
    crate::stdout::line(&format!(
        "imported run {} ({}) into {}",
        doc.run_id,
        crate::units::count(doc.results.len(), "result"),
        path.display()
    ))
}
