//! The results store: one SQLite database (WAL mode) holding every run document, with a
//! versioned schema migrated on open. Path: `--db`, else `$TRUEBENCH_DB`, else
//! `$XDG_DATA_HOME/truebench/results.db`, else `~/.local/share/truebench/results.db`.

mod migrations;
mod spill;

pub use spill::{save_or_spill, spill, spill_dirs};

use crate::error::usage_hint;
use crate::result::RunDocument;
use anyhow::Context;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};

pub struct Store {
    conn: Connection,
    path: PathBuf,
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

/// A `RunSummary` from a row of (run_id, started_at, host, suites, interrupted, headline,
/// result count).
fn summary_row(row: &rusqlite::Row) -> rusqlite::Result<RunSummary> {
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

/// One sentence for what SQLite said, for a user who does not read SQLite error codes.
fn describe(e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::DatabaseCorrupt) => {
            "the file is damaged (SQLite reports a malformed database image)".into()
        }
        Some(C::NotADatabase) => "it is not an SQLite database".into(),
        Some(C::ReadOnly) => {
            "it cannot be written (read-only file, directory or file system)".into()
        }
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => {
            format!("another process kept it locked for {} s", BUSY.as_secs())
        }
        Some(C::DiskFull) => "its file system is full".into(),
        Some(C::CannotOpen) => "it cannot be opened (missing directory or no permission)".into(),
        Some(C::PermissionDenied) => "permission denied".into(),
        Some(C::SystemIoFailure) => format!("an I/O error ({e})"),
        _ => e.to_string(),
    }
}

fn open_error(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    usage_hint(
        format!("cannot use results database {}: {e}", path.display()),
        "pass a writable file path with --db",
    )
}

/// A database that reads fail on (damaged mid-file, not a database): exit 2, one sentence.
fn read_error(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::DatabaseCorrupt) | Some(C::NotADatabase) => usage_hint(
            format!(
                "cannot read results database {}: {}",
                path.display(),
                describe(&e)
            ),
            "restore it from a backup, or pass another --db",
        ),
        _ => anyhow::Error::new(e)
            .context(format!("cannot read results database {}", path.display())),
    }
}

/// How long a connection waits for another process's write to finish.
const BUSY: std::time::Duration = std::time::Duration::from_secs(10);

/// Below this much free space the database is refused before measuring.
const MIN_FREE_BYTES: u64 = 1 << 20;

/// Names of the tables in a database (to tell a truebench one from a foreign one).
fn tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// A database of something else: tables, but not ours and no truebench schema version.
fn foreign(conn: &Connection, version: i64) -> rusqlite::Result<Option<Vec<String>>> {
    if version != 0 {
        return Ok(None);
    }
    let t = tables(conn)?;
    Ok((!t.is_empty() && !t.iter().any(|n| n == "runs")).then_some(t))
}

