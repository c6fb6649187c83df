//! The PostgreSQL backend: one database many hosts write to and dashboards read, tables
//! in the schema `truebench`, documents as JSONB. Each run is stored in one transaction
//! (never seen half-written); the first use creates the schema under an advisory lock.
//! Every message names the database without its password and is scrubbed of it.
//!
//! Every wait on the server has a deadline, so a server that accepts connections and never
//! answers (hung, frozen with SIGSTOP, a port that is not PostgreSQL) is an error within
//! seconds, never a hang: the whole connection set-up (TCP connect, TLS, startup,
//! authentication) gets the URL's `connect_timeout` (10 s unless given), every statement
//! [`STATEMENT_DEADLINE`] (also sent as the session's `statement_timeout`, so the server
//! gives up too), and TCP keepalives find a server that went away under an idle
//! connection during a long run. The client is tokio-postgres on a runtime of our own,
//! each wait under `tokio::time::timeout`.

use super::location::PgTarget;
use super::{migrations, prefix_pattern, too_new, too_old, Backend, RunSummary};
use super::{Point, Selection};
use crate::error::{usage, usage_hint};
use crate::result::RunDocument;
use std::cell::RefCell;
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::Client;

/// How long one statement (with its round trip) may take.
pub const STATEMENT_DEADLINE: Duration = Duration::from_secs(10);
/// How long the check that an open connection still works may take before a run is stored
/// (else a new connection is made).
const CHECK_DEADLINE: Duration = Duration::from_secs(5);
/// Idle time before the first TCP keepalive probe, the time between probes, and how many
/// may go unanswered: a server gone from under an idle connection is found within 1 min.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_RETRIES: u32 = 3;
/// How long data sent may stay unacknowledged by the server's host (TCP_USER_TIMEOUT).
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a step on the server failed: its (or the client's) error, or no answer in time.
#[derive(Debug)]
pub enum Failure {
    Pg(tokio_postgres::Error),
    /// Nothing came back within this time (what was waited for).
    Silent(&'static str, Duration),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Failure::Pg(e)
    }
}

impl Failure {
    pub fn code(&self) -> Option<&SqlState> {
        match self {
            Failure::Pg(e) => e.code(),
            Failure::Silent(..) => None,
        }
    }
}

/// One statement (or other wait on the server) under [`STATEMENT_DEADLINE`].
pub async fn step<T>(
    fut: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(STATEMENT_DEADLINE, fut).await {
        Ok(r) => Ok(r?),
        Err(_) => Err(Failure::Silent("an answer", STATEMENT_DEADLINE)),
    }
}

/// An open connection: the client and the runtime its socket is driven on (the client
/// first, so it is dropped first).
struct Conn {
    client: Client,
    rt: tokio::runtime::Runtime,
}

impl Conn {
    fn run<T>(&self, fut: impl std::future::Future<Output = T>) -> T {
        self.rt.block_on(fut)
    }
}

pub struct Postgres {
    conn: RefCell<Conn>,
    target: PgTarget,
}

/// The text of an error and its causes, with the password (if any) replaced, on one line.
fn scrub(t: &PgTarget, e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text = format!("{text}: {c}");
        cause = c.source();
    }
    hide_password(t, &text)
}

/// The text on one line, with the password (if any, of 3 characters or more) replaced.
fn hide_password(t: &PgTarget, text: &str) -> String {
    let mut text = text.replace('\n', " ");
    if let Some(p) = t.password().filter(|p| p.len() >= 3) {
        text = text.replace(&p, "***");
    }
    text
}

/// The database's own message when the server answered with one, else the client's.
fn reason(t: &PgTarget, e: &Failure) -> String {
    match e {
        Failure::Pg(e) => pg_reason(t, e),
        Failure::Silent(what, d) => silent(what, *d),
    }
}

fn pg_reason(t: &PgTarget, e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => hide_password(t, db.message()),
        None => scrub(t, e),
    }
}

