//! Every read from outside is bounded: HTTP responses (header lines, header count, body
//! size, a stalled server), metric files (/dev/zero, a FIFO without writer), imports, and
//! run ids given on the command line. Each limit is a clear error, never a hang, an abort
//! or an out-of-memory.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};
use truebench::loadstep::http::{parse_url, Client};

mod common;

use common::TestEnv as Env;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A server that answers each request with `reply` (then keeps the connection open).
fn server(reply: impl Fn(&mut std::net::TcpStream) + Send + 'static) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" {
                    reply(&mut s);
                }
                line.clear();
            }
        }
    });
    format!("http://{addr}/")
}

fn get(url: &str) -> (Result<u16, String>, Duration) {
    let mut c = Client::new(&parse_url(url).unwrap());
    let t = Instant::now();
    let r = c.open().and_then(|()| c.get());
    (r, t.elapsed())
}

/// Defect 9: an endless header line is an error, not an abort on memory.
#[test]
fn an_endless_header_line_is_an_error() {
    let url = server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nX-Long: ");
        let chunk = vec![b'a'; 65536];
        while s.write_all(&chunk).is_ok() {}
    });
    let (r, took) = get(&url);
    assert!(r.as_ref().unwrap_err().contains("longer than"), "{r:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// Defect 8: a Content-Length far beyond the limit, and an endless chunk, fail the request
/// at once instead of reading for ever.
#[test]
fn huge_lengths_and_endless_chunks_are_errors() {
    let url = server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\n\r\nxx");
    });
    let (r, took) = get(&url);
    assert!(r.as_ref().unwrap_err().contains("body over"), "{r:?}");
    assert!(took < Duration::from_secs(5));
    let url = server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffff\r\n");
        let chunk = vec![b'a'; 65536];
        while s.write_all(&chunk).is_ok() {}
    });
    let (r, took) = get(&url);
    assert!(r.as_ref().unwrap_err().contains("body over"), "{r:?}");
    assert!(took < Duration::from_secs(5));
    let url = server(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
        for i in 0.. {
            if s.write_all(format!("X-{i}: y\r\n").as_bytes()).is_err() {
                break;
            }
        }
    });
    let (r, _) = get(&url);
    assert!(r.as_ref().unwrap_err().contains("header lines"), "{r:?}");
}

/// Defect 8: a server that accepts and never answers fails the request within the
/// exchange timeout.
#[test]
fn a_stalled_server_times_out() {
    let url = format!("http://{}/", common::silent_listener());
    let (r, took) = get(&url);
    assert!(
        r.as_ref().unwrap_err().contains("no complete response"),
        "{r:?}"
    );
    assert!(
        took >= truebench::loadstep::http::EXCHANGE_TIMEOUT
            && took < truebench::loadstep::http::EXCHANGE_TIMEOUT + Duration::from_secs(3),
        "{took:?}"
    );
}

/// Defect 15 and 24: CR/LF (header injection), spaces and bad ports are refused with a
/// sentence, exit 2.
#[test]
fn bad_urls_are_refused_before_any_request() {
    let env = Env::new();
    for (url, says) in [
        ("http://127.0.0.1:1/a\r\nX-Injected: 1", "percent-encode"),
        ("http://127.0.0.1:1/a b", "percent-encode"),
        (
            "http://127.0.0.1:99999/",
            "port '99999' is not a number from 1 to 65535",
        ),
        ("http://127.0.0.1:0/", "port '0'"),
    ] {
        let out = env
            .cmd()
            .args(["loadstep", "--http", url, "--rates", "10"])
            .output()
            .unwrap();
        common::assert_refused(&env, &out, &url);
        assert!(stderr(&out).contains(says), "{url:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("99999:80"));
    }
    assert!(parse_url("http://h/x\ny").is_err());
    assert_eq!(parse_url("http://[::1]:8080/x").unwrap().addr, "[::1]:8080");
}

/// Defect 9: `record --metric-file /dev/zero` ends on time with the metric unavailable,
/// and `import /dev/zero` is refused, instead of reading until memory runs out.
#[test]
fn endless_files_are_refused_not_read_to_exhaustion() {
    let env = Env::new();
    let t = Instant::now();
    let doc = env.json(&[
        "record",
        "--interval",
        "0.2",
        "--duration",
        "0.6",
        "--metric-file",
        "/dev/zero",
        "--json",
    ]);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(doc["recording"]["unavailable"]["metric_per_s"].is_string());
    let fresh = Env::new();
    let out = fresh.cmd().args(["import", "/dev/zero"]).output().unwrap();
    common::assert_refused(&fresh, &out, &"import /dev/zero");
    // A named file must be a regular file: /dev/zero is refused before any byte is read.
    assert!(
        stderr(&out).contains("it is a device, not a regular file"),
        "{}",
        stderr(&out)
    );
}

/// Defect 10: a metric file that is a FIFO without a writer does not block the recording.
#[test]
fn a_fifo_without_writer_does_not_block_a_recording() {
    let env = Env::new();
    let fifo = env.dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let t = Instant::now();
    let doc = env.json(&[
        "record",
        "--interval",
        "0.2",
        "--duration",
        "0.6",
        "--metric-file",
        fifo.to_str().unwrap(),
        "--json",
    ]);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(doc["recording"]["rows"].as_array().unwrap().len() >= 2);
    // And a command that never ends does not stall the interval grid.
    let t = Instant::now();
    env.json(&[
        "record",
        "--interval",
        "0.2",
        "--duration",
        "0.6",
        "--metric-cmd",
        "sleep 60",
        "--json",
    ]);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

/// Defect 19 and 24: a 50,000-character id is "no run", exit 2 (it was SQLite's "pattern
/// too complex", exit 1); an empty id is said to be empty, not "ambiguous".
#[test]
fn odd_run_ids_are_refused_in_a_sentence() {
    let env = Env::new();
    env.json(&["record", "--interval", "0.1", "--duration", "0.2", "--json"]);
    let long = "a".repeat(50_000);
    let out = env.cmd().args(["show", &long]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no run"), "{}", stderr(&out));
    assert!(stderr(&out).len() < 400, "the whole id echoed back");
    let out = env.cmd().args(["show", ""]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty run id"), "{}", stderr(&out));
    for id in ["%", "_", "a%b"] {
        let out = env.cmd().args(["show", id]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{id}: {}", stderr(&out));
        assert!(stderr(&out).contains("no run"), "{}", stderr(&out));
    }
}
