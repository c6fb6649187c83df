//! `truebench report RUN... [-o FILE.html]`: one self-contained HTML file.

use crate::error::usage;
use crate::store::{default_path, load_run};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Runs to report (ids, unique prefixes, or `latest`); the first is the baseline of the
    /// comparisons when several are given.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Write to FILE (replaced atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE.html")]
    output: Option<PathBuf>,
}

pub fn exec(a: Args, db: Option<&Path>) -> anyhow::Result<()> {
    let path = default_path(db)?;
    let docs = a
        .runs
        .iter()
        .map(|r| load_run(&path, r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let html = crate::report::html::render(&docs)?;
    match a.output {
        None => std::io::stdout().write_all(html.as_bytes())?,
        Some(p) => {
            let dir = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let mut tmp = tempfile::NamedTempFile::new_in(dir)
                .map_err(|e| usage(format!("cannot write in {}: {e}", dir.display())))?;
            tmp.write_all(html.as_bytes())?;
            // A report is for sharing: readable by others, as files made with the umask are.
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))?;
            tmp.persist(&p)
                .map_err(|e| usage(format!("cannot write {}: {}", p.display(), e.error)))?;
            eprintln!(
                "truebench: wrote the report of {} run(s) to {}",
                docs.len(),
                p.display()
            );
        }
    }
    Ok(())
}
