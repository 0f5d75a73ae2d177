#!/usr/bin/env python3
"""Generate tests/schemas/schemas.json for crates/stategraph/tests/schemas.rs: a graph whose
input and output schemas differ from its state, run by the pinned Python LangGraph
(1.2.24), and the JSON schemas Python gives for its input, output, state and context.

    /work/venvs/langgraph/bin/python crates/stategraph/tests/schemas/gen_schemas.py

Ids, versions and timestamps are deterministic as for the golden traces (the clocks and
seeds of tests/golden/gen_delta.py, reused from there; tests/support/golden.rs reads them).

The graph: state `State {a, log (operator.add), n}`, input `In {a, x}` (x is input-only),
output `Out {log, y}` (y is output-only); node `first` takes `In`, node `second` takes
the state; START -> first -> second -> END. Recorded:
- `channels`: the builder's channels in order (state's, then input-only, output-only);
- `invoke`: the input (with a state key `n` and an unknown key `zzz` that `In` lacks),
  the output, the final `get_state` values, and the `inmemory` storage of the run;
- `stream`: the `values` and `updates` events of a stream of the same graph;
- `subgraph`: a parent graph whose node is a subgraph with an output schema: the
  input, output and `inmemory` storage;
- `conflict`: the error of an output schema whose field has another reducer than the
  state's;
- `jsonschema`: `get_input_jsonschema`, `get_output_jsonschema`, `get_context_jsonschema`
  of the graph, and the state's (the output schema of a graph without an output schema);
- `add_node_fn`: the node names `add_node(fn)` takes from the functions.
"""

from __future__ import annotations

import json
import operator
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from typing_extensions import TypedDict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3] / "tests" / "golden"))

from gen_delta import inmemory, plain, reseed  # noqa: E402

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402


class State(TypedDict):
    a: str
    log: Annotated[list[str], operator.add]
    n: int


class In(TypedDict):
    a: str
    x: str


class Out(TypedDict):
    log: list[str]
    y: str


class BadOut(TypedDict):
    n: Annotated[int, operator.add]


@dataclass
class Ctx:
    user: str
    limit: int = 3


def first(s: In) -> dict:
    return {"log": [f"first:{s['a']}:{s.get('x')}"], "n": 1}


def second(s: State) -> dict:
    return {"log": [f"second:{s['n']}:{','.join(sorted(s.keys()))}"], "y": "Y"}


def build() -> StateGraph:
    g = StateGraph(State, input_schema=In, output_schema=Out, context_schema=Ctx)
    g.add_node(first)
    g.add_node(second)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", END)
    return g


class Parent(TypedDict):
    a: str
    log: Annotated[list[str], operator.add]


class SubState(TypedDict):
    a: str
    log: Annotated[list[str], operator.add]
    secret: str


class SubOut(TypedDict):
    log: list[str]


def inner(s: SubState) -> dict:
    return {"log": [f"inner:{s['a']}"], "secret": "kept inside"}


def with_subgraph() -> StateGraph:
    """A parent whose node is a subgraph with output schema `SubOut`: the parent gets
    `log` only, not the subgraph's `secret` (nor its `a`)."""
    sub = StateGraph(SubState, output_schema=SubOut)
    sub.add_node(inner)
    sub.add_edge(START, "inner")
    g = StateGraph(Parent)
    g.add_node("sub", sub.compile())
    g.add_edge(START, "sub")
    return g


def state_only() -> StateGraph:
    g = StateGraph(State)
    g.add_node(second)
    g.add_edge(START, "second")
    return g


def main() -> None:
    out: dict = {"channels": list(build().channels)}

    reseed()
    saver = InMemorySaver()
    app = build().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t"}}
    given = {"a": "hi", "x": "X", "n": 7, "zzz": 1}
    output = app.invoke(given, cfg)
    out["invoke"] = {
        "input": given,
        "output": output,
        "state": app.get_state(cfg).values,
        "inmemory": inmemory(saver),
    }

    reseed()
    saver = InMemorySaver()
    app = with_subgraph().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "p"}}
    given = {"a": "hi", "log": ["start"]}
    out["subgraph"] = {
        "input": given,
        "output": app.invoke(given, cfg),
        "inmemory": inmemory(saver),
    }

    reseed()
    app = build().compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "s"}}
    events = app.stream({"a": "hi", "x": "X"}, cfg, stream_mode=["values", "updates"])
    out["stream"] = [[mode, plain(data)] for mode, data in events]

    try:
        StateGraph(State, output_schema=BadOut)
        out["conflict"] = None
    except ValueError as e:
        out["conflict"] = str(e)

    app = build().compile()
    out["jsonschema"] = {
        "input": app.get_input_jsonschema(),
        "output": app.get_output_jsonschema(),
        "context": app.get_context_jsonschema(),
        "state": state_only().compile().get_output_jsonschema(),
    }
    out["add_node_fn"] = list(build().nodes)

    path = HERE / "schemas.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=False) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
