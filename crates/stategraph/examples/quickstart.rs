//! Quickstart: the seed article's one-node graph, checkpointed in SQLite (the embedded
//! default), then what was stored: three linked checkpoints and their writes, values
//! decoded. (`MemorySaver::dump` shows the same run in LangGraph's `InMemorySaver`
//! notation, with the values as separate blobs.)
//!
//! Run it with `cargo run -p stategraph --example quickstart [path/to/db]` (default
//! `./stategraph.db`).

use std::sync::Arc;

use stategraph::sqlite::SqliteSaver;
use stategraph::{Command, CompileOptions, RunConfig, State, StateGraph, END, START};

/// The state of the graph: two keys, each keeping the last value written.
#[derive(State, Debug)]
pub struct Person {
    name: String,
    address: String,
}

/// Builds the graph, runs it on thread "12345" with the saver at `db`, returns the state.
pub async fn run(db: &str) -> Result<(Person, Arc<SqliteSaver>), stategraph::Error> {
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

    let saver = Arc::new(SqliteSaver::open(db)?);
    let app = graph.compile_with(CompileOptions::new().checkpointer(saver.clone()))?;
    // An empty input (Python's `invoke({})`) on thread "12345".
    let state = app
        .invoke(PersonUpdate::default(), &RunConfig::thread("12345"))
        .await?
        .done()?;
    Ok((state, saver))
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), stategraph::Error> {
    let db = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "stategraph.db".into());
    let (state, saver) = run(&db).await?;
    println!("final state: {state:?}\n");
    println!("{db} now holds three linked checkpoints and their writes:\n");
    println!("{}", saver.dump("12345").await?);
    Ok(())
}
