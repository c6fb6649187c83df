//! A system-wide kernel setting held in one sysfs file (the clocksource, transparent huge
//! pages), switched by a run and always switched back: the guard ([`Switch`]) restores the
//! original on drop, so on success, on error, on panic and after Ctrl-C (benchmarks stop
//! between cases and unwind normally). Used by `run --clocksource-sweep` and by `ab`'s
//! system-wide settings (`thp=`, `clocksource=`), never otherwise.
//!
//! A run killed outright (SIGKILL, a crash) cannot restore anything, so before the first
//! switch the guard records the original in a state file (root-only directory under /run,
//! cleared at boot as the setting is; no links followed), and removes it once restored. The
//! next truebench command that starts finds a state file whose run is gone and restores
//! the value it names ([`restore_after_killed_run`], called for every [`known`] knob by
//! `cleanup`), saying so once.

use std::io;
use std::path::{Path, PathBuf};

/// A sysfs file holding one system-wide setting, and where a switch records its original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    /// In words, for messages: "the clocksource", "THP".
    pub name: &'static str,
    pub path: PathBuf,
    /// The state file recording the original for a killed run's successor.
    pub state: PathBuf,
}

/// The kernel clocksource's file.
pub const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
/// Transparent huge pages' mode (`always [madvise] never`).
pub const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Where switches record what to restore: a root-only directory under /run (cleared at
/// boot, as a switched setting is), else the temporary directory.
pub fn state_dir() -> PathBuf {
    let run = Path::new("/run");
    let base = if run.is_dir() {
        run.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join("truebench")
}

/// The clocksource, recorded where `--clocksource-sweep` always recorded it.
pub fn clocksource() -> Knob {
    Knob {
        name: "the clocksource",
        path: CLOCKSOURCE.into(),
        state: state_dir().join("clocksource-sweep"),
    }
}

/// Transparent huge pages (`enabled`).
pub fn thp() -> Knob {
    Knob {
        name: "THP",
        path: THP.into(),
        state: state_dir().join("thp"),
    }
}

/// Every knob a run may switch: what the next start looks for after a kill.
pub fn known() -> Vec<Knob> {
    vec![clocksource(), thp()]
}

/// The value a sysfs file holds: the bracketed word of a choice list (`always [madvise]
/// never` is `madvise`), else the trimmed text.
pub fn value(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .map(str::to_string)
        .unwrap_or_else(|| text.trim().to_string())
}

/// The choices a sysfs choice list offers (`always [madvise] never`: the three words).
pub fn choices(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_string())
        .collect()
}

/// The value `path` holds now.
pub fn read(path: &Path) -> io::Result<String> {
    Ok(value(&std::fs::read_to_string(path)?))
}

/// The state file's content: who switched, from what.
fn state_text(original: &str) -> String {
    format!("pid {}\noriginal {original}\n", std::process::id())
}

/// (pid, original) from a state file's text; an original that is not one plain word is
/// refused (the file is written to a sysfs file as root).
fn parse_state(text: &str) -> Option<(i32, String)> {
    let mut pid = None;
    let mut original = None;
    for l in text.lines() {
        match l.split_once(' ') {
            Some(("pid", p)) => pid = p.trim().parse().ok(),
            Some(("original", o)) => original = Some(o.trim().to_string()),
            _ => {}
        }
    }
    let original = original.filter(|o| {
        !o.is_empty()
            && o.len() < 64
            && o.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })?;
    Some((pid?, original))
}

fn alive(pid: i32) -> bool {
    pid > 0 && Path::new(&format!("/proc/{pid}")).exists()
}

/// After a killed run: when the knob's state file names a run that is gone, put the knob
/// back to the value it recorded and remove the state file. Some(message) when something
/// was done (or could not be), None when there was nothing to do.
pub fn restore_after_killed_run(knob: &Knob) -> Option<String> {
    let (state, name) = (&knob.state, knob.name);
    let mut f = match crate::safe_file::open_trusted(state) {
        Ok(Some(f)) => f,
        Ok(None) => return None,
        Err(e) => {
            return Some(format!(
                "ignoring the state file of {name} {}: {e}",
                state.display()
            ))
        }
    };
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::Read::take(&mut f, 4096), &mut text);
    let Some((pid, original)) = parse_state(&text) else {
        let _ = std::fs::remove_file(state);
        return Some(format!(
            "removed the unreadable state file of {name} {}",
            state.display()
        ));
    };
    if alive(pid) {
        return None; // the run that switched it is still running
    }
    let now = read(&knob.path).ok();
    if now.as_deref() == Some(original.as_str()) {
        let _ = std::fs::remove_file(state);
        return None;
    }
    match std::fs::write(&knob.path, &original) {
        Ok(()) => {
            let _ = std::fs::remove_file(state);
            Some(format!(
                "restored {name} to {original}: a killed truebench run (pid {pid}) had left it at {}",
                now.as_deref().unwrap_or("?")
            ))
        }
        Err(e) => Some(format!(
            "a killed truebench run (pid {pid}) left {name} at {}; restoring {original} failed ({e}): echo {original} > {}",
            now.as_deref().unwrap_or("?"),
            knob.path.display()
        )),
    }
}

/// A knob switched by this run: the original is put back on drop.
pub struct Switch {
    knob: Knob,
    original: String,
    recorded: bool,
}

impl Switch {
    /// Remember the value in force (not recorded: for tests and fixtures).
    pub fn take(knob: Knob) -> io::Result<Switch> {
        let original = read(&knob.path)?;
        Ok(Switch {
            knob,
            original,
            recorded: false,
        })
    }

