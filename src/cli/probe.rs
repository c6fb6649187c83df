//! `truebench probe [--json] [--root DIR]`.

use crate::error::usage_hint;
use crate::probe::sysroot::SysRoot;
use crate::session::probe;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the probe document as JSON (schema truebench.probe/1).
    #[arg(long)]
    json: bool,
    /// Read sysfs/procfs under DIR instead of / (a captured tree). Live-only measurements
    /// (CPUID, clock read costs, PMU) are then skipped and marked so.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// A captured tree must be a readable directory holding sys/devices/system/cpu.
pub fn sysroot_from(dir: &std::path::Path) -> anyhow::Result<SysRoot> {
    let meta = std::fs::metadata(dir).map_err(|e| {
        usage_hint(
            format!("--root {}: {e}", dir.display()),
            "give a directory captured from a machine's / (sys and proc)",
        )
    })?;
    if !meta.is_dir() {
        return Err(usage_hint(
            format!("--root {}: not a directory", dir.display()),
            "give the directory, not a file in it",
        ));
    }
    std::fs::read_dir(dir).map_err(|e| {
        usage_hint(
            format!("--root {}: cannot read: {e}", dir.display()),
            "check its permissions",
        )
    })?;
    let root = SysRoot::captured(dir);
    if !root.exists("/sys/devices/system/cpu") {
        return Err(usage_hint(
            format!(
                "--root {}: no sys/devices/system/cpu inside: not a captured system root",
                dir.display()
            ),
            "tests/fixtures/sysroots/capture.sh makes one",
        ));
    }
    Ok(root)
}

pub fn exec(a: Args) -> anyhow::Result<()> {
    let root = match &a.root {
        Some(dir) => sysroot_from(dir)?,
        None => SysRoot::live(),
    };
    let doc = probe(&root);
    if a.json {
        super::print_json(&doc)
    } else {
        print!("{}", crate::report::probe_text::render(&doc));
        Ok(())
    }
}
