//! The run lock and what killed runs leave: the lock file is never written through a link,
//! a stale lock of another user (root's 0644) does not block the next user, errors name the
//! lock and the way out, and every command that starts removes a killed run's cgroups and
//! restores the clocksource its sweep changed, saying so once.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

mod common;

use common::TestEnv as Env;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A short load step: the quickest command that takes the lock.
const STEP: &[&str] = &[
    "loadstep",
    "--rates",
    "200",
    "--step-duration",
    "0.1",
    "--warmup",
    "0.1",
    "--workers",
    "1",
];

/// Defect 2: a lock path planted as a symlink (or a hard link) to another file is refused
/// and the file it points at is left alone.
#[test]
fn a_planted_link_at_the_lock_path_is_never_written_through() {
    let env = Env::new();
    let victim = env.file("victim", "precious\n");
    std::os::unix::fs::symlink(&victim, env.lock()).unwrap();
    let out = env.cmd().args(STEP).output().unwrap();
    common::assert_refused(&env, &out, &"symlinked lock");
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert!(stderr(&out).contains(&env.lock().display().to_string()));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    std::fs::remove_file(env.lock()).unwrap();
    std::fs::hard_link(&victim, env.lock()).unwrap();
    let out = env.cmd().args(STEP).output().unwrap();
    common::assert_refused(&env, &out, &"hard-linked lock");
    assert!(stderr(&out).contains("hard links"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

/// Defect 24: TRUEBENCH_LOCK=/dev/null names the lock and says what is wrong;
/// TRUEBENCH_LOCK='' counts as unset (the default file in the temp directory).
#[test]
fn lock_errors_name_the_lock_and_an_empty_variable_is_unset() {
    let env = Env::new();
    let out = env
        .cmd()
        .env("TRUEBENCH_LOCK", "/dev/null")
        .args(STEP)
        .output()
        .unwrap();
    common::assert_refused(&env, &out, &"/dev/null lock");
    let err = stderr(&out);
    assert!(
        err.contains("run lock /dev/null") && err.contains("not a regular file"),
        "{err}"
    );
    let tmp = env.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = env
        .cmd()
        .env("TRUEBENCH_LOCK", "")
        .env("TMPDIR", &tmp)
        .args(STEP)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(tmp.join("truebench-run.lock").is_file());
}

/// Defect 5: a root-owned 0644 lock left in a shared directory does not block another
/// user for ever: the next user's run takes it (read-only) and succeeds.
#[test]
#[ignore = "needs root"]
fn a_stale_root_lock_does_not_block_another_user() {
    let env = Env::new();
    let shared = env.dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    for d in [env.dir.path(), shared.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    }
    let lock = shared.join("truebench-run.lock");
    std::fs::write(
        &lock,
        "pid 2147483647 since 2026-01-01T00:00:00Z: truebench run\n",
    )
    .unwrap();
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("truebench"))
        .args(STEP)
        .env("TRUEBENCH_LOCK", &lock)
        .env("TRUEBENCH_DB", shared.join("nobody.db"))
        .env("HOME", &shared)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert!(out.status.success(), "as nobody: {}", stderr(&out));
    // A lock root creates now is usable and writable by the next user.
    let fresh = shared.join("fresh.lock");
    let out = env
        .cmd()
        .env("TRUEBENCH_LOCK", &fresh)
        .args(STEP)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
        0o666
    );
}

/// Defect 6: a cgroup `truebench-PID-N` whose PID is gone (a SIGKILLed capacity run) is
/// removed by the next command that starts, whatever it is, and said once.
#[test]
#[ignore = "needs root"]
fn any_command_removes_cgroups_a_killed_run_left() {
    let root = truebench::probe::sysroot::SysRoot::live();
    let (cpu_dir, _) = truebench::probe::cgroup::own_dir(&root, "cpu").expect("a cpu cgroup");
    let stale = cpu_dir.join("truebench-2147483647-0");
    std::fs::create_dir(&stale).unwrap();
    let env = Env::new();
    let out = env.cmd().arg("history").output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!stale.exists(), "left {stale:?}: {err}");
    assert_eq!(err.matches("left by a killed run").count(), 1, "{err}");
    let out = env.cmd().arg("history").output().unwrap();
    assert!(!stderr(&out).contains("killed run"), "said twice");
}

/// Defect 6: a clocksource a killed `--clocksource-sweep` left changed (its state file names
/// a dead PID) is restored by the next command that starts, and said once.
#[test]
#[ignore = "needs root"]
fn any_command_restores_a_clocksource_a_killed_sweep_left() {
    use truebench::measure::clocksource::CURRENT;
    let original = std::fs::read_to_string(CURRENT).unwrap().trim().to_string();
    let available = std::fs::read_to_string(
        "/sys/devices/system/clocksource/clocksource0/available_clocksource",
    )
    .unwrap();
    let Some(other) = available.split_whitespace().find(|c| *c != original) else {
        eprintln!("only one clocksource: nothing to switch to");
        return;
    };
    let state = truebench::knob::clocksource().state;
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    std::fs::write(&state, format!("pid 2147483647\noriginal {original}\n")).unwrap();
    std::fs::write(CURRENT, other).unwrap();
    let env = Env::new();
    let out = env.cmd().arg("history").output().unwrap();
    let now = std::fs::read_to_string(CURRENT).unwrap().trim().to_string();
    if now != original {
        std::fs::write(CURRENT, &original).unwrap();
    }
    let err = stderr(&out);
    assert_eq!(now, original, "not restored: {err}");
    assert_eq!(err.matches("restored the clocksource").count(), 1, "{err}");
    assert!(!state.exists());
    let out = env.cmd().arg("history").output().unwrap();
    assert!(!stderr(&out).contains("clocksource"), "said twice");
}
