//! The `dist` binary the fleet playbook copies to hosts (docs/fleet.md): built by
//! `cargo build --profile dist` (scripts/test builds it, for this machine and for aarch64,
//! before running these), at most 20 MB, needing only the C library (no OpenSSL: TLS is
//! rustls), and no newer glibc symbol version than the one docs/fleet.md and the
//! playbook's preflight (`truebench_min_glibc`) state. Cheap once the binaries are built.

mod common;

use std::path::Path;
use std::process::Command;

/// What docs/fleet.md promises a host needs at most.
const MAX_BYTES: u64 = 20_000_000;

/// The shared libraries a dist binary may need: the C library's own parts.
const C_LIBRARY: &[&str] = &[
    "libc.so.6",
    "libm.so.6",
    "libgcc_s.so.1",
    "libpthread.so.0",
    "libdl.so.2",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
];

/// `objdump ARGS BIN` with the binutils of the binary's architecture: the host's
/// `objdump` reads its own, `aarch64-linux-gnu-objdump` an ARM one (Debian's objdump
/// knows only its own architecture).
fn objdump(args: &[&str], bin: &Path) -> String {
    let tool = if bin.to_string_lossy().contains("aarch64-unknown-linux-gnu") {
        "aarch64-linux-gnu-objdump"
    } else {
        "objdump"
    };
    let out = Command::new(common::tool(tool))
        .args(args)
        .arg(bin)
        .output()
        .unwrap_or_else(|e| panic!("{tool} (binutils) does not run: {e}"));
    assert!(
        out.status.success(),
        "objdump {args:?} {}: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The NEEDED entries of the binary's dynamic section.
fn needed(bin: &Path) -> Vec<String> {
    objdump(&["-p"], bin)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("NEEDED"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The glibc symbol versions the binary asks for (from its dynamic symbol table), as
/// (major, minor), oldest first.
fn glibc_versions(bin: &Path) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = objdump(&["-T"], bin)
        .split_whitespace()
        .filter_map(|w| w.trim_matches(['(', ')']).strip_prefix("GLIBC_"))
        .filter_map(|x| {
            let (a, b) = x.split_once('.')?;
            Some((a.parse().ok()?, b.split('.').next()?.parse().ok()?))
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The newest glibc the playbook's preflight and docs/fleet.md state, "2.34".
fn stated_min_glibc() -> String {
    let defaults = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/ansible/roles/truebench/defaults/main.yml"
    ))
    .unwrap();
    defaults
        .lines()
        .find_map(|l| l.strip_prefix("truebench_min_glibc:"))
        .map(|v| v.trim().trim_matches('"').to_string())
        .expect("truebench_min_glibc in the role's defaults")
}

fn check(bin: &Path) {
    let size = std::fs::metadata(bin).unwrap().len();
    assert!(
        size <= MAX_BYTES,
        "{}: {size} bytes, over 20 MB",
        bin.display()
    );
    let libs = needed(bin);
    assert!(libs.iter().any(|l| l == "libc.so.6"), "{libs:?}");
    for l in &libs {
        assert!(
            C_LIBRARY.contains(&l.as_str()),
            "{} needs {l}, which is not the C library ({libs:?})",
            bin.display()
        );
    }
    let versions = glibc_versions(bin);
    let newest = versions
        .last()
        .expect("a dynamic binary asks for glibc symbols");
    let stated = stated_min_glibc();
    assert_eq!(
        format!("{}.{}", newest.0, newest.1),
        stated,
        "{}: the newest glibc symbol version it needs is not the one the playbook checks",
        bin.display()
    );
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fleet.md")).unwrap();
    assert!(
        docs.contains(&format!("glibc {stated} or newer")),
        "docs/fleet.md must state glibc {stated} or newer"
    );
    // Unstripped or with debug info, it would be several times larger: the symbol table
    // is gone (strip = "symbols").
    let headers = objdump(&["-h"], bin);
    assert!(!headers.contains(".debug_info"), "debug info left in");
}

#[test]
#[ignore = "needs the dist build: scripts/test runs cargo build --profile dist first"]
fn the_dist_binary_is_small_and_needs_only_the_c_library() {
    let bin = common::dist_binary(None);
    check(&bin);
    // It runs here and is the same program (the version line of the test build).
    let v = Command::new(&bin).arg("--version").output().unwrap();
    assert!(v.status.success());
    let mine = Command::new(env!("CARGO_BIN_EXE_truebench"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(v.stdout, mine.stdout);
}

#[test]
#[ignore = "needs the aarch64 dist build: scripts/test builds it with --target aarch64-unknown-linux-gnu"]
fn the_aarch64_dist_binary_is_small_needs_only_the_c_library_and_is_arm() {
    let bin = common::dist_binary(Some("aarch64-unknown-linux-gnu"));
    check(&bin);
    let header = objdump(&["-f"], &bin);
    assert!(header.contains("aarch64"), "{header}");
    assert!(
        needed(&bin).iter().all(|l| l != "ld-linux-x86-64.so.2"),
        "an ARM binary asking for the x86-64 loader"
    );
}
