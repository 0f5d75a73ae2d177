"""Runs a small graph with LangGraph's SqliteSaver on DB, then prints the thread as JSON.

Usage: write_thread.py DB THREAD_ID

Two invocations on one thread (the second with new input), an update_state, and a
subgraph, so the file holds several checkpoints, namespaces, writes and task paths.
"""

import operator
import sqlite3
import sys
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from common import dump, emit


class State(TypedDict, total=False):
    name: str
    count: int
    score: float
    items: Annotated[list, operator.add]
    raw: bytes


def inner(state):
    return {"items": ["inner"], "score": state.get("score", 0.0) + 0.5}


sub_builder = StateGraph(State)
sub_builder.add_node("inner", inner)
sub_builder.add_edge(START, "inner")
sub_builder.add_edge("inner", END)
sub = sub_builder.compile()


def first(state):
    return {"count": state.get("count", 0) + 1, "items": ["first"], "name": "é\n\"x\""}


def second(state):
    return {"items": [{"n": state["count"], "f": 1.0, "none": None}], "raw": b"\x00\xff"}


db, thread_id = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(db, check_same_thread=False)
saver = SqliteSaver(conn)
builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("sub", sub)
builder.add_node("second", second)
builder.add_edge(START, "first")
builder.add_edge("first", "sub")
builder.add_edge("sub", "second")
builder.add_edge("second", END)
graph = builder.compile(checkpointer=saver)
config = {"configurable": {"thread_id": thread_id}, "metadata": {"user": "ü", "n": 7}}
graph.invoke({"items": ["start"], "count": 10}, config)
graph.invoke({"items": ["again"]}, config)
graph.update_state({"configurable": {"thread_id": thread_id}}, {"name": "updated"}, as_node="second")
emit(dump(saver, thread_id))
conn.close()
