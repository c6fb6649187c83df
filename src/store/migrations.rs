//! Schema migrations, applied in order; `PRAGMA user_version` records the last one applied.
//! Append a step to change the schema; never edit an applied one.

use rusqlite::Connection;

const STEPS: &[&str] = &[
    // 1: runs with their whole document, and one row per result for queries.
    "CREATE TABLE runs (
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
];

pub const LATEST: i64 = STEPS.len() as i64;

/// The outcome of a migration attempt that did not fail in SQLite itself.
#[derive(Debug, PartialEq)]
pub enum Migrated {
    /// At LATEST now.
    Ok,
    /// The database was written by a newer truebench (its version): never written here.
    TooNew(i64),
}

/// Bring the schema to LATEST. The version is read and every step applied inside one
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
        tx.execute_batch(step)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    tx.commit()?;
    Ok(Migrated::Ok)
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
}
