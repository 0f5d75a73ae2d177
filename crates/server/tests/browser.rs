//! The server from a real browser: a page served from another origin uses the official JS
//! client (`@langchain/langgraph-sdk` from npm, bundled by scripts/browser.sh) in Debian's
//! Chromium, driven by playwright-core. The page creates a thread, streams a run, reads the
//! history and reads a resumable stream's `Content-Location`; a page on an origin the server
//! does not allow gets nothing.
//!
//! Needs `eval "$(bash scripts/browser.sh)"` (scripts/test.sh does it and sets
//! `STATEGRAPH_REQUIRE_BROWSER=1`); without it the test says so and returns.

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::response::{Html, IntoResponse};
use axum::routing::get;
use serde_json::Value;
use stategraph_server::{demo, Cors, Server};

fn browser_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("STATEGRAPH_BROWSER_DIR").map(PathBuf::from);
    match dir {
        Some(d) if d.join("sdk.js").exists() && d.join("drive.mjs").exists() => Some(d),
        _ => {
            assert!(
                std::env::var("STATEGRAPH_REQUIRE_BROWSER").map_or(true, |v| v != "1"),
                "STATEGRAPH_REQUIRE_BROWSER=1 but STATEGRAPH_BROWSER_DIR has no sdk.js and \
                 drive.mjs: run `eval \"$(bash scripts/browser.sh)\"`"
            );
            println!("note: skipping: no browser parts (eval \"$(bash scripts/browser.sh)\")");
            None
        }
    }
}

/// Serves the test page and the bundled client on a port of its own (another origin).
async fn page_server(dir: PathBuf) -> SocketAddr {
    let page = include_str!("browser/page.html");
    let sdk = std::fs::read(dir.join("sdk.js")).expect("the bundled client");
    let app = axum::Router::new()
        .route("/page.html", get(move || async move { Html(page) }))
        .route(
            "/sdk.js",
            get(move || async move {
                ([("content-type", "text/javascript")], sdk.clone()).into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Opens the page in Chromium; what it left in `window.__result`.
async fn open(dir: &std::path::Path, page: SocketAddr, api: SocketAddr) -> Value {
    let url = format!("http://{page}/page.html?api=http://{api}");
    let out = tokio::process::Command::new("node")
        .arg(dir.join("drive.mjs"))
        .arg(&url)
        .current_dir(dir)
        .output()
        .await
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "drive.mjs failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_origin_uses_the_js_client() {
    let Some(dir) = browser_dir() else {
        return;
    };
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let allowed = page_server(dir.clone()).await;
    let refused = page_server(dir.clone()).await;
    let server = Server::builder()
        .database_url(&db.url)
        .workers(2)
        .graph("seed", demo::seed)
        .cors(Cors::origins([format!("http://{allowed}")]))
        .build()
        .await
        .expect("build the server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let api = listener.local_addr().expect("its address");
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    tokio::spawn(server.serve(listener, shutdown));

    let answer = open(&dir, allowed, api).await;
    let ok = &answer["result"]["ok"];
    assert!(ok.is_object(), "the page failed: {answer:#}");
    let events: Vec<&str> = ok["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(events.first(), Some(&"metadata"), "{answer:#}");
    assert!(
        events.contains(&"updates") && events.contains(&"values"),
        "{events:?}"
    );
    // The seed graph's node sets both keys.
    assert!(ok["last"]["name"].is_string(), "{answer:#}");
    assert!(ok["last"]["address"].is_string(), "{answer:#}");
    // The seed graph's run: the input, then get_address (steps -1, 0, 1; newest first).
    assert_eq!(ok["history"], serde_json::json!([1, 0, -1]), "{answer:#}");
    let thread = ok["thread_id"].as_str().expect("a thread id");
    let location = ok["content_location"]
        .as_str()
        .expect("Content-Location read");
    assert!(
        location.starts_with(&format!("/threads/{thread}/runs/")),
        "{location}"
    );

    // The same page from an origin the server does not allow: the browser refuses the
    // first call, so the client gets nothing.
    let answer = open(&dir, refused, api).await;
    let error = answer["result"]["error"].as_str().unwrap_or_default();
    assert!(
        !error.is_empty(),
        "a refused origin got answers: {answer:#}"
    );
    let console = answer["console"].to_string();
    assert!(
        console.contains("CORS"),
        "the browser names CORS: {console}"
    );
    stop.send(true).expect("stop");
}
