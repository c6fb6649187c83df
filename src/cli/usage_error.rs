//! clap's refusals (an unknown option, a value out of range, a missing argument) as the
//! one `error: ... (hint: ...)` line every other refusal is: clap's own text spreads over
//! several lines (the message, tips, a usage block, a pointer to `--help`). And the
//! command clap parses with: a number option takes a negative value as a value, so
//! `--samples -1` is refused by its range, not taken for an unknown flag `-1`. And
//! `help --help` (or `help run -h`) is `help` (or `help run`): clap's `help` takes command
//! names only, and refused the flag as "unrecognized subcommand '--help'".

use crate::error::UsageError;
use clap::CommandFactory;

/// The command line's clap definition, with every option that takes a value taking a
/// negative number as one.
pub fn command() -> clap::Command {
    super::Cli::command().mut_subcommands(|s| {
        s.mut_args(|a| {
            if a.get_action().takes_values() && !a.is_positional() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
    })
}

/// `args` (the program name first) with `-h` and `--help` after the `help` command left
/// out: they ask for what `help` prints already.
pub fn help_flags_after_help(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let Some(at) = subcommand_at(&args[1.min(args.len())..]).map(|i| i + 1) else {
        return args;
    };
    if args[at] != "help" {
        return args;
    }
    let (head, tail) = args.split_at(at + 1);
    let rest = tail.iter().filter(|a| *a != "-h" && *a != "--help");
    head.iter().chain(rest).cloned().collect()
}

/// The one-line usage error a clap refusal of `args` (without the program name) is: its
/// message, its tips and the command whose `--help` lists the options as the hint.
pub fn from_clap(e: &clap::Error, args: &[std::ffi::OsString]) -> UsageError {
    one_line(&e.render().to_string(), subcommand(args))
}

/// The subcommand named on a command line, if any (`--db`'s value is not one).
fn subcommand(args: &[std::ffi::OsString]) -> Option<String> {
    subcommand_at(args).and_then(|i| args[i].to_str().map(str::to_string))
}

/// Where the subcommand (clap's `help` included) is in `args`, if anywhere.
fn subcommand_at(args: &[std::ffi::OsString]) -> Option<usize> {
    let cmd = command();
    let names: Vec<&str> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .flat_map(|s| std::iter::once(s.get_name()).chain(s.get_all_aliases()))
        .chain(["help"])
        .collect();
    let mut i = 0;
    while i < args.len() {
        match args[i].to_str() {
            Some("--db") => i += 1,
            Some("--") => break,
            Some(a) if names.contains(&a) => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// [`from_clap`] over clap's rendered text.
fn one_line(text: &str, sub: Option<String>) -> UsageError {
    let mut message = String::new();
    let mut tips = vec![];
    let mut in_message = true;
    for line in text.lines().map(str::trim) {
        if let Some(m) = line.strip_prefix("error: ") {
            message = m.to_string();
        } else if line.is_empty() {
            in_message = false;
        } else if let Some(tip) = line.strip_prefix("tip: ") {
            // "to pass '--frob' as a value, use '-- --frob'" misleads: no option of
            // truebench takes a value that starts with '-' but a number.
            if !tip.starts_with("to pass") {
                tips.push(tip.to_string());
            }
        } else if in_message {
            // The continuation of the message: the missing arguments, one per line.
            message.push(' ');
            message.push_str(line);
        }
    }
    let command = match sub {
        Some(s) => format!("truebench {s}"),
        None => "truebench".to_string(),
    };
    tips.push(format!("`{command} --help` lists the options"));
    UsageError::new(message).with_hint(tips.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(args: &[&str]) -> String {
        let e = command()
            .try_get_matches_from([&["truebench"], args].concat())
            .unwrap_err();
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        from_clap(&e, &args).to_string()
    }

    #[test]
    fn a_refusal_is_one_line_with_the_tip_and_where_help_is() {
        let e = refusal(&["run", "--samples", "-1"]);
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("invalid value '-1' for '--samples"), "{e}");
        assert!(
            e.ends_with("(hint: `truebench run --help` lists the options)"),
            "{e}"
        );
        let e = refusal(&["histroy"]);
        assert!(e.contains("similar") && e.contains("'history'"), "{e}");
        assert!(e.contains("`truebench --help`"), "{e}");
        let e = refusal(&["show"]);
        assert!(
            e.starts_with("the following required arguments were not provided: <RUN>"),
            "{e}"
        );
        let e = refusal(&["--db", "show", "run", "--frob"]);
        assert!(
            e.ends_with("(hint: `truebench run --help` lists the options)"),
            "{e}"
        );
        let e = refusal(&["list", "--frob"]);
        assert!(
            e.ends_with("(hint: `truebench list --help` lists the options)"),
            "{e}"
        );
        let e = refusal(&["help", "nosuch"]);
        assert!(e.starts_with("unrecognized subcommand 'nosuch'"), "{e}");
        let e = refusal(&["record", "--json", "--csv"]);
        assert!(e.contains("`truebench record --help`"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    /// `help --help` was "unrecognized subcommand '--help'": it is `help`, and
    /// `help run -h` is `help run`; a flag before `help` or of another command is kept.
    #[test]
    fn help_flags_after_help_ask_for_help() {
        let of = |args: &[&str]| -> Vec<String> {
            let args = [&["truebench"], args]
                .concat()
                .iter()
                .map(Into::into)
                .collect();
            help_flags_after_help(args)
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(of(&["help", "--help"]), ["truebench", "help"]);
        assert_eq!(
            of(&["--db", "x", "help", "run", "-h"]),
            ["truebench", "--db", "x", "help", "run"]
        );
        assert_eq!(
            of(&["--db", "help", "run", "-h"]),
            ["truebench", "--db", "help", "run", "-h"]
        );
        assert_eq!(of(&["run", "--help"]), ["truebench", "run", "--help"]);
        assert_eq!(of(&[]), ["truebench"]);
        let help = |args: &[&str]| {
            let e = command()
                .try_get_matches_from(help_flags_after_help(
                    [&["truebench"], args]
                        .concat()
                        .iter()
                        .map(Into::into)
                        .collect(),
                ))
                .unwrap_err();
            (e.kind(), e.use_stderr())
        };
        assert_eq!(
            help(&["help", "--help"]),
            (clap::error::ErrorKind::DisplayHelp, false)
        );
        assert_eq!(
            help(&["help", "import", "-h"]),
            (clap::error::ErrorKind::DisplayHelp, false)
        );
    }
}
