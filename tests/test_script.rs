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
    // Coreutils are on every machine; the sandbox's PATH keeps the one the script uses.
    std::os::unix::fs::symlink("/bin/mkdir", bin.join("mkdir")).unwrap();
    let copy = dir.path().join("test");
    fs::copy(script(), &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
    (dir, bin, copy)
}

/// A python3 stand-in: `-m venv DIR` makes DIR/bin/pip, whose `install` logs its
/// arguments and puts ansible-core's ansible-playbook beside itself.
const FAKE_PYTHON: &str = r#"#!/bin/sh
[ "$1" = -m ] && [ "$2" = venv ] || exit 0
/bin/mkdir -p "$3/bin"
/bin/cat > "$3/bin/pip" <<'PIP'
#!/bin/sh
d=${0%/*}
echo "$*" >> "$d/pip.log"
for p in "$@"; do
  [ "$p" = ansible-core ] && printf '#!/bin/sh\nexit 0\n' > "$d/ansible-playbook" && /bin/chmod 755 "$d/ansible-playbook"
done
exit 0
PIP
/bin/chmod 755 "$3/bin/pip"
"#;

/// The virtual environment scripts/test makes for the sandbox copy at `copy`.
fn venv(copy: &Path) -> PathBuf {
    copy.parent().unwrap().join("tools/venv")
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
    gcc) t=cc ;; util-linux) t=lscpu ;; hwloc) t=lstopo-no-graphics ;; chromium) t=chromium ;; prometheus) t=promtool ;;
    golang-go) t=go ;; openssh-server) t=sshd ;; postgresql) t=initdb ;; openssl) t=openssl ;; nginx) t=nginx ;;
    binutils) t=objdump ;; strace) t=strace ;; gcc-aarch64-linux-gnu) t=aarch64-linux-gnu-gcc ;; qemu-user) t=qemu-aarch64 ;;
    gcc-powerpc64le-linux-gnu) t=powerpc64le-linux-gnu-gcc ;;
    python3) /bin/cat > {bin}/python3 <<'PY'
{python}PY
      /bin/chmod 755 {bin}/python3; continue ;;
    *) continue ;;
  esac
  if [ -f {bin}/$t.stub ]; then /bin/cp {bin}/$t.stub {bin}/$t; else printf '#!/bin/sh\nexit 0\n' > {bin}/$t; fi
  /bin/chmod 755 {bin}/$t
done
"#,
        log = log.display(),
        bin = bin.display(),
        fail = if fail { "exit 100" } else { "" },
        python = FAKE_PYTHON,
    );
    write_executable(&bin.join("apt-get"), &text);
    go_stub(bin, &log.with_file_name("go.log"));
}

/// A `go` stand-in that logs each call and, for `go install MODULE/cmd/NAME@V`, puts a
/// NAME into $GOBIN. Kept as bin/go.stub until something installs it as bin/go.
fn go_stub(bin: &Path, log: &Path) {
    fs::write(log, "").unwrap();
    fs::set_permissions(log, fs::Permissions::from_mode(0o666)).unwrap();
    let text = format!(
        r#"#!/bin/bash
echo "GOBIN=$GOBIN $*" >> {log}
[ "$1" = install ] || exit 0
name=${{2%@*}}; name=${{name##*/}}
printf '#!/bin/sh\nexit 0\n' > "$GOBIN/$name"
/bin/chmod 755 "$GOBIN/$name"
"#,
        log = log.display(),
    );
    write_executable(&bin.join("go.stub"), &text);
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
    let tools = copy.parent().unwrap().join("tools");
    if !tools.exists() {
        fs::create_dir(&tools).unwrap();
        fs::set_permissions(&tools, fs::Permissions::from_mode(0o777)).unwrap();
    }
    cmd.arg(copy)
        .args(args)
        .env_clear()
        .env("PATH", bin)
        .env("TRUEBENCH_TOOLS", tools)
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
    let debian: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("installing") && l.contains("Debian package"))
        .collect();
    assert_eq!(
        debian.len(),
        1,
        "one line says what is installed from Debian: {err}"
    );
    assert!(debian[0].contains("cc (Debian package gcc libc6-dev: tests/timers.rs"));
    assert!(debian[0].contains("chromium (Debian package chromium: tests/report.rs"));
    assert!(debian[0].contains("lstopo-no-graphics (Debian package hwloc: tests/probe_fixtures.rs"));
    assert!(debian[0].contains("promtool (Debian package prometheus: tests/exports.rs"));
    assert!(debian[0].contains("sshd (Debian package openssh-server: tests/fleet.rs"));
    assert!(!debian[0].contains("lscpu"), "{err}");
    let go: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("installing benchstat (golang.org/x/perf/cmd/benchstat@"))
        .collect();
    assert_eq!(go.len(), 1, "one line per Go tool: {err}");
    assert!(go[0].contains("tests/exports.rs"), "{err}");
    let calls = fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [
            "update -qq",
            "install -y -qq gcc libc6-dev hwloc chromium prometheus golang-go openssh-server python3 python3-venv postgresql openssl nginx binutils strace gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross"
        ]
    );
    assert!(bin.join("cc").exists() && bin.join("chromium").exists());
    // The Go tool was built by the go that apt-get installed, into the tools directory.
    let tools = copy.with_file_name("tools");
    let go_calls = fs::read_to_string(dir.path().join("go.log")).unwrap();
    assert_eq!(go_calls.lines().count(), 1, "{go_calls}");
    assert!(go_calls.starts_with(&format!(
        "GOBIN={} install golang.org/x/perf/cmd/benchstat@v",
        tools.display()
    )));
    assert!(tools.join("benchstat").exists());
    // The Python tools go into the virtual environment, said in a line of their own.
    let python: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("Python package"))
        .collect();
    assert_eq!(python.len(), 1, "{err}");
    assert!(
        python[0].contains("ansible-playbook (Python package ansible-core: tests/fleet.rs"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(venv(&copy).join("bin/pip.log")).unwrap(),
        "install -q ansible-core\n"
    );
    assert!(venv(&copy).join("bin/ansible-playbook").exists());
    assert!(debian[0].contains("initdb (Debian package postgresql: tests/store.rs"));
    assert!(bin.join("initdb").exists());

    // A second run finds everything and installs nothing.
    let again = run(&copy, &bin, &["--deps-only"], false);
    assert!(again.status.success());
    assert_eq!(fs::read_to_string(&log).unwrap(), calls);
    assert_eq!(
        fs::read_to_string(dir.path().join("go.log")).unwrap(),
        go_calls
    );
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
            "error: apt-get install gcc libc6-dev util-linux hwloc chromium prometheus golang-go openssh-server python3 python3-venv postgresql openssl nginx binutils strace gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross failed"
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
        err.contains("sudo apt-get install gcc libc6-dev hwloc chromium prometheus golang-go openssh-server python3 python3-venv postgresql openssl nginx binutils strace gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn without_root_and_with_every_tool_it_asks_for_root_or_no_root_before_testing() {
    let (dir, bin, copy) = sandbox();
    for tool in [
        "cc",
        "lscpu",
        "lstopo-no-graphics",
        "chromium",
        "promtool",
        "sshd",
        "initdb",
        "openssl",
        "nginx",
        "objdump",
        "strace",
        "aarch64-linux-gnu-gcc",
        "qemu-aarch64",
        "powerpc64le-linux-gnu-gcc",
    ] {
        write_executable(&bin.join(tool), "#!/bin/sh\nexit 0\n");
    }
    write_executable(&bin.join("python3"), FAKE_PYTHON);
    go_stub(&bin, &dir.path().join("go.log"));
    fs::rename(bin.join("go.stub"), bin.join("go")).unwrap();
    // A Go tool needs no root: it is built into a tools directory the user may write.
    let tools = copy.with_file_name("tools");
    let deps = run(&copy, &bin, &["--deps-only"], true);
    assert!(deps.status.success(), "{deps:?}");
    assert!(tools.join("benchstat").exists());
    // Without root too, the Python tools go into the virtual environment (no root needed).
    assert!(
        venv(&copy).join("bin/ansible-playbook").exists(),
        "{deps:?}"
    );
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
