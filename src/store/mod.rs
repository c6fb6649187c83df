//! The results store: every run document, kept whole, with the columns `history`, `show`,
//! `compare --latest-per-host`, tag queries and `trend`'s series (`series.rs`) need. Two
//! backends behind one trait ([`Backend`]): a SQLite file (one machine; `sqlite.rs`) and a
//! PostgreSQL database (teams and fleets; `postgres.rs`), with one schema and one list of
//! migrations (`migrations.rs`). Where: `--db`, else `$TRUEBENCH_DB`, else
//! `$XDG_DATA_HOME/truebench/results.db`, else `~/.local/share/truebench/results.db`; a
//! `postgresql://` URL selects PostgreSQL (`location.rs`).

pub mod calibration;
mod location;
mod migrations;
mod pgpass;
mod postgres;
mod series;
mod spill;
mod sqlite;
mod tls;

pub use location::{Location, PgTarget, TlsMode};
pub use migrations::LATEST as SCHEMA_VERSION;
pub use series::{Point, Selection};
pub use spill::{save_or_spill, spill, spill_dirs};

use crate::error::{usage, usage_hint};
use crate::result::RunDocument;
use anyhow::Context;
use std::path::PathBuf;

/// One line of `history`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub run_id: String,
    pub started_at: String,
    pub host: Option<String>,
    pub suites: Vec<String>,
    pub results: usize,
    pub interrupted: bool,
    pub headline: String,
    /// The run's labels (`--tag`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, String>,
}

impl RunSummary {
    /// From the stored columns (`suites` comma-joined, as both backends keep it).
    fn from_columns(
        run_id: String,
        started_at: String,
        host: Option<String>,
        suites: &str,
        interrupted: bool,
        headline: String,
        results: i64,
    ) -> RunSummary {
        RunSummary {
            run_id,
            started_at,
            host,
            suites: suites
                .split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            results: results.max(0) as usize,
            interrupted,
            headline,
            tags: Default::default(),
        }
    }

    /// With its tags, from the JSON object a backend aggregates of its tag rows (null
    /// when the run has none).
    fn with_tags(mut self, tags: Option<String>) -> RunSummary {
        self.tags = tags
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        self
    }
}

/// What a store backend does; [`Store`] adds what is the same for both (resolving a run
/// reference, decoding a document).
pub trait Backend {
    /// Which of these exact run ids are stored (one query).
    fn stored(&self, run_ids: &[&str]) -> anyhow::Result<Vec<String>>;
    /// Store a run, its result rows and its tags in one transaction: all or nothing.
    fn insert(&mut self, doc: &RunDocument) -> anyhow::Result<()>;
    /// Store several runs (bulk import) in one transaction, all or nothing, with cached
    /// statements (SQLite) or one statement per table for all of them (PostgreSQL).
    fn insert_batch(&mut self, docs: &[&RunDocument]) -> anyhow::Result<()>;
    /// Runs, newest first (by `started_at`, then by insertion), at most `limit`, keeping
    /// only runs that carry every `(key, value)` tag given.
    fn list_filtered(
        &self,
        limit: usize,
        tags: &[(String, String)],
    ) -> anyhow::Result<Vec<RunSummary>>;
    /// The newest run of each host (runs without a host name are left out), by host name.
    fn latest_per_host(&self) -> anyhow::Result<Vec<RunSummary>>;
    /// Ids `reference` may mean: the newest run for `latest`/`last`, else the id itself
    /// and the ids it is a prefix of, in id order.
    fn matching(&self, reference: &str) -> anyhow::Result<Vec<String>>;
    /// The stored documents of these run ids (exact ids), as (run id, JSON text), in one
    /// query by the primary key; ids not stored are left out, the order is the store's.
    fn documents(&self, run_ids: &[&str]) -> anyhow::Result<Vec<(String, String)>>;
    /// The stored document of this run id, as JSON text.
    fn document(&self, run_id: &str) -> anyhow::Result<String> {
        self.documents(&[run_id])?
            .pop()
            .map(|(_, text)| text)
            .ok_or_else(|| usage(format!("no run '{run_id}' in the database")))
    }
    /// The result rows of the selected runs, by host, then oldest run first (`series`).
    fn points(&self, sel: &Selection) -> anyhow::Result<Vec<Point>>;
}

