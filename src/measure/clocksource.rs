//! The kernel clocksource: its files and the clocksources it offers. Switching it (for
//! `run --clocksource-sweep` and `ab clocksource=`) and always switching it back, also
//! after a kill, is `crate::knob` (`knob::clocksource()`).

use std::io;
use std::path::Path;

pub const CURRENT: &str = crate::knob::CLOCKSOURCE;
pub const AVAILABLE: &str = "/sys/devices/system/clocksource/clocksource0/available_clocksource";

/// The clocksources the kernel offers.
pub fn available() -> io::Result<Vec<String>> {
    Ok(crate::knob::read(Path::new(AVAILABLE))?
        .split_whitespace()
        .map(String::from)
        .collect())
}
