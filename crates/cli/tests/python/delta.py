"""DeltaChannel threads for the `stategraph` command's tests, written by Python LangGraph.

Usage: python delta.py BACKEND TARGET

  BACKEND  sqlite (TARGET is a file) or postgres (TARGET is a DSN)

Threads:

* `chat`: `messages` is `DeltaChannel(_messages_delta_reducer, snapshot_frequency=5)`
  (LangGraph's batch form of `add_messages`), `turns` a plain value; 30 turns, every third
  one through a tool call, one turn removing the first message, one `update_state`
  replacing a message by id.
* `items`: a DeltaChannel of strings whose reducer concatenates the written lists
  (snapshot every 3 updates).
* `merged`: a DeltaChannel of a dict merged by a reducer of the user's own (snapshot every
  3 updates): what the command cannot rebuild without the graph.

Prints JSON on stdout: per thread, for every checkpoint of `get_state_history` (newest
first), `{checkpoint_id, values}` with `values` = `get_state(config at that
checkpoint).values`, rendered as the command's `--json` renders values.
"""

import json
import os
import sqlite3
import sys
from contextlib import contextmanager
from typing import Annotated

from typing_extensions import TypedDict

from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, ToolMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from threads import render  # noqa: E402


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=5)]
    turns: int


def chat_graph(saver):
    def agent(state: Chat):
        last = state["messages"][-1]
        n = state.get("turns", 0)
        if last.type == "human" and n % 3 == 2:
            call = {"name": "lookup", "args": {"q": last.content}, "id": f"call-{n}"}
            return {"messages": [AIMessage("", tool_calls=[call])]}
        return {"messages": [AIMessage(f"answer {n}: {last.content}")], "turns": n + 1}

    def tools(state: Chat):
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(f"found {call['args']['q']}", tool_call_id=call["id"])]}

    def route(state: Chat):
        return "tools" if state["messages"][-1].tool_calls else END

    g = StateGraph(Chat)
    g.add_node("agent", agent)
    g.add_node("tools", tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=saver)


def append_all(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w)
    return out


class Items(TypedDict):
    items: Annotated[list, DeltaChannel(append_all, snapshot_frequency=3)]


def items_graph(saver):
    def add(state: Items):
        return {"items": [f"seen {len(state['items'])}"]}

    g = StateGraph(Items)
    g.add_node("add", add)
    g.add_edge(START, "add")
    g.add_edge("add", END)
    return g.compile(checkpointer=saver)


def merge_all(state: dict, writes: list) -> dict:
    out = dict(state)
    for w in writes:
        out.update(w)
    return out


class Merged(TypedDict):
    data: Annotated[dict, DeltaChannel(merge_all, typ=dict, snapshot_frequency=3)]


def merged_graph(saver):
    def put(state: Merged):
        return {"data": {f"k{len(state['data'])}": len(state["data"])}}

    g = StateGraph(Merged)
    g.add_node("put", put)
    g.add_edge(START, "put")
    g.add_edge("put", END)
    return g.compile(checkpointer=saver)


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def write_chat(g) -> None:
    c = cfg("chat")
    for i in range(30):
        if i == 7:
            first = g.get_state(c).values["messages"][0]
            g.invoke({"messages": [RemoveMessage(id=first.id), ("user", f"question {i}")]}, c)
        else:
            g.invoke({"messages": [("user", f"question {i}")]}, c)
        if i == 12:
            last = g.get_state(c).values["messages"][-1]
            g.update_state(c, {"messages": [AIMessage("edited answer", id=last.id)]})


def history(g, thread: str) -> list:
    out = []
    for s in g.get_state_history(cfg(thread)):
        at = g.get_state(s.config)
        out.append({
            "checkpoint_id": s.config["configurable"]["checkpoint_id"],
            "values": render(at.values),
        })
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
    backend, target = sys.argv[1:3]
    with open_saver(backend, target) as saver:
        chat, items, merged = chat_graph(saver), items_graph(saver), merged_graph(saver)
        write_chat(chat)
        for _ in range(7):
            items.invoke({"items": []}, cfg("items"))
        for _ in range(4):
            merged.invoke({"data": {}}, cfg("merged"))
        out = {
            "chat": history(chat, "chat"),
            "items": history(items, "items"),
            "merged": history(merged, "merged"),
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
