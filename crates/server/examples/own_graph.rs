//! Serving a graph of one's own: a `#[derive(State)]` state, a node, the graph compiled
//! with the server's saver, and the server run until Ctrl-C or SIGTERM. Start it with
//!
//! ```text
//! cargo run -p stategraph-server --example own_graph -- postgresql://postgres@127.0.0.1:5432/postgres
//! ```
//!
//! and call it as any Agent Server (`langgraph_sdk.get_sync_client(url="http://127.0.0.1:2024")`):
//! `client.runs.wait(None, "orders", input={"items": ["tea", "cake"]})` answers
//! `{"items": ["tea", "cake"], "total": 2, "note": "2 items"}`. `cargo test -p
//! stategraph-server --example own_graph` runs the test at the end (it needs Postgres).

use std::sync::Arc;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::{Command, CompileOptions, CompiledGraph, State, StateGraph, END, START};
use stategraph_server::{shutdown_signal, Server, ServerError};

/// The state: the items ordered (each write appends), their count, a note.
#[derive(State, Debug)]
pub struct Order {
    /// The items; `add` appends what a node (or the input) writes.
    #[state(reducer = add)]
    pub items: Vec<String>,
    /// How many items there are.
    pub total: i64,
    /// What the `count` node says.
    pub note: String,
}

/// START → count → END; `count` totals the items. The server hands `saver` in: the
/// graph must checkpoint there, in the server's database.
fn orders(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Order>> {
    let mut graph = StateGraph::<Order>::new();
    graph.add_node("count", |order: Order| async move {
        let total = order.items.len() as i64;
        Command::update(
            OrderUpdate::default()
                .total(total)
                .note(format!("{total} items")),
        )
    });
    graph.add_edge(START, "count").add_edge("count", END);
    graph.compile_with(CompileOptions::new().checkpointer(saver))
}

/// The server: `orders` registered under the graph id (and assistant) `orders`, two
/// runs at a time.
async fn server(database_url: &str) -> Result<Server, ServerError> {
    Server::builder()
        .database_url(database_url)
        .workers(2)
        .graph("orders", orders)
        .build()
        .await
}

#[tokio::main]
async fn main() -> Result<(), ServerError> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "postgresql://postgres@127.0.0.1:5432/postgres".into());
    let server = server(&url).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:2024")
        .await
        .map_err(|e| ServerError::Startup(format!("binding 127.0.0.1:2024: {e}")))?;
    println!("listening on http://127.0.0.1:2024");
    server.serve(listener, shutdown_signal()).await
}

#[cfg(test)]
#[path = "../tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::support::{request, TestDatabase};

    #[tokio::test]
    async fn the_example_serves_its_own_graph() {
        let Some(db) = TestDatabase::create().await else {
            return;
        };
        let server = super::server(&db.url).await.expect("the server starts");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let addr = listener.local_addr().expect("its address");
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let serving = tokio::spawn(server.serve(listener, shutdown));

        let (status, found) = request(addr, "GET", "/assistants/orders", None).await;
        assert_eq!(
            (status, &found["graph_id"]),
            (200, &json!("orders")),
            "{found}"
        );
        let body = json!({"assistant_id": "orders", "input": {"items": ["tea", "cake"]}});
        let (status, out) = request(addr, "POST", "/runs/wait", Some(&body)).await;
        assert_eq!(status, 200, "{out}");
        assert_eq!(
            out,
            json!({"items": ["tea", "cake"], "total": 2, "note": "2 items"})
        );

        let _ = stop.send(true);
        serving.await.expect("joined").expect("a clean shutdown");
    }
}
