"""The response_schema interop of tests/interop_python/response_schema.rs.

Usage: python response_schema.py MODE FILE   (FILE: a SQLite database both sides share)

  write: thread "py": `ask` interrupts with a question and a response_schema; prints the
         interrupts `invoke` returned.
  read:  thread "rs" (written by stategraph): prints the interrupts `get_state` shows,
         then resumes it with "Bo" and prints the result.

Each interrupt is printed as `dataclasses.asdict` gives it: value, id, response_schema.
"""

import dataclasses
import json
import sqlite3
import sys

from typing_extensions import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

SCHEMA = {"type": "string", "minLength": 1, "title": "Name"}


class S(TypedDict, total=False):
    answer: str


def ask(s: S):
    return {"answer": interrupt({"question": "name?"}, response_schema=SCHEMA)}


def graph(saver):
    g = StateGraph(S)
    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    return g.compile(checkpointer=saver)


def interrupts(items) -> list:
    return [dataclasses.asdict(i) for i in items]


def main() -> None:
    mode, target = sys.argv[1:3]
    conn = sqlite3.connect(target, check_same_thread=False)
    try:
        app = graph(SqliteSaver(conn))
        if mode == "write":
            out = app.invoke({}, {"configurable": {"thread_id": "py"}})
            print(json.dumps({"interrupts": interrupts(out["__interrupt__"])}))
        elif mode == "read":
            config = {"configurable": {"thread_id": "rs"}}
            shown = interrupts(app.get_state(config).interrupts)
            done = app.invoke(Command(resume="Bo"), config)
            print(json.dumps({"interrupts": shown, "resumed": done}))
        else:
            raise SystemExit(f"unknown mode {mode!r}")
    finally:
        conn.close()


if __name__ == "__main__":
    main()
