"""The Python side of tests/bulk_update.rs: the chain a -> b -> c over `value` (last value)
and `trail` (a list with `operator.add`), changed with `bulk_update_state`, dumped as JSON.

Each thread's checkpoints are printed oldest first with what both sides must agree on:
metadata (source, step, parents), the integer part of every channel version (the rest is
random), versions seen, values and the pending writes (channel and value, sorted).
"""

import json
import operator
import sys
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import StateUpdate


class S(TypedDict, total=False):
    value: str
    trail: Annotated[list, operator.add]


def node(name):
    def run(state):
        return {"value": state.get("value", "") + name, "trail": [name]}

    return run


def graph(saver, interrupt_before=None):
    g = StateGraph(S)
    for n in ["a", "b", "c"]:
        g.add_node(n, node(n))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver, interrupt_before=interrupt_before)


def major(versions):
    return {k: int(str(v).split(".")[0]) for k, v in versions.items()}


def dump(saver, thread):
    out = []
    for t in reversed(list(saver.list({"configurable": {"thread_id": thread}}))):
        c, m = t.checkpoint, t.metadata
        writes = sorted(
            ([w[1], w[2]] for w in t.pending_writes or []),
            key=lambda w: json.dumps(w, sort_keys=True),
        )
        out.append(
            {
                "metadata": {
                    "source": m.get("source"),
                    "step": m.get("step"),
                    "parents": m.get("parents"),
                },
                "channel_versions": major(c["channel_versions"]),
                "versions_seen": {k: major(v) for k, v in c["versions_seen"].items()},
                "channel_values": c["channel_values"],
                "pending_writes": writes,
            }
        )
    return out


def main():
    saver = InMemorySaver()
    fresh = graph(saver)
    cfg = {"configurable": {"thread_id": "fresh"}}
    last = fresh.bulk_update_state(
        cfg,
        [
            [StateUpdate({"value": "v1", "trail": ["s1"]}, "a")],
            [StateUpdate({"trail": ["p"]}, "a"), StateUpdate({"trail": ["q"]}, "b")],
            [StateUpdate({"value": "v3"}, "b", "my-task")],
        ],
    )
    paused = graph(saver, interrupt_before=["c"])
    pcfg = {"configurable": {"thread_id": "paused"}}
    paused.invoke({"value": "x"}, pcfg)
    plast = paused.bulk_update_state(
        pcfg,
        [
            [StateUpdate({"trail": ["m"]}, "b"), StateUpdate({"value": "z"}, "c")],
            [StateUpdate({"trail": ["n"]}, "c")],
        ],
    )
    print(
        json.dumps(
            {
                "fresh": dump(saver, "fresh"),
                "fresh_last_is_latest": last["configurable"]["checkpoint_id"]
                == saver.get_tuple(cfg).checkpoint["id"],
                "paused": dump(saver, "paused"),
                "paused_last_is_latest": plast["configurable"]["checkpoint_id"]
                == saver.get_tuple(pcfg).checkpoint["id"],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
