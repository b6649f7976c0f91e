//! An HTTP/1.1 proxy on loopback in front of a real REST catalog that injects faults:
//! the first `unavailable` requests whose path ends with a given suffix are answered
//! `503 Service Unavailable` without reaching the server, and the first `lost_commits`
//! `POST`s to that path are forwarded (so the commit lands) but answered
//! `502 Bad Gateway`, as a gateway that timed out would; the next `garbled_commits` are
//! forwarded and answered `200 OK` with a body that is not the expected answer, and the
//! next `cut_commits` forwarded and answered `200 OK` with half the server's body before
//! the connection closes; with `unauthorized`, the first
//! such requests are answered `401 Unauthorized` (a token the server stopped accepting).
//! In front of an S3 endpoint, the first `garbled_puts` `PUT`s to that path are answered
//! with bytes that are not HTTP (not forwarded), and the first `dropped_puts` are
//! forwarded (so the object lands) and the connection closed without an answer; the
//! first `garbled_gets` `GET`s are answered with bytes that are not HTTP.
//! Everything else is passed through unchanged, and OAuth2 token requests are counted.
//! One connection per request (`Connection: close`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts of what the proxy did.
#[derive(Debug, Default)]
pub struct Faults {
    /// 503s answered.
    pub unavailable_sent: AtomicUsize,
    /// Commits forwarded and answered 502.
    pub commits_lost: AtomicUsize,
    /// Commits forwarded and answered 200 with a body that is no commit answer.
    pub commits_garbled: AtomicUsize,
    /// Commits forwarded and answered 200 with half the server's body.
    pub commits_cut: AtomicUsize,
    /// 401s answered.
    pub unauthorized_sent: AtomicUsize,
    /// Requests to `/v1/oauth/tokens` passed through.
    pub token_requests: AtomicUsize,
    /// `PUT`s answered with bytes that are not HTTP.
    pub garbled_sent: AtomicUsize,
    /// `PUT`s forwarded and left without an answer.
    pub puts_dropped: AtomicUsize,
    /// `GET`s answered with bytes that are not HTTP.
    pub garbled_gets_sent: AtomicUsize,
}

/// The faults to inject on requests whose path ends with the suffix.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan {
    /// Answer this many with 503 (not forwarded).
    pub unavailable: usize,
    /// Forward this many `POST`s, then answer 502.
    pub lost_commits: usize,
    /// Then forward this many `POST`s and answer 200 with `{"garbage": true}`.
    pub garbled_commits: usize,
    /// Then forward this many `POST`s and answer 200 with half the server's body.
    pub cut_commits: usize,
    /// Answer this many with 401 (not forwarded).
    pub unauthorized: usize,
    /// Answer this many `PUT`s with bytes that are not HTTP (not forwarded).
    pub garbled_puts: usize,
    /// Forward this many `PUT`s, then close the connection without an answer.
    pub dropped_puts: usize,
    /// Answer this many `GET`s with bytes that are not HTTP (not forwarded).
    pub garbled_gets: usize,
}

/// Starts the proxy to `upstream` (`127.0.0.1:PORT`); returns its `http://127.0.0.1:PORT`
/// and the counters. The listener thread lives as long as the test process.
pub fn start(upstream: &str, path_suffix: &str, plan: Plan) -> (String, Arc<Faults>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("proxy port");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let faults = Arc::new(Faults::default());
    let upstream = upstream.to_string();
    let suffix = path_suffix.to_string();
    let counters = Arc::clone(&faults);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let upstream = upstream.clone();
            let suffix = suffix.clone();
            let faults = Arc::clone(&counters);
            std::thread::spawn(move || {
                let _ = serve(conn, &upstream, &suffix, plan, &faults);
            });
        }
    });
    (url, faults)
}

fn serve(
    conn: TcpStream,
    upstream: &str,
    suffix: &str,
    plan: Plan,
    faults: &Faults,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut head = vec![];
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            content_length = v.trim().parse().unwrap_or(0);
        }
        if !lower.starts_with("connection:") {
            head.push(line);
        }
    }
    let mut body = vec![0u8; content_length];
    reader.read_exact(&mut body)?;
    let request_line = head.first().cloned().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let path_only = path.split('?').next().unwrap_or_default();
    let mut out = conn;
    if path_only.ends_with("/v1/oauth/tokens") {
        faults.token_requests.fetch_add(1, Ordering::SeqCst);
    }
    let take = |counter: &AtomicUsize, limit: usize| {
        counter
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_ok()
    };
    if path_only.ends_with(suffix) && take(&faults.unauthorized_sent, plan.unauthorized) {
        return out.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    if path_only.ends_with(suffix) && take(&faults.unavailable_sent, plan.unavailable) {
        return out.write_all(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    let put = method == "PUT" && path_only.ends_with(suffix);
    let get = method == "GET" && path_only.ends_with(suffix);
    if (put && take(&faults.garbled_sent, plan.garbled_puts))
        || (get && take(&faults.garbled_gets_sent, plan.garbled_gets))
    {
        return out.write_all(b"NOT HTTP AT ALL\r\n\r\n");
    }
    let mut up = TcpStream::connect(upstream)?;
    for line in &head {
        up.write_all(line.as_bytes())?;
    }
    up.write_all(b"Connection: close\r\n\r\n")?;
    up.write_all(&body)?;
    let mut response = vec![];
    up.read_to_end(&mut response)?;
    let lose = method == "POST"
        && path_only.ends_with(suffix)
        && take(&faults.commits_lost, plan.lost_commits);
    if put && take(&faults.puts_dropped, plan.dropped_puts) {
        // the object landed; the client hears nothing
        return Ok(());
    }
    if lose {
        return out.write_all(
            b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
    }
    let commit = method == "POST" && path_only.ends_with(suffix);
    if commit && take(&faults.commits_garbled, plan.garbled_commits) {
        let body = br#"{"garbage":true}"#;
        out.write_all(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )?;
        return out.write_all(body);
    }
    if commit && take(&faults.commits_cut, plan.cut_commits) {
        // the server's own head (its Content-Length promises the whole body), half the body
        let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
            return Ok(());
        };
        let body_len = response.len() - (end + 4);
        return out.write_all(&response[..end + 4 + body_len / 2]);
    }
    // this proxy closes every connection: say so, so the client does not reuse it
    match response.windows(2).position(|w| w == b"\r\n") {
        Some(end) => {
            out.write_all(&response[..end + 2])?;
            out.write_all(b"Connection: close\r\n")?;
            out.write_all(&response[end + 2..])
        }
        None => out.write_all(&response),
    }
}