impl Store {
    /// Open for writing, creating the file and its directory, and migrating the schema;
    /// checked before anything is measured: a read-only, immutable, busy, damaged, full,
    /// foreign or newer-schema database is refused here (exit 2), not after the run.
    pub fn open_rw(path: &Path) -> anyhow::Result<Store> {
        if path.is_dir() {
            return Err(open_error(path, "it is a directory"));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| open_error(path, e))?;
            if let Ok(fs) = nix::sys::statvfs::statvfs(dir) {
                let free = fs.blocks_available().saturating_mul(fs.fragment_size());
                if free < MIN_FREE_BYTES {
                    return Err(open_error(
                        path,
                        format!("its file system has only {} KiB free", free / 1024),
                    ));
                }
            }
        }
        // Opening is serialised between processes (an flock on the file, which is apart
        // from SQLite's own fcntl locks): two first uses could otherwise each hold a lock
        // the other's journal-mode switch or migration waits for, until the busy timeout.
        let _opening = open_guard(path)?;
        let conn = Connection::open(path).map_err(|e| open_error(path, describe(&e)))?;
        let fail = |e: rusqlite::Error| open_error(path, describe(&e));
        conn.busy_timeout(BUSY).map_err(fail)?;
        // SQLite silently falls back to read-only on a file it may not write (chattr +i).
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(fail)? {
            return Err(open_error(
                path,
                "it cannot be written (read-only or immutable file, or read-only file system)",
            ));
        }
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(fail)?;
        if let Some(t) = foreign(&conn, version).map_err(fail)? {
            return Err(open_error(
                path,
                format!(
                    "it is an SQLite database of something else (tables: {})",
                    t.join(", ")
                ),
            ));
        }
        if version > migrations::LATEST {
            return Err(too_new(path, version));
        }
        let ok: String = conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(fail)?;
        if ok != "ok" {
            return Err(open_error(
                path,
                format!("the file is damaged (SQLite quick_check: {ok})"),
            ));
        }
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        if let migrations::Migrated::TooNew(v) =
            migrations::migrate(&mut store.conn).map_err(fail)?
        {
            return Err(too_new(path, v));
        }
        // Take the write lock once and give it back: a database another process keeps
        // locked, or that cannot be written after all, is found now.
        store
            .conn
            .execute_batch("BEGIN IMMEDIATE; ROLLBACK;")
            .map_err(fail)?;
        Ok(store)
    }

    /// Open an existing database read-only; None when the file does not exist yet.
    /// Reading never creates or changes a file: an empty file, a foreign SQLite database
    /// or one of an older schema is refused as it is (exit 2).
    pub fn open_ro(path: &Path) -> anyhow::Result<Option<Store>> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(open_error(path, e)),
        };
        if meta.is_dir() {
            return Err(open_error(path, "it is a directory"));
        }
        if !meta.is_file() {
            return Err(open_error(path, "it is not a regular file"));
        }
        if meta.len() == 0 {
            return Err(usage_hint(
                format!(
                    "cannot read results database {}: the file is empty, not a truebench database",
                    path.display()
                ),
                "pass the right --db, or remove the empty file",
            ));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| open_error(path, describe(&e)))?;
        let fail = |e: rusqlite::Error| read_error(path, e);
        conn.busy_timeout(BUSY).map_err(fail)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(fail)?;
        if version > migrations::LATEST {
            return Err(too_new(path, version));
        }
        if foreign(&conn, version).map_err(fail)?.is_some() || version == 0 {
            return Err(usage_hint(
                format!(
                    "cannot read results database {}: it is an SQLite database but not truebench's",
                    path.display()
                ),
                "pass the right --db",
            ));
        }
        if version < migrations::LATEST {
            return Err(usage_hint(
                format!(
                    "results database {} has schema version {version}, older than this truebench's ({})",
                    path.display(),
                    migrations::LATEST
                ),
                "a command that stores (run, import) upgrades it; reading never changes it",
            ));
        }
        Ok(Some(Store {
            conn,
            path: path.to_path_buf(),
        }))
    }

    /// Where this database is.
    pub fn path(&self) -> &Path {
        &self.path
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
        self.list_rows(limit).map_err(|e| read_error(&self.path, e))
    }

    fn list_rows(&self, limit: usize) -> rusqlite::Result<Vec<RunSummary>> {
        let mut st = self.conn.prepare(
            "SELECT r.run_id, r.started_at, r.host, r.suites, r.interrupted, r.headline,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.run_id)
             FROM runs r ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?1",
        )?;
        let rows = st.query_map([limit as i64], summary_row)?;
        rows.collect()
    }

    /// The newest run of each host (runs without a host count as one host), newest first.
    pub fn latest_per_host(&self) -> anyhow::Result<Vec<RunSummary>> {
        self.latest_rows().map_err(|e| read_error(&self.path, e))
    }

    fn latest_rows(&self) -> rusqlite::Result<Vec<RunSummary>> {
        let mut st = self.conn.prepare(
            "SELECT r.run_id, r.started_at, r.host, r.suites, r.interrupted, r.headline,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.run_id)
             FROM runs r
             WHERE r.rowid = (SELECT n.rowid FROM runs n WHERE n.host IS r.host
                              ORDER BY n.started_at DESC, n.rowid DESC LIMIT 1)
             ORDER BY r.started_at DESC, r.rowid DESC",
        )?;
        let rows = st.query_map([], summary_row)?;
        rows.collect()
    }

    /// Ids of the runs `id` may mean: `latest`, the id itself, or ids it is a prefix of.
    fn matching(&self, id: &str) -> rusqlite::Result<Vec<String>> {
        if id == "latest" || id == "last" {
            return self
                .conn
                .prepare("SELECT run_id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1")?
                .query_map([], |r| r.get(0))?
                .collect();
        }
        let pattern = format!(
            "{}%",
            id.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        self.conn
            .prepare("SELECT run_id FROM runs WHERE run_id = ?1 OR run_id LIKE ?2 ESCAPE '\\' ORDER BY run_id")?
            .query_map(params![id, pattern], |r| r.get(0))?
            .collect()
    }

    /// The run with this id, or the only run whose id starts with it, or `latest`.
    pub fn get(&self, id: &str) -> anyhow::Result<RunDocument> {
        check_run_ref(id)?;
        let ids = self.matching(id).map_err(|e| read_error(&self.path, e))?;
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
        let text: String = self
            .conn
            .query_row(
                "SELECT document FROM runs WHERE run_id = ?1",
                [&chosen],
                |r| r.get(0),
            )
            .map_err(|e| read_error(&self.path, e))?;
        serde_json::from_str(&text).with_context(|| format!("stored run {chosen} is unreadable"))
    }
}

