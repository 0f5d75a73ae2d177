"""A payment waits for a human's approval across processes, then is rewound and forked.

Usage: approval.py start|approve|rewind DB   (each step is a separate process)
The Rust twin is crates/stategraph/examples/approval.rs; both print the same lines.
"""
import sys
from typing import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class Payment(TypedDict, total=False):
    amount: int
    approved: bool
    status: str


def approve(s: Payment):
    answer = interrupt(f"approve a payment of {s['amount']}?")
    return {"approved": answer == "yes"}


def pay(s: Payment):
    return {"status": "paid" if s["approved"] else "rejected"}


builder = StateGraph(Payment)
builder.add_node("approve", approve)
builder.add_node("pay", pay)
builder.add_edge(START, "approve")
builder.add_edge("approve", "pay")
builder.add_edge("pay", END)

step, db = sys.argv[1], sys.argv[2]
with SqliteSaver.from_conn_string(db) as saver:
    app = builder.compile(checkpointer=saver)
    thread = {"configurable": {"thread_id": "payment-42"}}
    if step == "start":  # process 1: runs until the interrupt, then exits
        out = app.invoke({"amount": 250}, thread)
        print(f"paused: {out['__interrupt__'][0].value!r}")
    elif step == "approve":  # process 2: answers and finishes the run
        out = app.invoke(Command(resume="yes"), thread)
        print("status:", out["status"])
    else:  # process 3: back to before the approval, fork, answer differently
        before = next(s for s in app.get_state_history(thread) if s.next == ("approve",))
        out = app.invoke(None, before.config)
        print(f"paused again: {out['__interrupt__'][0].value!r}")
        out = app.invoke(Command(resume="no"), thread)
        print("status:", out["status"])
        sources = [s.metadata["source"] for s in app.get_state_history(thread)]
        print("history:", " ".join(sources))
