//! `compile` rejects malformed graphs with LangGraph's messages (`StateGraph.validate`).

use stategraph::{CompileOptions, DynState, Error, StateGraph, END, START};

use crate::util::{capture_warnings, last_value, log_graph, logs};

/// The message of the `InvalidGraph` error that compiling `g` with `options` gives.
fn invalid_graph_with(g: &StateGraph<DynState>, options: CompileOptions) -> String {
    match g.compile_with(options) {
        Err(Error::InvalidGraph(msg)) => msg,
        Err(other) => panic!("expected InvalidGraph, got {other:?}"),
        Ok(_) => panic!("the graph compiled"),
    }
}

fn invalid_graph(g: &StateGraph<DynState>) -> String {
    invalid_graph_with(g, CompileOptions::new())
}

/// `START -> a -> END`, the smallest valid graph, to break in one way per test.
fn valid() -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("a", logs("a"));
    g.add_edge(START, "a").add_edge("a", END);
    g
}

#[test]
fn the_smallest_graph_compiles() {
    assert!(valid().compile().is_ok());
}

#[test]
fn an_edge_from_an_unknown_node_is_rejected() {
    let mut g = valid();
    g.add_edge("ghost", "a");
    assert_eq!(
        invalid_graph(&g),
        "Found edge starting at unknown node 'ghost'"
    );
}

#[test]
fn an_edge_to_an_unknown_node_is_rejected() {
    let mut g = valid();
    g.add_edge("a", "ghost");
    assert_eq!(
        invalid_graph(&g),
        "Found edge ending at unknown node `ghost`"
    );
}

#[test]
fn a_graph_without_an_edge_from_start_has_no_entry_point() {
    let mut g = log_graph();
    g.add_node("a", logs("a"));
    g.add_edge("a", END);
    assert_eq!(
        invalid_graph(&g),
        "Graph must have an entrypoint: add at least one edge from START to another node"
    );
}

#[test]
fn end_cannot_be_the_source_of_an_edge() {
    let mut g = valid();
    g.add_edge(END, "a");
    assert_eq!(invalid_graph(&g), "END cannot be a start node");
}

#[test]
fn start_cannot_be_the_target_of_an_edge() {
    let mut g = valid();
    g.add_edge("a", START);
    assert_eq!(invalid_graph(&g), "START cannot be an end node");
}

#[test]
fn a_node_name_used_twice_is_rejected() {
    let mut g = valid();
    g.add_node("a", logs("again"));
    assert_eq!(invalid_graph(&g), "Node `a` already present.");
}

#[test]
fn the_start_and_end_names_are_reserved() {
    for name in [START, END] {
        let mut g = valid();
        g.add_node(name, logs("x"));
        assert_eq!(invalid_graph(&g), format!("Node `{name}` is reserved."));
    }
}

#[test]
fn node_names_with_a_pipe_or_a_colon_are_rejected() {
    for (name, c) in [("a|b", '|'), ("a:b", ':')] {
        let mut g = valid();
        g.add_node(name, logs("x")).add_edge(START, name);
        let msg = invalid_graph(&g);
        assert!(msg.contains(name) || msg.contains(c), "{msg}");
        assert!(msg.contains("reserved character"), "{msg}");
    }
}

// Python 3.11 LangGraph (pinned) accepts this graph: its nodes no longer share a
// namespace with channels. stategraph keeps the older, stricter rule.
#[test]
fn a_node_named_like_a_state_key_is_rejected() {
    let mut g = StateGraph::<DynState>::with_channels(vec![("x".into(), last_value())]);
    g.add_node(
        "x",
        |_s: DynState| async move { stategraph::update([("x", 1)]) },
    );
    g.add_edge(START, "x");
    let msg = invalid_graph(&g);
    assert!(msg.contains("`x`") && msg.contains("state key"), "{msg}");
}

#[test]
fn a_path_map_naming_an_unknown_node_is_rejected() {
    let mut g = valid();
    g.add_conditional_edges_with_map("a", |_s: &DynState| "go", [("go", "ghost")]);
    let msg = invalid_graph(&g);
    assert!(msg.contains("ghost") && msg.contains("unknown"), "{msg}");
}

#[test]
fn the_error_text_says_the_graph_is_invalid() {
    let mut g = valid();
    g.add_edge("a", "ghost");
    let err = g.compile().err().unwrap();
    assert_eq!(
        err.to_string(),
        "invalid graph: Found edge ending at unknown node `ghost`"
    );
}

fn with_island() -> StateGraph<DynState> {
    let mut g = valid();
    g.add_node("island", logs("island"));
    g
}

#[test]
fn an_unreachable_node_compiles_with_a_warning() {
    let (compiled, warnings) = capture_warnings(|| with_island().compile());
    assert!(compiled.is_ok());
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("island") && w.contains("not reachable")),
        "{warnings:?}"
    );
}

#[test]
fn an_unreachable_node_fails_a_strict_compile() {
    let msg = invalid_graph_with(&with_island(), CompileOptions::new().strict(true));
    assert!(
        msg.contains("`island`") && msg.contains("not reachable"),
        "{msg}"
    );
}

#[test]
fn a_node_reached_only_by_a_mapped_branch_is_reachable_under_strict() {
    let mut g = log_graph();
    g.add_node("a", logs("a")).add_node("b", logs("b"));
    g.add_edge(START, "a")
        .add_conditional_edges_with_map("a", |_s: &DynState| "next", [("next", "b"), ("stop", END)])
        .add_edge("b", END);
    assert!(g.compile_with(CompileOptions::new().strict(true)).is_ok());
}
