//! The results store on both backends: a SQLite file and a real PostgreSQL server (started
//! per test from the Debian package, tests/common/pg.rs). The same documents give the same
//! answers and the same command output from either; PostgreSQL's own cases: concurrent
//! importers, credentials never shown, a server down, a wrong password, a database without
//! the schema or of a newer one, TLS, and a finished run kept when its store fails.

mod common;

use common::pg::{PgServer, PASSWORD};
use common::TestEnv;
use serde_json::Value;
use std::ffi::OsStr;
use truebench::result::RunDocument;
use truebench::store::{Location, Store};

/// A real document (the timers fixture) made into another run: id, host, start, tags.
fn doc(id: &str, host: &str, started: &str, tags: &[(&str, &str)]) -> RunDocument {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/documents/timers.json"
    ))
    .unwrap();
    let mut d: RunDocument = serde_json::from_str(&text).unwrap();
    d.run_id = id.into();
    d.host = Some(host.into());
    d.started_at = started.into();
    d.tags = tags
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    d
}

/// Four runs of three hosts, one with no host, tagged two ways.
fn documents() -> Vec<RunDocument> {
    let mut v = vec![
        doc(
            "r-a1",
            "alpha",
            "2026-11-01T10:00:00.000Z",
            &[("team", "db")],
        ),
        doc(
            "r-b1",
            "beta",
            "2026-11-01T11:00:00.000Z",
            &[("team", "db"), ("rack", "7")],
        ),
        doc(
            "r-a2",
            "alpha",
            "2026-11-02T09:00:00.000Z",
            &[("team", "web")],
        ),
        doc("r-c1", "gamma", "2026-11-01T12:00:00.000Z", &[]),
        // The same start as r-a2: insertion order breaks the tie, on both backends.
        doc("r-z9", "zeta", "2026-11-02T09:00:00.000Z", &[]),
    ];
    let mut hostless = doc("r-n1", "x", "2026-10-01T00:00:00.000Z", &[("rack", "7")]);
    hostless.host = None;
    v.push(hostless);
    v
}

/// Both backends, fresh: a SQLite file in `env` and a new database on `pg`.
fn backends(env: &TestEnv, pg: &PgServer) -> [Location; 2] {
    [
        Location::Sqlite(env.db()),
        Location::parse(OsStr::new(&pg.database("lib"))).unwrap(),
    ]
}

fn ids(runs: &[truebench::store::RunSummary]) -> Vec<&str> {
    runs.iter().map(|r| r.run_id.as_str()).collect()
}

fn tag(k: &str, v: &str) -> (String, String) {
    (k.into(), v.into())
}