/// Longest run id accepted (generated ids have 21 characters).
pub const MAX_RUN_ID: usize = 64;

fn run_id_chars(id: &str) -> bool {
    id.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// A run reference given on the command line (`show ID`): not empty; one that cannot be
/// an id (too long, odd characters) names no run, said as such.
pub fn check_run_ref(id: &str) -> anyhow::Result<()> {
    if id.is_empty() {
        return Err(usage_hint(
            "an empty run id",
            "give a run id, a unique prefix of one, or `latest` (see `truebench history`)",
        ));
    }
    if id.chars().count() > MAX_RUN_ID || !run_id_chars(id) {
        let shown: String = id.chars().take(40).filter(|c| !c.is_control()).collect();
        let more = if id.chars().count() > 40 { "..." } else { "" };
        return Err(usage_hint(
            format!("no run '{shown}{more}' in the database: run ids are at most {MAX_RUN_ID} letters, digits and - _ . :"),
            "see `truebench history`",
        ));
    }
    Ok(())
}

/// The identity of a document to be stored (an import): a run id that `show` can name
/// (not `latest`/`last`, at most MAX_RUN_ID plain characters) and an RFC 3339 start time.
pub fn check_identity(doc: &RunDocument) -> Result<(), String> {
    let id = &doc.run_id;
    if id.is_empty() || id.len() > MAX_RUN_ID || !run_id_chars(id) || id.starts_with('-') {
        return Err(format!(
            "run_id '{}' is not 1 to {MAX_RUN_ID} letters, digits and - _ . : (not starting with -)",
            id.chars().take(40).collect::<String>()
        ));
    }
    if id == "latest" || id == "last" {
        return Err(format!(
            "run_id '{id}' is reserved: `show {id}` means the newest run"
        ));
    }
    chrono::DateTime::parse_from_rfc3339(&doc.started_at).map_err(|e| {
        format!(
            "started_at '{}' is not an RFC 3339 time ({e})",
            doc.started_at.chars().take(40).collect::<String>()
        )
    })?;
    if let Some(f) = &doc.finished_at {
        chrono::DateTime::parse_from_rfc3339(f).map_err(|e| {
            format!(
                "finished_at '{}' is not an RFC 3339 time ({e})",
                f.chars().take(40).collect::<String>()
            )
        })?;
    }
    Ok(())
}

fn too_new(path: &Path, version: i64) -> anyhow::Error {
    usage_hint(
        format!(
            "results database {} has schema version {version}, newer than this truebench's ({}); it is not written by an older version",
            path.display(),
            migrations::LATEST
        ),
        "use the newer truebench, or pass another --db",
    )
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

/// An exclusive flock on the database file while it is opened for writing (created if
/// missing, never through a link), released when dropped.
fn open_guard(path: &Path) -> anyhow::Result<nix::fcntl::Flock<std::fs::File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                open_error(
                    path,
                    "it cannot be written (read-only or immutable file, or read-only file system)",
                )
            }
            _ => open_error(path, e),
        })?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| open_error(path, e))
}
