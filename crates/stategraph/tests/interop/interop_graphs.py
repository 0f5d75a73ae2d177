"""The interop scenarios of tests/interop_python.rs, run with Python LangGraph.

Usage: python interop_graphs.py MODE BACKEND TARGET

  MODE     write:    run the scenarios (leaving some threads interrupted), then dump
           continue: take every thread one call further, then dump
           read:     dump only
  BACKEND  sqlite (TARGET is a database file) or postgres (TARGET is a DSN)

The dump, printed as JSON on stdout, holds every stored checkpoint as `list()` returns it
(checked equal to what `get_tuple()` returns for the same config), `get_state_history()`
of every thread and namespace, and the outputs of the calls this run made. Values are
rendered as tagged JSON: bytes `{"$bytes": hex}`, tuples `{"$tuple": [...]}`, sets
`{"$set": [...]}`, dicts with non-string keys `{"$map": [[k, v], ...]}`, UUIDs, datetimes,
dates and timedeltas by tag, other objects `{"$type": "module.Class", ...fields}`.

The graphs mirror tests/interop_python/graphs.rs node for node; the calls mirror
tests/interop_python/scenarios.rs.
"""

import dataclasses
import json
import operator
import sqlite3
import sys
import uuid
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt


# ---------------------------------------------------------------------------------------
# rendering
# ---------------------------------------------------------------------------------------
def render(v: Any) -> Any:
    """A decoded value as tagged JSON (the same rendering as render.rs)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": bytes(v).hex()}
    if isinstance(v, list):
        return [render(x) for x in v]
    if isinstance(v, tuple):
        return {"$tuple": [render(x) for x in v]}
    if isinstance(v, (set, frozenset)):
        items = [render(x) for x in v]
        return {"$set": sorted(items, key=lambda x: json.dumps(x, sort_keys=True))}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v):
            return {k: render(x) for k, x in v.items()}
        return {"$map": [[render(k), render(x)] for k, x in v.items()]}
    if isinstance(v, Send):
        return {"$type": "langgraph.types.Send", "node": v.node, "arg": render(v.arg)}
    if isinstance(v, uuid.UUID):
        return {"$uuid": str(v)}
    if isinstance(v, datetime):
        return {"$datetime": v.isoformat()}
    if isinstance(v, date):
        return {"$date": v.isoformat()}
    if isinstance(v, timedelta):
        return {"$timedelta": [v.days, v.seconds, v.microseconds]}
    if isinstance(v, BaseException):
        return {"$exception": repr(v)}
    if hasattr(v, "model_dump"):
        return {"$type": f"{type(v).__module__}.{type(v).__name__}", **render(v.model_dump())}
    if dataclasses.is_dataclass(v):
        fields = {f.name: render(getattr(v, f.name)) for f in dataclasses.fields(v)}
        return {"$type": f"{type(v).__module__}.{type(v).__name__}", **fields}
    raise TypeError(f"no rendering for {type(v)!r}: {v!r}")


def render_config(c: dict | None) -> dict | None:
    if c is None:
        return None
    return {
        "configurable": {
            k: render(v)
            for k, v in c.get("configurable", {}).items()
            if not k.startswith("__pregel")
        }
    }


def render_snapshot(s) -> dict:
    return {
        "values": render(s.values),
        "next": list(s.next),
        "config": render_config(s.config),
        "metadata": render(s.metadata),
        "created_at": s.created_at,
        "parent_config": render_config(s.parent_config),
        "tasks": [
            {
                "id": t.id,
                "name": t.name,
                "path": render(t.path),
                "error": None if t.error is None else repr(t.error),
                "interrupts": [render(i) for i in t.interrupts],
                "state": render_config(t.state) if isinstance(t.state, dict) else render(t.state),
                "result": render(t.result),
            }
            for t in s.tasks
        ],
        "interrupts": [render(i) for i in s.interrupts],
    }


def render_tuple(t) -> dict:
    def three(c):
        if c is None:
            return None
        conf = c["configurable"]
        return {
            "configurable": {
                "thread_id": conf["thread_id"],
                "checkpoint_ns": conf["checkpoint_ns"],
                "checkpoint_id": conf["checkpoint_id"],
            }
        }

    return {
        "config": three(t.config),
        "parent_config": three(t.parent_config),
        "checkpoint": render(dict(t.checkpoint)),
        "metadata": render(dict(t.metadata)),
        "pending_writes": [[w[0], w[1], render(w[2])] for w in t.pending_writes],
    }


# ---------------------------------------------------------------------------------------
# graphs
# ---------------------------------------------------------------------------------------
def chain3():
    class S(TypedDict):
        value: str
        trail: Annotated[list[str], operator.add]

    def mk(n):
        def f(s: S):
            return {"value": s["value"] + n, "trail": [n]}

        return f

    b = StateGraph(S)
    for n in "abc":
        b.add_node(n, mk(n))
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", "c")
    b.add_edge("c", END)
    return b


def conditional():
    class S(TypedDict):
        n: int
        done: bool

    def inc(s: S):
        return {"n": s["n"] + 1}

    def finish(s: S):
        return {"done": True}

    def route(s: S) -> Literal["again", "finish"]:
        return "again" if s["n"] < 2 else "finish"

    b = StateGraph(S)
    b.add_node("inc", inc)
    b.add_node("finish", finish)
    b.add_edge(START, "inc")
    b.add_conditional_edges("inc", route, {"again": "inc", "finish": "finish"})
    b.add_edge("finish", END)
    return b


def ask_greet():
    class S(TypedDict):
        question: str
        answer: str
        greeting: str

    def ask(s: S):
        return {"answer": interrupt({"question": s["question"]})}

    def greet(s: S):
        return {"greeting": "Hello " + s["answer"]}

    b = StateGraph(S)
    b.add_node("ask", ask)
    b.add_node("greet", greet)
    b.add_edge(START, "ask")
    b.add_edge("ask", "greet")
    b.add_edge("greet", END)
    return b


def subgraph():
    class SubS(TypedDict):
        text: str
        ask: bool
        inner_count: int

    def inner1(s: SubS):
        return {"text": s["text"] + "|inner1", "inner_count": 1}

    def inner2(s: SubS):
        if s["ask"]:
            ok = interrupt("confirm?")
            return {"text": s["text"] + f"|inner2({ok})", "inner_count": 2}
        return {"text": s["text"] + "|inner2", "inner_count": 2}

    sb = StateGraph(SubS)
    sb.add_node("inner1", inner1)
    sb.add_node("inner2", inner2)
    sb.add_edge(START, "inner1")
    sb.add_edge("inner1", "inner2")
    sb.add_edge("inner2", END)

    class P(TypedDict):
        text: str
        ask: bool

    def pre(s: P):
        return {"text": s["text"] + "|pre"}

    def post(s: P):
        return {"text": s["text"] + "|post"}

    b = StateGraph(P)
    b.add_node("pre", pre)
    b.add_node("sub", sb.compile())
    b.add_node("post", post)
    b.add_edge(START, "pre")
    b.add_edge("pre", "sub")
    b.add_edge("sub", "post")
    b.add_edge("post", END)
    return b


def fanout():
    class S(TypedDict):
        topics: list[str]
        results: Annotated[list[str], operator.add]
        summary: str

    def fan(s: S):
        return [Send("worker", {"topic": t}) for t in s["topics"]]

    def worker(arg: dict):
        return {"results": [arg["topic"].upper()]}

    def summarize(s: S):
        return {"summary": ",".join(s["results"])}

    b = StateGraph(S)
    b.add_node("worker", worker)
    b.add_node("summarize", summarize)
    b.add_conditional_edges(START, fan, ["worker"])
    b.add_edge("worker", "summarize")
    b.add_edge("summarize", END)
    return b


def join():
    class S(TypedDict):
        log: Annotated[list[str], operator.add]

    def mk(n):
        def f(s: S):
            return {"log": [n]}

        return f

    b = StateGraph(S)
    for n in ("left", "right", "join"):
        b.add_node(n, mk(n))
    b.add_edge(START, "left")
    b.add_edge(START, "right")
    b.add_edge(["left", "right"], "join")
    b.add_edge("join", END)
    return b


def chat():
    class S(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        profile: dict
        turns: int
        score: float

    def bot(s: S):
        last = s["messages"][-1]
        turns = s.get("turns", 0) + 1
        profile = {**s.get("profile", {}), "turns": turns}
        return {
            "messages": [AIMessage(content=f"echo: {last.content}")],
            "turns": turns,
            "profile": profile,
            "score": s.get("score", 0.0) + 0.5,
        }

    b = StateGraph(S)
    b.add_node("bot", bot)
    b.add_edge(START, "bot")
    b.add_edge("bot", END)
    return b


# Every thread and the graph that runs it.
THREADS = {
    "chain": chain3,
    "cond": conditional,
    "int-1": ask_greet,
    "int-2": ask_greet,
    "sub-1": subgraph,
    "sub-2": subgraph,
    "fan": fanout,
    "join": join,
    "chat": chat,
}

# A state value with every kind of data the serializer writes: nested maps and lists,
# bytes, a tuple, datetimes (aware, naive, with an offset), a date, a timedelta, a UUID, a
# set, a dict with integer keys, integers at the 64-bit limits, floats, non-ASCII text.
PROFILE = {
    "nested": {"deep": {"list": [1, -2, 2.5, 1e-7, None, True, "x"], "empty": {}, "none": None}},
    "raw": b"\x00\x01\xfe\xff",
    "pair": (1, "one"),
    "when": datetime(2025, 3, 4, 5, 6, 7, 890123, tzinfo=timezone.utc),
    "naive": datetime(2024, 2, 29, 23, 59, 59),
    "offset": datetime(2025, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    "day": date(2025, 1, 31),
    "span": timedelta(days=1, seconds=5, microseconds=7),
    "uid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "tags": {"alpha", "beta"},
    "int_keys": {1: "one", 2: "two"},
    "big": 2**64 - 1,
    "neg": -(2**63),
    "text": "héllo ✓ 😀",
    "empty": "",
}


# The first messages of the chat: a system prompt, content blocks, a tool call (with
# response and usage metadata) and its answer, then the question the bot echoes.
FIRST_MESSAGES = [
    SystemMessage("be brief", id="sys-1"),
    HumanMessage(
        [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "http://x/y.png"}}],
        id="h-0",
    ),
    AIMessage(
        "",
        tool_calls=[{"name": "lookup", "args": {"q": "x", "n": 2}, "id": "call-1"}],
        response_metadata={"model_name": "fake"},
        usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        id="ai-0",
    ),
    ToolMessage("42", tool_call_id="call-1", id="tool-1"),
    HumanMessage("hello", id="h-1", name="ada"),
]


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def write(graphs: dict, out: dict) -> None:
    """The first calls on every thread; int-1, int-2 and sub-2 are left interrupted."""
    g = graphs["chain"]
    out["chain"] = render(g.invoke({"value": "", "trail": []}, cfg("chain")))
    out["chain"] = render(g.invoke({"value": "x"}, cfg("chain")))
    g.update_state(cfg("chain"), {"value": "patched", "trail": ["u"]}, as_node="b")
    out["chain"] = render(g.invoke(None, cfg("chain")))

    g = graphs["cond"]
    g.invoke({"n": 0, "done": False}, cfg("cond"))
    step1 = [s for s in g.get_state_history(cfg("cond")) if s.metadata["step"] == 1][0]
    out["cond"] = render(g.invoke(None, step1.config))

    g = graphs["int-1"]
    out["int-1"] = render(g.invoke({"question": "name?"}, cfg("int-1")))
    out["int-2"] = render(
        g.invoke({"question": "colour?"}, cfg("int-2"), interrupt_before=["ask"])
    )

    g = graphs["sub-1"]
    out["sub-1"] = render(g.invoke({"text": "start", "ask": False}, cfg("sub-1")))
    out["sub-2"] = render(g.invoke({"text": "start", "ask": True}, cfg("sub-2")))

    out["fan"] = render(
        graphs["fan"].invoke({"topics": ["x", "y", "z"], "results": []}, cfg("fan"))
    )
    out["join"] = render(graphs["join"].invoke({"log": []}, cfg("join")))

    g = graphs["chat"]
    g.invoke({"messages": FIRST_MESSAGES, "profile": PROFILE, "turns": 0, "score": 1.0}, cfg("chat"))
    out["chat"] = render(
        g.invoke({"messages": [HumanMessage("again", id="h-2")]}, cfg("chat"))
    )
    g.update_state(cfg("chat"), {"messages": [RemoveMessage(id="sys-1")]}, as_node="bot")


def take_further(graphs: dict, out: dict) -> None:
    """One more call on every thread: resumes, `update_state` + `invoke(None)`, new input."""
    g = graphs["chain"]
    g.update_state(cfg("chain"), {"value": "more", "trail": ["u2"]}, as_node="b")
    out["chain"] = render(g.invoke(None, cfg("chain")))
    out["cond"] = render(graphs["cond"].invoke({"n": 1, "done": False}, cfg("cond")))
    out["int-1"] = render(graphs["int-1"].invoke(Command(resume="Grace"), cfg("int-1")))
    out["int-2"] = render(graphs["int-2"].invoke(None, cfg("int-2")))
    out["sub-1"] = render(graphs["sub-1"].invoke({"text": "again", "ask": False}, cfg("sub-1")))
    out["sub-2"] = render(graphs["sub-2"].invoke(Command(resume="yes"), cfg("sub-2")))
    out["fan"] = render(graphs["fan"].invoke({"topics": ["q"], "results": []}, cfg("fan")))
    out["join"] = render(graphs["join"].invoke({"log": ["again"]}, cfg("join")))
    out["chat"] = render(
        graphs["chat"].invoke({"messages": [HumanMessage("one more", id="h-3")]}, cfg("chat"))
    )


def dump(graphs: dict, saver, outputs: dict) -> dict:
    tuples = {}
    # list() holds the saver's lock while it yields: read it whole before get_tuple().
    for t in list(saver.list(None)):
        c = t.config["configurable"]
        key = f"{c['thread_id']}|{c['checkpoint_ns']}|{c['checkpoint_id']}"
        rendered = render_tuple(t)
        again = saver.get_tuple(t.config)
        if again is None or render_tuple(again) != rendered:
            raise SystemExit(f"get_tuple differs from list for {key}")
        tuples[key] = rendered
    history = {}
    for key in tuples:
        thread, rest = key.split("|", 1)
        ns = rest.rsplit("|", 1)[0]
        hkey = f"{thread}|{ns}"
        if hkey in history:
            continue
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
        history[hkey] = [render_snapshot(s) for s in graphs[thread].get_state_history(config)]
    return {"tuples": tuples, "history": history, "outputs": outputs}


@contextmanager
def open_saver(backend: str, target: str):
    if backend == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(target, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()
    elif backend == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(target) as saver:
            saver.setup()
            yield saver
    else:
        raise SystemExit(f"unknown backend {backend!r}")


def main() -> None:
    mode, backend, target = sys.argv[1:4]
    with open_saver(backend, target) as saver:
        graphs = {t: make().compile(checkpointer=saver) for t, make in THREADS.items()}
        outputs: dict = {}
        if mode == "write":
            write(graphs, outputs)
        elif mode == "continue":
            take_further(graphs, outputs)
        elif mode != "read":
            raise SystemExit(f"unknown mode {mode!r}")
        print(json.dumps(dump(graphs, saver, outputs)))


if __name__ == "__main__":
    main()
