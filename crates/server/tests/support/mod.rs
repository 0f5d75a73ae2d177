//! Shared by the server's tests: the pinned Python, a fresh database per test, and a
//! bare HTTP request.
//!
//! Without a reachable Postgres a test prints a note and returns, unless
//! `STATEGRAPH_REQUIRE_POSTGRES` is set; without the venv's Python likewise, unless
//! `STATEGRAPH_INTEROP=1`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

// Not every test binary drives Python.
#[allow(dead_code)]
pub(crate) fn python() -> Option<PathBuf> {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v != "1"),
        "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
    );
    println!("note: skipping: no Python at {path:?}");
    None
}

fn base_url() -> String {
    std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".to_owned())
}

fn postgres_required() -> bool {
    std::env::var("STATEGRAPH_REQUIRE_POSTGRES").is_ok_and(|v| !v.is_empty() && v != "0")
}

async fn admin(url: &str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// A fresh database, dropped (with its connections) when this is dropped.
pub(crate) struct TestDatabase {
    base: String,
    name: String,
    pub(crate) url: String,
}

impl TestDatabase {
    pub(crate) async fn create() -> Option<TestDatabase> {
        let base = base_url();
        let client = match admin(&base).await {
            Ok(c) => c,
            Err(e) if !postgres_required() => {
                println!("note: Postgres at {base} is unreachable ({e}); test not run");
                return None;
            }
            Err(e) => panic!("STATEGRAPH_REQUIRE_POSTGRES is set and {base} is unreachable: {e}"),
        };
        let name = format!("sg_server_{}", uuid::Uuid::new_v4().simple());
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create the test database");
        let (head, _) = base.rsplit_once('/').expect("a database URL has a path");
        let url = format!("{head}/{name}");
        Some(TestDatabase { base, name, url })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (base, name) = (self.base.clone(), self.name.clone());
        let dropper = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime to drop the test database");
            rt.block_on(async move {
                // DROP DATABASE cannot run inside a multi-statement batch.
                let terminate = format!(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE datname = '{name}' AND pid <> pg_backend_pid()"
                );
                let drop = format!("DROP DATABASE IF EXISTS {name}");
                match admin(&base).await {
                    Ok(c) => {
                        let dropped = match c.batch_execute(&terminate).await {
                            Ok(()) => c.batch_execute(&drop).await,
                            Err(e) => Err(e),
                        };
                        if let Err(e) = dropped {
                            eprintln!("could not drop test database {name}: {e}");
                        }
                    }
                    Err(e) => eprintln!("could not drop test database {name}: {e}"),
                }
            });
        });
        let _ = dropper.join();
    }
}

/// One HTTP/1.1 request; the status and the JSON body (`null` when empty).
// Not every test binary sends bare requests.
#[allow(dead_code)]
pub(crate) async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream
        .write_all(format!("{head}{body}").as_bytes())
        .await
        .expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("receive");
    let answer = String::from_utf8(answer).expect("utf-8");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(body).expect("a JSON body")
    };
    (status, body)
}
