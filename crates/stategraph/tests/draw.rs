//! Drawing: `get_graph()` finds the nodes and edges Python LangGraph's `get_graph()` finds,
//! and `draw_mermaid()` prints Python's `draw_mermaid()` text, for the golden graphs, a
//! ReAct-shaped graph and a few edge cases. The expected texts are in `tests/draw/`,
//! written by `scripts/gen_draw_fixtures.py` with the pinned Python; with a Python at
//! hand (`STATEGRAPH_PYTHON`) the script is run again and its output compared too.

#[path = "../examples/draw.rs"]
#[allow(dead_code, unreachable_pub)]
mod draw_example;

use std::path::{Path, PathBuf};

use serde_json::Value as J;
use stategraph::channels::LastValue;
use stategraph::graph::{CurveStyle, DrawGraph, MermaidOptions, NodeOptions};
use stategraph::{CompileOptions, CompiledGraph, DynState, StateGraph, END, START};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/draw")
}

fn state() -> StateGraph<DynState> {
    StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)])
}

fn node(g: &mut StateGraph<DynState>, name: &str) {
    g.add_node(name, |_s: DynState| async move {});
}

fn route(_s: &DynState) -> &'static str {
    END
}

fn single_node() -> CompiledGraph<DynState> {
    draw_example::seed_graph()
}

fn chain3() -> CompiledGraph<DynState> {
    let mut g = state();
    for n in ["a", "b", "c"] {
        node(&mut g, n);
    }
    g.add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    g.compile().expect("compiles")
}

fn conditional() -> CompiledGraph<DynState> {
    let mut g = state();
    node(&mut g, "inc");
    node(&mut g, "finish");
    g.add_edge(START, "inc");
    g.add_conditional_edges_with_map("inc", route, [("again", "inc"), ("finish", "finish")]);
    g.add_edge("finish", END);
    g.compile().expect("compiles")
}

fn send_fanout() -> CompiledGraph<DynState> {
    let mut g = state();
    node(&mut g, "worker");
    node(&mut g, "summarize");
    g.add_conditional_edges_with_map(START, route, [("worker", "worker")]);
    g.add_edge("worker", "summarize").add_edge("summarize", END);
    g.compile().expect("compiles")
}

fn interrupt_resume() -> CompiledGraph<DynState> {
    let mut g = state();
    node(&mut g, "ask");
    node(&mut g, "greet");
    g.add_edge(START, "ask")
        .add_edge("ask", "greet")
        .add_edge("greet", END);
    g.compile().expect("compiles")
}

