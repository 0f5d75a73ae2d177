//! An API process without a graph's code reads the graph's threads as the worker process
//! that has the code does: the worker registers the graph's description (channels with
//! their reducers, nodes with their triggers), and the API process rebuilds the graph
//! from it (issue 21, item 16). Skipped with a note without Postgres (unless
//! `STATEGRAPH_REQUIRE_POSTGRES` is set).

// Only the database and request helpers are used here.
#[allow(dead_code)]
mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{json, Value as Json};
use stategraph::channels::{BinaryOperatorAggregate, Channel, DeltaChannel};
use stategraph::checkpoint::{CheckpointSaver, Value};
use stategraph::{
    list, reducers, CompileOptions, CompiledGraph, DynState, Message, NodeContext, NodeError,
    StateGraph, END, START,
};
use stategraph_server::Server;
use tokio::sync::watch;

use support::request;

/// `messages` a DeltaChannel merged with `add_messages` (a snapshot every 2 updates),
/// `log` a list that each write appends to.
fn chat_state() -> StateGraph<DynState> {
    let messages: Box<dyn Channel> =
        Box::new(DeltaChannel::from_pairwise(reducers::add_messages(), 2));
    StateGraph::with_channels(vec![
        ("messages".into(), messages),
        (
            "log".into(),
            Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))) as _,
        ),
    ])
}

fn said(text: &str, log: &str) -> Vec<(String, Value)> {
    stategraph::update([
        ("messages", Value::list(vec![Message::ai(text).to_value()])),
        ("log", list![log]),
    ])
}

/// START fans out to `fast` (writes at once; a conditional edge, code, ends it) and
/// `ask` (interrupts for a name); `ask` goes on to `sub`, a subgraph whose `confirm`
/// interrupts again.
fn chat(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<DynState>> {
    let mut sub = chat_state();
    sub.add_node("confirm", |_s: DynState, ctx: NodeContext| async move {
        let ok = ctx.interrupt("sure?")?;
        let ok = ok.as_str().unwrap_or_default().to_owned();
        Ok::<_, NodeError>(said(&format!("confirmed: {ok}"), "confirm"))
    });
    sub.add_edge(START, "confirm").add_edge("confirm", END);
    let sub = sub.compile()?;

    let mut g = chat_state();
    g.add_node("fast", |_s: DynState| async move { said("fast", "fast") });
    g.add_node("ask", |_s: DynState, ctx: NodeContext| async move {
        let name = ctx.interrupt("name?")?;
        let name = name.as_str().unwrap_or_default().to_owned();
        Ok::<_, NodeError>(said(&format!("hello {name}"), "ask"))
    });
    g.add_subgraph("sub", &sub);
    g.add_edge(START, "fast")
        .add_edge(START, "ask")
        .add_conditional_edges("fast", |_s: &DynState| END)
        .add_edge("ask", "sub")
        .add_edge("sub", END);
    g.compile_with(CompileOptions::new().checkpointer(saver))
}

async fn start(server: Server, stop: watch::Receiver<bool>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(server.serve(listener, stop));
    addr
}

/// Every read of the thread's state, as `addr` answers it: the state, the history, and
/// the state at each checkpoint of the history (by path and by body).
async fn reads(addr: SocketAddr, thread: &str) -> Vec<(String, u16, Json)> {
    let mut out = Vec::new();
    let state = format!("/threads/{thread}/state");
    let (status, body) = request(addr, "GET", &state, None).await;
    out.push((state, status, body));
    let path = format!("/threads/{thread}/history");
    let (status, history) = request(addr, "POST", &path, Some(&json!({"limit": 100}))).await;
    out.push((path, status, history.clone()));
    for snapshot in history.as_array().into_iter().flatten() {
        let id = snapshot["checkpoint"]["checkpoint_id"]
            .as_str()
            .expect("a checkpoint id");
        let path = format!("/threads/{thread}/state/{id}");
        let (status, body) = request(addr, "GET", &path, None).await;
        out.push((path, status, body));
        let path = format!("/threads/{thread}/state/checkpoint");
        let at = json!({"checkpoint": {"checkpoint_id": id}});
        let (status, body) = request(addr, "POST", &path, Some(&at)).await;
        out.push((path, status, body));
    }
    out
}

/// Both processes answer every read of the thread alike.
async fn same_reads(worker: SocketAddr, api: SocketAddr, thread: &str) -> Json {
    let theirs = reads(worker, thread).await;
    let ours = reads(api, thread).await;
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(t.1, 200, "{}: {}", t.0, t.2);
        assert_eq!(o, t, "the API process answers {} as the worker does", t.0);
    }
    theirs[0].2.clone()
}

