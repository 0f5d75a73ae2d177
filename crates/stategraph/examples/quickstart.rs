//! Quickstart: a one-node graph whose node returns a `Command`, checkpointed in memory.
//!
//! Run it with `cargo run -p stategraph --example quickstart`.

use std::sync::Arc;

use stategraph::checkpoint::MemorySaver;
use stategraph::{Command, CompileOptions, RunConfig, State, StateGraph, END, START};

/// The state of the graph: two keys, each keeping the last value written.
#[derive(State, Debug)]
struct Person {
    name: String,
    address: String,
}

#[tokio::main]
async fn main() -> Result<(), stategraph::Error> {
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

    let saver = Arc::new(MemorySaver::new());
    let app = graph.compile_with(CompileOptions::new().checkpointer(saver.clone()))?;

    // An empty input (Python's `invoke({})`) on thread "12345".
    let state = app
        .invoke(PersonUpdate::default(), &RunConfig::thread("12345"))
        .await?;
    println!("final state: {state:?}\n");

    // What the saver stored: three linked checkpoints, the writes, the blobs.
    println!("{}", saver.dump());
    Ok(())
}