    /// As `take`, and record the original in the knob's state file first (a new file in a
    /// root-only directory, never through a link), so the next start can restore it after
    /// a kill.
    pub fn take_recorded(knob: Knob) -> io::Result<Switch> {
        let mut s = Switch::take(knob)?;
        let state = &s.knob.state;
        if let Some(dir) = state.parent() {
            crate::safe_file::private_dir(dir, 0o700)?;
        }
        // A state file left by a killed run was dealt with at start; one still here
        // belongs to a live run, which the run lock excludes: replace it.
        let _ = std::fs::remove_file(state);
        let mut f = crate::safe_file::create_new(state, 0o600)
            .map_err(|e| io::Error::other(format!("{}: {e}", state.display())))?;
        std::io::Write::write_all(&mut f, state_text(&s.original).as_bytes())?;
        f.sync_all()?;
        s.recorded = true;
        Ok(s)
    }

    pub fn knob(&self) -> &Knob {
        &self.knob
    }

    pub fn original(&self) -> &str {
        &self.original
    }

    /// Switch to `name` and check that it took.
    pub fn set(&self, name: &str) -> io::Result<()> {
        std::fs::write(&self.knob.path, name)?;
        let now = read(&self.knob.path)?;
        if now != name {
            return Err(io::Error::other(format!(
                "{} is '{now}' after writing '{name}'",
                self.knob.name
            )));
        }
        Ok(())
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        let now = read(&self.knob.path).ok();
        let restored = if now.as_deref() == Some(self.original.as_str()) {
            Ok(())
        } else {
            self.set(&self.original.clone())
        };
        if let (Ok(()), true) = (&restored, self.recorded) {
            let _ = std::fs::remove_file(&self.knob.state);
        }
        if let Err(e) = restored {
            eprintln!(
                "truebench: could not restore {} '{}' ({e}); restore it with: echo {} > {}",
                self.knob.name,
                self.original,
                self.original,
                self.knob.path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(dir: &Path, text: &str) -> Knob {
        let path = dir.join("enabled");
        std::fs::write(&path, text).unwrap();
        Knob {
            name: "THP",
            path,
            state: dir.join("state/thp"),
        }
    }

    #[test]
    fn the_value_is_the_bracketed_choice_or_the_text() {
        assert_eq!(value("always [madvise] never\n"), "madvise");
        assert_eq!(value("tsc\n"), "tsc");
        assert_eq!(
            choices("always [madvise] never"),
            ["always", "madvise", "never"]
        );
        assert_eq!(choices("tsc kvm-clock \n"), ["tsc", "kvm-clock"]);
    }

    #[test]
    fn a_recorded_switch_is_restored_by_the_next_start_after_a_kill() {
        let dir = tempfile::tempdir().unwrap();
        let knob = fixture(dir.path(), "tsc\n");
        let s = Switch::take_recorded(knob.clone()).unwrap();
        s.set("kvm-clock").unwrap();
        // While the switching process lives, nothing is touched.
        assert_eq!(restore_after_killed_run(&knob), None);
        std::mem::forget(s); // killed: no drop
        std::fs::write(&knob.state, "pid 2147483647\noriginal tsc\n").unwrap();
        let said = restore_after_killed_run(&knob).unwrap();
        assert!(said.contains("restored THP to tsc"), "{said}");
        assert!(said.contains("left it at kvm-clock"), "{said}");
        assert_eq!(read(&knob.path).unwrap(), "tsc");
        assert!(!knob.state.exists());
        assert_eq!(restore_after_killed_run(&knob), None, "said twice");
        // A normal end removes the state file itself.
        let s = Switch::take_recorded(knob.clone()).unwrap();
        s.set("hpet").unwrap();
        drop(s);
        assert!(!knob.state.exists() && read(&knob.path).unwrap() == "tsc");
        // A state file naming what is already in force is removed without a word; one
        // whose original is not a plain word is never written.
        std::fs::write(&knob.state, "pid 2147483647\noriginal tsc\n").unwrap();
        assert_eq!(restore_after_killed_run(&knob), None);
        assert!(!knob.state.exists());
        std::fs::write(&knob.state, "pid 2147483647\noriginal a b>c\n").unwrap();
        assert!(restore_after_killed_run(&knob)
            .unwrap()
            .contains("unreadable"));
        assert_eq!(read(&knob.path).unwrap(), "tsc");
    }

    #[test]
    fn the_guard_restores_on_drop_on_error_and_on_panic() {
        let dir = tempfile::tempdir().unwrap();
        let knob = fixture(dir.path(), "always [madvise] never\n");
        {
            let s = Switch::take(knob.clone()).unwrap();
            assert_eq!(s.original(), "madvise");
            // A plain file holds what was written (sysfs brackets the choice itself).
            s.set("never").unwrap();
            assert_eq!(read(&knob.path).unwrap(), "never");
        }
        assert_eq!(read(&knob.path).unwrap(), "madvise");
        let failing = || -> io::Result<()> {
            let s = Switch::take(knob.clone())?;
            s.set("always")?;
            Err(io::Error::other("the run failed"))
        };
        assert!(failing().is_err());
        assert_eq!(
            read(&knob.path).unwrap(),
            "madvise",
            "not restored after an error"
        );
        let panicking = std::panic::catch_unwind(|| {
            let s = Switch::take(knob.clone()).unwrap();
            s.set("never").unwrap();
            panic!("boom");
        });
        assert!(panicking.is_err());
        assert_eq!(
            read(&knob.path).unwrap(),
            "madvise",
            "not restored after a panic"
        );
    }
}
