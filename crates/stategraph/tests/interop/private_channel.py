"""A node whose input type names a key the state lacks (a private channel): prints, as JSON,
the run's output and each checkpoint's step and state values (oldest first), for
tests/engine/inputs.rs to compare with stategraph's run of the same graph."""
import json
import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph


class S(TypedDict):
    log: Annotated[list[str], operator.add]


class Secret(TypedDict):
    secret: str


def a(s: S):
    return {"secret": "hidden", "log": ["a"]}


def b(p: Secret):
    return {"log": ["b saw " + p["secret"]]}


g = StateGraph(S)
g.add_node("a", a)
g.add_node("b", b)
g.add_edge(START, "a")
g.add_edge("a", "b")
g.add_edge("b", END)
saver = InMemorySaver()
cfg = {"configurable": {"thread_id": "t"}}
output = g.compile(checkpointer=saver).invoke({"log": []}, cfg)
checkpoints = [
    [
        t.metadata["step"],
        {
            k: v
            for k, v in t.checkpoint["channel_values"].items()
            if not k.startswith(("__", "branch:"))
        },
    ]
    for t in reversed(list(saver.list(cfg)))
]
print(json.dumps({"output": output, "checkpoints": checkpoints}))
