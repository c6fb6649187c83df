//! The `--http URL` workload's client: one keep-alive HTTP/1.1 connection per worker, a GET
//! per message, the response read whole (Content-Length or chunked) and its status checked.
//! A connection the server closes is opened again (and counted). Plain http only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// Where requests go.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// host:port to connect to.
    pub addr: String,
    /// The Host header.
    pub host: String,
    pub path: String,
}

/// Parse `http://host[:port][/path]`.
pub fn parse_url(url: &str) -> Result<Target, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("'{url}': only http:// URLs are supported (no TLS)"))?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if hostport.is_empty() || hostport.contains('@') {
        return Err(format!("'{url}': no host"));
    }
    let addr = if hostport
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    Ok(Target {
        addr,
        host: hostport.to_string(),
        path: path.to_string(),
    })
}

/// One keep-alive connection.
pub struct Client {
    target: Target,
    request: Vec<u8>,
    conn: Option<BufReader<TcpStream>>,
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
        let s = TcpStream::connect(&self.target.addr)
            .map_err(|e| format!("connect {}: {e}", self.target.addr))?;
        let _ = s.set_nodelay(true);
        self.opened += 1;
        self.conn = Some(BufReader::new(s));
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

    /// One request and its whole response; Err on a transport error or a status >= 400.
    pub fn get(&mut self) -> Result<u16, String> {
        for attempt in 0..2 {
            if self.conn.is_none() || attempt > 0 {
                self.connect()?;
            }
            match self.exchange() {
                Ok(r) => return r,
                // The server closed the kept-alive connection: once more on a new one.
                Err(_) if attempt == 0 => continue,
                Err(e) => return Err(e),
            }
        }
        Err("unreachable".into())
    }

    /// Ok(Ok(status)) or Ok(Err(bad status)); Err on transport trouble.
    fn exchange(&mut self) -> Result<Result<u16, String>, String> {
        let conn = self.conn.as_mut().ok_or("not connected")?;
        conn.get_mut()
            .write_all(&self.request)
            .map_err(|e| format!("send: {e}"))?;
        let mut line = String::new();
        if conn.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("connection closed".into());
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP status line: {line:?}"))?;
        let (mut length, mut chunked, mut close) = (None, false, false);
        loop {
            line.clear();
            if conn.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("connection closed in the headers".into());
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
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
        if chunked {
            loop {
                line.clear();
                conn.read_line(&mut line).map_err(|e| e.to_string())?;
                let size = u64::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| format!("bad chunk size {line:?}"))?;
                std::io::copy(&mut conn.by_ref().take(size + 2), &mut std::io::sink())
                    .map_err(|e| e.to_string())?;
                if size == 0 {
                    break;
                }
            }
        } else if let Some(n) = length {
            let got = std::io::copy(&mut conn.by_ref().take(n), &mut std::io::sink())
                .map_err(|e| e.to_string())?;
            if got != n {
                return Err("connection closed in the body".into());
            }
        } else {
            // No length: the body runs to the close.
            std::io::copy(conn, &mut std::io::sink()).map_err(|e| e.to_string())?;
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

#[cfg(test)]
mod tests {
    use super::*;
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
