//! Switching the kernel clocksource for a sweep, and always switching it back: the guard
//! restores the original on drop, so on success, on error, on panic and after Ctrl-C
//! (benchmarks stop between cases and unwind normally). Never used without
//! `--clocksource-sweep`.
//!
//! A run killed outright (SIGKILL, a crash, power) cannot restore anything, so before the
//! first switch the guard records the original in a state file (root-only directory, no
//! links followed), and removes it once restored. The next truebench command that starts
//! finds a state file whose run is gone and restores the clocksource it names
//! (`restore_after_killed_run`), saying so once.

use std::io;
use std::path::{Path, PathBuf};

pub const CURRENT: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
pub const AVAILABLE: &str = "/sys/devices/system/clocksource/clocksource0/available_clocksource";

pub struct Switch {
    path: PathBuf,
    original: String,
    /// The state file recording the original for a killed run's successor.
    state: Option<PathBuf>,
}

/// Where a sweep records the clocksource to restore: a root-only directory under /run
/// (cleared at boot, as a changed clocksource is).
pub fn state_file() -> PathBuf {
    let run = Path::new("/run");
    let base = if run.is_dir() {
        run.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join("truebench").join("clocksource-sweep")
}

/// The state file's content: who switched, from what.
fn state_text(original: &str) -> String {
    format!("pid {}\noriginal {original}\n", std::process::id())
}

/// (pid, original) from a state file's text.
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

/// After a killed sweep: when `state` names a run that is gone, put `current` back to the
/// clocksource it recorded and remove the state file. Some(message) when something was
/// done (or could not be), None when there was nothing to do.
pub fn restore_after_killed_run(state: &Path, current: &Path) -> Option<String> {
    let mut f = match crate::safe_file::open_trusted(state) {
        Ok(Some(f)) => f,
        Ok(None) => return None,
        Err(e) => {
            return Some(format!(
                "ignoring the clocksource state file {}: {e}",
                state.display()
            ))
        }
    };
    let mut text = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::Read::take(&mut f, 4096), &mut text);
    let Some((pid, original)) = parse_state(&text) else {
        let _ = std::fs::remove_file(state);
        return Some(format!(
            "removed the unreadable clocksource state file {}",
            state.display()
        ));
    };
    if alive(pid) {
        return None; // the sweep is still running
    }
    let now = read(current).ok();
    if now.as_deref() == Some(original.as_str()) {
        let _ = std::fs::remove_file(state);
        return None;
    }
    match std::fs::write(current, &original) {
        Ok(()) => {
            let _ = std::fs::remove_file(state);
            Some(format!(
                "restored the clocksource to {original}: a killed truebench run (pid {pid}) had left it at {}",
                now.as_deref().unwrap_or("?")
            ))
        }
        Err(e) => Some(format!(
            "a killed truebench run (pid {pid}) left the clocksource at {}; restoring {original} failed ({e}): echo {original} > {}",
            now.as_deref().unwrap_or("?"),
            current.display()
        )),
    }
}

fn read(path: &Path) -> io::Result<String> {
    Ok(std::fs::read_to_string(path)?.trim().to_string())
}

impl Switch {
    /// Remember the clocksource in force (`path` is current_clocksource, or a test file).
    pub fn take(path: impl Into<PathBuf>) -> io::Result<Switch> {
        let path = path.into();
        let original = read(&path)?;
        Ok(Switch {
            path,
            original,
            state: None,
        })
    }

    /// As `take`, and record the original in `state` first (a new file in a root-only
    /// directory, never through a link), so the next start can restore it after a kill.
    pub fn take_recorded(path: impl Into<PathBuf>, state: &Path) -> io::Result<Switch> {
        let mut s = Switch::take(path)?;
        if let Some(dir) = state.parent() {
            crate::safe_file::private_dir(dir, 0o700)?;
        }
        // A state file left by a killed run was dealt with at start; one still here
        // belongs to a live sweep, which the run lock excludes: replace it.
        let _ = std::fs::remove_file(state);
        let mut f = crate::safe_file::create_new(state, 0o600)
            .map_err(|e| io::Error::other(format!("{}: {e}", state.display())))?;
        std::io::Write::write_all(&mut f, state_text(&s.original).as_bytes())?;
        f.sync_all()?;
        s.state = Some(state.to_path_buf());
        Ok(s)
    }

    pub fn original(&self) -> &str {
        &self.original
    }

    /// Switch to `name` and check that it took.
    pub fn set(&self, name: &str) -> io::Result<()> {
        std::fs::write(&self.path, name)?;
        let now = read(&self.path)?;
        if now != name {
            return Err(io::Error::other(format!(
                "clocksource is '{now}' after writing '{name}'"
            )));
        }
        Ok(())
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        let restored = self.set(&self.original.clone());
        if let (Ok(()), Some(state)) = (&restored, &self.state) {
            let _ = std::fs::remove_file(state);
        }
        if let Err(e) = restored {
            eprintln!(
                "truebench: could not restore clocksource '{}' ({e}); restore it with: echo {} > {}",
                self.original,
                self.original,
                self.path.display()
            );
        }
    }
}

/// The clocksources the kernel offers.
pub fn available() -> io::Result<Vec<String>> {
    Ok(read(Path::new(AVAILABLE))?
        .split_whitespace()
        .map(String::from)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_switch_is_restored_by_the_next_start_after_a_kill() {
        let dir = tempfile::tempdir().unwrap();
        let cur = dir.path().join("current_clocksource");
        let state = dir.path().join("state/clocksource-sweep");
        std::fs::write(&cur, "tsc\n").unwrap();
        let s = Switch::take_recorded(&cur, &state).unwrap();
        s.set("kvm-clock").unwrap();
        // While the sweeping process lives, nothing is touched.
        assert_eq!(restore_after_killed_run(&state, &cur), None);
        std::mem::forget(s); // killed: no drop
                             // The state now names a dead PID.
        std::fs::write(&state, "pid 2147483647\noriginal tsc\n").unwrap();
        let said = restore_after_killed_run(&state, &cur).unwrap();
        assert!(said.contains("restored the clocksource to tsc"), "{said}");
        assert_eq!(read(&cur).unwrap(), "tsc");
        assert!(!state.exists());
        assert_eq!(restore_after_killed_run(&state, &cur), None, "said twice");
        // A normal end removes the state file itself.
        let s = Switch::take_recorded(&cur, &state).unwrap();
        s.set("hpet").unwrap();
        drop(s);
        assert!(!state.exists() && read(&cur).unwrap() == "tsc");
    }

    #[test]
    fn the_guard_restores_on_drop_and_on_early_return() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("current_clocksource");
        std::fs::write(&f, "tsc\n").unwrap();
        {
            let s = Switch::take(&f).unwrap();
            s.set("kvm-clock").unwrap();
            assert_eq!(read(&f).unwrap(), "kvm-clock");
        }
        assert_eq!(read(&f).unwrap(), "tsc");
        let failing = || -> io::Result<()> {
            let s = Switch::take(&f)?;
            s.set("hpet")?;
            Err(io::Error::other("the sweep failed"))
        };
        assert!(failing().is_err());
        assert_eq!(read(&f).unwrap(), "tsc", "not restored after an error");
        let panicking = std::panic::catch_unwind(|| {
            let s = Switch::take(&f).unwrap();
            s.set("acpi_pm").unwrap();
            panic!("boom");
        });
        assert!(panicking.is_err());
        assert_eq!(read(&f).unwrap(), "tsc", "not restored after a panic");
    }
}
