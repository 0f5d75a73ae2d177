#!/usr/bin/env python3
"""Write the Mermaid (and node/edge) drawings pinned Python LangGraph makes of the graphs
that crates/stategraph/tests/draw.rs builds, into tests/draw/ (or the directory given).

    /path/to/langgraph-venv/bin/python scripts/gen_draw_fixtures.py [OUT_DIR]

Each graph here has the same nodes, edges, conditional edges (with path maps) and compile
options as its Rust twin; node bodies do not matter to a drawing.
"""

import json
import operator
import sys
from pathlib import Path
from typing import Annotated

from typing_extensions import TypedDict

from langchain_core.runnables.graph import CurveStyle
from langgraph.graph import END, START, StateGraph


class S(TypedDict):
    n: int
    items: Annotated[list, operator.add]


def body(_s):
    return {}


def route(_s):
    return END


def graphs():
    out = {}

    b = StateGraph(S)
    b.add_node("get_address", body)
    b.add_edge(START, "get_address")
    b.add_edge("get_address", END)
    out["single_node"] = (b.compile(), {})

    b = StateGraph(S)
    for n in ["a", "b", "c"]:
        b.add_node(n, body)
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", "c")
    b.add_edge("c", END)
    out["chain3"] = (b.compile(), {})

    b = StateGraph(S)
    b.add_node("inc", body)
    b.add_node("finish", body)
    b.add_edge(START, "inc")
    b.add_conditional_edges("inc", route, {"again": "inc", "finish": "finish"})
    b.add_edge("finish", END)
    out["conditional"] = (b.compile(), {})

    b = StateGraph(S)
    b.add_node("worker", body)
    b.add_node("summarize", body)
    b.add_conditional_edges(START, route, ["worker"])
    b.add_edge("worker", "summarize")
    b.add_edge("summarize", END)
    out["send_fanout"] = (b.compile(), {})

    b = StateGraph(S)
    b.add_node("ask", body)
    b.add_node("greet", body)
    b.add_edge(START, "ask")
    b.add_edge("ask", "greet")
    b.add_edge("greet", END)
    out["interrupt_resume"] = (b.compile(), {})

    sb = StateGraph(S)
    sb.add_node("inner1", body)
    sb.add_node("inner2", body)
    sb.add_edge(START, "inner1")
    sb.add_edge("inner1", "inner2")
    sb.add_edge("inner2", END)
    sub = sb.compile()
    b = StateGraph(S)
    b.add_node("pre", body)
    b.add_node("sub", sub)
    b.add_node("post", body)
    b.add_edge(START, "pre")
    b.add_edge("pre", "sub")
    b.add_edge("sub", "post")
    b.add_edge("post", END)
    out["subgraph"] = (b.compile(), {})
    out["subgraph_xray"] = (b.compile(), {"xray": True})

    b = StateGraph(S)
    for n in ["left", "right", "join"]:
        b.add_node(n, body)
    b.add_edge(START, "left")
    b.add_edge(START, "right")
    b.add_edge(["left", "right"], "join")
    b.add_edge("join", END)
    out["join"] = (b.compile(), {})

    b = StateGraph(S)
    b.add_node("agent", body)
    b.add_node("tools", body)
    b.add_edge(START, "agent")
    b.add_conditional_edges("agent", route, {"tools": "tools", END: END})
    b.add_edge("tools", "agent")
    out["react"] = (b.compile(interrupt_before=["tools"]), {})

    # Names to escape, a long label, a deferred join target, interrupts on both sides,
    # and a conditional edge without a path map.
    b = StateGraph(S)
    b.add_node("plan step", body)
    b.add_node("_x_", body)
    b.add_node("fan", body)
    b.add_node("final", body, defer=True)
    b.add_node("loose", body)
    b.add_edge(START, "plan step")
    b.add_conditional_edges(
        "plan step",
        route,
        {
            "when the plan needs more work than one pass can do it loops": "_x_",
            "done": "fan",
        },
    )
    b.add_edge("_x_", "plan step")
    b.add_edge(["fan", "_x_"], "final")
    b.add_conditional_edges("final", route)
    out["edge_cases"] = (
        b.compile(interrupt_before=["fan", "final"], interrupt_after=["final"]),
        {},
    )

    # Nodes that route with Command(goto=...), declared with `destinations`.
    b = StateGraph(S)
    b.add_node("router", body, destinations=("billing", "support", END))
    b.add_node("billing", body, destinations={"router": "back to the router", END: "done"})
    b.add_node("support", body)
    b.add_edge(START, "router")
    b.add_edge("support", END)
    out["command_router"] = (b.compile(), {})

    # Nested subgraphs, expanded two levels deep.
    inner = StateGraph(S)
    inner.add_node("deep", body)
    inner.add_edge(START, "deep")
    inner.add_edge("deep", END)
    middle = StateGraph(S)
    middle.add_node("m1", body)
    middle.add_node("inner", inner.compile())
    middle.add_edge(START, "m1")
    middle.add_edge("m1", "inner")
    middle.add_edge("inner", END)
    b = StateGraph(S)
    b.add_node("outer", middle.compile())
    b.add_node("last", body)
    b.add_edge(START, "outer")
    b.add_edge("outer", "last")
    b.add_edge("last", END)
    out["nested_xray"] = (b.compile(), {"xray": 2})
    return out


