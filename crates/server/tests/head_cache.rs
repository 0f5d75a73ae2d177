//! The head cache against what another process may do to a thread between two runs here:
//! store writes against the head without a new checkpoint (a run that failed before its
//! first checkpoint), or store a newer checkpoint. The next run here must see them, as a
//! run that read the thread does. Skipped with a note without Postgres (unless
//! `STATEGRAPH_REQUIRE_POSTGRES` is set).

// Only the database and request helpers are used here.
#[allow(dead_code)]
mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{json, Value as Json};
use stategraph::channels::BinaryOperatorAggregate;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, NULL_TASK_ID};
use stategraph::{list, reducers, CompileOptions, CompiledGraph, DynState, StateGraph, END, START};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_server::Server;

use support::request;

/// `START -> n -> END` on a `log` list that each write appends to; `n` logs "n".
fn log(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<DynState>> {
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "log".into(),
        Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))) as _,
    )]);
    g.add_node("n", |_s: DynState| async move {
        stategraph::update([("log", list!["n"])])
    });
    g.add_edge(START, "n").add_edge("n", END);
    g.compile_with(CompileOptions::new().checkpointer(saver))
}

/// `runs.wait` of `log` with `items` as input; the thread's log after it.
async fn run(addr: SocketAddr, thread: &str, items: &[&str]) -> Json {
    let body = json!({ "assistant_id": "log", "input": { "log": items } });
    let (status, out) = request(
        addr,
        "POST",
        &format!("/threads/{thread}/runs/wait"),
        Some(&body),
    )
    .await;
    assert_eq!(status, 200, "{out}");
    out["log"].clone()
}

/// The thread's root head checkpoint, as a config to store against.
async fn head(saver: &PostgresSaver, thread: &str) -> CheckpointConfig {
    saver
        .get_tuple(&CheckpointConfig::thread(thread))
        .await
        .expect("read the thread")
        .expect("a checkpoint")
        .config
}

#[tokio::test]
async fn what_another_process_stored_on_the_thread_is_seen_by_the_next_run_here() {
    let Some(tdb) = support::TestDatabase::create().await else {
        return;
    };
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let server = Server::builder()
        .database_url(&tdb.url)
        .workers(1)
        .graph("log", log)
        .build()
        .await
        .expect("build the server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    let serving = tokio::spawn(server.serve(listener, stop));
    // "Another process": the same tables through a saver of its own.
    let other = PostgresSaver::connect(&tdb.url).await.expect("a saver");

    let (status, thread) = request(addr, "POST", "/threads", Some(&json!({}))).await;
    assert_eq!(status, 200, "{thread}");
    let thread = thread["thread_id"].as_str().expect("an id").to_owned();
    assert_eq!(run(addr, &thread, &["a"]).await, json!(["a", "n"]));

    // A write against the head, no new checkpoint (a Command's update whose run failed
    // before its first step's checkpoint): the same head id, one write more.
    let at = head(&other, &thread).await;
    other
        .put_writes(
            &at,
            &[("log".to_owned(), list!["elsewhere"])],
            NULL_TASK_ID,
            "",
        )
        .await
        .expect("a write against the head");
    assert_eq!(
        run(addr, &thread, &["b"]).await,
        json!(["a", "n", "elsewhere", "b", "n"]),
        "the next run applies the write, as one that reads the thread does"
    );

    // A newer checkpoint (update_state elsewhere): the next run is its child.
    let at = head(&other, &thread).await;
    let graph = log(Arc::new(
        PostgresSaver::connect(&tdb.url).await.expect("a saver"),
    ))
    .expect("the graph");
    graph
        .update_state(
            &stategraph::RunConfig::thread(&thread),
            vec![("log".to_owned(), list!["updated"])],
            Some("n"),
        )
        .await
        .expect("update_state");
    assert_ne!(head(&other, &thread).await, at);
    assert_eq!(
        run(addr, &thread, &["c"]).await,
        json!(["a", "n", "elsewhere", "b", "n", "updated", "c", "n"])
    );

    stop_tx.send(true).expect("stop the server");
    serving.await.expect("the server task").expect("the server");
}
