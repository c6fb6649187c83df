//! The `--http URL` workload's client: one keep-alive HTTP/1.1 connection per worker, a GET
//! per message, the response read whole (Content-Length or chunked) and its status checked.
//! A connection the server closes is opened again (and counted). Plain http only.
//!
//! Every network call is bounded: connecting waits at most CONNECT_TIMEOUT, one exchange
//! (request and whole response) at most EXCHANGE_TIMEOUT, a header line is at most
//! MAX_LINE bytes, a response has at most MAX_HEADERS header lines and MAX_BODY bytes of
//! body; Ctrl-C and SIGTERM are looked at between reads. A server that stalls, announces
//! a huge length or sends an endless chunk makes that request fail, never hangs the run.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Longest wait for a TCP connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest one request and its whole response may take.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest status or header line.
pub const MAX_LINE: usize = 8192;
/// Most header lines in one response.
pub const MAX_HEADERS: usize = 100;
/// Largest response body.
pub const MAX_BODY: u64 = 64 << 20;
/// One read waits at most this long before the deadline and Ctrl-C are looked at again.
const READ_SLICE: Duration = Duration::from_millis(200);

/// Where requests go.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// host:port to connect to.
    pub addr: String,
    /// The Host header.
    pub host: String,
    pub path: String,
}

/// Parse `http://host[:port][/path]`. Control characters, spaces and non-ASCII bytes are
/// refused anywhere (a CR/LF in the path would inject headers), and a port must be 1-65535.
pub fn parse_url(url: &str) -> Result<Target, String> {
    // Quoted without user information or query: a password never reaches a message.
    let shown: String = crate::redact::url(url).chars().take(80).collect();
    if let Some(c) = url
        .chars()
        .find(|c| c.is_control() || *c == ' ' || !c.is_ascii())
    {
        return Err(format!(
            "'{shown}': the URL contains {c:?}; percent-encode it (e.g. %20 for a space)"
        ));
    }
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("'{shown}': only http:// URLs are supported (no TLS)"))?;
    let (hostport, path) = match rest.find(['/', '?', '#']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], &rest[i..]),
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    let path = path.split('#').next().unwrap_or("/").to_string();
    if hostport.contains('@') {
        return Err(format!(
            "'{shown}': user information (USER:PASSWORD@) is not supported"
        ));
    }
    if hostport.is_empty() {
        return Err(format!("'{shown}': no host"));
    }
    // [v6addr]:port, host:port, or a host alone (port 80).
    let (host, port) = match hostport.strip_prefix('[') {
        Some(v6) => {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("'{shown}': unclosed [ in the host"))?;
            (format!("[{h}]"), after.strip_prefix(':'))
        }
        None => match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (hostport.to_string(), None),
        },
    };
    if host.is_empty() || host == "[]" {
        return Err(format!("'{shown}': no host"));
    }
    let port = match port {
        None => 80,
        Some(p) => {
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| match url.contains('@') {
                    // What looks like a port may be a password cut at a '/' before its '@'.
                    true => format!("'{shown}': the port is not a number from 1 to 65535"),
                    false => format!("'{shown}': port '{p}' is not a number from 1 to 65535"),
                })?
        }
    };
    Ok(Target {
        addr: format!("{host}:{port}"),
        host: hostport.to_string(),
        path,
    })
}

/// The target's addresses (a name is resolved once).
fn addresses(t: &Target) -> Result<Vec<SocketAddr>, String> {
    let a: Vec<SocketAddr> = t
        .addr
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", t.addr))?
        .collect();
    if a.is_empty() {
        return Err(format!("{} resolves to no address", t.addr));
    }
    Ok(a)
}

/// A connection within CONNECT_TIMEOUT, with bounded reads and writes.
fn connect(t: &Target) -> Result<TcpStream, String> {
    let mut last = String::new();
    for a in addresses(t)? {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(s) => {
                s.set_read_timeout(Some(READ_SLICE))
                    .and_then(|()| s.set_write_timeout(Some(EXCHANGE_TIMEOUT)))
                    .map_err(|e| format!("connect {}: {e}", t.addr))?;
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = format!("connect {}: {e}", t.addr),
        }
    }
    Err(last)
}

/// Whether the server accepts a connection now (before any load step).
pub fn check_reachable(t: &Target) -> Result<(), String> {
    connect(t).map(drop)
}

/// A stream read with a deadline, in slices that look at Ctrl-C.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
}

impl Conn {
    fn new(stream: TcpStream) -> Conn {
        Conn {
            stream,
            buf: vec![0; 16384],
            pos: 0,
            end: 0,
        }
    }

