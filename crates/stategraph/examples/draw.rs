//! Prints the Mermaid drawing of the seed graph (`START -> get_address -> END`), the same
//! text Python LangGraph's `graph.get_graph().draw_mermaid()` prints for it.
//!
//! ```text
//! cargo run -p stategraph --example draw
//! ```

use stategraph::channels::LastValue;
use stategraph::{update, Command, CompiledGraph, DynState, StateGraph, END, START};

/// The seed graph: state `{name, address}`; `get_address` sets both.
pub fn seed_graph() -> CompiledGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("name".into(), Box::new(LastValue::new()) as _),
        ("address".into(), Box::new(LastValue::new()) as _),
    ]);
    g.add_node("get_address", |_s: DynState| async move {
        Command::update(update([
            ("name", "pavaneeshwar"),
            ("address", "Hyderabad residency"),
        ]))
    });
    g.add_edge(START, "get_address")
        .add_edge("get_address", END);
    g.compile().expect("the seed graph compiles")
}

fn main() {
    print!("{}", seed_graph().get_graph().draw_mermaid());
}