#[test]
fn both_backends_store_list_filter_and_find_runs_alike() {
    let env = TestEnv::new();
    let pg = PgServer::start();
    let mut answers = Vec::new();
    for at in backends(&env, &pg) {
        let mut store = Store::open_rw(&at).unwrap();
        // The first alone, the others in one batch (bulk import), in their order.
        let docs = documents();
        store.insert(&docs[0]).unwrap();
        store
            .insert_batch(&docs[1..].iter().collect::<Vec<_>>())
            .unwrap();
        assert_eq!(store.stored(&["r-a1", "r-a", "r-z9"]).unwrap().len(), 2);
        assert!(store.stored(&["r-a1"]).unwrap() == ["r-a1"]);
        let dup = store.insert(&documents()[0]).unwrap_err();
        assert!(format!("{dup:#}").contains("r-a1"), "{at}: {dup:#}");
        drop(store);

        let store = Store::open_ro(&at).unwrap().unwrap();
        let all = store.list(50).unwrap();
        assert_eq!(
            ids(&all),
            ["r-z9", "r-a2", "r-c1", "r-b1", "r-a1", "r-n1"],
            "{at}: newest first, ties in insertion order, newest inserted first"
        );
        assert_eq!(all[0].results, documents()[0].results.len());
        assert_eq!(all[0].suites, ["timers"]);
        assert_eq!(ids(&store.list(2).unwrap()), ["r-z9", "r-a2"]);
        assert_eq!(
            ids(&store.list_filtered(50, &[tag("team", "db")]).unwrap()),
            ["r-b1", "r-a1"]
        );
        assert_eq!(
            ids(&store
                .list_filtered(50, &[tag("team", "db"), tag("rack", "7")])
                .unwrap()),
            ["r-b1"]
        );
        assert_eq!(
            ids(&store.list_filtered(50, &[tag("rack", "7")]).unwrap()),
            ["r-b1", "r-n1"]
        );
        assert!(store
            .list_filtered(50, &[tag("team", "ops")])
            .unwrap()
            .is_empty());
        let latest = store.latest_per_host().unwrap();
        assert_eq!(
            ids(&latest),
            ["r-a2", "r-b1", "r-c1", "r-z9"],
            "{at}: one run per named host, by host"
        );
        assert_eq!(store.get("latest").unwrap().run_id, "r-z9");
        assert_eq!(store.get("r-c").unwrap().run_id, "r-c1");
        assert_eq!(
            store.get("R-C").unwrap().run_id,
            "r-c1",
            "{at}: prefix case"
        );
        let got = store.get("r-b1").unwrap();
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&documents()[1]).unwrap(),
            "{at}: the document comes back whole"
        );
        let many = store
            .get_many(&["r-c1".to_string(), "r-a1".to_string()])
            .unwrap();
        assert_eq!(
            many.iter().map(|d| d.run_id.as_str()).collect::<Vec<_>>(),
            ["r-c1", "r-a1"],
            "{at}: in the order asked"
        );
        let missing = format!(
            "{:#}",
            store
                .get_many(&["r-c1".to_string(), "r-c".to_string()])
                .unwrap_err()
        );
        assert!(missing.contains("no run 'r-c'"), "{at}: {missing}");
        let amb = format!("{:#}", store.get("r-a").unwrap_err());
        assert!(amb.contains("ambiguous (2 runs match)"), "{at}: {amb}");
        let none = format!("{:#}", store.get("r-q").unwrap_err());
        assert!(none.contains("no run 'r-q'"), "{at}: {none}");
        // LIKE's wildcards in a reference are plain characters.
        assert!(store.get("r_a1").is_err());
        answers.push((all, latest));
    }
    assert_eq!(answers[0], answers[1], "SQLite and PostgreSQL answer alike");
}

/// Run the CLI against `at`; (exit code, stdout, stderr).
fn cli(env: &TestEnv, at: &str, args: &[&str]) -> (i32, String, String) {
    let out = env
        .cmd()
        .env("TRUEBENCH_DB", at)
        .env_remove("PGPASSWORD")
        .env("PGPASSFILE", "/nonexistent")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(env: &TestEnv, at: &str, args: &[&str]) -> String {
    let (code, out, err) = cli(env, at, args);
    assert_eq!(code, 0, "{args:?} on {at}: {err}");
    out
}

/// Write the documents as files to import.
fn files(env: &TestEnv, docs: &[RunDocument]) -> Vec<String> {
    docs.iter()
        .map(|d| {
            env.file(
                &format!("{}.json", d.run_id),
                &serde_json::to_string_pretty(d).unwrap(),
            )
            .display()
            .to_string()
        })
        .collect()
}

#[test]
fn history_show_compare_report_and_export_print_the_same_from_either_backend() {
    let env = TestEnv::new();
    let pg = PgServer::start();
    let sqlite = env.db().display().to_string();
    let postgres = pg.database("cli");
    let mut docs = documents();
    // A second real document kind, so compare sees two suites' worth of results.
    let ctx: RunDocument = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/documents/ctx.json"
        ))
        .unwrap(),
    )
    .unwrap();
    docs.push(ctx.clone());
    let paths = files(&env, &docs);
    for at in [&sqlite, &postgres] {
        for p in &paths {
            let out = ok(&env, at, &["import", p]);
            assert!(out.starts_with("imported run "), "{out}");
            assert!(!out.contains(PASSWORD), "{out}");
        }
    }
    let commands: Vec<Vec<&str>> = vec![
        vec!["history"],
        vec!["history", "--json"],
        vec!["history", "--limit", "2"],
        vec!["show", "latest"],
        vec!["show", "r-b1", "--all"],
        vec!["show", "r-a2", "--json"],
        vec!["export", "r-c1"],
        vec!["export", &ctx.run_id],
        vec!["compare", "r-a1", "r-a2"],
        vec!["compare", "r-a1", "r-b1", "--json"],
        vec!["report", "r-a1", "r-b1"],
    ];
    for args in commands {
        let a = ok(&env, &sqlite, &args);
        let b = ok(&env, &postgres, &args);
        assert!(!a.is_empty(), "{args:?} printed nothing");
        assert_eq!(a, b, "{args:?}: SQLite and PostgreSQL differ");
        assert!(!b.contains(PASSWORD), "{args:?} shows the password");
    }
}