async fn wait(addr: SocketAddr, thread: &str, body: Json) {
    let path = format!("/threads/{thread}/runs/wait");
    let (status, out) = request(addr, "POST", &path, Some(&body)).await;
    assert_eq!(status, 200, "{out}");
}

#[tokio::test]
async fn an_api_process_reads_a_thread_as_the_process_with_its_graph() {
    let Some(tdb) = support::TestDatabase::create().await else {
        return;
    };
    let (stop_tx, stop) = watch::channel(false);
    let worker = Server::builder()
        .database_url(&tdb.url)
        .workers(1)
        .graph("chat", chat)
        .build()
        .await
        .expect("build the worker process");
    let worker = start(worker, stop.clone()).await;
    let api = Server::builder()
        .database_url(&tdb.url)
        .workers(0)
        .build()
        .await
        .expect("build the API process");
    let api = start(api, stop).await;

    let (status, thread) = request(api, "POST", "/threads", Some(&json!({}))).await;
    assert_eq!(status, 200, "{thread}");
    let thread = thread["thread_id"].as_str().expect("an id").to_owned();
    // With an id: a dict without one becomes a message with a fresh id each time the
    // DeltaChannel replays its write, in any process.
    let input = json!({"messages": [{"role": "user", "content": "hi", "id": "m-1"}]});
    wait(
        api,
        &thread,
        json!({"assistant_id": "chat", "input": input}),
    )
    .await;
    // `fast` finished (its writes are pending on the checkpoint), `ask` interrupted.
    let state = same_reads(worker, api, &thread).await;
    assert_eq!(state["next"], json!(["ask"]), "{state}");
    assert_eq!(state["values"]["log"], json!(["fast"]), "{state}");
    assert_eq!(state["interrupts"][0]["value"], json!("name?"), "{state}");

    let resume = |v: &str| json!({"assistant_id": "chat", "command": {"resume": v}});
    wait(api, &thread, resume("Ann")).await;
    // Interrupted inside the subgraph (whose graph the description holds too).
    let state = same_reads(worker, api, &thread).await;
    assert_eq!(state["next"], json!(["sub"]), "{state}");
    assert_eq!(state["interrupts"][0]["value"], json!("sure?"), "{state}");

    wait(api, &thread, resume("yes")).await;
    let state = same_reads(worker, api, &thread).await;
    assert_eq!(state["next"], json!([]), "{state}");
    // The subgraph returns its whole `log`, which the parent's `add` appends (as in
    // Python); `messages` merges by id.
    let log = json!(["ask", "fast", "ask", "fast", "confirm"]);
    assert_eq!(state["values"]["log"], log);
    let said: Vec<&str> = state["values"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(said, ["hi", "hello Ann", "fast", "confirmed: yes"]);

    // update_state as `ask` (an edge: its writers are data) works on the API process, and
    // both read the new checkpoint alike.
    let path = format!("/threads/{thread}/state");
    let update = json!({"values": {"log": ["x"]}, "as_node": "ask"});
    let (status, out) = request(api, "POST", &path, Some(&update)).await;
    assert_eq!(status, 200, "{out}");
    let state = same_reads(worker, api, &thread).await;
    assert_eq!(state["values"]["log"][5], json!("x"), "{state}");
    assert_eq!(state["next"], json!(["sub"]), "{state}");
    assert_eq!(state["metadata"]["source"], json!("update"), "{state}");
    // As `fast`, whose conditional edge is code, only the worker can.
    let update = json!({"values": {"log": ["y"]}, "as_node": "fast"});
    let (status, err) = request(api, "POST", &path, Some(&update)).await;
    assert_eq!(status, 501, "{err}");
    let (status, out) = request(worker, "POST", &path, Some(&update)).await;
    assert_eq!(status, 200, "{out}");
    let state = same_reads(worker, api, &thread).await;
    assert_eq!(state["values"]["log"][6], json!("y"), "{state}");
    let _ = stop_tx.send(true);
}