/// An open results store of either kind.
pub struct Store {
    backend: Box<dyn Backend>,
    location: Location,
}

impl std::ops::Deref for Store {
    type Target = dyn Backend;
    fn deref(&self) -> &Self::Target {
        &*self.backend
    }
}

impl std::ops::DerefMut for Store {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.backend
    }
}

impl Store {
    /// Open for writing, creating the database (SQLite) or the schema (PostgreSQL) and
    /// migrating it; checked before anything is measured: a store that cannot be written,
    /// is damaged or foreign, or of a newer schema is refused here (exit 2), not after
    /// the run. A PostgreSQL server that cannot be reached is exit 1.
    pub fn open_rw(at: &Location) -> anyhow::Result<Store> {
        let backend: Box<dyn Backend> = match at {
            Location::Sqlite(p) => Box::new(sqlite::Sqlite::open_rw(p)?),
            Location::Postgres(t) => Box::new(postgres::Postgres::open_rw(t)?),
        };
        Ok(Store {
            backend,
            location: at.clone(),
        })
    }

    /// Open an existing store read-only; None when a SQLite file does not exist yet.
    /// Reading never creates or changes anything: an empty file, a foreign database, one
    /// of an older or newer schema, a PostgreSQL database without the truebench schema
    /// are refused as they are (exit 2).
    pub fn open_ro(at: &Location) -> anyhow::Result<Option<Store>> {
        let backend: Box<dyn Backend> = match at {
            Location::Sqlite(p) => match sqlite::Sqlite::open_ro(p)? {
                Some(s) => Box::new(s),
                None => return Ok(None),
            },
            Location::Postgres(t) => Box::new(postgres::Postgres::open_ro(t)?),
        };
        Ok(Some(Store {
            backend,
            location: at.clone(),
        }))
    }

    /// Where this store is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Runs, newest first.
    pub fn list(&self, limit: usize) -> anyhow::Result<Vec<RunSummary>> {
        self.backend.list_filtered(limit, &[])
    }

    /// How many runs are stored (for messages about a selection that matched none).
    pub fn count(&self) -> anyhow::Result<usize> {
        Ok(self.backend.list_filtered(usize::MAX, &[])?.len())
    }