def from_spec(spec):
    """The Mermaid text of a graph described as crates/stategraph/tests/draw.rs does (with
    subgraphs expanded when it has any)."""
    g = compile_spec(spec)
    xray = any(n.get("subgraph") for n in spec["nodes"])
    return g.get_graph(xray=xray).draw_mermaid()


def compile_spec(spec):
    b = StateGraph(S)
    for n in spec["nodes"]:
        kw = {}
        if n["defer"]:
            kw["defer"] = True
        if n["destinations"] is not None:
            if any(label is not None for _, label in n["destinations"]):
                kw["destinations"] = {t: label for t, label in n["destinations"]}
            else:
                kw["destinations"] = tuple(t for t, _ in n["destinations"])
        node = compile_spec(n["subgraph"]) if n.get("subgraph") else body
        b.add_node(n["name"], node, **kw)
    for s_, t in spec["edges"]:
        b.add_edge(s_, t)
    for starts, end in spec["joins"]:
        b.add_edge(starts, end)
    for i, (source, path_map) in enumerate(spec["branches"]):
        def path(_s):
            return END
        path.__name__ = f"route{i}"
        if path_map is None:
            b.add_conditional_edges(source, path)
        else:
            b.add_conditional_edges(source, path, {label: t for label, t in path_map})
    return b.compile(interrupt_before=spec["interrupt_before"],
                     interrupt_after=spec["interrupt_after"])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--specs":
        specs = json.loads(Path(sys.argv[2]).read_text())
        out = []
        for spec in specs:
            try:
                out.append(from_spec(spec))
            except Exception as e:  # a graph Python refuses
                out.append({"error": repr(e)})
        print(json.dumps(out))
        return
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests" / "draw"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (g, kw) in graphs().items():
        dg = g.get_graph(**kw)
        (out_dir / f"{name}.mmd").write_text(dg.draw_mermaid())
        shape = {
            "nodes": [[n.id, n.name, n.metadata] for n in dg.nodes.values()],
            "edges": [[e.source, e.target, e.data, e.conditional] for e in dg.edges],
        }
        (out_dir / f"{name}.json").write_text(json.dumps(shape, indent=1) + "\n")
    g, _ = graphs()["react"]
    styled = g.get_graph().draw_mermaid(
        curve_style=CurveStyle.BASIS,
        wrap_label_n_words=3,
        frontmatter_config={
            "title": "ReAct agent",
            "config": {"theme": "neutral", "look": "handDrawn",
                       "themeVariables": {"primaryColor": "#e2e2e2"}},
        },
    )
    (out_dir / "react_styled.mmd").write_text(styled)
    (out_dir / "react_plain.mmd").write_text(g.get_graph().draw_mermaid(with_styles=False))
    # How PyYAML writes frontmatter strings (plain, single- or double-quoted).
    samples = ["12px", "fill:#fff", "#e2e2e2", "true", "Hello World", "a-b", "-a", ".5",
               "1.5", "1e3", "0x1f", "yes", "Yes", "null", "~", "", " a", "a ", "a: b",
               "a #b", "a#b", "[x]", "x]", "{x", "@x", "%x", "!x", "&x", "*x", "|x", ">x",
               "'x", '"x', "?x", "? x", "x?", "x,y", "2020-01-01", "1_000", "+1", ".inf",
               ".nan", "NaN", "on", "Off", "y", "n", "=", "<<", "\u00e9", "a\tb", "basis",
               "10:30", "1:2:3", "a/b", "a.b", "_x", "089", "017", "0b101", "-", "1.", "+.5",
               "1:30.5", "1.5e+3", "1.5e3", "handDrawn", "x:", "x:y"]
    (out_dir / "frontmatter_samples.json").write_text(json.dumps(samples, indent=0) + "\n")
    config = {"config": {"themeVariables": {f"v{i:02}": s for i, s in enumerate(samples)}},
              "extra": {"n": 1, "f": 1.5, "b": True, "z": None, "l": ["a", 2],
                        "lm": [{"x": 1, "y": "a"}], "e": {}, "el": []}}
    (out_dir / "frontmatter_samples.mmd").write_text(
        g.get_graph().draw_mermaid(frontmatter_config=config))


if __name__ == "__main__":
    main()
