//! Running truebench over a fleet: `--start-at` and `--tag` on every measuring command,
//! `history --tag`, the import of fetched documents, and (as root) the Ansible playbook of
//! deploy/ansible against three hosts on this machine (one local, two over a throwaway
//! sshd on 127.0.0.1) and a fourth that cannot run the binary.

mod common;

use common::{assert_refused, TestEnv};
use serde_json::Value;
use std::time::{Duration, Instant};

fn time(s: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .with_timezone(&chrono::Utc)
}

#[test]
fn bad_start_times_and_tags_are_refused_on_every_measuring_command_before_anything_runs() {
    let env = TestEnv::new();
    let commands: [&[&str]; 3] = [
        &["run", "timers"],
        &["record", "--duration", "1"],
        &["loadstep", "--rates", "100"],
    ];
    let bad: [(&[&str], &str); 8] = [
        (&["--start-at", "2020-01-01T00:00:00Z"], "is in the past"),
        (&["--start-at", "+0"], "not in the future"),
        (&["--start-at", "soon"], "not an RFC 3339 time"),
        (&["--start-at", "+200000"], "a day"),
        (&["--tag", "host"], "is not KEY=VALUE (no '=')"),
        (&["--tag", "=x"], "empty key"),
        (&["--tag", "bad key=x"], "letters, digits"),
        (&["--tag", "a=1", "--tag", "a=2"], "key 'a' is given twice"),
    ];
    for cmd in commands {
        for (args, why) in bad {
            let all = [cmd, args].concat();
            let t = Instant::now();
            let out = env.cmd().args(&all).output().unwrap();
            assert_refused(&env, &out, &all);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(why), "{all:?}: {err}");
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{all:?} ran before refusing"
            );
        }
    }
}

