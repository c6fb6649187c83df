//! Standard output without panics: `println!` panics when stdout is a closed pipe
//! (`truebench history | head -1`) or a full device (`>/dev/full`). Every command prints
//! through here instead: a closed pipe ends the command quietly (exit 0, the reader has
//! what it wanted), any other write error is one `error:` line and exit 1.

use crate::error::StdoutClosed;
use std::io::Write;

/// Write `text` to stdout and flush it.
pub fn write(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(map)
}

/// Write `text` and a newline.
pub fn line(text: &str) -> anyhow::Result<()> {
    write(&format!("{text}\n"))
}

/// One pretty JSON document and a newline.
pub fn json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    line(&serde_json::to_string_pretty(v)?)
}

fn map(e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        StdoutClosed.into()
    } else {
        anyhow::anyhow!("cannot write to standard output: {e}")
    }
}