fn subgraph() -> CompiledGraph<DynState> {
    let mut sb = state();
    node(&mut sb, "inner1");
    node(&mut sb, "inner2");
    sb.add_edge(START, "inner1")
        .add_edge("inner1", "inner2")
        .add_edge("inner2", END);
    let sub = sb.compile().expect("subgraph compiles");
    let mut g = state();
    node(&mut g, "pre");
    g.add_subgraph("sub", &sub);
    node(&mut g, "post");
    g.add_edge(START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", "post")
        .add_edge("post", END);
    g.compile().expect("compiles")
}

fn join() -> CompiledGraph<DynState> {
    let mut g = state();
    for n in ["left", "right", "join"] {
        node(&mut g, n);
    }
    g.add_edge(START, "left")
        .add_edge(START, "right")
        .add_join(["left", "right"], "join")
        .add_edge("join", END);
    g.compile().expect("compiles")
}

/// A ReAct-shaped agent: `agent` calls `tools` (interrupting before them) until done.
fn react() -> CompiledGraph<DynState> {
    let mut g = state();
    node(&mut g, "agent");
    node(&mut g, "tools");
    g.add_edge(START, "agent");
    g.add_conditional_edges_with_map("agent", route, [("tools", "tools"), (END, END)]);
    g.add_edge("tools", "agent");
    g.compile_with(CompileOptions::new().interrupt_before(["tools"]))
        .expect("compiles")
}

fn edge_cases() -> CompiledGraph<DynState> {
    let mut g = state();
    node(&mut g, "plan step");
    node(&mut g, "_x_");
    node(&mut g, "fan");
    g.add_node_with(
        "final",
        |_s: DynState| async move {},
        NodeOptions::new().defer(),
    );
    node(&mut g, "loose");
    g.add_edge(START, "plan step");
    g.add_conditional_edges_with_map(
        "plan step",
        route,
        [
            (
                "when the plan needs more work than one pass can do it loops",
                "_x_",
            ),
            ("done", "fan"),
        ],
    );
    g.add_edge("_x_", "plan step");
    g.add_join(["fan", "_x_"], "final");
    g.add_conditional_edges("final", route);
    g.compile_with(
        CompileOptions::new()
            .interrupt_before(["fan", "final"])
            .interrupt_after(["final"]),
    )
    .expect("compiles")
}

/// Nodes routing with `Command::goto`, their targets declared for the drawing.
fn command_router() -> CompiledGraph<DynState> {
    let mut g = state();
    let body = |_s: DynState| async move {};
    g.add_node_with(
        "router",
        body,
        NodeOptions::new().destinations(["billing", "support", END]),
    );
    g.add_node_with(
        "billing",
        body,
        NodeOptions::new().labeled_destinations([("router", "back to the router"), (END, "done")]),
    );
    node(&mut g, "support");
    g.add_edge(START, "router").add_edge("support", END);
    g.compile().expect("compiles")
}

fn nested() -> CompiledGraph<DynState> {
    let mut inner = state();
    node(&mut inner, "deep");
    inner.add_edge(START, "deep").add_edge("deep", END);
    let inner = inner.compile().expect("compiles");
    let mut middle = state();
    node(&mut middle, "m1");
    middle.add_subgraph("inner", &inner);
    middle
        .add_edge(START, "m1")
        .add_edge("m1", "inner")
        .add_edge("inner", END);
    let middle = middle.compile().expect("compiles");
    let mut g = state();
    g.add_subgraph("outer", &middle);
    node(&mut g, "last");
    g.add_edge(START, "outer")
        .add_edge("outer", "last")
        .add_edge("last", END);
    g.compile().expect("compiles")
}

/// Every fixture: its name and the drawing stategraph makes of the same graph.
fn drawings() -> Vec<(&'static str, DrawGraph)> {
    vec![
        ("single_node", single_node().get_graph()),
        ("chain3", chain3().get_graph()),
        ("conditional", conditional().get_graph()),
        ("send_fanout", send_fanout().get_graph()),
        ("interrupt_resume", interrupt_resume().get_graph()),
        ("subgraph", subgraph().get_graph()),
        ("subgraph_xray", subgraph().get_graph_xray(usize::MAX)),
        ("join", join().get_graph()),
        ("react", react().get_graph()),
        ("edge_cases", edge_cases().get_graph()),
        ("command_router", command_router().get_graph()),
        ("nested_xray", nested().get_graph_xray(2)),
    ]
}

fn styled(g: &DrawGraph) -> String {
    g.draw_mermaid_with(&MermaidOptions {
        curve_style: CurveStyle::Basis,
        wrap_label_n_words: 3,
        frontmatter_config: Some(serde_json::json!({
            "title": "ReAct agent",
            "config": {"theme": "neutral", "look": "handDrawn",
                       "themeVariables": {"primaryColor": "#e2e2e2"}},
        })),
        ..MermaidOptions::default()
    })
}

fn plain(g: &DrawGraph) -> String {
    g.draw_mermaid_with(&MermaidOptions {
        with_styles: false,
        ..MermaidOptions::default()
    })
}

fn shape(g: &DrawGraph) -> J {
    let nodes: Vec<J> = g
        .nodes
        .values()
        .map(|n| {
            let meta = if n.metadata.is_empty() {
                J::Null
            } else {
                let m: serde_json::Map<String, J> = n
                    .metadata
                    .iter()
                    .map(|(k, v)| {
                        let v = if v == "True" {
                            J::Bool(true)
                        } else {
                            J::String(v.clone())
                        };
                        (k.clone(), v)
                    })
                    .collect();
                J::Object(m)
            };
            serde_json::json!([n.id, n.name, meta])
        })
        .collect();
    let edges: Vec<J> = g
        .edges
        .iter()
        .map(|e| serde_json::json!([e.source, e.target, e.data, e.conditional]))
        .collect();
    serde_json::json!({"nodes": nodes, "edges": edges})
}

fn read(dir: &Path, file: &str) -> String {
    let path = dir.join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Compares every drawing with the files in `dir`; returns the differences.
fn compare(dir: &Path) -> Vec<String> {
    let mut diffs = Vec::new();
    for (name, g) in drawings() {
        let expected = read(dir, &format!("{name}.mmd"));
        let got = g.draw_mermaid();
        if got != expected {
            diffs.push(format!(
                "{name}.mmd:\n--- python\n{expected}\n--- stategraph\n{got}"
            ));
        }
        let expected: J = serde_json::from_str(&read(dir, &format!("{name}.json"))).expect("json");
        if shape(&g) != expected {
            diffs.push(format!(
                "{name}.json:\n python {expected}\n stategraph {}",
                shape(&g)
            ));
        }
    }
    let g = react().get_graph();
    if styled(&g) != read(dir, "react_styled.mmd") {
        diffs.push(format!("react_styled.mmd:\n{}", styled(&g)));
    }
    if plain(&g) != read(dir, "react_plain.mmd") {
        diffs.push(format!("react_plain.mmd:\n{}", plain(&g)));
    }
    diffs
}

#[test]
fn mermaid_equals_the_pinned_pythons_for_every_fixture_graph() {
    let diffs = compare(&fixtures());
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn the_react_graph_has_its_conditional_edges_and_interrupt_note() {
    let g = react().get_graph();
    let ids: Vec<&str> = g.nodes.keys().map(String::as_str).collect();
    assert_eq!(ids, [START, "agent", "tools", END]);
    let conditional: Vec<(&str, &str)> = g
        .edges
        .iter()
        .filter(|e| e.conditional)
        .map(|e| (e.source.as_str(), e.target.as_str()))
        .collect();
    assert_eq!(conditional, [("agent", END), ("agent", "tools")]);
    assert_eq!(
        g.nodes["tools"].metadata,
        [("__interrupt".to_owned(), "before".to_owned())]
    );
    assert_eq!(g.first_node().map(|n| n.id.as_str()), Some(START));
    assert_eq!(g.last_node().map(|n| n.id.as_str()), Some(END));
}

#[test]
fn the_draw_example_prints_pythons_mermaid_of_the_seed_graph() {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["run", "--quiet", "-p", "stategraph", "--example", "draw"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).expect("utf-8"),
        read(&fixtures(), "single_node.mmd")
    );
}

#[test]
fn ascii_drawing_boxes_every_node_in_rank_order_with_its_edges() {
    let text = react().get_graph().draw_ascii();
    let expected = "\
+-----------+
| __start__ |
+-----------+
  --> agent
+-------+
| agent |
+-------+
  -.-> __end__
  -.-> tools
+----------------------+
| tools                |
| __interrupt = before |
+----------------------+
  --> agent
+---------+
| __end__ |
+---------+
";
    assert_eq!(text, expected);
    let text = subgraph().get_graph_xray(1).draw_ascii();
    let order: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .map(|l| l.trim_matches(|c| c == '|' || c == ' '))
        .collect();
    assert_eq!(
        order,
        [START, "pre", "sub:inner1", "sub:inner2", "post", END]
    );
    let text = conditional().get_graph().draw_ascii();
    assert!(text.contains("  -.-> inc [again]\n"), "{text}");
}

/// The pinned Python: `STATEGRAPH_PYTHON`, else the venv `scripts/test.sh` makes.
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
    None
}

#[test]
fn the_pinned_python_still_draws_the_fixtures() {
    let Some(python) = python() else {
        println!("note: skipping: no pinned Python (STATEGRAPH_PYTHON)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("stategraph-draw-{}", uuid::Uuid::new_v4()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gen_draw_fixtures.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(&dir)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let diffs = compare(&dir);
    for entry in std::fs::read_dir(&dir).expect("output dir") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        let fresh = std::fs::read_to_string(entry.path()).expect("read");
        let stored = read(&fixtures(), name.to_str().expect("utf-8"));
        assert_eq!(
            fresh, stored,
            "tests/draw/{name:?} is stale: rerun the script"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