#[test]
fn sixteen_concurrent_imports_store_sixteen_whole_runs() {
    let env = TestEnv::new();
    let pg = PgServer::start();
    // A new database: the importers also race to create the schema.
    let url = pg.database("fleet");
    let docs: Vec<RunDocument> = (0..16)
        .map(|i| {
            doc(
                &format!("fleet-{i:02}"),
                &format!("host{i:02}"),
                &format!("2026-11-03T10:00:{i:02}.000Z"),
                &[("fleet", "f1")],
            )
        })
        .collect();
    let paths = files(&env, &docs);
    let paths: Vec<_> = paths.iter().map(std::path::PathBuf::from).collect();
    env.imports_at_once(OsStr::new(&url), &paths);
    let store = Store::open_ro(&Location::parse(OsStr::new(&url)).unwrap())
        .unwrap()
        .unwrap();
    let runs = store.list_filtered(100, &[tag("fleet", "f1")]).unwrap();
    assert_eq!(runs.len(), 16);
    assert!(runs.iter().all(|r| r.results == docs[0].results.len()));
    assert_eq!(store.latest_per_host().unwrap().len(), 16);
    let mut c = pg.client("fleet");
    let row = c
        .query_one(
            "SELECT (SELECT count(*) FROM truebench.runs), (SELECT count(*) FROM truebench.results),
                    (SELECT count(*) FROM truebench.run_tags), (SELECT count(*) FROM truebench.schema_version)",
            &[],
        )
        .unwrap();
    let counts: [i64; 4] = [row.get(0), row.get(1), row.get(2), row.get(3)];
    assert_eq!(
        counts,
        [16, 16 * docs[0].results.len() as i64, 16, 1],
        "every run whole, the schema made once"
    );
    dashboard_queries_run(&mut c);
}

/// The SQL blocks of docs/store.md's dashboard section run on a real store and return
/// rows (Grafana's `$__timeFilter(col)` macro replaced by `true`).
fn dashboard_queries_run(c: &mut common::pg::Client) {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/store.md")).unwrap();
    let section = doc.split("## Queries for a dashboard").nth(1).unwrap();
    let queries: Vec<&str> = section
        .split("```sql")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(queries.len() >= 3, "{queries:?}");
    for q in queries {
        let q = q.replace("$__timeFilter(r.started)", "true");
        let rows = c
            .query(q.as_str(), &[])
            .unwrap_or_else(|e| panic!("{q}: {e:?}"));
        if !q.contains("t.value = 'db'") && !q.contains("1.1 *") {
            assert!(!rows.is_empty(), "{q} returned no rows");
        }
    }
}

