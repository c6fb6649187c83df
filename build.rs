//! Build-time facts and artefacts: the git commit the binary is built from
//! (TRUEBENCH_GIT_COMMIT, for the run document), and the small kernel worker of the classic
//! suite (src/bench/classic/kernel_worker.rs, compiled here on its own and embedded).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    git_commit();
    execl_link();
}

fn git_commit() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = match git(&["status", "--porcelain", "--untracked-files=no"]) {
        Some(s) if !s.is_empty() => "-dirty",
        _ => "",
    };
    println!("cargo:rustc-env=TRUEBENCH_GIT_COMMIT={commit}{dirty}");
    // Build again when HEAD, the branch it names or the index moves. The git directory is
    // asked of git: in a worktree `.git` is a file, and a path that does not exist would
    // make cargo run this script, and rebuild the crate, every time.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let mut watched = vec![format!("{dir}/HEAD"), format!("{dir}/index")];
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(format!("{dir}/{branch}"));
        }
        for path in watched.iter().filter(|p| std::path::Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// `git ARGS`'s trimmed stdout, when git is here and succeeds. GIT_OPTIONAL_LOCKS=0 keeps
/// `git status` from refreshing (rewriting) the index: a rewritten index is a changed file
/// to cargo, which then ran this script and rebuilt the crate in every profile.
fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Compile the classic suite's kernel worker (no_std, panic=abort, stripped) for the target
/// being built, linked by the target's C compiler, into OUT_DIR/execl-link. If that fails
/// the file is left empty, and the tests that run in it are skipped at run time with the
/// compiler's message (TRUEBENCH_EXECL_LINK_ERROR).
fn execl_link() {
    let src = "src/bench/classic/kernel_worker.rs";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed=src/bench/classic/slot.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let bin = out.join("execl-link");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let mut cmd = Command::new(rustc);
    cmd.args([
        "--edition",
        "2021",
        "--crate-type",
        "bin",
        "--target",
        &target,
    ])
    .args([
        "-C",
        "opt-level=2",
        "-C",
        "panic=abort",
        "-C",
        "strip=symbols",
    ])
    .arg("-o")
    .arg(&bin)
    .arg(src);
    if let Some(linker) = target_linker(&target) {
        cmd.arg("-C").arg(format!("linker={linker}"));
    }
    let error = match cmd.output() {
        Ok(o) if o.status.success() => String::new(),
        Ok(o) => first_error(&String::from_utf8_lossy(&o.stderr)),
        Err(e) => format!("cannot run rustc: {e}"),
    };
    if !error.is_empty() {
        println!("cargo:warning=the classic kernel worker was not built ({error}); the classic tests that run in it will be skipped");
        std::fs::write(&bin, b"").expect("OUT_DIR is writable");
    }
    println!("cargo:rustc-env=TRUEBENCH_EXECL_LINK_ERROR={error}");
}

/// The linker (the target's C compiler) for `target`: the one cargo resolved for the
/// crate (RUSTC_LINKER, from `target.TRIPLE.linker` or CARGO_TARGET_TRIPLE_LINKER), else,
/// when cross-compiling, the target's C compiler as the `cc` crate finds it
/// (aarch64-linux-gnu-gcc for aarch64-unknown-linux-gnu), never the host's `cc`.
fn target_linker(target: &str) -> Option<String> {
    let env_name = format!(
        "CARGO_TARGET_{}_LINKER",
        target.to_uppercase().replace(['-', '.'], "_")
    );
    println!("cargo:rerun-if-env-changed={env_name}");
    if let Some(l) = std::env::var("RUSTC_LINKER")
        .ok()
        .or_else(|| std::env::var(&env_name).ok())
        .filter(|l| !l.is_empty())
    {
        return Some(l);
    }
    let host = std::env::var("HOST").ok()?;
    if host == target {
        return None;
    }
    let compiler = cc::Build::new()
        .target(target)
        .host(&host)
        .opt_level(2)
        .cargo_metadata(false)
        .try_get_compiler()
        .ok()?;
    Some(compiler.path().display().to_string())
}

/// The first `error` line of a compiler's output, on one line.
fn first_error(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or("rustc failed")
        .trim()
        .replace(['\n', '\r'], " ")
}
