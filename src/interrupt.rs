//! Ctrl-C during a run: SIGINT and SIGTERM set a flag that benchmarks check between
//! results, so finished results are kept, children reaped and the database left whole.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Install the handlers (once). Until then, `requested` is always false.
pub fn install() -> std::io::Result<()> {
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(flag))?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(flag))?;
    Ok(())
}

/// Whether the user asked to stop.
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}
