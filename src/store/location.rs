//! Where the results store is: a SQLite file (a path) or a PostgreSQL database (a
//! `postgresql://` or `postgres://` URL), from `--db` or `TRUEBENCH_DB`. A location is
//! shown without its password, always: the password never reaches an error, a report or
//! the history.

use crate::error::usage_hint;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// A results store's place.
#[derive(Clone, Debug)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(Box<PgTarget>),
}

/// How TLS is used, as libpq's `sslmode` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsMode {
    /// Never.
    Disable,
    /// Only when the server insists (treated as `prefer`: tried, not required).
    Allow,
    /// Tried first, plain if the server does not offer it (libpq's default).
    Prefer,
    /// Required, the certificate not checked (libpq: encryption only).
    Require,
    /// Required, the certificate checked against the trusted roots, not the host name.
    VerifyCa,
    /// Required, the certificate and the host name checked.
    VerifyFull,
}

impl TlsMode {
    fn parse(s: &str) -> Option<TlsMode> {
        Some(match s {
            "disable" => TlsMode::Disable,
            "allow" => TlsMode::Allow,
            "prefer" => TlsMode::Prefer,
            "require" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" => TlsMode::VerifyFull,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Allow => "allow",
            TlsMode::Prefer => "prefer",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }
}

/// A PostgreSQL database: the client configuration (which may hold a password, never
/// shown), the TLS wish, and a trusted root certificate file when the URL names one.
#[derive(Clone)]
pub struct PgTarget {
    pub config: tokio_postgres::Config,
    pub tls: TlsMode,
    pub root_cert: Option<PathBuf>,
}

impl fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgTarget({self})")
    }
}

impl PgTarget {
    /// The user name connected as.
    pub fn user(&self) -> &str {
        self.config.get_user().unwrap_or_default()
    }

    /// The database name.
    pub fn dbname(&self) -> &str {
        self.config.get_dbname().unwrap_or_default()
    }

    /// `host:port` (or the socket directory) of the first server, for messages.
    pub fn server(&self) -> String {
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        match self.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) if h.contains(':') => {
                format!("[{h}]:{port}")
            }
            Some(tokio_postgres::config::Host::Tcp(h)) => format!("{h}:{port}"),
            Some(tokio_postgres::config::Host::Unix(p)) => format!("{}:{port}", p.display()),
            None => format!("localhost:{port}"),
        }
    }

    /// The password the configuration holds (from the URL, PGPASSWORD or ~/.pgpass), to be
    /// kept out of every message.
    pub fn password(&self) -> Option<String> {
        self.config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
    }
}

impl fmt::Display for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "postgresql://{}@{}/{}",
            self.user(),
            self.server(),
            self.dbname()
        )?;
        if self.tls != TlsMode::Prefer {
            write!(f, "?sslmode={}", self.tls.name())?;
        }
        Ok(())
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres(t) => write!(f, "{t}"),
        }
    }
}

impl Location {
    /// The location as `--db` or `TRUEBENCH_DB` gives it: a URL of scheme `postgresql` or
    /// `postgres` is a PostgreSQL database, a URL of any other scheme (`mysql://`,
    /// `file://`) is refused (it was taken as a file path, and its directories created),
    /// anything else is a SQLite file path.
    pub fn parse(arg: &OsStr) -> anyhow::Result<Location> {
        match arg.to_str() {
            Some(s) if is_postgres_url(s) => Ok(Location::Postgres(Box::new(parse_url(s)?))),
            Some(s) if url_scheme(s).is_some() => Err(usage_hint(
                format!(
                    "--db {}: truebench stores in SQLite files and PostgreSQL, not {}://",
                    crate::redact::url(s),
                    url_scheme(s).unwrap_or_default()
                ),
                "give a file path, or postgresql://USER@HOST[:PORT]/DATABASE",
            )),
            _ => Ok(Location::Sqlite(PathBuf::from(arg))),
        }
    }

    /// The location for messages (as a path's `display()`): never with a password.
    pub fn display(&self) -> &Self {
        self
    }

