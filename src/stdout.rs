//! Standard output without panics: `println!` panics when stdout is a closed pipe
//! (`truebench history | head -1`) or a full device (`>/dev/full`). Every command prints
//! through here instead: a closed pipe ends the command quietly (exit 0, the reader has
//! what it wanted: [`StdoutClosed`], which `error::exit_code` maps to 0), any other write
//! error is one `error:` line and exit 1.
//!
//! Nothing printed here sends a control character other than a line break or a tab: the
//! texts of stored runs come from imported documents and from the machine (a host name, a
//! process name, a command line) and may hold an escape sequence that would retitle or
//! clear the terminal. Such a character is shown as a JSON escape (`\u001b`): readable in
//! text, and in JSON output (where serde_json leaves C1 controls and DEL raw) the same
//! character, so an exported document imports unchanged.

use std::io::Write;

/// Standard output was a pipe whose reader has gone (`| head -1`): the command ends
/// quietly with exit 0, printing nothing more.
#[derive(Debug)]
pub struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "standard output was closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// Whether `c` reorders the text around it (a Unicode bidirectional mark, embedding,
/// override or isolate: U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069): a right-to-
/// left override makes `exe.txt` read as `txt.exe`.
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `c` may appear in an identifier (a host name, a tag, a run id): no control
/// character and no bidirectional control. The one rule `import` and `--tag` apply.
pub fn identifier_char(c: char) -> bool {
    !c.is_control() && !is_bidi(c)
}

/// `text` as one field of a line (a command line, a name inside a sentence): every
/// control character, line breaks and tabs too, and every bidirectional control shown as
/// `\uXXXX`, so data never starts a line of its own.
pub fn field(text: &str) -> std::borrow::Cow<'_, str> {
    escape_where(text, |c| !identifier_char(c))
}

/// `text` with every control character but a line break and a tab, and every
/// bidirectional control, shown as `\uXXXX` (all are in the Basic Multilingual Plane).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    escape_where(text, |c| {
        (c.is_control() && c != '\n' && c != '\t') || is_bidi(c)
    })
}

fn escape_where(text: &str, unsafe_char: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(&unsafe_char) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match unsafe_char(c) {
            true => out.push_str(&escaped(c)),
            false => out.push(c),
        }
    }
    out.into()
}

/// A control or bidirectional character as the JSON escape that stands for it (`\u001b`).
pub fn escaped(c: char) -> String {
    format!("\\u{:04x}", c as u32)
}

/// Write `text` (see [`printable`]) to stdout and flush it.
pub fn write(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(printable(text).as_bytes())
        .and_then(|()| out.flush())
        .map_err(map)
}

/// Write `text` and a newline.
pub fn line(text: &str) -> anyhow::Result<()> {
    write(&format!("{text}\n"))
}

/// One indented JSON document (`json_text::pretty`) and a newline.
pub fn json<T: serde::Serialize>(v: &T) -> anyhow::Result<()> {
    line(&crate::json_text::pretty(v)?)
}

fn map(e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        StdoutClosed.into()
    } else {
        anyhow::anyhow!("cannot write to standard output: {e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_but_line_breaks_and_tabs_are_shown_escaped() {
        assert_eq!(printable("a\tb\nc"), "a\tb\nc");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
        // In JSON the escape is the same character: the value reads back unchanged.
        let raw = serde_json::to_string(&serde_json::json!({"host": "a\u{9b}b\u{7f}"})).unwrap();
        let back: serde_json::Value = serde_json::from_str(&printable(&raw)).unwrap();
        assert_eq!(back["host"], "a\u{9b}b\u{7f}");
        assert_eq!(
            printable("box\u{1b}]0;pwned\u{7} mono\rtonic \u{9b}2J"),
            "box\\u001b]0;pwned\\u0007 mono\\u000dtonic \\u009b2J"
        );
    }
}
