//! Switching the kernel clocksource for a sweep, and always switching it back: the guard
//! restores the original on drop, so on success, on error, on panic and after Ctrl-C
//! (benchmarks stop between cases and unwind normally). Never used without
//! `--clocksource-sweep`.

use std::io;
use std::path::{Path, PathBuf};

pub const CURRENT: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
pub const AVAILABLE: &str = "/sys/devices/system/clocksource/clocksource0/available_clocksource";

pub struct Switch {
    path: PathBuf,
    original: String,
}

fn read(path: &Path) -> io::Result<String> {
    Ok(std::fs::read_to_string(path)?.trim().to_string())
}

impl Switch {
    /// Remember the clocksource in force (`path` is current_clocksource, or a test file).
    pub fn take(path: impl Into<PathBuf>) -> io::Result<Switch> {
        let path = path.into();
        let original = read(&path)?;
        Ok(Switch { path, original })
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
        if let Err(e) = self.set(&self.original.clone()) {
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