    /// More bytes into the buffer; Ok(false) at the end of the stream.
    fn fill(&mut self, deadline: Instant) -> Result<bool, String> {
        if self.pos < self.end {
            return Ok(true);
        }
        loop {
            if crate::interrupt::requested() {
                return Err("interrupted".into());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "no complete response within {} s",
                    EXCHANGE_TIMEOUT.as_secs()
                ));
            }
            match self.stream.read(&mut self.buf) {
                Ok(n) => {
                    self.pos = 0;
                    self.end = n;
                    return Ok(n > 0);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// One line (without CR LF), at most MAX_LINE bytes; None at the end of the stream.
    fn line(&mut self, deadline: Instant) -> Result<Option<String>, String> {
        let mut line = Vec::new();
        loop {
            if !self.fill(deadline)? {
                return Ok(if line.is_empty() {
                    None
                } else {
                    Some(String::from_utf8_lossy(&line).into_owned())
                });
            }
            let avail = &self.buf[self.pos..self.end];
            match avail.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    line.extend_from_slice(&avail[..i]);
                    self.pos += i + 1;
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    if line.len() > MAX_LINE {
                        return Err(format!("a header line longer than {MAX_LINE} bytes"));
                    }
                    return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
                }
                None => {
                    line.extend_from_slice(avail);
                    self.pos = self.end;
                    if line.len() > MAX_LINE {
                        return Err(format!("a header line longer than {MAX_LINE} bytes"));
                    }
                }
            }
        }
    }

    /// Skip `n` bytes; Ok(skipped), fewer only at the end of the stream.
    fn skip(&mut self, n: u64, deadline: Instant) -> Result<u64, String> {
        let mut left = n;
        while left > 0 {
            if !self.fill(deadline)? {
                break;
            }
            let take = ((self.end - self.pos) as u64).min(left);
            self.pos += take as usize;
            left -= take;
        }
        Ok(n - left)
    }
}

/// One keep-alive connection.
pub struct Client {
    target: Target,
    request: Vec<u8>,
    conn: Option<Conn>,
    /// Connections opened so far.
    opened: u64,
}

impl Client {
    pub fn new(target: &Target) -> Client {
        Client {
            request: format!(
                "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: truebench\r\nAccept: */*\r\n\r\n",
                target.path, target.host
            )
            .into_bytes(),
            target: target.clone(),
            conn: None,
            opened: 0,
        }
    }

    fn connect(&mut self) -> Result<(), String> {
        self.conn = Some(Conn::new(connect(&self.target)?));
        self.opened += 1;
        Ok(())
    }

    /// Connections opened after the first (the server closed one, or an error).
    pub fn reconnects(&self) -> u64 {
        self.opened.saturating_sub(1)
    }

    /// Connect now (before the measured window).
    pub fn open(&mut self) -> Result<(), String> {
        self.connect()
    }

    /// One request and its whole response; Err on a transport error, a response over the
    /// limits, a timeout, or a status >= 400.
    pub fn get(&mut self) -> Result<u16, String> {
        for attempt in 0..2 {
            if self.conn.is_none() || attempt > 0 {
                self.connect()?;
            }
            match self.exchange() {
                Ok(r) => return r,
                // The server closed the kept-alive connection: once more on a new one.
                Err(Failure::Closed(_)) if attempt == 0 => continue,
                Err(Failure::Closed(e)) | Err(Failure::Fatal(e)) => {
                    self.conn = None;
                    return Err(e);
                }
            }
        }
        Err("unreachable".into())
    }