    /// The run with this id, or the only run whose id starts with it, or `latest`.
    pub fn get(&self, id: &str) -> anyhow::Result<RunDocument> {
        check_run_ref(id)?;
        // An exact id is read by its key; only a prefix is searched for (a scan: a prefix
        // pattern does not use the index, and a scan per run made a fleet quadratic).
        if let Some((_, text)) = self.backend.documents(&[id])?.pop() {
            return decode(id, &text);
        }
        let ids = self.backend.matching(id)?;
        let chosen = match ids.as_slice() {
            [] => {
                let stored = self.count()?;
                return Err(usage_hint(
                    format!(
                        "no run '{id}' in the database ({} stored)",
                        crate::units::count(stored, "run")
                    ),
                    "see `truebench history`",
                ));
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
        decode(&chosen, &self.backend.document(&chosen)?)
    }

    /// The runs of these exact ids (as the store lists them: `latest_per_host`, a tag
    /// selection), in the order given, read in queries of [`READ_CHUNK`] ids each, not one
    /// per run; each chunk's text is dropped once decoded.
    pub fn get_many(&self, ids: &[String]) -> anyhow::Result<Vec<RunDocument>> {
        self.map_many(ids, |d| d)
    }

    /// [`Store::get_many`], each document passed through `f` as soon as it is decoded (the
    /// fleet view keeps a reduced document, never every whole one at once). Each chunk's
    /// documents are decoded on every CPU this process may use (`crate::parallel`).
    pub fn map_many<T: Send>(
        &self,
        ids: &[String],
        f: impl Fn(RunDocument) -> T + Sync,
    ) -> anyhow::Result<Vec<T>> {
        let mut by_id = std::collections::HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(READ_CHUNK) {
            let keys: Vec<&str> = chunk.iter().map(String::as_str).collect();
            let texts = self.backend.documents(&keys)?;
            let docs = crate::parallel::map(&texts, |(id, text)| decode(id, text).map(&f));
            for ((id, _), doc) in texts.into_iter().zip(docs) {
                by_id.insert(id, doc?);
            }
        }
        ids.iter()
            .map(|id| {
                by_id
                    .remove(id)
                    .ok_or_else(|| usage(format!("no run '{id}' in the database")))
            })
            .collect()
    }
}

/// How many documents one query of [`Store::get_many`] reads (at most a few tens of MB).
const READ_CHUNK: usize = 500;

/// A stored document's text as a run.
fn decode(id: &str, text: &str) -> anyhow::Result<RunDocument> {
    serde_json::from_str(text).with_context(|| format!("stored run {id} is unreadable"))
}

/// The store location from the flag, the environment and the XDG default, in that order.
pub fn default_path(flag: Option<&Location>) -> anyhow::Result<Location> {
    if let Some(at) = flag {
        return Ok(at.clone());
    }
    if let Some(p) = std::env::var_os("TRUEBENCH_DB").filter(|p| !p.is_empty()) {
        return Location::parse(&p);
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
    Ok(Location::Sqlite(data.join("truebench/results.db")))
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

/// The LIKE pattern (escape character `\`) of the ids that start with `prefix`.
fn prefix_pattern(prefix: &str) -> String {
    format!(
        "{}%",
        prefix
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    )
}

/// The identity of a document to be stored (an import): a run id that `show` can name
/// (not `latest`/`last`, at most MAX_RUN_ID plain characters); its times are
/// `crate::result::times`.
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
    Ok(())
}

/// A store of a newer schema than this binary's: never written, refused (exit 2).
fn too_new(at: &dyn std::fmt::Display, version: i64) -> anyhow::Error {
    usage_hint(
        format!(
            "results database {at} has schema version {version}, newer than this truebench's ({}); it is not written by an older version",
            migrations::LATEST
        ),
        "use the newer truebench, or pass another --db",
    )
}

/// A store of an older schema, opened for reading (which never upgrades): exit 2.
fn too_old(at: &dyn std::fmt::Display, version: i64) -> anyhow::Error {
    usage_hint(
        format!(
            "results database {at} has schema version {version}, older than this truebench's ({})",
            migrations::LATEST
        ),
        "a command that stores (run, import) upgrades it; reading never changes it",
    )
}

/// Look up runs in the store at `at` (read-only, opened once), in the order given. The
/// runs `ids` name, each once: a run named twice (`R R`, `R latest`) is used once,
/// said on stderr, so that nothing counts it twice (predict fitted twice its steps).
pub fn load_runs(at: &Location, ids: &[String]) -> anyhow::Result<Vec<RunDocument>> {
    let mut docs: Vec<RunDocument> = Vec::with_capacity(ids.len());
    let Some(store) = Store::open_ro(at)? else {
        return match ids.first() {
            Some(id) => Err(no_store(at, id)),
            None => Ok(docs),
        };
    };
    let mut seen = std::collections::HashSet::new();
    let mut notes = Vec::new();
    for id in ids {
        let d = store.get(id)?;
        if !seen.insert(d.run_id.clone()) {
            notes.push((
                "a run named twice is used once".to_string(),
                format!(
                    "truebench: run {} is named twice ('{}'): it is used once",
                    d.run_id,
                    crate::stdout::field(id)
                ),
            ));
            continue;
        }
        docs.push(d);
    }
    // The first few whole, the rest counted (`report` of a run named 500 times).
    for line in crate::repeated::Repeated::lines(notes) {
        eprintln!("{line}");
    }
    Ok(docs)
}

/// Look up a run in the store at `at` (read-only).
pub fn load_run(at: &Location, id: &str) -> anyhow::Result<RunDocument> {
    match Store::open_ro(at)? {
        Some(s) => s.get(id),
        None => Err(no_store(at, id)),
    }
}

/// Run `id` asked of a SQLite store that does not exist yet.
fn no_store(at: &Location, id: &str) -> anyhow::Error {
    usage_hint(
        format!("no run '{id}': the results database {at} does not exist yet"),
        "run `truebench run` first, or pass --db",
    )
}
