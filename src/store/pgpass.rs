//! A PostgreSQL password not given in the URL: `PGPASSWORD`, else the first matching line
//! of the password file (`PGPASSFILE`, else `~/.pgpass`), as libpq reads them: lines
//! `host:port:database:user:password`, `*` matching anything, `\` escaping `:` and `\`,
//! `#` lines ignored, and a file that others may read ignored (as libpq does).

use std::path::PathBuf;

/// The password for a server and login, `[host, port, database, user]` (a Unix socket's
/// host being `localhost`, as libpq matches it), if the environment or the password file
/// has one.
pub fn lookup(want: &[&str; 4]) -> Option<String> {
    if let Some(p) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
        return Some(p);
    }
    let file = std::env::var_os("PGPASSFILE")
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let meta = std::fs::metadata(&file).ok()?;
    {
        use std::os::unix::fs::PermissionsExt;
        if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
            return None;
        }
    }
    let text = crate::bounded::read_file(&file, 1 << 20, None)
        .map(String::from_utf8)
        .ok()?
        .ok()?;
    find(&text, want)
}

/// The password of the first line whose four fields match `want`.
fn find(text: &str, want: &[&str; 4]) -> Option<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(want)
                .all(|(f, w)| f == "*" || f == w);
            matches.then(|| fields[4].clone())
        })
}

/// Fields split at unescaped `:`, with `\:` and `\\` unescaped.
fn split(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().unwrap().push(n);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_match_field_by_field_with_wildcards_and_escapes() {
        let text = "# comment\n\
                    db:5432:other:ann:wrong\n\
                    db:*:bench:ann:pa\\:ss\\\\word\n\
                    *:*:*:*:fallback\n";
        assert_eq!(
            find(text, &["db", "5432", "bench", "ann"]).as_deref(),
            Some("pa:ss\\word")
        );
        assert_eq!(
            find(text, &["db", "5432", "x", "bob"]).as_deref(),
            Some("fallback")
        );
        assert_eq!(
            find("db:5432:bench:ann\n", &["db", "5432", "bench", "ann"]),
            None
        );
    }
}
