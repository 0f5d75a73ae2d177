//! The server driven by the official Python client: starts the server in-process on a free
//! port with a fresh Postgres database (and a second, API-only server on it), registers `seed` (the quickstart graph) and `gate`
//! (a node that waits for a file, then one that interrupts), and runs
//! `tests/sdk/client.py` with the pinned venv's `langgraph_sdk`.
//!
//! Skipped with a note without Postgres (unless `STATEGRAPH_REQUIRE_POSTGRES` is set) or
//! without the venv's Python (unless `STATEGRAPH_INTEROP=1`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::{
    Command, CompileOptions, CompiledGraph, NodeContext, NodeError, State, StateGraph, END, START,
};
use stategraph_server::Server;

/// The quickstart's state.
#[derive(State, Debug)]
struct Person {
    name: String,
    address: String,
}

fn seed(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Person>> {
    let mut graph = StateGraph::<Person>::new();
    graph.add_node("get_address", |_state: Person| async {
        Command::update(
            PersonUpdate::default()
                .name("pavaneeshwar")
                .address("Hyderabad residency"),
        )
    });
    graph
        .add_edge(START, "get_address")
        .add_edge("get_address", END);
    graph.compile_with(CompileOptions::new().checkpointer(saver))
}

/// A run that waits for a file (so a test can hold a thread busy), then asks a question.
#[derive(State, Debug)]
struct Gate {
    path: String,
    opened: bool,
    answer: String,
}

fn gate(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Gate>> {
    let mut graph = StateGraph::<Gate>::new();
    graph.add_node("wait", |s: Gate, ctx: NodeContext| async move {
        ctx.write_custom(stategraph::map! {"waiting" => s.path.as_str()});
        // At most a minute, so that a broken test cannot hang the suite.
        let mut opened = false;
        for _ in 0..3000 {
            if Path::new(&s.path).exists() {
                opened = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        GateUpdate::default().opened(opened)
    });
    graph.add_node("ask", |_s: Gate, ctx: NodeContext| async move {
        let answer = ctx.interrupt("what is the answer?")?;
        let answer = answer.as_str().unwrap_or_default().to_owned();
        Ok::<_, NodeError>(GateUpdate::default().answer(answer))
    });
    graph
        .add_edge(START, "wait")
        .add_edge("wait", "ask")
        .add_edge("ask", END);
    graph.compile_with(CompileOptions::new().checkpointer(saver))
}

fn python() -> Option<PathBuf> {
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
struct TestDatabase {
    base: String,
    name: String,
    url: String,
}

impl TestDatabase {
    async fn create() -> Option<TestDatabase> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_drives_the_server() {
    let Some(python) = python() else { return };
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let server = Server::builder()
        .database_url(&db.url)
        .workers(3)
        .graph("seed", seed)
        .graph("gate", gate)
        .build()
        .await
        .expect("build the server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let serving = tokio::spawn(server.serve(listener, shutdown.clone()));
    // A second, API-only process on the same database: its runs are worked on by the
    // first one's workers, and it streams their events from the database.
    let api_only = Server::builder()
        .database_url(&db.url)
        .workers(0)
        .graph("seed", seed)
        .graph("gate", gate)
        .build()
        .await
        .expect("build the API-only server");
    let listener2 = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr2 = listener2.local_addr().expect("its address");
    let serving2 = tokio::spawn(api_only.serve(listener2, shutdown));

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/client.py");
    let gate_dir = std::env::temp_dir().join(format!("sg-gate-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&gate_dir).expect("gate dir");
    let out = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(format!("http://{addr}"))
        .arg(&gate_dir)
        .arg(format!("http://{addr2}"))
        .output()
        .await
        .expect("run the client script");
    let _ = std::fs::remove_dir_all(&gate_dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "the client script failed:\n{stdout}\n{stderr}"
    );

    stop.send(true).expect("stop the server");
    for s in [serving, serving2] {
        s.await
            .expect("the server task")
            .expect("the server stops cleanly");
    }
}