    /// The SQLite file, if this is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Location::Sqlite(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

/// The scheme of a URL (`mysql` of `mysql://host/db`): letters, digits, `+-.`, then `://`.
fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

fn is_postgres_url(s: &str) -> bool {
    let lower = s.get(..13).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("postgresql://") || lower.starts_with("postgres://")
}

fn url_error(url: &str, why: impl fmt::Display) -> anyhow::Error {
    usage_hint(
        format!(
            "--db {} is not a PostgreSQL URL: {why}",
            crate::redact::url(url)
        ),
        "write postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=require]",
    )
}

/// The URL without its `#fragment`: from the first `#` after the user information (the
/// last `@`), so a password holding an unencoded `#` is not cut.
fn without_fragment(url: &str) -> &str {
    let from = url.rfind('@').map_or(0, |at| at + 1);
    match url[from..].find('#') {
        Some(i) => &url[..from + i],
        None => url,
    }
}

/// Parse a `postgresql://` URL: the client parses it, except `sslmode` (libpq's six
/// values; the client knows three) and `sslrootcert`, taken here. A missing user is the
/// login name (`PGUSER` first), a missing host `localhost`; a missing password is looked
/// up in `PGPASSWORD`, then the password file (`PGPASSFILE` or `~/.pgpass`).
fn parse_url(url: &str) -> anyhow::Result<PgTarget> {
    // The client knows the scheme in lower case only, and no fragment (it became part of
    // the database name, and was echoed back): dropped, as docs/safety.md says.
    let lowered = match without_fragment(url).split_once("://") {
        Some((_, rest)) => format!("postgresql://{rest}"),
        None => without_fragment(url).to_string(),
    };
    let (base, query) = match lowered.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (lowered.as_str(), None),
    };
    let mut tls = TlsMode::Prefer;
    let mut root_cert = None;
    let mut kept = Vec::new();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(v)
            .decode_utf8()
            .map_err(|_| url_error(url, format!("the value of {k} is not UTF-8")))?;
        match k {
            "sslmode" => {
                tls = TlsMode::parse(&value).ok_or_else(|| {
                    url_error(
                        url,
                        format!(
                            "sslmode '{value}' is not one of disable, allow, prefer, require, verify-ca, verify-full"
                        ),
                    )
                })?
            }
            "sslrootcert" => root_cert = Some(PathBuf::from(value.into_owned())),
            "password" => {
                return Err(url_error(
                    url,
                    "a password belongs in USER:PASSWORD@, ~/.pgpass or PGPASSWORD, not in the query",
                ))
            }
            _ => kept.push(pair),
        }
    }
    let rebuilt = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let mut config: tokio_postgres::Config =
        rebuilt.parse().map_err(|e: tokio_postgres::Error| {
            let why = std::error::Error::source(&e).map_or(e.to_string(), |c| c.to_string());
            url_error(url, why)
        })?;
    config.ssl_mode(match tls {
        TlsMode::Disable => tokio_postgres::config::SslMode::Disable,
        TlsMode::Allow | TlsMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull => {
            tokio_postgres::config::SslMode::Require
        }
    });
    if config.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(|| {
                nix::unistd::User::from_uid(nix::unistd::getuid())
                    .ok()
                    .flatten()
                    .map(|u| u.name)
            })
            .ok_or_else(|| url_error(url, "no user name, and the login name is unknown"))?;
        config.user(&user);
    }
    // A host name never holds '@': one did when the password held an unencoded '@' (the
    // client ends the password at the first one), and the rest of it would be shown.
    if config
        .get_hosts()
        .iter()
        .any(|h| matches!(h, tokio_postgres::config::Host::Tcp(h) if h.contains('@')))
    {
        return Err(url_error(
            url,
            "the user name or password holds an unencoded '@' (write it %40)",
        ));
    }
    if config.get_hosts().is_empty() {
        config.host("localhost");
    }
    if config.get_dbname().is_none() {
        let user = config.get_user().unwrap_or_default().to_string();
        config.dbname(&user);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    config.application_name("truebench");
    let mut target = PgTarget {
        config,
        tls,
        root_cert,
    };
    if target.config.get_password().is_none() {
        let host = match target.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            Some(tokio_postgres::config::Host::Unix(_)) | None => "localhost".to_string(),
        };
        let port = target
            .config
            .get_ports()
            .first()
            .copied()
            .unwrap_or(5432)
            .to_string();
        let want: [&str; 4] = [&host, &port, target.dbname(), target.user()];
        if let Some(p) = super::pgpass::lookup(&want) {
            target.config.password(p);
        }
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(url: &str) -> PgTarget {
        match Location::parse(OsStr::new(url)).unwrap() {
            Location::Postgres(t) => *t,
            Location::Sqlite(p) => panic!("{url} taken as the path {}", p.display()),
        }
    }

    #[test]
    fn urls_select_postgresql_and_paths_sqlite() {
        assert!(matches!(
            Location::parse(OsStr::new("/tmp/x.db")).unwrap(),
            Location::Sqlite(_)
        ));
        assert!(matches!(
            Location::parse(OsStr::new("postgres:/x")).unwrap(),
            Location::Sqlite(_)
        ));
        assert!(matches!(
            Location::parse(OsStr::new("./mysql://x")).unwrap(),
            Location::Sqlite(_)
        ));
        for url in [
            "mysql://ann:Zq9secret@db/bench",
            "file:///tmp/x.db",
            "HTTP://x/y",
        ] {
            let e = Location::parse(OsStr::new(url)).unwrap_err().to_string();
            assert!(e.contains("not "), "{url}: {e}");
            assert!(!e.contains("Zq9secret"), "{e}");
        }
        let t = pg("postgresql://ann@db.example:5433/bench?sslmode=verify-full");
        assert_eq!(t.user(), "ann");
        assert_eq!(t.server(), "db.example:5433");
        assert_eq!(t.dbname(), "bench");
        assert_eq!(t.tls, TlsMode::VerifyFull);
        assert_eq!(
            t.to_string(),
            "postgresql://ann@db.example:5433/bench?sslmode=verify-full"
        );
        let t = pg("postgres://ann@db/bench");
        assert_eq!(t.server(), "db:5432");
        assert_eq!(t.tls, TlsMode::Prefer);
        // The scheme in capitals, with no query, is the same URL.
        assert_eq!(pg("POSTGRES://ann@db/bench").dbname(), "bench");
    }

    /// Issue 37 item 5: a `#fragment` became part of the database name (`bench#x`), and
    /// was echoed back; it is dropped, as docs/safety.md says, after the database name
    /// and after the query alike; a `#` inside the password is not a fragment.
    #[test]
    fn a_fragment_is_dropped() {
        for (url, db, tls) in [
            ("postgresql://ann@db/bench#frag", "bench", TlsMode::Prefer),
            ("postgresql://ann@db/bench#", "bench", TlsMode::Prefer),
            (
                "postgresql://ann@db/bench?sslmode=require#x",
                "bench",
                TlsMode::Require,
            ),
            ("postgresql://ann@db#frag", "ann", TlsMode::Prefer),
        ] {
            let t = pg(url);
            assert_eq!((t.dbname(), t.tls), (db, tls), "{url}");
            assert!(!t.to_string().contains('#'), "{url}: {t}");
            assert_eq!(t.server(), "db:5432", "{url}");
        }
        let t = pg("postgresql://ann:Zq9#secret@db/bench#frag");
        assert_eq!(t.password().as_deref(), Some("Zq9#secret"));
        assert_eq!(t.dbname(), "bench");
    }

    #[test]
    fn a_password_is_never_shown() {
        let t = pg("postgresql://ann:Zq9%40secret@db/bench?sslmode=require");
        assert_eq!(t.password().as_deref(), Some("Zq9@secret"));
        let shown = format!("{t} {t:?} {}", Location::Postgres(Box::new(t.clone())));
        assert!(!shown.contains("Zq9"), "{shown}");
        for bad in [
            "postgresql://ann:Zq9@secret@db/bench",
            "postgresql://ann:Zq9/s@cr?t@db/bench",
            "postgresql://ann:Zq9secret@db/bench?sslmode=sometimes",
            "postgresql://ann:Zq9secret@db:notaport/bench",
            "postgresql://ann@db/bench?password=Zq9secret",
        ] {
            let e = format!("{:#}", Location::parse(OsStr::new(bad)).unwrap_err());
            assert!(!e.contains("Zq9"), "{e}");
            assert!(e.contains("is not a PostgreSQL URL"), "{e}");
        }
    }
}
