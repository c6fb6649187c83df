//! The results store: one SQLite database (WAL mode) holding every run document, with a
//! versioned schema migrated on open. Path: `--db`, else `$TRUEBENCH_DB`, else
//! `$XDG_DATA_HOME/truebench/results.db`, else `~/.local/share/truebench/results.db`.

mod migrations;

use crate::error::usage_hint;
use crate::result::RunDocument;
use anyhow::Context;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};

pub struct Store {
    conn: Connection,
}

/// One line of `history`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    pub run_id: String,
    pub started_at: String,
    pub host: Option<String>,
    pub suites: Vec<String>,
    pub results: usize,
    pub interrupted: bool,
    pub headline: String,
}

/// The database path from the flag, the environment and the XDG default, in that order.
pub fn default_path(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("TRUEBENCH_DB").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .ok_or_else(|| {
            usage_hint(
                "no place for the results database",
                "set --db, TRUEBENCH_DB or HOME",
            )
        })?;
    Ok(data.join("truebench/results.db"))
}

fn open_error(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    usage_hint(
        format!("cannot use results database {}: {e}", path.display()),
        "pass a writable file path with --db",
    )
}

impl Store {
    /// Open for writing, creating the file and its directory, and migrating the schema.
    pub fn open_rw(path: &Path) -> anyhow::Result<Store> {
        if path.is_dir() {
            return Err(open_error(path, "it is a directory"));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| open_error(path, e))?;
        }
        let conn = Connection::open(path).map_err(|e| open_error(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| open_error(path, e))?;
        let mut store = Store { conn };
        migrations::migrate(&mut store.conn).map_err(|e| open_error(path, e))?;
        Ok(store)
    }

    /// Open an existing database read-only; None when the file does not exist yet.
    pub fn open_ro(path: &Path) -> anyhow::Result<Option<Store>> {
        if !path.exists() {
            return Ok(None);
        }
        if path.is_dir() {
            return Err(open_error(path, "it is a directory"));
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| open_error(path, e))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| open_error(path, e))?;
        if version > migrations::LATEST {
            return Err(open_error(
                path,
                format!(
                    "schema version {version} is newer than this truebench ({})",
                    migrations::LATEST
                ),
            ));
        }
        if version < migrations::LATEST {
            // An older database: migrate it through a writable connection first.
            drop(conn);
            return Store::open_rw(path).map(Some);
        }
        Ok(Some(Store { conn }))
    }

    pub fn contains(&self, run_id: &str) -> anyhow::Result<bool> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM runs WHERE run_id = ?1", [run_id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Store a run and its result rows in one transaction.
    pub fn insert(&mut self, doc: &RunDocument) -> anyhow::Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (run_id, started_at, host, suites, interrupted, tool_version, headline, document)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                doc.run_id,
                doc.started_at,
                doc.host,
                doc.suites.join(","),
                doc.interrupted,
                doc.tool.version,
                doc.headline(),
                serde_json::to_string(doc)?,
            ],
        )
        .with_context(|| format!("cannot store run {}", doc.run_id))?;
        for (i, r) in doc.results.iter().enumerate() {
            tx.execute(
                "INSERT INTO results (run_id, idx, benchmark, placement, params, unit, median, ci95_low, ci95_high, cv, n)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    doc.run_id,
                    i as i64,
                    r.benchmark,
                    r.placement.name,
                    serde_json::to_string(&r.params)?,
                    r.unit,
                    r.stats.median,
                    r.stats.ci95_low,
                    r.stats.ci95_high,
                    r.stats.cv,
                    r.stats.n as i64,
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Runs, newest first.
    pub fn list(&self, limit: usize) -> anyhow::Result<Vec<RunSummary>> {
        let mut st = self.conn.prepare(
            "SELECT r.run_id, r.started_at, r.host, r.suites, r.interrupted, r.headline,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.run_id)
             FROM runs r ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?1",
        )?;
        let rows = st.query_map([limit as i64], |row| {
            let suites: String = row.get(3)?;
            Ok(RunSummary {
                run_id: row.get(0)?,
                started_at: row.get(1)?,
                host: row.get(2)?,
                suites: suites
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
                interrupted: row.get(4)?,
                headline: row.get(5)?,
                results: row.get::<_, i64>(6)? as usize,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The run with this id, or the only run whose id starts with it, or `latest`.
    pub fn get(&self, id: &str) -> anyhow::Result<RunDocument> {
        let ids: Vec<String> = if id == "latest" || id == "last" {
            self.conn
                .prepare("SELECT run_id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        } else {
            let pattern = format!(
                "{}%",
                id.replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_")
            );
            self.conn
                .prepare("SELECT run_id FROM runs WHERE run_id = ?1 OR run_id LIKE ?2 ESCAPE '\\' ORDER BY run_id")?
                .query_map(params![id, pattern], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        let chosen = match ids.as_slice() {
            [] => {
                return Err(usage_hint(
                    format!("no run '{id}' in the database"),
                    "see `truebench history`",
                ))
            }
            [one] => one.clone(),
            many if many.iter().any(|m| m == id) => id.to_string(),
            many => {
                return Err(usage_hint(
                    format!("run id '{id}' is ambiguous ({} runs match)", many.len()),
                    "give more characters of the id",
                ))
            }
        };
        let text: String = self.conn.query_row(
            "SELECT document FROM runs WHERE run_id = ?1",
            [&chosen],
            |r| r.get(0),
        )?;
        serde_json::from_str(&text).with_context(|| format!("stored run {chosen} is unreadable"))
    }
}

/// Look up a run in the database at `path` (read-only).
pub fn load_run(path: &Path, id: &str) -> anyhow::Result<RunDocument> {
    match Store::open_ro(path)? {
        Some(s) => s.get(id),
        None => Err(usage_hint(
            format!(
                "no run '{id}': the results database {} does not exist yet",
                path.display()
            ),
            "run `truebench run` first, or pass --db",
        )),
    }
}
