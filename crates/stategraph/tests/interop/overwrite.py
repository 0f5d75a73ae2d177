"""The Python side of tests/overwrite.rs, on the SQLite file given as the argument.

Reads the `Overwrite` stategraph wrote with `update_state` on thread "rust" and runs that
thread on; then writes one itself on thread "py" for stategraph to read. The chain is
a -> b -> c over `value` (last value) and `trail` (a list with `operator.add`), paused
before b.
"""

import json
import operator
import sqlite3
import sys
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Overwrite


class S(TypedDict, total=False):
    value: str
    trail: Annotated[list, operator.add]


def node(name):
    def run(state):
        return {"value": state.get("value", "") + name, "trail": [name]}

    return run


def graph(saver):
    g = StateGraph(S)
    for n in ["a", "b", "c"]:
        g.add_node(n, node(n))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver, interrupt_before=["b"])


def main():
    conn = sqlite3.connect(sys.argv[1], check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    app = graph(saver)
    rust = {"configurable": {"thread_id": "rust"}}
    # The update's writes are on the checkpoint it was made from: the parent of the latest.
    parent = saver.get_tuple(rust).parent_config
    written = [
        {"class": type(w[2]).__name__, "value": getattr(w[2], "value", None)}
        for w in saver.get_tuple(parent).pending_writes
        if w[1] == "trail"
    ]
    before = app.get_state(rust).values["trail"]
    after = app.invoke(None, rust)["trail"]
    py = {"configurable": {"thread_id": "py"}}
    app.invoke({"value": "x"}, py)
    app.update_state(py, {"trail": Overwrite(["y"])}, as_node="a")
    print(json.dumps({"written": written, "before": before, "after": after}))


if __name__ == "__main__":
    main()