#[test]
fn a_scheduled_tagged_run_begins_at_its_time_and_records_it_with_the_clock_state() {
    let env = TestEnv::new();
    let asked = chrono::Utc::now() + chrono::Duration::milliseconds(2500);
    let at = asked.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let out = env
        .cmd()
        .args([
            "run",
            "timers",
            "--samples",
            "3",
            "--json",
            "--start-at",
            &at,
        ])
        .args(["--tag", "host=web-01", "--tag", "group=db,web"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("measuring starts at"),
        "a line says until when: {err}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    truebench::result::validate(&doc).unwrap();
    assert_eq!(doc["tags"]["host"], "web-01");
    assert_eq!(doc["tags"]["group"], "db,web");
    let s = &doc["scheduled_start"];
    assert_eq!(time(s["requested_at"].as_str().unwrap()), time(&at));
    let began = time(s["began_at"].as_str().unwrap());
    let late = (began - time(&at)).num_microseconds().unwrap() as f64 / 1e3;
    assert!(late >= 0.0, "began before its time: {s}");
    assert!((s["late_ms"].as_f64().unwrap() - late).abs() < 0.01, "{s}");
    // The wait ends on time: well under a second late on an idle or busy 2-CPU machine.
    assert!(late < 500.0, "{late} ms late: {s}");
    assert!(s["waited_s"].as_f64().unwrap() > 0.5, "{s}");
    // The run's own start time is the moment measuring began.
    assert!(time(doc["started_at"].as_str().unwrap()) >= time(&at));
    // adjtimex is readable here: its state and both error bounds, with the UNSYNC flag
    // agreeing with `synchronised`.
    let c = &s["clock_sync"];
    let unsync = c["status"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "STA_UNSYNC");
    assert_eq!(
        c["synchronised"].as_bool().unwrap(),
        !unsync && c["state"] != "TIME_ERROR"
    );
    assert!(c["maximum_error_us"].as_i64().unwrap() >= 0);
    // The run says so when its clock cannot line it up with other hosts', and only then.
    let ids = common::finding_ids(&doc["findings"]);
    assert_eq!(
        ids.contains(&"start-clock-unsynchronised"),
        !c["synchronised"].as_bool().unwrap(),
        "{ids:?}"
    );
    assert!(!ids.contains(&"start-late"), "{ids:?}");

    let id = doc["run_id"].as_str().unwrap();
    let history = env.text(&["history"]);
    assert!(history.contains("group=db,web, host=web-01"), "{history}");
    let only = env.json(&["history", "--json", "--tag", "host=web-01"]);
    assert_eq!(only[0]["run_id"], id);
    assert_eq!(only[0]["tags"]["group"], "db,web");
    let both = env.json(&[
        "history",
        "--json",
        "--tag",
        "host=web-01",
        "--tag",
        "group=db,web",
    ]);
    assert_eq!(both.as_array().unwrap().len(), 1);
    for miss in [&["--tag", "host=web-02"][..], &["--tag", "rack=b4"]] {
        let none = env.json(&[&["history", "--json"], miss].concat());
        assert_eq!(none.as_array().unwrap().len(), 0, "{miss:?}");
    }
    let shown = env.text(&["show", id]);
    assert!(shown.contains("Tags: group=db,web, host=web-01"), "{shown}");
    assert!(shown.contains("Scheduled start: asked for"), "{shown}");
    assert!(
        shown.contains("ms\n    late") || shown.contains("ms late"),
        "{shown}"
    );

    // The document moves to another database with its tags and start.
    let file = env.file("doc.json", &serde_json::to_string(&doc).unwrap());
    let other = env.dir.path().join("other.db");
    env.text(&[
        "--db",
        other.to_str().unwrap(),
        "import",
        file.to_str().unwrap(),
    ]);
    let back = env.json(&["--db", other.to_str().unwrap(), "show", id, "--json"]);
    assert_eq!(back["tags"], doc["tags"]);
    assert_eq!(back["scheduled_start"], doc["scheduled_start"]);
}

#[test]
fn record_takes_the_same_start_and_tags() {
    let env = TestEnv::new();
    let doc = env.json(&[
        "record",
        "--interval",
        "0.1",
        "--duration",
        "0.3",
        "--json",
        "--start-at",
        "+1",
        "--tag",
        "host=r1",
    ]);
    assert_eq!(doc["tags"]["host"], "r1");
    assert!(doc["scheduled_start"]["waited_s"].as_f64().unwrap() > 0.0);
    assert!(doc["recording"]["rows"].as_array().unwrap().len() >= 2);
}

#[test]
fn ctrl_c_while_waiting_for_the_start_stores_nothing() {
    use nix::sys::signal::{kill, Signal};
    let env = TestEnv::new();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_truebench"))
        .env("TRUEBENCH_DB", env.db())
        .env("TRUEBENCH_LOCK", env.lock())
        .args(["run", "timers", "--samples", "3", "--start-at", "+60"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    // Probing ends and the wait begins within seconds; interrupt inside the wait.
    let t = Instant::now();
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    use std::io::Read;
    while !String::from_utf8_lossy(&seen).contains("measuring starts at") {
        let n = stderr.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "ended before waiting: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
        assert!(t.elapsed() < Duration::from_secs(30));
    }
    kill(pid, Signal::SIGINT).unwrap();
    stderr.read_to_end(&mut seen).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let err = String::from_utf8_lossy(&seen);
    assert!(
        err.contains("cancelled while waiting for --start-at; nothing was measured or stored"),
        "{err}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(40),
        "the wait was not cut short"
    );
    let runs = env.json(&["history", "--json"]);
    assert_eq!(runs.as_array().unwrap().len(), 0, "{runs}");
}

#[test]
fn a_fetched_document_that_is_malformed_or_badly_tagged_is_refused_whole() {
    let env = TestEnv::new();
    let good: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/documents/timers.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let text = serde_json::to_string(&good).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated.json",
            text[..text.len() / 2].to_string(),
            "is not valid JSON",
        ),
        (
            "badtag.json",
            {
                let mut d = good.clone();
                d["tags"] = serde_json::json!({"bad key": "x"});
                d.to_string()
            },
            "refused",
        ),
        (
            "ctltag.json",
            {
                let mut d = good.clone();
                d["tags"] = serde_json::json!({"host": "a\u{1b}[31m"});
                d.to_string()
            },
            "refused",
        ),
        (
            "badstart.json",
            {
                let mut d = good.clone();
                d["scheduled_start"] = serde_json::json!({"requested_at": "soon", "began_at": "2026-11-23T15:00:00Z", "late_ms": -1, "waited_s": 0});
                d.to_string()
            },
            "refused",
        ),
    ];
    for (name, body, why) in cases {
        let f = env.file(name, &body);
        let out = env
            .cmd()
            .args(["import", f.to_str().unwrap()])
            .output()
            .unwrap();
        assert_refused(&env, &out, &name);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{name}: {err}");
    }
    // The untouched document (no tags, no scheduled start: an earlier version's) imports.
    let f = env.file("good.json", &text);
    env.text(&["import", f.to_str().unwrap()]);
    assert_eq!(
        env.json(&["history", "--json"]).as_array().unwrap().len(),
        1
    );
}

/// A throwaway OpenSSH server on 127.0.0.1: its own host key, client key, configuration
/// and free port in a temporary directory; killed and removed when dropped.
struct Sshd {
    child: std::process::Child,
    dir: tempfile::TempDir,
    port: u16,
    /// /run/sshd (sshd's privilege separation directory) was made here and goes again.
    made_privsep: bool,
}

impl Sshd {
    fn start() -> Sshd {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let d = d.as_path();
        for key in ["host_key", "client_key"] {
            let ok = std::process::Command::new("ssh-keygen")
                .args([
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-C",
                    "truebench-test",
                    "-f",
                ])
                .arg(d.join(key))
                .status()
                .expect("ssh-keygen (openssh-client) runs");
            assert!(ok.success());
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        let port = common::free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
             StrictModes no\nSubsystem sftp internal-sftp\n",
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), config).unwrap();
        let privsep = std::path::Path::new("/run/sshd");
        let made_privsep = !privsep.exists();
        if made_privsep {
            std::fs::create_dir(privsep).unwrap();
        }
        let child = std::process::Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
            .spawn()
            .expect("/usr/sbin/sshd (openssh-server) runs");
        let sshd = Sshd {
            child,
            dir,
            port,
            made_privsep,
        };
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "sshd did not listen: {}",
                std::fs::read_to_string(sshd.dir.path().join("sshd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let host_key = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
        let key: Vec<&str> = host_key.split_whitespace().take(2).collect();
        std::fs::write(
            d.join("known_hosts"),
            format!("[127.0.0.1]:{port} {}\n", key.join(" ")),
        )
        .unwrap();
        sshd
    }

    /// Inventory variables of a host reached through this server as root.
    fn host_vars(&self) -> Value {
        let d = self.dir.path().display();
        serde_json::json!({
            "ansible_host": "127.0.0.1",
            "ansible_port": self.port,
            "ansible_user": "root",
            "ansible_ssh_private_key_file": format!("{d}/client_key"),
            "ansible_ssh_common_args": format!("-o UserKnownHostsFile={d}/known_hosts -o StrictHostKeyChecking=yes -o ControlMaster=no"),
        })
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
        if self.made_privsep {
            let _ = std::fs::remove_dir("/run/sshd");
        }
    }
}

/// ansible-playbook from PATH or the virtual environment scripts/test makes.
fn ansible_playbook() -> std::path::PathBuf {
    common::tool("ansible-playbook")
}

/// A 64-bit ELF header for AArch64 (e_machine 183): an x86-64 kernel refuses to run it
/// (ENOEXEC), as it refuses a binary built for another architecture.
fn other_architecture_binary(path: &std::path::Path) {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2; // 64-bit
    h[5] = 1; // little endian
    h[6] = 1; // ELF version
    h[16] = 2; // ET_EXEC
    h[18] = 183; // EM_AARCH64
    h[20] = 1;
    std::fs::write(path, h).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The truebench.* temporary directories in /tmp now.
/// What a run of the playbook may leave in /tmp: the directories it copies the binary to, and
/// the module payloads Ansible unpacks (a job killed at its async limit leaves its own).
fn copied_dirs() -> Vec<std::path::PathBuf> {
    std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("truebench.")
                    || (n.starts_with("ansible_") && n.contains("_payload_"))
            })
        })
        .collect()
}