fn silent(what: &str, d: Duration) -> String {
    format!(
        "the server gave no {what} within {} s (hung, stopped, or not PostgreSQL)",
        d.as_secs()
    )
}

/// Why connecting failed, as one sentence and the right exit code: a server that cannot
/// be reached is exit 1 (try again later); what the user can fix (password, database
/// name, TLS wish) exit 2.
fn connect_error(t: &PgTarget, e: Failure) -> anyhow::Error {
    let e = match e {
        Failure::Pg(e) => e,
        Failure::Silent(what, d) => {
            return anyhow::anyhow!(
                "cannot reach the PostgreSQL server of results database {t}: it accepted the connection but {}",
                silent(what, d).trim_start_matches("the server ")
            )
        }
    };
    let why = pg_reason(t, &e);
    let code = e.code();
    if code == Some(&SqlState::INVALID_PASSWORD)
        || code == Some(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
    {
        return usage_hint(
            format!(
                "cannot use results database {t}: the server refused user '{}' ({why})",
                t.user()
            ),
            "check the password (in the URL, PGPASSWORD or ~/.pgpass) and the server's pg_hba.conf",
        );
    }
    if code == Some(&SqlState::INVALID_CATALOG_NAME) {
        return usage_hint(
            format!("cannot use results database {t}: {why}"),
            format!(
                "create it (createdb -h HOST -U USER {}) or pass another --db",
                t.dbname()
            ),
        );
    }
    if code.is_some() {
        return usage_hint(
            format!("cannot use results database {t}: {why}"),
            "check the URL given with --db or TRUEBENCH_DB",
        );
    }
    let text = scrub(t, &e);
    if text.contains("password missing") {
        return usage_hint(
            format!("cannot use results database {t}: the server asks for a password and none was given"),
            "give it in the URL (USER:PASSWORD@HOST), PGPASSWORD or ~/.pgpass",
        );
    }
    if text.contains("TLS") || text.contains("tls") || text.contains("certificate") {
        return usage_hint(
            format!("cannot use results database {t}: {text}"),
            "check sslmode in the URL (disable, prefer, require, verify-ca, verify-full) and sslrootcert",
        );
    }
    anyhow::anyhow!(
        "cannot reach the PostgreSQL server of results database {t}: {}",
        text.trim_start_matches("error connecting to server: ")
    )
}

/// A failure while reading or writing an open database: exit 1, scrubbed.
fn op_error(t: &PgTarget, what: &str, e: Failure) -> anyhow::Error {
    anyhow::anyhow!("{what} results database {t}: {}", reason(t, &e))
}

/// How long setting up a connection may take in all: the URL's `connect_timeout`, which
/// the client itself applies to the TCP connect only.
pub fn connect_deadline(t: &PgTarget) -> Duration {
    t.config
        .get_connect_timeout()
        .copied()
        .unwrap_or(Duration::from_secs(10))
}

fn connect(t: &PgTarget) -> anyhow::Result<Conn> {
    let tls = super::tls::connector(t)?;
    let mut config = t.config.clone();
    config
        .keepalives(true)
        .keepalives_idle(KEEPALIVE_IDLE)
        .keepalives_interval(KEEPALIVE_INTERVAL)
        .keepalives_retries(KEEPALIVE_RETRIES)
        .tcp_user_timeout(TCP_USER_TIMEOUT);
    let statement_timeout = format!("-c statement_timeout={}", STATEMENT_DEADLINE.as_millis());
    let options = match config.get_options() {
        Some(o) if !o.trim().is_empty() => format!("{o} {statement_timeout}"),
        _ => statement_timeout,
    };
    config.options(options);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the client of results database {t}: {e}"))?;
    let deadline = connect_deadline(t);
    let client = rt
        .block_on(async {
            match tokio::time::timeout(deadline, config.connect(tls)).await {
                Ok(Ok((client, connection))) => {
                    // Driven whenever the runtime runs (each statement's block_on).
                    tokio::spawn(connection);
                    Ok(client)
                }
                Ok(Err(e)) => Err(Failure::Pg(e)),
                Err(_) => Err(Failure::Silent("startup answer", deadline)),
            }
        })
        .map_err(|e| connect_error(t, e))?;
    Ok(Conn { client, rt })
}

/// Summary columns of `truebench.runs r`, in the order [`summary`] reads them.
const SUMMARY: &str = "r.run_id, r.started_at, r.host, r.suites, r.interrupted, r.headline,
    (SELECT COUNT(*) FROM truebench.results x WHERE x.run_id = r.run_id),
    (SELECT json_object_agg(t.key, t.value)::text FROM truebench.run_tags t WHERE t.run_id = r.run_id)";

fn summary(row: &tokio_postgres::Row) -> RunSummary {
    RunSummary::from_columns(
        row.get(0),
        row.get(1),
        row.get(2),
        row.get::<_, &str>(3),
        row.get(4),
        row.get(5),
        row.get(6),
    )
    .with_tags(row.get(7))
}

impl Postgres {
    /// Connect, create or upgrade the schema, and check that this user may insert runs:
    /// all before measuring.
    pub fn open_rw(t: &PgTarget) -> anyhow::Result<Postgres> {
        let conn = connect(t)?;
        let c = &conn.client;
        let read_only: String = conn
            .run(step(c.query_one("SHOW transaction_read_only", &[])))
            .map_err(|e| op_error(t, "cannot use", e))?
            .get(0);
        if read_only == "on" {
            return Err(usage_hint(
                format!("cannot use results database {t}: the server accepts only reads (a standby, or default_transaction_read_only)"),
                "pass the URL of the primary server",
            ));
        }
        let mut conn = conn;
        let migrated = {
            let Conn { client, rt } = &mut conn;
            rt.block_on(pg_migrate(client))
        };
        match migrated {
            Ok(migrations::Migrated::Ok) => {}
            Ok(migrations::Migrated::TooNew(v)) => return Err(too_new(t, v)),
            Err(e) if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) => {
                return Err(usage_hint(
                    format!(
                        "cannot create the truebench tables in results database {t}: {}",
                        reason(t, &e)
                    ),
                    format!(
                        "let the database's owner store one run first (it creates schema truebench), or GRANT CREATE ON DATABASE {} TO {}",
                        t.dbname(),
                        t.user()
                    ),
                ))
            }
            Err(e) => return Err(op_error(t, "cannot set up the schema of", e)),
        }
        let may_insert: bool = conn
            .run(step(conn.client.query_one(
                "SELECT has_table_privilege('truebench.runs', 'INSERT')
                    AND has_table_privilege('truebench.results', 'INSERT')
                    AND has_table_privilege('truebench.run_tags', 'INSERT')",
                &[],
            )))
            .map_err(|e| op_error(t, "cannot use", e))?
            .get(0);
        if !may_insert {
            return Err(usage_hint(
                format!("cannot use results database {t}: user '{}' may not insert runs", t.user()),
                "GRANT INSERT ON ALL TABLES IN SCHEMA truebench (and USAGE on its sequences) to this user",
            ));
        }
        // Documents compressed with LZ4 where the server has it (PostgreSQL 14 and later,
        // built with lz4): its default, pglz, took half the server's time of a bulk import.
        // A server without it keeps its default (the setting is refused, nothing else).
        let _ = conn.run(step(
            conn.client
                .simple_query("SET default_toast_compression = 'lz4'"),
        ));
        Ok(Postgres {
            conn: RefCell::new(conn),
            target: t.clone(),
        })
    }

    /// Connect for reading: a database without the truebench schema, or of another
    /// schema version, is refused (exit 2) and left as it is.
    pub fn open_ro(t: &PgTarget) -> anyhow::Result<Postgres> {
        let conn = connect(t)?;
        let version = conn
            .run(pg_version(&conn.client))
            .map_err(|e| op_error(t, "cannot read", e))?;
        if version == 0 {
            return Err(usage_hint(
                format!("results database {t} has no truebench schema yet (no run was stored there)"),
                "store a run first (`truebench run` or `truebench import FILE` create the schema), or pass another --db",
            ));
        }
        if version > migrations::LATEST {
            return Err(too_new(t, version));
        }
        if version < migrations::LATEST {
            return Err(too_old(t, version));
        }
        Ok(Postgres {
            conn: RefCell::new(conn),
            target: t.clone(),
        })
    }

    fn rows(
        &self,
        sql: &str,
        args: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> anyhow::Result<Vec<tokio_postgres::Row>> {
        let conn = self.conn.borrow();
        conn.run(step(conn.client.query(sql, args)))
            .map_err(|e| op_error(&self.target, "cannot read", e))
    }

    /// A connection that has gone (a server restart or an idle timeout during a long
    /// run) is made again before a run is stored.
    fn reconnect_if_gone(&self) -> anyhow::Result<()> {
        let gone = {
            let conn = self.conn.borrow();
            conn.client.is_closed()
                || conn
                    .run(async {
                        tokio::time::timeout(CHECK_DEADLINE, conn.client.simple_query("")).await
                    })
                    .map_or(true, |r| r.is_err())
        };
        if gone {
            *self.conn.borrow_mut() = connect(&self.target)?;
        }
        Ok(())
    }

    /// Store runs, their result rows and their tags in one transaction: one statement per
    /// table for all of them (`unnest` of one array per column), not one per row.
    fn store(&self, docs: &[&RunDocument]) -> Result<(), Failure> {
        let runs = RunColumns::of(docs);
        let results = ResultColumns::of(docs);
        let (tag_run, tag_key, tag_value): (Vec<&str>, Vec<&str>, Vec<&str>) = docs
            .iter()
            .flat_map(|d| {
                d.tags
                    .iter()
                    .map(|(k, v)| (d.run_id.as_str(), k.as_str(), v.as_str()))
            })
            .collect();
        let mut conn = self.conn.borrow_mut();
        let Conn { client, rt } = &mut *conn;
        rt.block_on(async {
            let tx = step(client.transaction()).await?;
            // WITH ORDINALITY ... ORDER BY: `seq` follows the order given.
            step(tx.execute(
                "INSERT INTO truebench.runs (run_id, started_at, host, suites, interrupted, tool_version, headline, document, started)
                 SELECT a, b, c, d, e, f, g, h::jsonb, i FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
                    $5::bool[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
                    WITH ORDINALITY AS u(a, b, c, d, e, f, g, h, i, o) ORDER BY o",
                &[
                    &runs.run_id,
                    &runs.started_at,
                    &runs.host,
                    &runs.suites,
                    &runs.interrupted,
                    &runs.tool_version,
                    &runs.headline,
                    &runs.document,
                    &runs.started,
                ],
            ))
            .await?;
            step(tx.execute(
                "INSERT INTO truebench.results (run_id, idx, benchmark, placement, params, unit, median, ci95_low, ci95_high, cv, n)
                 SELECT a, b, c, d, e::jsonb, f, g, h, i, j, k FROM unnest($1::text[], $2::int4[], $3::text[], $4::text[],
                    $5::text[], $6::text[], $7::float8[], $8::float8[], $9::float8[], $10::float8[], $11::int8[])
                    AS u(a, b, c, d, e, f, g, h, i, j, k)",
                &[
                    &results.run_id,
                    &results.idx,
                    &results.benchmark,
                    &results.placement,
                    &results.params,
                    &results.unit,
                    &results.median,
                    &results.ci95_low,
                    &results.ci95_high,
                    &results.cv,
                    &results.n,
                ],
            ))
            .await?;
            if !tag_run.is_empty() {
                step(tx.execute(
                    "INSERT INTO truebench.run_tags (run_id, key, value)
                     SELECT * FROM unnest($1::text[], $2::text[], $3::text[])",
                    &[&tag_run, &tag_key, &tag_value],
                ))
                .await?;
            }
            step(tx.commit()).await
        })
    }
}

/// The `runs` columns of several documents, one array each (for `unnest`).
struct RunColumns<'a> {
    run_id: Vec<&'a str>,
    started_at: Vec<&'a str>,
    host: Vec<Option<&'a str>>,
    suites: Vec<String>,
    interrupted: Vec<bool>,
    tool_version: Vec<&'a str>,
    headline: Vec<String>,
    document: Vec<String>,
    started: Vec<Option<chrono::DateTime<chrono::FixedOffset>>>,
}

impl<'a> RunColumns<'a> {
    fn of(docs: &[&'a RunDocument]) -> RunColumns<'a> {
        RunColumns {
            run_id: docs.iter().map(|d| d.run_id.as_str()).collect(),
            started_at: docs.iter().map(|d| d.started_at.as_str()).collect(),
            host: docs.iter().map(|d| d.host.as_deref()).collect(),
            suites: docs.iter().map(|d| d.suites.join(",")).collect(),
            interrupted: docs.iter().map(|d| d.interrupted).collect(),
            tool_version: docs.iter().map(|d| d.tool.version.as_str()).collect(),
            headline: docs.iter().map(|d| d.headline()).collect(),
            document: docs
                .iter()
                .map(|d| serde_json::to_string(d).expect("a run document serialises"))
                .collect(),
            started: docs
                .iter()
                .map(|d| chrono::DateTime::parse_from_rfc3339(&d.started_at).ok())
                .collect(),
        }
    }
}

/// The `results` columns of several documents' rows, one array each.
#[derive(Default)]
struct ResultColumns<'a> {
    run_id: Vec<&'a str>,
    idx: Vec<i32>,
    benchmark: Vec<&'a str>,
    placement: Vec<&'a str>,
    params: Vec<String>,
    unit: Vec<&'a str>,
    median: Vec<f64>,
    ci95_low: Vec<f64>,
    ci95_high: Vec<f64>,
    cv: Vec<f64>,
    n: Vec<i64>,
}

impl<'a> ResultColumns<'a> {
    fn of(docs: &[&'a RunDocument]) -> ResultColumns<'a> {
        let mut c = ResultColumns::default();
        for d in docs {
            for (i, r) in d.results.iter().enumerate() {
                c.run_id.push(&d.run_id);
                c.idx.push(i as i32);
                c.benchmark.push(&r.benchmark);
                c.placement.push(&r.placement.name);
                c.params
                    .push(serde_json::to_string(&r.params).expect("params serialise"));
                c.unit.push(&r.unit);
                c.median.push(r.stats.median);
                c.ci95_low.push(r.stats.ci95_low);
                c.ci95_high.push(r.stats.ci95_high);
                c.cv.push(r.stats.cv);
                c.n.push(r.stats.n as i64);
            }
        }
        c
    }
}

type Args<'a> = Vec<&'a (dyn tokio_postgres::types::ToSql + Sync)>;

/// The condition that run `r` carries every tag, its values pushed onto `args`.
fn tag_filter<'a>(args: &mut Args<'a>, tags: &'a [(String, String)]) -> String {
    let mut sql = String::new();
    for (k, v) in tags {
        args.push(k);
        args.push(v);
        sql += &format!(
            " AND EXISTS (SELECT 1 FROM truebench.run_tags t WHERE t.run_id = r.run_id AND t.key = ${} AND t.value = ${})",
            args.len() - 1,
            args.len()
        );
    }
    sql
}

impl Backend for Postgres {
    fn stored(&self, run_ids: &[&str]) -> anyhow::Result<Vec<String>> {
        Ok(self
            .rows(
                "SELECT run_id FROM truebench.runs WHERE run_id = ANY($1)",
                &[&run_ids],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn insert(&mut self, doc: &RunDocument) -> anyhow::Result<()> {
        self.reconnect_if_gone()?;
        let t = &self.target;
        self.store(&[doc]).map_err(|e| match e.code() {
            Some(c) if *c == SqlState::UNIQUE_VIOLATION => usage_hint(
                format!("run {} is already in {t}", doc.run_id),
                "nothing was stored",
            ),
            Some(c) if *c == SqlState::UNTRANSLATABLE_CHARACTER => usage(format!(
                "cannot store run {} in {t}: it holds a NUL character (\\u0000), which PostgreSQL's JSONB cannot keep",
                doc.run_id
            )),
            _ => anyhow::anyhow!("{}", reason(t, &e)),
        })
    }

    /// All in one transaction; on failure nothing is stored (the caller stores them one
    /// at a time to say which one was refused and why).
    fn insert_batch(&mut self, docs: &[&RunDocument]) -> anyhow::Result<()> {
        self.reconnect_if_gone()?;
        self.store(docs)
            .map_err(|e| anyhow::anyhow!("{}", reason(&self.target, &e)))
    }

    fn list_filtered(
        &self,
        limit: usize,
        tags: &[(String, String)],
    ) -> anyhow::Result<Vec<RunSummary>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut args: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&limit];
        let mut sql = format!("SELECT {SUMMARY} FROM truebench.runs r WHERE true");
        sql += &tag_filter(&mut args, tags);
        sql += " ORDER BY r.started_at DESC, r.seq DESC LIMIT $1";
        Ok(self.rows(&sql, &args)?.iter().map(summary).collect())
    }

    fn latest_per_host(&self) -> anyhow::Result<Vec<RunSummary>> {
        use crate::result::tags::ADDS_TO;
        let sql = format!(
            "SELECT {SUMMARY} FROM (
                SELECT DISTINCT ON (host) * FROM truebench.runs n WHERE host IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM truebench.run_tags t
                                  WHERE t.run_id = n.run_id AND t.key = '{ADDS_TO}')
                ORDER BY host, started_at DESC, seq DESC) r
             ORDER BY r.host"
        );
        Ok(self.rows(&sql, &[])?.iter().map(summary).collect())
    }

    fn matching(&self, id: &str) -> anyhow::Result<Vec<String>> {
        let rows = if id == "latest" || id == "last" {
            self.rows(
                "SELECT run_id FROM truebench.runs ORDER BY started_at DESC, seq DESC LIMIT 1",
                &[],
            )?
        } else {
            // ILIKE: a prefix matches regardless of ASCII case, as SQLite's LIKE does.
            self.rows(
                "SELECT run_id FROM truebench.runs WHERE run_id = $1 OR run_id ILIKE $2 ESCAPE '\\' ORDER BY run_id",
                &[&id, &prefix_pattern(id)],
            )?
        };
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn documents(&self, run_ids: &[&str]) -> anyhow::Result<Vec<(String, String)>> {
        Ok(self
            .rows(
                "SELECT run_id, document::text FROM truebench.runs WHERE run_id = ANY($1)",
                &[&run_ids],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }
    fn points(&self, sel: &Selection) -> anyhow::Result<Vec<Point>> {
        let mut args: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![];
        // The rounds' standard error of every row of a run, read from its stored document
        // once per run (one detoasting of the document, not one per row), then joined with
        // the result columns.
        let mut sql = String::from(
            "WITH r AS MATERIALIZED (
               SELECT r.run_id, r.started_at, r.host, r.seq,
                      ARRAY(SELECT (e->'rounds'->'noise'->>'se')::float8
                            FROM jsonb_array_elements(r.document->'results')
                                 WITH ORDINALITY AS t(e, i) ORDER BY i) AS se
               FROM truebench.runs r
               WHERE r.host IS NOT NULL",
        );
        if !sel.hosts.is_empty() {
            args.push(&sel.hosts);
            sql += &format!(" AND r.host = ANY(${})", args.len());
        }
        if let Some(since) = &sel.since {
            args.push(since);
            sql += &format!(" AND r.started_at >= ${}", args.len());
        }
        sql += &tag_filter(&mut args, &sel.tags);
        sql += ")
             SELECT r.run_id, r.started_at, r.host, x.benchmark, x.placement, x.params::text,
                    x.unit, x.median, x.ci95_low, x.ci95_high, r.se[x.idx + 1]
             FROM r JOIN truebench.results x ON x.run_id = r.run_id
             WHERE true";
        let patterns = super::series::suite_patterns(sel);
        if !patterns.is_empty() {
            args.push(&patterns);
            sql += &format!(" AND x.benchmark LIKE ANY(${})", args.len());
        }
        sql += " ORDER BY r.host, r.started_at, r.seq, x.idx";
        Ok(self
            .rows(&sql, &args)?
            .iter()
            .map(|row| Point {
                run_id: row.get(0),
                started_at: row.get(1),
                host: row.get(2),
                benchmark: row.get(3),
                placement: row.get(4),
                params: row.get(5),
                unit: row.get(6),
                median: row.get(7),
                ci95_low: row.get(8),
                ci95_high: row.get(9),
                se: row.get(10),
            })
            .collect())
    }
}

/// The schema version of a PostgreSQL database: 0 when it has no truebench schema. Each
/// statement under the client's deadline.
pub async fn pg_version(client: &impl tokio_postgres::GenericClient) -> Result<i64, Failure> {
    // A scan of the catalog, not to_regclass(): its cache may not yet know of a table
    // another session has just committed (the migration race of parallel first uses).
    let exists: bool = step(client.query_one(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'truebench' AND c.relname = 'schema_version')",
        &[],
    ))
    .await?
    .get(0);
    if !exists {
        return Ok(0);
    }
    let v: Option<i32> =
        step(client.query_one("SELECT max(version) FROM truebench.schema_version", &[]))
            .await?
            .get(0);
    Ok(v.unwrap_or(0).into())
}

/// An advisory lock key (any constant): holders of it are truebench migrations.
const PG_MIGRATION_LOCK: i64 = 0x7472_7565_6265_6e63; // "truebenc"

/// Bring a PostgreSQL schema to `migrations::LATEST` in one transaction under an advisory lock, so
/// parallel first uses from many hosts create the tables once: the others wait, then find
/// the version current. DDL is transactional in PostgreSQL: a failed step leaves nothing.
pub async fn pg_migrate(
    client: &mut tokio_postgres::Client,
) -> Result<migrations::Migrated, Failure> {
    let current = pg_version(client).await?;
    if current > migrations::LATEST {
        return Ok(migrations::Migrated::TooNew(current));
    }
    if current == migrations::LATEST {
        return Ok(migrations::Migrated::Ok);
    }
    let tx = step(client.transaction()).await?;
    step(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&PG_MIGRATION_LOCK])).await?;
    let current = pg_version(&tx).await?;
    if current > migrations::LATEST {
        return Ok(migrations::Migrated::TooNew(current));
    }
    if current == 0 {
        step(tx.batch_execute(
            "CREATE SCHEMA IF NOT EXISTS truebench;
             CREATE TABLE IF NOT EXISTS truebench.schema_version (version integer NOT NULL);",
        ))
        .await?;
    }
    for sql in migrations::postgres_steps(current) {
        step(tx.batch_execute(sql)).await?;
    }
    step(tx.execute("DELETE FROM truebench.schema_version", &[])).await?;
    step(tx.execute(
        "INSERT INTO truebench.schema_version (version) VALUES ($1)",
        &[&(migrations::LATEST as i32)],
    ))
    .await?;
    step(tx.commit()).await?;
    Ok(migrations::Migrated::Ok)
}
