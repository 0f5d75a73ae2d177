"""The Python side of tests/runtime_context/managed.rs, on the SQLite file given as argument.

Runs the graphs whose nodes read LangGraph's managed values (`RemainingSteps`,
`IsLastStep`) on threads "py" and "py-sub", then prints as JSON what the nodes saw, and
the checkpoints of those threads and of the "rust" and "rust-sub" threads that
stategraph wrote to the same file (ids, namespaces' task ids and timestamps left out).

- `loop`: START -> loop, looping back until `is_last_step` (read by the conditional
  edge); each step appends `[remaining_steps, is_last_step]` to `seen`. Run with
  recursion_limit 4, then again on the same thread with recursion_limit 6.
- `outer`: START -> outer -> sub -> END, where `sub` is the `loop` graph as a subgraph;
  `outer` appends its own `[remaining_steps, is_last_step]`. Run with recursion_limit 5.

With `--fixture` after the file it prints only what the nodes saw: `managed.json`.
"""

import json
import operator
import sqlite3
import sys
from typing import Annotated

from typing_extensions import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.managed import IsLastStep, RemainingSteps


class S(TypedDict):
    seen: Annotated[list, operator.add]
    remaining_steps: RemainingSteps
    is_last_step: IsLastStep


def look(state):
    return {"seen": [[state["remaining_steps"], state["is_last_step"]]]}


def route(state):
    return END if state["is_last_step"] else "loop"


def loop_graph():
    g = StateGraph(S)
    g.add_node("loop", look)
    g.add_edge(START, "loop")
    g.add_conditional_edges("loop", route, ["loop", END])
    return g


def outer_graph(saver):
    g = StateGraph(S)
    g.add_node("outer", look)
    g.add_node("sub", loop_graph().compile())
    g.add_edge(START, "outer")
    g.add_edge("outer", "sub")
    g.add_edge("sub", END)
    return g.compile(checkpointer=saver)


def dump(saver, thread):
    out = []
    for t in saver.list({"configurable": {"thread_id": thread}}):
        ns = t.config["configurable"]["checkpoint_ns"]
        out.append(
            {
                "ns": "|".join(part.split(":")[0] for part in ns.split("|")) if ns else "",
                "source": t.metadata.get("source"),
                "step": t.metadata.get("step"),
                "values": t.checkpoint["channel_values"],
                "channels": sorted(t.checkpoint["channel_versions"]),
                "updated": t.checkpoint.get("updated_channels"),
                "writes": [[w[1], w[2]] for w in t.pending_writes],
            }
        )
    out.sort(key=lambda c: (c["ns"], c["step"]))
    return out


def main():
    saver = SqliteSaver(sqlite3.connect(sys.argv[1], check_same_thread=False))
    saver.setup()
    app = loop_graph().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "py"}}
    first = app.invoke({"seen": []}, {**cfg, "recursion_limit": 4})
    second = app.invoke({"seen": []}, {**cfg, "recursion_limit": 6})
    sub_cfg = {"configurable": {"thread_id": "py-sub"}, "recursion_limit": 5}
    outer = outer_graph(saver).invoke({"seen": []}, sub_cfg)
    seen = {"loop": [first, second], "outer": outer}
    if sys.argv[2:] == ["--fixture"]:
        print(json.dumps(seen, indent=1))
        return
    threads = {t: dump(saver, t) for t in ["py", "py-sub", "rust", "rust-sub"]}
    print(json.dumps({**seen, "threads": threads}))


main()
