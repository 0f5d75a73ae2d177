"""Databases for the `stategraph` command's tests, written by Python LangGraph.

Usage: python threads.py MODE BACKEND TARGET

  MODE     write: run the scenarios below into TARGET, then print `expected`
           expect: print `expected` only (TARGET already written, e.g. a copy)
  BACKEND  sqlite (TARGET is a file) or postgres (TARGET is a DSN)

Threads: `chat` (LangChain messages with a tool call), `paused` (waits on an interrupt),
`forked` (a state update on an older checkpoint, then a run on that branch), `sub` (a
subgraph, so a second namespace), `rich` (datetimes, UUIDs, sets, tuples, a Decimal and
a dataclass). `expected` is JSON on stdout: per thread, `get_state_history()` of the root
namespace and `get_state()`, rendered as the command's `--json` renders values.
"""

import dataclasses
import decimal
import json
import operator
import sqlite3
import sys
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Annotated, Any

from typing_extensions import TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt


@dataclasses.dataclass
class Point:
    x: int
    y: int


def render(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": bytes(v).hex()}
    if isinstance(v, (list, tuple)):
        return [render(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: render(x) for k, x in v.items()}
        return {"$map": [[render(k), render(x)] for k, x in v.items()]}
    cls = type(v)
    name = f"{cls.__module__}.{cls.__name__}"
    if isinstance(v, uuid.UUID):
        return {"$py": "uuid.UUID", "value": str(v)}
    if isinstance(v, datetime):
        return {"$py": "datetime.datetime", "value": v.isoformat()}
    if isinstance(v, (set, frozenset)):
        return {"$py": name, "value": [render(x) for x in v]}
    if isinstance(v, decimal.Decimal):
        return {"$py": name, "value": str(v)}
    if hasattr(v, "model_dump"):
        return {"$py": name, "value": render(v.model_dump())}
    if dataclasses.is_dataclass(v):
        return {"$py": name, "value": {f.name: render(getattr(v, f.name)) for f in dataclasses.fields(v)}}
    raise TypeError(f"cannot render {name}")


def snapshot(s) -> dict:
    parent = s.parent_config["configurable"]["checkpoint_id"] if s.parent_config else None
    return {
        "checkpoint_id": s.config["configurable"]["checkpoint_id"],
        "parent_checkpoint_id": parent,
        "created_at": s.created_at,
        "metadata": render(s.metadata),
        "next": sorted(s.next),
        "values": render(s.values),
        "interrupts": [{"value": render(i.value), "id": i.id} for i in s.interrupts],
    }


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def chat_graph(saver):
    def agent(state: Chat):
        if isinstance(state["messages"][-1], ToolMessage):
            return {"messages": [AIMessage("It is sunny in Paris.", id="ai-2")]}
        call = {"name": "weather", "args": {"city": "Paris"}, "id": "call-1", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call], id="ai-1")]}

    def tools(state: Chat):
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage("sunny, 21°C", tool_call_id=call["id"], name="weather", id="tool-1")]}

    def route(state: Chat):
        return "tools" if state["messages"][-1].tool_calls else END

    g = StateGraph(Chat)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=saver)


class Approval(TypedDict):
    request: str
    approved: bool


def paused_graph(saver):
    def ask(state: Approval):
        answer = interrupt({"question": "approve?", "request": state["request"]})
        return {"approved": answer == "yes"}

    g = StateGraph(Approval)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=saver)


class Counter(TypedDict):
    count: int
    log: Annotated[list[str], operator.add]


def counter_graph(saver):
    def step(state: Counter):
        return {"count": state["count"] + 1, "log": [f"step {state['count'] + 1}"]}

    g = StateGraph(Counter)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_edge("step", END)
    return g.compile(checkpointer=saver)


class Outer(TypedDict):
    text: str


def sub_graph(saver):
    def inner(state: Outer):
        return {"text": state["text"] + " (inner)"}

    inner_g = StateGraph(Outer)
    inner_g.add_node("inner", inner)
    inner_g.add_edge(START, "inner")
    inner_g.add_edge("inner", END)

    g = StateGraph(Outer)
    g.add_node("child", inner_g.compile())
    g.add_edge(START, "child")
    g.add_edge("child", END)
    return g.compile(checkpointer=saver)


class Rich(TypedDict):
    when: datetime
    id: uuid.UUID
    tags: set
    pair: tuple
    price: decimal.Decimal
    point: Point


def rich_graph(saver):
    def touch(state: Rich):
        return {"tags": state["tags"] | {"touched"}, "point": Point(state["point"].x + 1, 2)}

    g = StateGraph(Rich)
    g.add_node("touch", touch)
    g.add_edge(START, "touch")
    g.add_edge("touch", END)
    return g.compile(checkpointer=saver)


def graphs(saver):
    return {
        "chat": chat_graph(saver),
        "paused": paused_graph(saver),
        "forked": counter_graph(saver),
        "sub": sub_graph(saver),
        "rich": rich_graph(saver),
    }


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def write(gs) -> None:
    gs["chat"].invoke({"messages": [HumanMessage("Weather in Paris?", id="human-1")]}, cfg("chat"))
    gs["paused"].invoke({"request": "deploy", "approved": False}, cfg("paused"))
    forked = gs["forked"]
    forked.invoke({"count": 0, "log": []}, cfg("forked"))
    forked.invoke({"count": 10, "log": ["again"]}, cfg("forked"))
    history = list(forked.get_state_history(cfg("forked")))
    # The checkpoint after the first run (the second-to-last `input` has step 2's parent).
    first_done = [s for s in history if s.metadata["step"] == 1][0]
    branch = forked.update_state(first_done.config, {"count": 100})
    forked.invoke(None, branch)
    gs["sub"].invoke({"text": "hello"}, cfg("sub"))
    gs["rich"].invoke(
        {
            "when": datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc),
            "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
            "tags": {"a"},
            "pair": (1, "two"),
            "price": decimal.Decimal("12.50"),
            "point": Point(1, 1),
        },
        cfg("rich"),
    )


def expected(gs, saver) -> dict:
    out = {}
    for thread, graph in gs.items():
        out[thread] = {
            "history": [snapshot(s) for s in graph.get_state_history(cfg(thread))],
            "state": snapshot(graph.get_state(cfg(thread))),
        }
    # The subgraph's own namespace, as `history --ns` shows it.
    ns = sorted({t.config["configurable"]["checkpoint_ns"] for t in saver.list(cfg("sub"))} - {""})
    sub_cfg = {"configurable": {"thread_id": "sub", "checkpoint_ns": ns[0]}}
    out["sub_ns"] = {
        "ns": ns[0],
        "history": [snapshot(s) for s in gs["sub"].get_state_history(sub_cfg)],
    }
    return out


@contextmanager
def open_saver(backend: str, target: str):
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(target, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()
    else:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(target) as saver:
            saver.setup()
            yield saver


def main() -> None:
    mode, backend, target = sys.argv[1:4]
    with open_saver(backend, target) as saver:
        gs = graphs(saver)
        if mode == "write":
            write(gs)
        json.dump(expected(gs, saver), sys.stdout)


if __name__ == "__main__":
    main()