    /// Ok(Ok(status)) or Ok(Err(bad status)); Err on transport trouble.
    fn exchange(&mut self) -> Result<Result<u16, String>, Failure> {
        let deadline = Instant::now() + EXCHANGE_TIMEOUT;
        let conn = self
            .conn
            .as_mut()
            .ok_or(Failure::Closed("not connected".into()))?;
        conn.stream
            .write_all(&self.request)
            .map_err(|e| Failure::Closed(format!("send: {e}")))?;
        let line = conn
            .line(deadline)
            .map_err(Failure::Fatal)?
            .ok_or(Failure::Closed("connection closed".into()))?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                Failure::Fatal(format!(
                    "not an HTTP status line: {:?}",
                    line.chars().take(80).collect::<String>()
                ))
            })?;
        let (mut length, mut chunked, mut close) = (None, false, false);
        let mut headers = 0;
        loop {
            let l = conn
                .line(deadline)
                .map_err(Failure::Fatal)?
                .ok_or(Failure::Fatal("connection closed in the headers".into()))?;
            if l.is_empty() {
                break;
            }
            headers += 1;
            if headers > MAX_HEADERS {
                return Err(Failure::Fatal(format!(
                    "more than {MAX_HEADERS} header lines"
                )));
            }
            if let Some((k, v)) = l.split_once(':') {
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
                match k.as_str() {
                    "content-length" => length = v.parse::<u64>().ok(),
                    "transfer-encoding" => chunked = v.eq_ignore_ascii_case("chunked"),
                    "connection" => close = v.eq_ignore_ascii_case("close"),
                    _ => {}
                }
            }
        }
        let too_big = || Failure::Fatal(format!("a response body over {MAX_BODY} bytes"));
        if chunked {
            let mut total = 0u64;
            loop {
                let l = conn
                    .line(deadline)
                    .map_err(Failure::Fatal)?
                    .ok_or(Failure::Fatal("connection closed in the body".into()))?;
                let size = u64::from_str_radix(l.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| Failure::Fatal(format!("bad chunk size {l:?}")))?;
                total = total.saturating_add(size);
                if total > MAX_BODY {
                    return Err(too_big());
                }
                if size == 0 {
                    // Trailer lines up to the empty one.
                    while let Some(t) = conn.line(deadline).map_err(Failure::Fatal)? {
                        if t.is_empty() {
                            break;
                        }
                    }
                    break;
                }
                if conn.skip(size + 2, deadline).map_err(Failure::Fatal)? != size + 2 {
                    return Err(Failure::Fatal("connection closed in the body".into()));
                }
            }
        } else if let Some(n) = length {
            if n > MAX_BODY {
                return Err(too_big());
            }
            if conn.skip(n, deadline).map_err(Failure::Fatal)? != n {
                return Err(Failure::Fatal("connection closed in the body".into()));
            }
        } else {
            // No length: the body runs to the close.
            if conn.skip(MAX_BODY + 1, deadline).map_err(Failure::Fatal)? > MAX_BODY {
                return Err(too_big());
            }
            close = true;
        }
        if close {
            self.conn = None;
        }
        Ok(if status < 400 {
            Ok(status)
        } else {
            Err(format!("HTTP {status}"))
        })
    }
}

/// A failed exchange: on a kept-alive connection the server may have closed (retry once on
/// a new one); anything else fails the request.
enum Failure {
    Closed(String),
    Fatal(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;

    #[test]
    fn urls_parse_and_bad_ones_are_refused() {
        let t = parse_url("http://127.0.0.1:8080/index.html").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080");
        assert_eq!(t.path, "/index.html");
        let t = parse_url("http://localhost").unwrap();
        assert_eq!((t.addr.as_str(), t.path.as_str()), ("localhost:80", "/"));
        assert!(parse_url("https://x/").is_err());
        assert!(parse_url("http:///x").is_err());
        // No part of a password in the message, wherever the URL breaks.
        for bad in [
            "http://ann:Zq9secret@127.0.0.1:8080/",
            "http://ann:Zq9@x@127.0.0.1/",
            "http://ann:Zq9/x@127.0.0.1/",
            "https://ann:Zq9@127.0.0.1/",
            "http://127.0.0.1:99999/?token=Zq9",
            "http://ann:Zq9 x@127.0.0.1/",
        ] {
            let e = parse_url(bad).unwrap_err();
            assert!(!e.contains("Zq9"), "{bad}: {e}");
        }
    }

    /// A tiny server: two keep-alive responses with a length, one chunked, then a 503 with
    /// Connection: close; the client reads each whole, reports the 503, and reconnects.
    #[test]
    fn responses_are_read_whole_on_one_connection() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let mut accepted = 0;
            for s in l.incoming().take(2) {
                accepted += 1;
                let mut s = s.unwrap();
                let mut r = BufReader::new(s.try_clone().unwrap());
                let replies: &[&str] = if accepted == 1 {
                    &[
                        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
                        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
                        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                        "HTTP/1.1 503 Busy\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy",
                    ]
                } else {
                    &["HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"]
                };
                for reply in replies {
                    let mut line = String::new();
                    loop {
                        line.clear();
                        r.read_line(&mut line).unwrap();
                        if line == "\r\n" {
                            break;
                        }
                    }
                    s.write_all(reply.as_bytes()).unwrap();
                }
            }
        });
        let mut c = Client::new(&parse_url(&format!("http://{addr}/x")).unwrap());
        c.open().unwrap();
        assert_eq!(c.get(), Ok(200));
        assert_eq!(c.get(), Ok(200));
        assert_eq!(c.get(), Ok(200));
        assert_eq!(c.get(), Err("HTTP 503".into()));
        assert_eq!(c.get(), Ok(204));
        assert_eq!(c.reconnects(), 1);
        server.join().unwrap();
    }
}
