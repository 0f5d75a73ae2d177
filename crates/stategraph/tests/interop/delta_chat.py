"""The DeltaChannel interop of tests/delta.rs, run with Python LangGraph.

Usage: python delta_chat.py MODE BACKEND TARGET THREAD [TURNS]

  MODE     write:    run TURNS chat turns on THREAD, then dump
           continue: run one more turn ("from python"), then dump
           read:     dump only
  BACKEND  sqlite (TARGET is a database file) or postgres (TARGET is a DSN)

The graph is the chat of tests/delta.rs: `messages` a DeltaChannel concatenating the
written lists (snapshot every 3 updates), `turns` a plain value, one node `bot` that
echoes the last message. The dump (JSON on stdout) is `get_state_history(THREAD)`, newest
first, each entry `{checkpoint_id, values, next, metadata}`, and `output` (the last call's
output, if any).
"""

import json
import sqlite3
import sys
from contextlib import contextmanager
from typing import Annotated

from typing_extensions import TypedDict

from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph

SNAPSHOT_FREQUENCY = 3


def append_all(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        out.extend(w)
    return out


class Chat(TypedDict):
    messages: Annotated[list, DeltaChannel(append_all, snapshot_frequency=SNAPSHOT_FREQUENCY)]
    turns: int


def bot(state: Chat) -> dict:
    return {"messages": ["echo:" + state["messages"][-1]], "turns": state.get("turns", 0) + 1}


def graph(saver):
    g = StateGraph(Chat)
    g.add_node("bot", bot)
    g.add_edge(START, "bot")
    g.add_edge("bot", END)
    return g.compile(checkpointer=saver)


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
    mode, backend, target, thread = sys.argv[1:5]
    turns = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    cfg = {"configurable": {"thread_id": thread}}
    with open_saver(backend, target) as saver:
        g = graph(saver)
        output = None
        if mode == "write":
            for i in range(turns):
                output = g.invoke({"messages": [f"py-{i}"]}, cfg)
        elif mode == "continue":
            output = g.invoke({"messages": ["from python"]}, cfg)
        history = [
            {"checkpoint_id": s.config["configurable"]["checkpoint_id"], "values": s.values,
             "next": list(s.next), "metadata": s.metadata}
            for s in g.get_state_history(cfg)
        ]
    json.dump({"history": history, "output": output}, sys.stdout)


if __name__ == "__main__":
    main()
