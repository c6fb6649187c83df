//! Schema migrations, one list for both backends: step N is the same change written in
//! SQLite's and PostgreSQL's SQL, so a database of either kind at version N has the same
//! tables and columns. SQLite records the version in `PRAGMA user_version`, PostgreSQL in
//! the table `truebench.schema_version` (its tables live in the schema `truebench`).
//! Append a step to change the schema; never edit an applied one. SQLite's steps are
//! applied here, PostgreSQL's by `postgres.rs` (under its deadlines).

use rusqlite::Connection;

/// One schema change in both dialects.
struct Step {
    sqlite: &'static str,
    postgres: &'static str,
}

const STEPS: &[Step] = &[
    // 1: runs with their whole document, and one row per result for queries.
    Step {
        sqlite: "CREATE TABLE runs (
            run_id       TEXT PRIMARY KEY,
            started_at   TEXT NOT NULL,
            host         TEXT,
            suites       TEXT NOT NULL,
            interrupted  INTEGER NOT NULL,
            tool_version TEXT NOT NULL,
            headline     TEXT NOT NULL,
            document     TEXT NOT NULL
         );
         CREATE TABLE results (
            run_id    TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            idx       INTEGER NOT NULL,
            benchmark TEXT NOT NULL,
            placement TEXT NOT NULL,
            params    TEXT NOT NULL,
            unit      TEXT NOT NULL,
            median    REAL NOT NULL,
            ci95_low  REAL NOT NULL,
            ci95_high REAL NOT NULL,
            cv        REAL NOT NULL,
            n         INTEGER NOT NULL,
            PRIMARY KEY (run_id, idx)
         );
         CREATE INDEX results_by_benchmark ON results (benchmark, placement);",
        // Texts compared byte-wise ("C"), as SQLite does, so both order runs alike;
        // `seq` is the insertion order (SQLite's rowid) and `started` the start time as
        // a timestamp for dashboards.
        postgres: "CREATE TABLE truebench.runs (
            run_id       text COLLATE \"C\" PRIMARY KEY,
            started_at   text COLLATE \"C\" NOT NULL,
            host         text COLLATE \"C\",
            suites       text NOT NULL,
            interrupted  boolean NOT NULL,
            tool_version text NOT NULL,
            headline     text NOT NULL,
            document     jsonb NOT NULL,
            seq          bigserial NOT NULL,
            started      timestamptz
         );
         CREATE TABLE truebench.results (
            run_id    text COLLATE \"C\" NOT NULL REFERENCES truebench.runs(run_id) ON DELETE CASCADE,
            idx       integer NOT NULL,
            benchmark text NOT NULL,
            placement text NOT NULL,
            params    jsonb NOT NULL,
            unit      text NOT NULL,
            median    double precision NOT NULL,
            ci95_low  double precision NOT NULL,
            ci95_high double precision NOT NULL,
            cv        double precision NOT NULL,
            n         bigint NOT NULL,
            PRIMARY KEY (run_id, idx)
         );
         CREATE INDEX results_by_benchmark ON truebench.results (benchmark, placement);",
    },
    // 2: user tags (`--tag KEY=VALUE`) as rows, and the indexes `history` (newest first),
    // `compare --latest-per-host` and tag filters use; tags of stored runs are filled in.
    Step {
        sqlite: "CREATE TABLE run_tags (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            key    TEXT NOT NULL,
            value  TEXT NOT NULL,
            PRIMARY KEY (run_id, key)
         );
         CREATE INDEX run_tags_by_tag ON run_tags (key, value);
         CREATE INDEX runs_by_start ON runs (started_at);
         CREATE INDEX runs_by_host ON runs (host, started_at);
         INSERT INTO run_tags (run_id, key, value)
            SELECT r.run_id, t.key, t.value FROM runs r, json_each(r.document, '$.tags') t
            WHERE json_type(r.document, '$.tags') = 'object';",
        postgres: "CREATE TABLE truebench.run_tags (
            run_id text COLLATE \"C\" NOT NULL REFERENCES truebench.runs(run_id) ON DELETE CASCADE,
            key    text NOT NULL,
            value  text NOT NULL,
            PRIMARY KEY (run_id, key)
         );
         CREATE INDEX run_tags_by_tag ON truebench.run_tags (key, value);
         CREATE INDEX runs_by_start ON truebench.runs (started_at DESC, seq DESC);
         CREATE INDEX runs_by_host ON truebench.runs (host, started_at DESC, seq DESC);
         CREATE INDEX runs_by_time ON truebench.runs (started);
         INSERT INTO truebench.run_tags (run_id, key, value)
            SELECT r.run_id, t.key, t.value FROM truebench.runs r, jsonb_each_text(r.document->'tags') t
            WHERE jsonb_typeof(r.document->'tags') = 'object';",
    },
];

pub const LATEST: i64 = STEPS.len() as i64;

/// The outcome of a migration attempt that did not fail in the database itself.
#[derive(Debug, PartialEq)]
pub enum Migrated {
    /// At LATEST now.
    Ok,
    /// The database was written by a newer truebench (its version): never written here.
    TooNew(i64),
}

/// Bring a SQLite schema to LATEST. The version is read and every step applied inside one
/// IMMEDIATE transaction, so two processes opening a new database at once do not both
/// create its tables: the second waits (busy timeout), then finds the work done.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<Migrated> {
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current > LATEST {
        return Ok(Migrated::TooNew(current));
    }
    if current == LATEST {
        return Ok(Migrated::Ok);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current > LATEST {
        return Ok(Migrated::TooNew(current));
    }
    for (i, step) in STEPS.iter().enumerate().skip(current.max(0) as usize) {
        tx.execute_batch(step.sqlite)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    tx.commit()?;
    Ok(Migrated::Ok)
}

/// The PostgreSQL SQL of the steps after version `current`, in order (applied by
/// `postgres::pg_migrate`).
pub fn postgres_steps(current: i64) -> impl Iterator<Item = &'static str> {
    STEPS
        .iter()
        .skip(current.max(0) as usize)
        .map(|s| s.postgres)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut c = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut c).unwrap(), Migrated::Ok);
        assert_eq!(migrate(&mut c).unwrap(), Migrated::Ok);
        c.pragma_update(None, "user_version", LATEST + 1).unwrap();
        assert_eq!(migrate(&mut c).unwrap(), Migrated::TooNew(LATEST + 1));
        c.pragma_update(None, "user_version", LATEST).unwrap();
        let v: i64 = c
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, LATEST);
        let n: i64 = c
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }

    /// A version-1 database's tags (in its documents) reach the tag table on upgrade.
    #[test]
    fn the_tags_of_runs_stored_before_version_2_are_filled_in() {
        let mut c = Connection::open_in_memory().unwrap();
        c.execute_batch(STEPS[0].sqlite).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute(
            "INSERT INTO runs VALUES ('r1', '2026-01-01T00:00:00Z', 'h', 'timers', 0, '0.1', '', ?1)",
            [r#"{"tags":{"team":"db","rack":"7"}}"#],
        )
        .unwrap();
        c.execute(
            "INSERT INTO runs VALUES ('r2', '2026-01-01T00:00:00Z', 'h', 'timers', 0, '0.1', '', '{}')",
            [],
        )
        .unwrap();
        assert_eq!(migrate(&mut c).unwrap(), Migrated::Ok);
        let tags: Vec<(String, String, String)> = c
            .prepare("SELECT run_id, key, value FROM run_tags ORDER BY run_id, key")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            tags,
            [
                ("r1".into(), "rack".into(), "7".into()),
                ("r1".into(), "team".into(), "db".into())
            ]
        );
    }
}
