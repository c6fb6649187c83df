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
    #[arg(long, value_name = "DIR", conflicts_with = "capture")]
    root: Option<PathBuf>,
    /// Also write the files this probe read (sysfs topology, caches, nodes, cpufreq, cgroup
    /// files, the /proc files it needs; no environment, no other processes) to FILE.tar.gz,
    /// for a bug report or a test fixture: `tar xzf FILE -C DIR; truebench probe --root DIR`.
    /// An existing FILE is never replaced.
    #[arg(long, value_name = "FILE.tar.gz")]
    capture: Option<PathBuf>,
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
            "truebench probe --capture FILE.tar.gz on the machine makes one (unpack it with tar xzf)",
        ));
    }
    Ok(root)
}

pub fn exec(a: Args) -> anyhow::Result<()> {
    let doc = match (&a.root, &a.capture) {
        (_, Some(out)) => {
            // An existing file is refused before probing: nothing is written over it.
            super::output::refuse_existing(out, None)?;
            let (root, doc) = crate::probe::capture::record();
            let (bytes, n) = crate::probe::capture::archive(&root)
                .map_err(|e| anyhow::anyhow!("--capture {}: {e}", out.display()))?;
            super::output::write_bytes(out, &bytes, None)?;
            eprintln!(
                "truebench: captured {}, {} and {} ({} bytes) into {}; read it back with: mkdir DIR && tar xzf {} -C DIR && truebench probe --root DIR",
                crate::units::count(n.files, "file"),
                crate::units::count(n.dirs, "directory"),
                crate::units::count(n.links, "link"),
                n.bytes,
                out.display(),
                out.display()
            );
            doc
        }
        (Some(dir), None) => probe(&sysroot_from(dir)?),
        (None, None) => probe(&SysRoot::live()),
    };
    if a.json {
        super::print_json(&doc)
    } else {
        crate::stdout::write(&crate::report::probe_text::render(&doc))?;
        Ok(())
    }
}
