//! Error kinds that decide the exit code: bad usage or bad input (exit 2, nothing written),
//! an interrupted run (exit 130), a closed stdout pipe (exit 0, quietly), a recorded
//! command's own exit status (passed on), and everything else (exit 1). And the one line
//! an error is printed as.

use std::fmt;

/// Bad usage or bad input: the command was refused before it changed anything.
/// Raised with `anyhow::Error::new(UsageError::new(..))` so `main` can map it to exit 2.
#[derive(Debug)]
pub struct UsageError {
    pub message: String,
    pub hint: Option<String>,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        UsageError {
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, " (hint: {h})")?;
        }
        Ok(())
    }
}

impl std::error::Error for UsageError {}

/// Shorthand: an `anyhow::Error` that exits 2.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError::new(message))
}

/// Shorthand: an `anyhow::Error` that exits 2 and carries a hint.
pub fn usage_hint(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError::new(message).with_hint(hint))
}

/// The run was stopped by Ctrl-C; finished results were kept. Exit 130.
#[derive(Debug)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interrupted; finished results were kept")
    }
}

impl std::error::Error for Interrupted {}

/// `record -- COMMAND`: the command ended by itself with this status, which truebench
/// passes on as its own exit code (128 + N for death by signal N), as `time` does.
#[derive(Debug)]
pub struct CommandExit(pub i32);

impl fmt::Display for CommandExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the recorded command exited with status {}", self.0)
    }
}

impl std::error::Error for CommandExit {}

/// Exit codes (docs/architecture.md, Conventions).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 130;

/// The exit code an error maps to.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if err.downcast_ref::<UsageError>().is_some() {
        EXIT_USAGE
    } else if err.downcast_ref::<Interrupted>().is_some() {
        EXIT_INTERRUPTED
    } else if err.downcast_ref::<crate::stdout::StdoutClosed>().is_some() {
        EXIT_OK
    } else if let Some(CommandExit(code)) = err.downcast_ref::<CommandExit>() {
        *code
    } else {
        EXIT_FAILED
    }
}

/// The longest error line printed, in characters.
pub const MAX_ERROR_CHARS: usize = 600;

/// The error and its causes on one line, safe to print on a terminal: a line break is a
/// space, any other control character (an escape sequence in an imported document's value,
/// a run id) is shown escaped (`\u001b`, as standard output shows it), never sent; past [`MAX_ERROR_CHARS`] the middle
/// is left out, saying how much (a 100 kB value echoed back by a validator), keeping the
/// start (what failed) and the end (where in the document).
pub fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for c in format!("{e:#}").chars() {
        match c {
            '\n' | '\r' | '\t' => line.push(' '),
            c if !crate::stdout::identifier_char(c) => line.push_str(&crate::stdout::escaped(c)),
            c => line.push(c),
        }
    }
    let n = line.chars().count();
    if n <= MAX_ERROR_CHARS {
        return line;
    }
    let (head, tail) = (MAX_ERROR_CHARS * 2 / 3, MAX_ERROR_CHARS / 4);
    let start: String = line.chars().take(head).collect();
    let end: String = line.chars().skip(n - tail).collect();
    format!(
        "{start} [... {} characters left out ...] {end}",
        n - head - tail
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_one_short_line_without_control_characters() {
        let e = anyhow::anyhow!("run 'a\u{1b}]0;x\u{7}b' refused").context("line one\nline two");
        let line = one_line(&e);
        assert_eq!(
            line,
            "line one line two: run 'a\\u001b]0;x\\u0007b' refused"
        );
        let long = anyhow::anyhow!("\"{}\" does not match at '/tags/k'", "v".repeat(100_000));
        let line = one_line(&long);
        assert!(
            line.chars().count() < MAX_ERROR_CHARS + 60,
            "{}",
            line.len()
        );
        assert!(line.ends_with("at '/tags/k'"), "{line}");
        assert!(line.contains("characters left out"), "{line}");
        let short = anyhow::anyhow!("no run 'x'");
        assert_eq!(one_line(&short), "no run 'x'");
    }
}
