"""The Python side of tests/sqlite_cache.rs: Rust's `square` graph with a SqliteCache.

    python cache_graph.py CACHE_FILE X

Runs `START -> square -> END` once on input `{"x": X}` with `SqliteCache(path=CACHE_FILE)`
and the key `str(x)` (the same bytes as the Rust test's key function), and prints
`{"log": [...], "calls": N}`: N is 0 when the entry came from the cache.
"""

import json
import operator
import sys
from typing import Annotated, TypedDict

from langgraph.cache.sqlite import SqliteCache
from langgraph.graph import END, START, StateGraph
from langgraph.types import CachePolicy


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


CALLS = []


def square(state: State) -> dict:
    CALLS.append(state["x"])
    return {"log": [f"sq:{state['x'] * state['x']}"]}


def main() -> None:
    path, x = sys.argv[1], int(sys.argv[2])
    g = StateGraph(State)
    g.add_node("square", square, cache_policy=CachePolicy(key_func=lambda s: str(s["x"]), ttl=3600))
    g.add_edge(START, "square")
    g.add_edge("square", END)
    graph = g.compile(cache=SqliteCache(path=path))
    out = graph.invoke({"x": x, "log": []})
    print(json.dumps({"log": out["log"], "calls": len(CALLS)}))


if __name__ == "__main__":
    main()