#[test]
#[ignore = "needs root"]
fn the_playbook_measures_three_hosts_at_one_start_and_reports_each_failure_with_its_reason() {
    common::needs_root();
    let sshd = Sshd::start();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    // The playbook deploys the dist build by default (built by scripts/test; the
    // playbook's build step finds it up to date).
    let dist = common::dist_binary(None);
    let bin = dist.to_str().unwrap();
    let target_dir = dist.parent().unwrap().parent().unwrap();
    other_architecture_binary(&w.join("truebench-aarch64"));
    // A build whose export is cut short: the controller must refuse its document whole.
    std::fs::write(
        w.join("truebench-garbled"),
        format!(
            "#!/bin/sh\ncase \" $* \" in *' export '*) \"{bin}\" \"$@\" && o=$(echo \"$@\" | sed 's/.*--output //') && head -c 100 \"$o\" > \"$o.cut\" && mv \"$o.cut\" \"$o\" ;; *) exec \"{bin}\" \"$@\" ;; esac\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        w.join("truebench-garbled"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();

    let lock = |h: &str| serde_json::json!({"TRUEBENCH_LOCK": w.join(format!("lock-{h}"))});
    let local = |h: &str| serde_json::json!({"ansible_connection": "local", "truebench_environment": lock(h)});
    let mut ssh1 = sshd.host_vars();
    ssh1["truebench_environment"] = lock("ssh1");
    let mut ssh2 = sshd.host_vars();
    ssh2["truebench_environment"] = lock("ssh2");
    let mut wrongarch = local("wrongarch");
    wrongarch["truebench_binary"] = w.join("truebench-aarch64").display().to_string().into();
    let mut garbled = local("garbled");
    garbled["truebench_binary"] = w.join("truebench-garbled").display().to_string().into();
    // A host whose C library is older than the binary needs (the preflight says so).
    let mut oldlibc = local("oldlibc");
    oldlibc["truebench_min_glibc"] = "99.0".into();
    let mut slow = local("slow");
    slow["truebench_command"] = "record".into();
    // 600 s of recording, ended by its 3 s limit: a kill that failed would hold the playbook
    // far beyond the bound on its whole duration below.
    slow["truebench_options"] = serde_json::json!(["--interval", "0.5", "--duration", "600"]);
    slow["truebench_time_limit"] = 3.into();
    let mut gone = sshd.host_vars();
    gone["ansible_port"] = 1.into(); // nothing listens there: unreachable
    let inventory = serde_json::json!({"all": {
    // Options as inventory variables (extra vars would override the hosts' own).
    "vars": {"ansible_python_interpreter": "/usr/bin/python3",
             "truebench_suites": ["timers"], "truebench_options": ["--samples", "3"]},
    "children": {
        "web": {"hosts": {"local1": local("local1"), "ssh1": ssh1}},
        "db": {"hosts": {"ssh2": ssh2}},
        "odd": {"hosts": {"wrongarch": wrongarch, "garbled": garbled, "oldlibc": oldlibc, "slow": slow, "gone": gone}},
    }}});
    std::fs::write(w.join("inventory.json"), inventory.to_string()).unwrap();
    let results = w.join("results");
    let db = w.join("fleet.db");
    let before = copied_dirs();

    let t = Instant::now();
    let mut playbook = std::process::Command::new(ansible_playbook());
    // The playbook's `cargo build --profile dist` must find scripts/test's build up to date:
    // the variables cargo sets for a test run (OUT_DIR above all: cargo reads a set OUT_DIR
    // as a changed input) made it rebuild the crate, minutes on 2 CPUs. A user's shell has
    // none of them.
    for (k, _) in std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))) {
        let set_by_cargo_test = k == "OUT_DIR"
            || k == "LD_LIBRARY_PATH"
            || k == "CARGO_CRATE_NAME"
            || k == "CARGO_PRIMARY_PACKAGE"
            || [
                "CARGO_PKG_",
                "CARGO_MANIFEST_",
                "CARGO_BIN_EXE_",
                "TRUEBENCH_GIT_",
                "TRUEBENCH_EXECL_",
            ]
            .iter()
            .any(|p| k.starts_with(p));
        if set_by_cargo_test {
            playbook.env_remove(&k);
        }
    }
    let out = playbook
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/ansible"))
        .env("ANSIBLE_HOME", w.join("ansible-home"))
        .env("ANSIBLE_LOCAL_TEMP", w.join("ansible-local"))
        .env("ANSIBLE_REMOTE_TEMP", w.join("ansible-remote"))
        .env("ANSIBLE_ASYNC_DIR", w.join("ansible-async"))
        .env("ANSIBLE_SSH_ARGS", "-o ControlMaster=no")
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_FORKS", "10")
        .args([
            "-i",
            w.join("inventory.json").to_str().unwrap(),
            "fleet.yml",
        ])
        .args([
            "-e",
            &serde_json::json!({
                "truebench_target_dir": target_dir,
                // Launching on six hosts of a loaded 2-CPU machine takes seconds.
                "truebench_start_delay": 15,
                "truebench_poll_interval": 1,
                "truebench_results_dir": results,
                "truebench_db": db,
            })
            .to_string(),
        ])
        .output()
        .unwrap();
    let elapsed = t.elapsed();
    let log =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "hosts failed, the playbook must say so: {log}"
    );
    let recap = |host: &str| {
        log.lines()
            .rev()
            .find(|l| l.starts_with(&format!("{host} ")) && l.contains("ok="))
            .unwrap_or_else(|| panic!("no recap line for {host}: {log}"))
            .to_string()
    };
    for good in ["local1", "ssh1", "ssh2", "garbled"] {
        let r = recap(good);
        assert!(
            r.contains("unreachable=0") && r.contains("failed=0"),
            "{r}\n{log}"
        );
    }
    for failed in ["wrongarch", "oldlibc", "slow"] {
        assert!(recap(failed).contains("failed=1"), "{log}");
    }
    assert!(recap("gone").contains("unreachable=1"), "{log}");
    assert!(
        log.contains("truebench cannot run on wrongarch (x86_64, kernel"),
        "{log}"
    );
    assert!(log.contains("Exec format error"), "{log}");
    let libc = log
        .lines()
        .find(|l| l.contains("truebench cannot run on oldlibc: its C library is glibc "))
        .unwrap_or_else(|| panic!("no C library line: {log}"));
    assert!(
        libc.contains("the binary needs glibc 99.0 or newer"),
        "{libc}"
    );
    // The dist binary was built (or found up to date) for this machine's architecture.
    assert!(
        log.contains(&format!("(item={})", std::env::consts::ARCH)),
        "no build step for {}: {log}",
        std::env::consts::ARCH
    );
    assert!(log.contains("truebench timed out on slow"), "{log}");
    assert!(
        log.contains("skipped the document of garbled:") && log.contains("not valid JSON"),
        "{log}"
    );
    assert!(log.contains("4 hosts measured"), "{log}");
    let missing = log
        .lines()
        .find(|l| l.contains("no document from"))
        .unwrap_or_else(|| panic!("{log}"));
    for h in ["wrongarch", "oldlibc", "slow", "gone"] {
        assert!(missing.contains(h), "{missing}");
    }

    // The three good hosts, and only they, are in the controller's database, tagged with
    // their inventory names and groups, scheduled at one start that each met.
    let env = TestEnv::new();
    let runs = env.json(&["--db", db.to_str().unwrap(), "history", "--json"]);
    let runs = runs.as_array().unwrap();
    let mut hosts: Vec<&str> = runs
        .iter()
        .map(|r| r["tags"]["host"].as_str().unwrap())
        .collect();
    hosts.sort();
    assert_eq!(hosts, ["local1", "ssh1", "ssh2"], "{runs:?}");
    let mut starts = vec![];
    for r in runs {
        let doc = env.json(&[
            "--db",
            db.to_str().unwrap(),
            "show",
            r["run_id"].as_str().unwrap(),
            "--json",
        ]);
        let group = if doc["tags"]["host"] == "ssh2" {
            "db"
        } else {
            "web"
        };
        assert_eq!(doc["tags"]["group"], group, "{}", doc["tags"]);
        assert!(doc["tags"]["fleet"].is_string());
        let s = &doc["scheduled_start"];
        starts.push(s["requested_at"].as_str().unwrap().to_string());
        assert!(s["late_ms"].as_f64().unwrap() < 1000.0, "{s}");
        assert!(s["clock_sync"].is_object(), "{s}");
        assert!(doc["results"].as_array().unwrap().len() >= 3);
    }
    starts.dedup();
    assert_eq!(starts.len(), 1, "one start for all: {starts:?}");
    let fleet = runs[0]["tags"]["fleet"].as_str().unwrap();
    let filtered = env.json(&[
        "--db",
        db.to_str().unwrap(),
        "history",
        "--json",
        "--tag",
        &format!("fleet={fleet}"),
    ]);
    assert_eq!(filtered.as_array().unwrap().len(), 3);
    // The controller ranks this fleet's three runs (they share this machine's host name;
    // the inventory host tag of `--by tag:host` is shown beside it).
    assert!(!log.contains("ranking unavailable"), "{log}");
    assert!(log.contains("rank"), "no ranking printed: {log}");
    // The fleet view: the three hosts, each against the fleet's median per row.
    assert!(log.contains("Fleet of 3 hosts"), "{log}");

    // Nothing copied or unpacked is left on the hosts (the slow host's job, killed at its
    // time limit, left Ansible's module payload in /tmp before it was unpacked in the
    // copied directory), nothing still runs.
    let after: Vec<_> = copied_dirs()
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert!(after.is_empty(), "left behind: {after:?}");
    // A run killed at its time limit may still be ending (it was seen 1 s later once);
    // it must be gone within 10 s.
    let gone_by = std::time::Instant::now() + Duration::from_secs(10);
    let ps = loop {
        let ps = std::process::Command::new("pgrep")
            .args(["-af", &format!("fleet={fleet}")])
            .output()
            .unwrap();
        if ps.stdout.is_empty() || std::time::Instant::now() >= gone_by {
            break ps;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        ps.stdout.is_empty(),
        "still running: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
    // Eight hosts of Ansible (two over ssh) on a 2-CPU machine took 154 s once; the slow host
    // alone would take 600 s if its time limit did not end it.
    assert!(elapsed < Duration::from_secs(300), "took {elapsed:?}");
}

/// A real `run timers --samples 5` of this machine (clocksource tsc), and one of the same
/// machine a second later under clocksource kvm-clock (tests/fixtures/fleet).
fn fleet_fixture(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fleet")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `n` host documents in `dir`: copies of the tsc run, each host's figures scaled by its own
/// factor within ±2%; with `planted`, hosts 3, 20 and 37 are copies of the kvm-clock run
/// and hosts 11, 28 and 45 are 1.3x slower on every row. Returns (kvm hosts, slow hosts).
fn write_fleet(dir: &std::path::Path, n: usize, planted: bool) -> (Vec<String>, Vec<String>) {
    use rand::{Rng, SeedableRng};
    let tsc = fleet_fixture("timers-tsc.json");
    let kvm = fleet_fixture("timers-kvm-clock.json");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(28);
    let (mut kvm_hosts, mut slow_hosts) = (vec![], vec![]);
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        let host = format!("host-{i:03}");
        let is_kvm = planted && [3, 20, 37].contains(&i);
        let is_slow = planted && [11, 28, 45].contains(&i);
        let mut d = if is_kvm { kvm.clone() } else { tsc.clone() };
        d["run_id"] = format!("20990101T000000Z-{i:04}").into();
        d["host"] = host.clone().into();
        d["env"]["hostname"] = host.clone().into();
        d["tags"] = serde_json::json!({"host": host, "rack": format!("r{}", i % 5)});
        let f = if is_slow {
            1.3
        } else {
            rng.gen_range(0.98..1.02)
        };
        for r in d["results"].as_array_mut().unwrap() {
            // Times: every figure of the result scales (order statistics scale with it).
            for s in r["samples"].as_array_mut().unwrap() {
                *s = (s.as_f64().unwrap() * f).into();
            }
            for k in ["median", "ci95_low", "ci95_high", "mean", "min", "max"] {
                if let Some(v) = r["stats"][k].as_f64() {
                    r["stats"][k] = (v * f).into();
                }
            }
            r.as_object_mut().unwrap().remove("derived");
        }
        std::fs::write(dir.join(format!("{host}.json")), d.to_string()).unwrap();
        if is_kvm {
            kvm_hosts.push(host);
        } else if is_slow {
            slow_hosts.push(host);
        }
    }
    (kvm_hosts, slow_hosts)
}

fn outlier_hosts(view: &Value) -> Vec<String> {
    let mut v: Vec<String> = view["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["outlier"] == true)
        .map(|h| h["host"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn fifty_hosts_import_at_once_and_the_fleet_view_names_the_planted_outliers_by_cause() {
    let env = TestEnv::new();
    let dir = env.dir.path().join("docs");
    let (kvm, slow) = write_fleet(&dir, 50, true);
    // A directory in one process; a broken document is refused, the others stored (exit 2).
    std::fs::write(dir.join("zz-broken.json"), "{\"schema\": ").unwrap();
    let out = env.cmd().arg("import").arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("zz-broken.json") && err.contains("not valid JSON"),
        "{err}"
    );
    assert!(err.contains("1 of 51 documents refused"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 50 runs"));
    assert_eq!(
        env.json(&["history", "--json", "--limit", "1000"])
            .as_array()
            .unwrap()
            .len(),
        50
    );

    let v = env.json(&["compare", "--latest-per-host", "--json"]);
    assert_eq!(v["view"], "fleet");
    let mut planted: Vec<String> = kvm.iter().chain(&slow).cloned().collect();
    planted.sort();
    assert_eq!(outlier_hosts(&v), planted);
    // Outliers first; each row written once.
    let hosts = v["hosts"].as_array().unwrap();
    assert!(hosts[..6].iter().all(|h| h["outlier"] == true));
    assert_eq!(v["rows"].as_array().unwrap().len(), 11);
    assert!(v.get("comparisons").is_none());
    // Grouped by cause: the kvm-clock hosts together, named by their clocksource; the
    // uniformly slower ones apart.
    let groups = v["cause_groups"].as_array().unwrap();
    let members = |g: &Value| -> Vec<String> {
        let mut m: Vec<String> = g["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                hosts.iter().find(|h| &h["run"] == r).unwrap()["host"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        m.sort();
        m
    };
    let kvm_group = groups
        .iter()
        .find(|g| {
            g["label"]
                .as_str()
                .unwrap()
                .contains("clocksource kvm-clock")
        })
        .unwrap_or_else(|| panic!("{groups:?}"));
    assert_eq!(members(kvm_group), kvm);
    let slow_group = groups.iter().find(|g| members(g) == slow);
    assert!(slow_group.is_some(), "{groups:?}");
    assert!(slow_group.unwrap()["rows"][0]
        .as_str()
        .unwrap()
        .contains("23% slower"));

    // The text: at most 60 lines of at most 100 characters, the planted hosts named.
    let text = env.text(&["compare", "--latest-per-host"]);
    assert!(text.lines().count() <= 60, "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    for h in &planted {
        assert!(text.contains(h.as_str()), "{h}: {text}");
    }
    assert!(
        text.contains("44 hosts within the fleet's spread"),
        "{text}"
    );
    // --top caps the lists; -v adds the per-row table and each outlier's evidence.
    let top = env.json(&["compare", "--latest-per-host", "--json", "--top", "1"]);
    assert_eq!(top["hosts"].as_array().unwrap().len(), 2 + 2);
    let verbose = env.text(&["compare", "--latest-per-host", "-v", "--top", "2"]);
    assert!(
        verbose.contains("fleet median") && verbose.contains("against the typical host"),
        "{verbose}"
    );
    assert!(
        verbose.lines().all(|l| l.chars().count() <= 100),
        "{verbose}"
    );

    // The report: the fleet section with a strip chart per row and the host table; only the
    // typical host's and the outliers' runs in full.
    let ids: Vec<String> = (0..50)
        .map(|i| format!("20990101T000000Z-{i:04}"))
        .collect();
    let args: Vec<&str> = std::iter::once("report")
        .chain(ids.iter().map(|s| s.as_str()))
        .collect();
    let html = env.text(&args);
    assert!(html.contains("<h2>Fleet</h2>"), "no fleet section");
    assert_eq!(
        html.matches("<h2>Run ").count(),
        7,
        "the typical host and 6 outliers"
    );
    // Each outlier a dot in its group's colour on each row it is off on, each group labelled
    // once per row; the other hosts one path of dots per row.
    assert!(
        html.matches("<circle class=\"outlier\"").count() >= 6,
        "{html}"
    );
    assert_eq!(html.matches("<path class=\"typical\"").count(), 11);
    assert!(html.contains("<text class=\"glabel\""));
    assert!(!html.to_lowercase().contains("<script"));
}

#[test]
fn a_fleet_within_a_few_percent_has_no_outlier() {
    let env = TestEnv::new();
    let dir = env.dir.path().join("docs");
    write_fleet(&dir, 50, false);
    env.text(&["import", dir.to_str().unwrap()]);
    let v = env.json(&["compare", "--latest-per-host", "--json"]);
    assert!(outlier_hosts(&v).is_empty(), "{}", v["cause_groups"]);
    assert_eq!(v["typical"]["hosts"], 50);
    let text = env.text(&["compare", "--latest-per-host"]);
    assert!(text.contains("No outlier"), "{text}");
    // Documents without rounds, and no calibration or history: the fleet's spread alone.
    assert!(text.contains("fleet spread alone"), "{text}");
}

#[test]
fn compare_by_tag_with_no_ids_ranks_the_tagged_runs_and_ndjson_imports_on_stdin() {
    let env = TestEnv::new();
    let tsc = fleet_fixture("timers-tsc.json");
    // NDJSON on standard input: four documents, one of them refused (a bad tag).
    let mut lines = vec![];
    for (i, tag) in ["web-1", "web-2", "web-3", ""].iter().enumerate() {
        let mut d = tsc.clone();
        d["run_id"] = format!("20990101T000000Z-t{i:03}").into();
        d["host"] = format!("h{i}").into();
        d["tags"] = match *tag {
            "" => serde_json::json!({"other": "x"}),
            t => serde_json::json!({"inv": t}),
        };
        lines.push(d.to_string());
    }
    let mut bad = tsc.clone();
    bad["run_id"] = "20990101T000000Z-bad0".into();
    bad["tags"] = serde_json::json!({"bad key": "x"});
    lines.insert(2, bad.to_string());
    let out = env
        .cmd()
        .args(["import", "-"])
        .write_stdin(lines.join("\n"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("refused standard input:3"), "{err}");
    assert_eq!(
        env.json(&["history", "--json"]).as_array().unwrap().len(),
        4
    );
    let v = env.json(&["compare", "--by", "tag:inv", "--json"]);
    let runs: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        runs,
        [
            "20990101T000000Z-t000",
            "20990101T000000Z-t001",
            "20990101T000000Z-t002"
        ]
    );
    assert_eq!(v["view"], "fleet");
    assert_eq!(v["hosts"].as_array().unwrap().len(), 3);
    assert!(v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["group"].as_str().unwrap().starts_with("web-")));
    // --tag selects too; fewer than two runs carrying it is refused.
    let out = env
        .cmd()
        .args(["compare", "--tag", "inv=web-1", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.contains("1 stored run carries tag inv=web-1"), "{err}");
}

/// The planted fleet's outliers (host names) against what was planted: (missed planted,
/// others called), and the view.
fn judge(
    fleet: &[(truebench::result::RunDocument, common::fleet::Kind)],
) -> (Vec<String>, Vec<String>, truebench::fleet::FleetView) {
    use common::fleet::Kind;
    let docs: Vec<truebench::result::RunDocument> = fleet.iter().map(|x| x.0.clone()).collect();
    let v = truebench::fleet::view(&docs, &truebench::fleet::Options::default());
    let out: std::collections::BTreeSet<&str> = v
        .hosts
        .iter()
        .filter(|h| h.outlier)
        .filter_map(|h| h.host.as_deref())
        .collect();
    let name = |d: &truebench::result::RunDocument| d.host.clone().unwrap();
    let missed = fleet
        .iter()
        .filter(|(d, k)| *k != Kind::Ordinary && !out.contains(name(d).as_str()))
        .map(|(d, _)| name(d))
        .collect();
    let others = fleet
        .iter()
        .filter(|(d, k)| *k == Kind::Ordinary && out.contains(name(d).as_str()))
        .map(|(d, _)| name(d))
        .collect();
    (missed, others, v)
}

/// The hosts of a group, sorted.
fn group_hosts(v: &truebench::fleet::FleetView, g: usize) -> Vec<String> {
    let mut m: Vec<String> = v.cause_groups[g]
        .hosts
        .iter()
        .map(|r| {
            v.hosts
                .iter()
                .find(|h| &h.run == r)
                .unwrap()
                .host
                .clone()
                .unwrap()
        })
        .collect();
    m.sort();
    m
}

fn planted_of(
    fleet: &[(truebench::result::RunDocument, common::fleet::Kind)],
    kind: common::fleet::Kind,
) -> Vec<String> {
    let mut m: Vec<String> = fleet
        .iter()
        .filter(|x| x.1 == kind)
        .map(|x| x.0.host.clone().unwrap())
        .collect();
    m.sort();
    m
}

#[test]
fn a_planted_fleet_of_500_with_rounds_noise_names_the_20_and_puts_the_uniform_ten_first() {
    use common::fleet::{kind_of, planted, Kind};
    use truebench::fleet::groups;
    let fleet = planted(500, 36, kind_of);
    let (missed, others, v) = judge(&fleet);
    assert!(missed.is_empty(), "planted hosts missed: {missed:?}");
    // At most 0.2% of the 480 ordinary hosts: none.
    assert!(others.is_empty(), "ordinary hosts called: {others:?}");
    // Every test had the host's own noise from its rounds.
    assert_eq!(v.noise.rounds, 500 * 11);
    assert_eq!((v.noise.model, v.noise.fleet_only), (0, 0));
    // The uniformly slower ten first, in a group of their own, then the clocksource ten.
    let g = &v.cause_groups[0];
    assert_eq!(g.kind, groups::Kind::Uniform, "{:?}", v.cause_groups);
    assert_eq!(group_hosts(&v, 0), planted_of(&fleet, Kind::Slower));
    assert!(
        g.label.starts_with("slower on ")
            && g.label.contains("11 rows by")
            && g.label.contains("look at what the runs do not record"),
        "{}",
        g.label
    );
    assert!(g.factor_min > 0.65 && g.factor_max < 0.8, "{g:?}");
    let clock = v
        .cause_groups
        .iter()
        .position(|g| g.label.contains("clocksource kvm-clock"))
        .unwrap_or_else(|| panic!("{:?}", v.cause_groups));
    assert_eq!(v.cause_groups[clock].kind, groups::Kind::Explained);
    assert_eq!(
        group_hosts(&v, clock),
        planted_of(&fleet, Kind::Clocksource)
    );
    // The text: within 60 lines of 100 characters, saying whose noise and the minimum fleet;
    // -v lists every host.
    let text = truebench::report::fleet_text::render(&v, false);
    assert!(
        text.lines().count() <= 60,
        "{} lines:\n{text}",
        text.lines().count()
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(text.contains("only with 10+ hosts on a row"), "{text}");
    assert!(text.contains("rounds of its run 5500"), "{text}");
    assert!(text.contains("11 rows by"), "{text}");
    let verbose = truebench::report::fleet_text::render(&v, true);
    for h in planted_of(&fleet, Kind::Slower) {
        assert!(verbose.contains(&h), "{h}");
    }
    // Each explained host's line names its cause whole (wrapped, not cut at 100 columns).
    let flat = verbose.split_whitespace().collect::<Vec<_>>().join(" ");
    for h in v.hosts.iter().filter_map(|h| h.cause.as_ref()) {
        let said = format!("differing rows explained by {}", h.cause);
        assert!(flat.contains(&said), "{said}");
    }
    assert!(
        v.hosts.iter().any(|h| h.cause.is_some()),
        "no explained host"
    );
}

#[test]
fn a_planted_fleet_of_10000_names_the_400_with_few_others_and_an_a_a_fleet_none() {
    use common::fleet::{kind_of, planted, Kind};
    let fleet = planted(10_000, 37, kind_of);
    assert_eq!(fleet.iter().filter(|x| x.1 != Kind::Ordinary).count(), 400);
    let (missed, others, v) = judge(&fleet);
    println!("10,000 planted: {} ordinary hosts called", others.len());
    assert!(missed.is_empty(), "planted hosts missed: {missed:?}");
    assert!(
        others.len() as f64 <= 0.002 * 9_600.0,
        "{} ordinary hosts called: {others:?}",
        others.len()
    );
    assert_eq!(group_hosts(&v, 0), planted_of(&fleet, Kind::Slower));
    let text = truebench::report::fleet_text::render(&v, false);
    assert!(
        text.lines().count() <= 100,
        "{} lines:\n{text}",
        text.lines().count()
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");

    // A/A: every host the same machine's noise (with its disturbed rows).
    for (n, seed) in [(500, 38), (10_000, 39)] {
        let aa = planted(n, seed, |_| Kind::Ordinary);
        let (_, others, v) = judge(&aa);
        assert!(others.is_empty(), "A/A of {n}: {others:?}");
        assert!(v.cause_groups.is_empty());
    }
}
