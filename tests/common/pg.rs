//! A real PostgreSQL server for a test, from the Debian package's binaries: `initdb` into a
//! temporary directory, listening on a free port of 127.0.0.1 (and a unix socket in that
//! directory), superuser `tb` with a password (scram-sha-256 over TCP). Stopped and its
//! directory removed when the guard is dropped, also when the test panics. As root, the
//! server runs as the unprivileged `postgres` user (initdb refuses root).

use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Error, Row};

/// The superuser's name and password.
pub const USER: &str = "tb";
pub const PASSWORD: &str = "Zq9-pw-Xk7v";

pub struct PgServer {
    dir: TempDir,
    bin: PathBuf,
    pub port: u16,
    running: bool,
}

/// The directory of `initdb` and `pg_ctl`: PATH, else the newest /usr/lib/postgresql/N/bin.
fn bin_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    {
        return p;
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).unwrap_or_else(|| {
        panic!("PostgreSQL server binaries (initdb, pg_ctl) not found: install the Debian package postgresql (scripts/test does)")
    })
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

impl PgServer {
    /// A fresh server; with `tls`, it also offers TLS with a self-signed certificate.
    pub fn start() -> PgServer {
        Self::start_with(false)
    }

    pub fn start_tls() -> PgServer {
        Self::start_with(true)
    }

    fn start_with(tls: bool) -> PgServer {
        let dir = tempfile::Builder::new()
            .prefix("truebench-pg-")
            .tempdir()
            .unwrap();
        let mut server = PgServer {
            bin: bin_dir(),
            port: 0,
            running: false,
            dir,
        };
        if is_root() {
            let pg = nix::unistd::User::from_name("postgres")
                .unwrap()
                .expect("the postgres user (made by the Debian package postgresql)");
            std::os::unix::fs::chown(server.dir.path(), Some(pg.uid.as_raw()), None).unwrap();
        }
        let pwfile = server.dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        server.chown(&pwfile);
        server.as_server(&[
            server.bin.join("initdb").to_str().unwrap(),
            "-D",
            server.data().to_str().unwrap(),
            "-U",
            USER,
            "--pwfile",
            pwfile.to_str().unwrap(),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-sync",
            "--no-instructions",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]);
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -k {} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60",
            server.dir.path().display()
        );
        if tls {
            // TLS only over TCP: a client that does not use it is turned away.
            server.make_certificate();
            options += " -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key";
            std::fs::write(
                server.data().join("pg_hba.conf"),
                "local all all trust\n\
                 hostssl all all 127.0.0.1/32 scram-sha-256\n\
                 hostnossl all all 127.0.0.1/32 reject\n",
            )
            .unwrap();
        }
        for attempt in 0..5 {
            server.port = super::free_port(); // the start retries on a clash
            let ok = server.try_as_server(&[
                server.bin.join("pg_ctl").to_str().unwrap(),
                "-D",
                server.data().to_str().unwrap(),
                "-l",
                server.dir.path().join("log").to_str().unwrap(),
                "-w",
                "-t",
                "30",
                "-o",
                &format!("{options} -p {}", server.port),
                "start",
            ]);
            if ok {
                server.running = true;
                return server;
            }
            eprintln!("pg start attempt {attempt} failed: {}", server.log());
        }
        panic!("PostgreSQL did not start: {}", server.log());
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    fn chown(&self, p: &Path) {
        if is_root() {
            let pg = nix::unistd::User::from_name("postgres").unwrap().unwrap();
            std::os::unix::fs::chown(p, Some(pg.uid.as_raw()), None).unwrap();
        }
    }

    /// Run a server command as the server's user; whether it succeeded.
    fn try_as_server(&self, argv: &[&str]) -> bool {
        let mut c = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).args(argv);
            c
        } else {
            let mut c = Command::new(argv[0]);
            c.args(&argv[1..]);
            c
        };
        let out = c.current_dir(self.dir.path()).output().unwrap();
        if !out.status.success() {
            eprintln!(
                "{argv:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out.status.success()
    }

    fn as_server(&self, argv: &[&str]) {
        assert!(self.try_as_server(argv), "{argv:?} failed");
    }

    /// A self-signed certificate for CN=localhost in the data directory.
    fn make_certificate(&self) {
        let data = self.data();
        let out = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args([
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost",
            ])
            .args(["-keyout", "server.key", "-out"])
            .arg("server.crt")
            .current_dir(&data)
            .output()
            .expect("openssl (Debian package openssl) makes the test certificate");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for f in ["server.key", "server.crt"] {
            let p = data.join(f);
            self.chown(&p);
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }

    /// The server's certificate (to trust with sslrootcert).
    pub fn certificate(&self) -> PathBuf {
        self.data().join("server.crt")
    }

    /// `postgresql://tb:PASSWORD@127.0.0.1:PORT/DB`.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/{db}",
            self.port
        )
    }

    /// The URL without the password (for PGPASSWORD and ~/.pgpass tests).
    pub fn url_without_password(&self, db: &str) -> String {
        format!("postgresql://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// A superuser connection to database `db` (through the unix socket).
    pub fn client(&self, db: &str) -> Client {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut config = tokio_postgres::Config::new();
        config
            .host_path(self.dir.path())
            .port(self.port)
            .user(USER)
            .dbname(db);
        let (client, connection) = rt.block_on(config.connect(tokio_postgres::NoTls)).unwrap();
        // Driven whenever the runtime runs, that is during each call of `Client`.
        rt.spawn(connection);
        Client { rt, client }
    }

    /// A new empty database; its URL.
    pub fn database(&self, name: &str) -> String {
        self.client("postgres")
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        self.url(name)
    }

    /// Stop the server now (a test of a server that went away).
    pub fn stop(&mut self) {
        if self.running {
            self.running = false;
            self.try_as_server(&[
                self.bin.join("pg_ctl").to_str().unwrap(),
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ]);
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A blocking PostgreSQL client for the tests: the library's tokio-postgres on a runtime of
/// its own, each call waited for.
pub struct Client {
    rt: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

impl Client {
    pub fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Error> {
        self.rt.block_on(self.client.query(sql, params))
    }

    pub fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, Error> {
        self.rt.block_on(self.client.query_one(sql, params))
    }

    pub fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Error> {
        self.rt.block_on(self.client.execute(sql, params))
    }

    pub fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        self.rt.block_on(self.client.batch_execute(sql))
    }
}
