//! Browser clients over plain HTTP: preflights answered on every route (200, never 405),
//! the allowed origin echoed with the headers a client sends and reads, another origin
//! given nothing to read, and one log line per request.
//!
//! The same in a real browser: tests/browser.rs.

mod support;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use stategraph_server::{demo, Cors, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PAGE: &str = "http://127.0.0.1:3000";

/// One HTTP/1.1 request with extra headers; the status and the head's lines, lowercased.
async fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Content-Length: 0\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("receive");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, _) = answer.split_once("\r\n\r\n").expect("a head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (status, head.to_ascii_lowercase())
}

fn preflight<'a>(origin: &'a str, method: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("Origin", origin),
        ("Access-Control-Request-Method", method),
        (
            "Access-Control-Request-Headers",
            "content-type,x-api-key,authorization",
        ),
    ]
}

/// The log lines written while the test runs.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn serve(
    db: &support::TestDatabase,
    cors: Cors,
) -> (SocketAddr, tokio::sync::watch::Sender<bool>) {
    let server = Server::builder()
        .database_url(&db.url)
        .workers(1)
        .graph("seed", demo::seed)
        .cors(cors)
        .build()
        .await
        .expect("build the server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("its address");
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    tokio::spawn(server.serve(listener, shutdown));
    (addr, stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflights_are_answered_and_only_allowed_origins_may_read() {
    let lines = Lines::default();
    let writer = lines.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (addr, stop) = serve(&db, Cors::origins([PAGE])).await;

    // A preflight on every kind of route, the fallback's unknown path included.
    let routes = [
        ("POST", "/threads"),
        ("GET", "/threads/00000000-0000-0000-0000-000000000000/state"),
        ("DELETE", "/threads/00000000-0000-0000-0000-000000000000"),
        ("PATCH", "/threads/00000000-0000-0000-0000-000000000000"),
        ("PUT", "/store/items"),
        ("POST", "/threads/t/runs/stream"),
        ("GET", "/no/such/route"),
    ];
    for (method, path) in routes {
        let (status, head) = raw(addr, "OPTIONS", path, &preflight(PAGE, method)).await;
        assert_eq!(status, 200, "preflight of {method} {path}:\n{head}");
        assert!(
            head.contains(&format!("access-control-allow-origin: {PAGE}")),
            "{head}"
        );
        assert!(head.contains("access-control-allow-methods:"), "{head}");
        assert!(
            head.contains(&method.to_ascii_lowercase()),
            "{method} allowed:\n{head}"
        );
        assert!(
            head.contains("access-control-allow-headers: content-type,x-api-key,authorization"),
            "{head}"
        );
        assert!(head.contains("access-control-max-age: 600"), "{head}");

        // Another origin gets an answer the browser refuses: no allow-origin.
        let (status, head) = raw(
            addr,
            "OPTIONS",
            path,
            &preflight("http://evil.test", method),
        )
        .await;
        assert_eq!(status, 200, "{head}");
        assert!(!head.contains("access-control-allow-origin"), "{head}");
    }

    // A real answer carries the origin and exposes the headers clients read.
    let (status, head) = raw(addr, "GET", "/ok", &[("Origin", PAGE)]).await;
    assert_eq!(status, 200);
    assert!(
        head.contains(&format!("access-control-allow-origin: {PAGE}")),
        "{head}"
    );
    assert!(head.contains("access-control-expose-headers:"), "{head}");
    assert!(head.contains("content-location"), "{head}");
    // Errors too: a 404 the page can read.
    let (status, head) = raw(addr, "GET", "/threads/nope", &[("Origin", PAGE)]).await;
    assert!(status == 404 || status == 422, "{status}");
    assert!(
        head.contains(&format!("access-control-allow-origin: {PAGE}")),
        "{head}"
    );
    // Any OPTIONS is answered as a preflight (never 405); without an Origin it allows none.
    let (status, head) = raw(addr, "OPTIONS", "/ok", &[]).await;
    assert_eq!(status, 200);
    assert!(!head.contains("access-control-allow-origin"), "{head}");

    // One line per request: method, path, status and time.
    let text = String::from_utf8(lines.0.lock().clone()).expect("utf-8 logs");
    let line = text
        .lines()
        .find(|l| l.contains("method=GET") && l.contains("path=/ok") && l.contains("status=200"))
        .unwrap_or_else(|| panic!("no log line for GET /ok in:\n{text}"));
    assert!(line.contains(" INFO ") && line.contains("ms="), "{line}");
    assert!(line.contains(&format!("origin={PAGE}")), "{line}");
    assert!(
        text.lines().any(|l| l.contains("method=OPTIONS")
            && l.contains("path=/threads")
            && l.contains("status=200")),
        "{text}"
    );
    stop.send(true).expect("stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_origin_is_langgraph_devs_default() {
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (addr, stop) = serve(&db, Cors::any()).await;
    let (status, head) = raw(
        addr,
        "OPTIONS",
        "/threads/search",
        &preflight("http://anywhere.test:8123", "POST"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    let (_, head) = raw(
        addr,
        "POST",
        "/threads/search",
        &[
            ("Origin", "http://x.test"),
            ("Content-Type", "application/json"),
        ],
    )
    .await;
    assert!(head.contains("access-control-allow-origin: *"), "{head}");
    stop.send(true).expect("stop");
}
