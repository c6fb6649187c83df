//! scripts/test, the README's test command, tested on a PATH that lacks every tool the
//! tests need: as root it installs them (through an apt-get stand-in that records what it
//! was asked for) and says why in one line; without root it stops before testing with one
//! line naming each missing tool, its package and how to get it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test")
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn write_executable(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A directory readable by everyone holding a copy of scripts/test and an empty bin/.
fn sandbox() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.path().join("test");
    fs::copy(script(), &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
    (dir, bin, copy)
}

/// An apt-get stand-in: logs each call, and `install` puts the command each package
/// provides into `bin` (or fails every install when `fail` is set).
fn fake_apt_get(bin: &Path, log: &Path, fail: bool) {
    let text = format!(
        r#"#!/bin/bash
echo "$*" >> {log}
[ "$1" = install ] || exit 0
{fail}
for p in "$@"; do
  case "$p" in
    gcc) t=cc ;; util-linux) t=lscpu ;; chromium) t=chromium ;; postgresql) t=initdb ;;
    openssl) t=openssl ;; *) continue ;;
  esac
  printf '#!/bin/sh\nexit 0\n' > {bin}/$t
  /bin/chmod 755 {bin}/$t
done
"#,
        log = log.display(),
        bin = bin.display(),
        fail = if fail { "exit 100" } else { "" },
    );
    write_executable(&bin.join("apt-get"), &text);
}

fn run(copy: &Path, bin: &Path, args: &[&str], as_nobody: bool) -> Output {
    let mut cmd = if as_nobody && is_root() {
        let mut c = Command::new("/usr/bin/setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/bin/bash",
        ]);
        c
    } else {
        Command::new("/bin/bash")
    };
    cmd.arg(copy)
        .args(args)
        .env_clear()
        .env("PATH", bin)
        // Not this machine's PostgreSQL directories: only what `bin` holds counts.
        .env("TRUEBENCH_PG_BINDIRS", "")
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs root"]
fn as_root_it_installs_each_missing_tool_and_says_why_in_one_line() {
    let (dir, bin, copy) = sandbox();
    let log = dir.path().join("apt.log");
    // lscpu is already here: it must not be installed again.
    write_executable(&bin.join("lscpu"), "#!/bin/sh\nexit 0\n");
    fake_apt_get(&bin, &log, false);

    let out = run(&copy, &bin, &["--deps-only"], false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let installing: Vec<&str> = err.lines().filter(|l| l.contains("installing")).collect();
    assert_eq!(
        installing.len(),
        1,
        "one line says what is installed: {err}"
    );
    assert!(installing[0].contains("cc (Debian package gcc libc6-dev: tests/timers.rs"));
    assert!(installing[0].contains("chromium (Debian package chromium: tests/report.rs"));
    assert!(!installing[0].contains("lscpu"), "{err}");
    let calls = fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [
            "update -qq",
            "install -y -qq gcc libc6-dev chromium postgresql openssl"
        ]
    );
    assert!(bin.join("cc").exists() && bin.join("chromium").exists());
    assert!(installing[0].contains("initdb (Debian package postgresql: tests/store.rs"));
    assert!(bin.join("initdb").exists());

    // A second run finds everything and installs nothing.
    let again = run(&copy, &bin, &["--deps-only"], false);
    assert!(again.status.success());
    assert_eq!(fs::read_to_string(&log).unwrap(), calls);
}

#[test]
#[ignore = "needs root"]
fn as_root_a_failed_install_stops_before_testing_with_exit_1() {
    let (dir, bin, copy) = sandbox();
    let log = dir.path().join("apt.log");
    fake_apt_get(&bin, &log, true);
    let out = run(&copy, &bin, &[], false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.lines().last().unwrap().starts_with(
            "error: apt-get install gcc libc6-dev util-linux chromium postgresql openssl failed"
        ),
        "{err}"
    );
    assert!(!err.contains("stage"), "no test stage may start: {err}");
}

#[test]
fn without_root_a_missing_tool_stops_before_testing_with_one_line() {
    let (_dir, bin, copy) = sandbox();
    write_executable(&bin.join("lscpu"), "#!/bin/sh\nexit 0\n");
    let out = run(&copy, &bin, &[], true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with("error: missing cc (Debian package gcc libc6-dev: "),
        "{err}"
    );
    assert!(
        err.contains("chromium (Debian package chromium: tests/report.rs"),
        "{err}"
    );
    assert!(!err.contains("lscpu"), "lscpu is here: {err}");
    assert!(
        err.contains("sudo apt-get install gcc libc6-dev chromium postgresql openssl"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn without_root_and_with_every_tool_it_asks_for_root_or_no_root_before_testing() {
    let (_dir, bin, copy) = sandbox();
    for tool in ["cc", "lscpu", "chromium", "initdb", "openssl"] {
        write_executable(&bin.join(tool), "#!/bin/sh\nexit 0\n");
    }
    let deps = run(&copy, &bin, &["--deps-only"], true);
    assert!(deps.status.success(), "{deps:?}");
    let out = run(&copy, &bin, &[], true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("needs root") && err.contains("--no-root"),
        "{err}"
    );
    assert!(!err.contains("stage 1"), "{err}");
}

#[test]
fn an_unknown_option_is_refused() {
    let (_dir, bin, copy) = sandbox();
    let out = run(&copy, &bin, &["--fast"], true);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: unknown option '--fast' (see scripts/test --help)"
    );
}
