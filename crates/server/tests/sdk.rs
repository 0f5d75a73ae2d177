//! The server driven by the official Python client: starts the server in-process on a free
//! port with a fresh Postgres database (and a second, API-only server on it), registers
//! `seed` (the quickstart graph), `agent` (a ReAct agent with a scripted model) and `gate`
//! (a node that waits for a file, then one that interrupts), and runs
//! `tests/sdk/client.py` with the pinned venv's `langgraph_sdk`.
//!
//! Skipped with a note without Postgres (unless `STATEGRAPH_REQUIRE_POSTGRES` is set) or
//! without the venv's Python (unless `STATEGRAPH_INTEROP=1`).

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::{
    CompileOptions, CompiledGraph, NodeContext, NodeError, State, StateGraph, END, START,
};
use stategraph_server::{demo, Server};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_drives_the_server() {
    let Some(python) = support::python() else {
        return;
    };
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let server = Server::builder()
        .database_url(&db.url)
        .workers(3)
        .graph("seed", demo::seed)
        .graph("agent", demo::agent)
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
        .graph("seed", demo::seed)
        .graph("agent", demo::agent)
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