/// The one `error:` line of a failed command, checked for the exit code and the password.
fn failed(env: &TestEnv, at: &str, args: &[&str], code: i32) -> String {
    let (got, out, err) = cli(env, at, args);
    assert_eq!(got, code, "{args:?} on {at}: exit {got}, stderr {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(!err.contains(PASSWORD) && !out.contains(PASSWORD), "{err}");
    err
}

#[test]
fn server_down_wrong_password_no_schema_and_newer_schema_are_one_line_errors() {
    let env = TestEnv::new();
    let mut pg = PgServer::start();
    let url = pg.database("errs");
    let file = files(&env, &documents()[..1]).remove(0);

    // A database without the truebench schema: reading says what to do, writing creates it.
    let err = failed(&env, &url, &["history"], 2);
    assert!(err.contains("has no truebench schema yet"), "{err}");
    assert!(err.contains("truebench import FILE"), "{err}");
    ok(&env, &url, &["import", &file]);
    ok(&env, &url, &["show", "r-a1"]);

    // A wrong password (given in the URL): exit 2, the password not shown.
    let wrong = url.replace(PASSWORD, "Wr0ng-Secret-77");
    for args in [&["history"][..], &["import", &file]] {
        let err = failed(&env, &wrong, args, 2);
        assert!(err.contains("refused user 'tb'"), "{err}");
        assert!(!err.contains("Wr0ng-Secret-77"), "{err}");
    }
    // A database that does not exist.
    let err = failed(&env, &url.replace("/errs", "/nosuch"), &["history"], 2);
    assert!(err.contains("\"nosuch\" does not exist"), "{err}");
    // A password that is not given at all.
    let err = failed(&env, &pg.url_without_password("errs"), &["history"], 2);
    assert!(err.contains("asks for a password"), "{err}");

    // A database of a newer schema: refused for writing and reading, nothing changed.
    let mut c = pg.client("errs");
    let newer = truebench::store::SCHEMA_VERSION as i32 + 1;
    c.execute(
        "UPDATE truebench.schema_version SET version = $1",
        &[&newer],
    )
    .unwrap();
    let other = files(&env, &documents()[1..2]).remove(0);
    for args in [&["import", &other][..], &["history"]] {
        let err = failed(&env, &url, args, 2);
        assert!(
            err.contains(&format!("schema version {newer}, newer")),
            "{err}"
        );
    }
    let n: i64 = c
        .query_one("SELECT count(*) FROM truebench.runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    drop(c);

    // The server down: exit 1 (try again later), one line naming the server.
    pg.stop();
    for args in [&["history"][..], &["import", &other], &["show", "latest"]] {
        let err = failed(&env, &url, args, 1);
        assert!(err.contains("cannot reach the PostgreSQL server"), "{err}");
        assert!(err.contains(&format!("127.0.0.1:{}", pg.port)), "{err}");
    }
    // A URL that does not parse: exit 2, nothing of the password shown.
    let err = failed(
        &env,
        &format!("postgresql://tb:{PASSWORD}@127.0.0.1:99999/errs"),
        &["history"],
        2,
    );
    assert!(err.contains("is not a PostgreSQL URL"), "{err}");
}

#[test]
fn the_password_comes_from_pgpassword_or_a_private_pgpass_file() {
    let env = TestEnv::new();
    let pg = PgServer::start();
    pg.database("creds");
    let url = pg.url_without_password("creds");
    let file = files(&env, &documents()[..1]).remove(0);
    let run = |envs: &[(&str, &str)], args: &[&str]| {
        let mut c = env.cmd();
        c.env("TRUEBENCH_DB", &url).env_remove("PGPASSWORD");
        c.env("PGPASSFILE", "/nonexistent");
        for (k, v) in envs {
            c.env(k, v);
        }
        c.args(args).output().unwrap()
    };
    let out = run(&[("PGPASSWORD", PASSWORD)], &["import", &file]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let pgpass = env.file(
        "pgpass",
        &format!("# truebench\n127.0.0.1:{}:creds:tb:{PASSWORD}\n", pg.port),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let pgpass = pgpass.display().to_string();
    let out = run(&[("PGPASSFILE", &pgpass)], &["history"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("r-a1"));

    // A password file others can read is ignored, as libpq does.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = run(&[("PGPASSFILE", &pgpass)], &["history"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("asks for a password"), "{err}");
}

#[test]
fn tls_is_used_when_the_url_asks_and_refused_when_the_server_cannot() {
    let env = TestEnv::new();
    let pg = PgServer::start_tls();
    let url = pg.database("tls");
    let file = files(&env, &documents()[..1]).remove(0);
    ok(&env, &format!("{url}?sslmode=require"), &["import", &file]);
    // The server turns away connections without TLS (pg_hba hostnossl reject).
    let err = failed(&env, &format!("{url}?sslmode=disable"), &["history"], 2);
    assert!(err.contains("no encryption"), "{err}");
    let cert = pg.certificate().display().to_string();
    // The self-signed certificate is trusted only when named; its name is localhost.
    let err = failed(&env, &format!("{url}?sslmode=verify-ca"), &["history"], 2);
    assert!(err.contains("sslmode"), "{err}");
    let verified = format!("{url}?sslmode=verify-ca&sslrootcert={cert}");
    assert!(ok(&env, &verified, &["history"]).contains("r-a1"));
    let full = format!(
        "{}?sslmode=verify-full&sslrootcert={cert}",
        url.replace("127.0.0.1", "localhost")
    );
    assert!(ok(&env, &full, &["history"]).contains("r-a1"));

    // A server without TLS and a URL that requires it: exit 2, one line.
    let plain = PgServer::start();
    let url = plain.database("tls");
    let err = failed(&env, &format!("{url}?sslmode=require"), &["history"], 2);
    assert!(err.contains("TLS"), "{err}");
}

#[test]
fn a_run_whose_postgresql_store_fails_at_the_end_is_kept_in_a_file() {
    let env = TestEnv::new();
    let pg = PgServer::start();
    let url = pg.database("spill");
    // A recording of 3 s: the database is opened (schema made) before it measures; the
    // schema is then dropped under it, so storing at the end fails.
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .args([
            "--db",
            &url,
            "record",
            "--interval",
            "0.5",
            "--duration",
            "3",
        ])
        .env("TRUEBENCH_LOCK", env.lock())
        .current_dir(env.dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut c = pg.client("spill");
    let t0 = std::time::Instant::now();
    loop {
        let opened: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'truebench' AND state = 'idle'
                   AND datname = 'spill' AND to_regclass('truebench.runs') IS NOT NULL",
                &[],
            )
            .unwrap()
            .get(0);
        if opened > 0 {
            break;
        }
        assert!(t0.elapsed().as_secs() < 20, "record never opened the store");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    c.batch_execute("DROP SCHEMA truebench CASCADE").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("the run was kept in"), "{line}");
    assert!(!line.contains(PASSWORD), "{line}");
    let path = line
        .split("the run was kept in ")
        .nth(1)
        .and_then(|r| r.split(" (").next())
        .unwrap();
    assert_eq!(
        std::path::Path::new(path).parent().unwrap(),
        env.dir.path(),
        "kept in the current directory"
    );
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    truebench::result::validate(&kept).unwrap();
    assert_eq!(kept["suites"][0], "record");
}

#[test]
fn a_run_of_added_rounds_is_never_a_hosts_latest() {
    // `compare --precision` stores the rounds it adds as a run of a few rows tagged
    // adds-to: the host's latest full run stays its latest for the fleet view.
    let env = TestEnv::new();
    let pg = PgServer::start();
    for at in backends(&env, &pg) {
        let mut store = Store::open_rw(&at).unwrap();
        let docs = documents();
        store
            .insert_batch(&docs.iter().collect::<Vec<_>>())
            .unwrap();
        let added = doc(
            "r-a3",
            "alpha",
            "2026-11-03T09:00:00.000Z",
            &[(truebench::result::tags::ADDS_TO, "r-a2")],
        );
        store.insert(&added).unwrap();
        let latest = store.latest_per_host().unwrap();
        assert_eq!(
            ids(&latest),
            ["r-a2", "r-b1", "r-c1", "r-z9"],
            "{at}: the added rounds' run is not alpha's latest"
        );
        assert_eq!(
            store.get("latest").unwrap().run_id,
            "r-a3",
            "{at}: still stored"
        );
    }
}
