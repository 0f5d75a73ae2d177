//! What the `models_*` tests share: the real local model servers (from the environment
//! that scripts/test.sh sets after scripts/model-servers.sh started them), and a fault
//! injector.
//!
//! The servers: `STATEGRAPH_OPENAI_BASE_URL` (with `/v1`) and `STATEGRAPH_OPENAI_MODEL`
//! (llama.cpp's server over a tiny model), `STATEGRAPH_ANTHROPIC_BASE_URL` (bare host)
//! and `STATEGRAPH_ANTHROPIC_MODEL` (LiteLLM's proxy speaking Anthropic's Messages API
//! in front of it). A test needing one skips when its variables are absent, and fails
//! instead when `STATEGRAPH_REQUIRE_MODELS=1`.
//!
//! The fault injector ([`Faults`]) is a raw TCP server written here. It stands in for
//! faults a real server does not produce on demand (401, 404, 429 with `Retry-After`,
//! 5xx, a reset connection, a stream cut mid-message, a server that never answers): it
//! answers the first requests with the faults it is given, then relays every later
//! request, byte for byte, to the real server, so every success after a fault is the
//! real server's. It proves how the client handles those faults, nothing about servers.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A real server: its base URL and model.
#[derive(Clone, Debug)]
pub struct Server {
    pub base_url: String,
    pub model: String,
    /// `openai` or `anthropic`: the wire the server speaks.
    pub provider: String,
}

fn require() -> bool {
    std::env::var("STATEGRAPH_REQUIRE_MODELS").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn server(prefix: &str) -> Option<Server> {
    let get = |k: &str| {
        std::env::var(format!("STATEGRAPH_{prefix}_{k}"))
            .ok()
            .filter(|v| !v.is_empty())
    };
    match (get("BASE_URL"), get("MODEL")) {
        (Some(base_url), Some(model)) => Some(Server {
            base_url,
            model,
            provider: prefix.to_lowercase(),
        }),
        _ => {
            assert!(
                !require(),
                "STATEGRAPH_REQUIRE_MODELS=1 but STATEGRAPH_{prefix}_BASE_URL / _MODEL are not set"
            );
            println!("note: skipping: STATEGRAPH_{prefix}_BASE_URL is not set");
            None
        }
    }
}

/// The OpenAI-compatible server (llama.cpp), if set.
pub fn openai() -> Option<Server> {
    server("OPENAI")
}

/// The Anthropic-compatible server (LiteLLM), if set.
pub fn anthropic() -> Option<Server> {
    server("ANTHROPIC")
}

/// `host:port` of a base URL.
pub fn host_port(base_url: &str) -> String {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    rest.split('/').next().unwrap().to_owned()
}

/// One fault the injector answers a request with.
#[derive(Clone, Debug)]
pub enum Fault {
    /// An HTTP status with these extra header lines and this body.
    Status(u16, &'static str, String),
    /// Reads the request, then resets the connection (RST).
    Reset,
    /// A 200 event stream that sends `events` (whole SSE text) and closes.
    Cut(String),
    /// Reads the request and never answers.
    Silent,
    /// Relays to the real server, but stops passing its answer on once `n` SSE events
    /// went through (and keeps the connection open).
    StallAfterEvents(usize),
}

/// The fault injector (see the module docs).
pub struct Faults {
    /// Its address, `127.0.0.1:PORT`.
    pub addr: String,
    /// When each request arrived, in order.
    pub arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Faults {
    /// Serves `faults` to the first requests, in order, then relays to `upstream`
    /// (`host:port`; without one, later requests are answered 503).
    pub async fn start(faults: Vec<Fault>, upstream: Option<String>) -> Faults {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let seen = arrivals.clone();
        let faults = Arc::new(Mutex::new(std::collections::VecDeque::from(faults)));
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let fault = faults.lock().pop_front();
                let (seen, upstream) = (seen.clone(), upstream.clone());
                tokio::spawn(async move { serve(conn, fault, upstream, seen).await });
            }
        });
        Faults { addr, arrivals }
    }

    /// The base URL for an OpenAI client (`http://ADDR/v1`).
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The base URL for an Anthropic client (`http://ADDR`).
    pub fn anthropic_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Reads one HTTP request (headers and a `content-length` body) whole.
async fn read_request(conn: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return Some(buf);
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn serve(
    mut conn: TcpStream,
    fault: Option<Fault>,
    upstream: Option<String>,
    seen: Arc<Mutex<Vec<Instant>>>,
) {
    let Some(request) = read_request(&mut conn).await else {
        return;
    };
    seen.lock().push(Instant::now());
    match fault {
        Some(Fault::Status(status, headers, body)) => {
            let head = format!(
                "HTTP/1.1 {status} Fault\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(body.as_bytes()).await;
        }
        Some(Fault::Reset) => {
            // SO_LINGER 0: the close sends a reset (blocking on drop is no concern here).
            #[allow(deprecated)]
            let _ = conn.set_linger(Some(Duration::ZERO));
            drop(conn);
        }
        Some(Fault::Cut(events)) => {
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(events.as_bytes()).await;
            let _ = conn.flush().await;
        }
        Some(Fault::Silent) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        Some(Fault::StallAfterEvents(n)) => relay(conn, &request, upstream, Some(n)).await,
        None => relay(conn, &request, upstream, None).await,
    }
}

/// Passes the request to `upstream` and its answer back (the request rewritten to
/// `connection: close`, so one answer per connection); with `stall_after`, stops
/// passing the answer on once that many SSE events went through.
async fn relay(
    mut conn: TcpStream,
    request: &[u8],
    upstream: Option<String>,
    stall_after: Option<usize>,
) {
    let Some(upstream) = upstream else {
        let body = r#"{"error":{"type":"no_upstream","message":"no real server to relay to"}}"#;
        let head = format!(
            "HTTP/1.1 503 No upstream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = conn.write_all(head.as_bytes()).await;
        let _ = conn.write_all(body.as_bytes()).await;
        return;
    };
    let mut up = match TcpStream::connect(&upstream).await {
        Ok(up) => up,
        Err(e) => {
            let body = format!(
                r#"{{"error":{{"type":"relay","message":"the real server at {upstream} is unreachable: {e}"}}}}"#
            );
            let head = format!(
                "HTTP/1.1 502 Relay\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(body.as_bytes()).await;
            return;
        }
    };
    let _ = up.write_all(&close_connection(request)).await;
    let mut buf = [0u8; 8192];
    let mut events = 0;
    loop {
        let n = match up.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if conn.write_all(&buf[..n]).await.is_err() {
            return;
        }
        events += buf[..n]
            .windows(6)
            .filter(|w| w == b"data: " || w == b"data:{")
            .count();
        if stall_after.is_some_and(|limit| events >= limit) {
            let _ = conn.flush().await;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return;
        }
    }
}

/// The request with `connection: close` in place of any `connection` header.
fn close_connection(request: &[u8]) -> Vec<u8> {
    let end = find(request, b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&request[..end]);
    let mut out = String::new();
    for (i, line) in head.split("\r\n").enumerate() {
        if i > 0 && line.to_ascii_lowercase().starts_with("connection:") {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("connection: close\r\n\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&request[end + 4..]);
    bytes
}

/// A temporary directory for one test's files.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("stategraph-models-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
