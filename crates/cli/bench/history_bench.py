"""The Python side of the `stategraph` command's benchmark (BENCHMARKS.md, section
"stategraph command").

  python history_bench.py write DB N   -- one thread `long` of about N checkpoints (a loop
                                           node, a counter and a short text per step)
  python history_bench.py history DB   -- get_state_history of `long`, rendered as JSON
                                           (what `stategraph history --json` prints)
  python history_bench.py chat DB N    -- one thread `chat` of about N checkpoints whose state
                                           holds the last 10 LangChain messages (a window
                                           replaced each step: human, AI with a tool call,
                                           tool result)
  python history_bench.py history DB [THREAD]
                                        -- as above for any thread (default `long`)
  python history_bench.py big DB N     -- one thread `big` of N steps, each writing a new
                                           100 KB text (so each SQLite checkpoint row
                                           holds 100 KB, and each write another 100 KB)
  python history_bench.py stats DB     -- what `stategraph stats` measures, through the
                                           saver's API: every checkpoint of every thread,
                                           the encoded size of each (channel, version) once,
                                           bytes per channel and per checkpoint
"""

import json
import sqlite3
import sys
import time
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class S(TypedDict):
    count: int
    text: str
    limit: int


def graph(saver):
    def step(s: S):
        return {"count": s["count"] + 1, "text": f"step {s['count'] + 1}"}

    g = StateGraph(S)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["count"] < s["limit"] else END, ["step", END])
    return g.compile(checkpointer=saver)


class Big(TypedDict):
    count: int
    blob: str
    limit: int


def big_graph(saver):
    def step(s: Big):
        n = s["count"] + 1
        return {"count": n, "blob": (f"{n:08d}" * 12800)}

    g = StateGraph(Big)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["count"] < s["limit"] else END, ["step", END])
    return g.compile(checkpointer=saver)


class Chat(TypedDict):
    window: list
    count: int
    limit: int


def chat_graph(saver):
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    def step(s: Chat):
        n = s["count"] + 1
        call = {"name": "lookup", "args": {"n": n}, "id": f"call-{n}", "type": "tool_call"}
        new = [
            HumanMessage(f"question {n}", id=f"h{n}"),
            AIMessage("", tool_calls=[call], id=f"a{n}"),
            ToolMessage(f"answer {n}", tool_call_id=f"call-{n}", id=f"t{n}"),
        ]
        return {"count": n, "window": (s["window"] + new)[-10:]}

    g = StateGraph(Chat)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["count"] < s["limit"] else END, ["step", END])
    return g.compile(checkpointer=saver)


def stats(saver):
    t = time.perf_counter()
    threads = [r[0] for r in saver.conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
    report = {}
    for thread in threads:
        sizes = {}
        per_channel = {}
        per_checkpoint = []
        for tup in saver.list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}):
            cp = tup.checkpoint
            here = 0
            for ch, v in cp["channel_values"].items():
                key = (ch, cp["channel_versions"].get(ch))
                if key not in sizes:
                    sizes[key] = len(saver.serde.dumps_typed(v)[1])
                per_channel[ch] = per_channel.get(ch, 0) + sizes[key]
                here += sizes[key]
            per_checkpoint.append(here)
        report[thread] = {"channels": per_channel, "checkpoints": len(per_checkpoint), "bytes": sum(per_checkpoint)}
    json.dump(report, sys.stdout)
    print(f"python stats: {sum(r['checkpoints'] for r in report.values())} checkpoints in {time.perf_counter() - t:.2f}s", file=sys.stderr)


def main():
    mode, db = sys.argv[1], sys.argv[2]
    conn = sqlite3.connect(db, check_same_thread=False)
    saver = SqliteSaver(conn)
    thread = sys.argv[3] if mode == "history" and len(sys.argv) > 3 else "long"
    g = chat_graph(saver) if thread == "chat" else graph(saver)
    cfg = {"configurable": {"thread_id": thread}}
    if mode == "big":
        n = int(sys.argv[3])
        big_graph(saver).invoke(
            {"count": 0, "blob": "", "limit": n}, {"configurable": {"thread_id": "big"}, "recursion_limit": n + 10}
        )
        return
    if mode == "chat":
        n = int(sys.argv[3])
        chat_graph(saver).invoke(
            {"count": 0, "window": [], "limit": n - 2},
            {"configurable": {"thread_id": "chat"}, "recursion_limit": n + 10},
        )
        return
    if mode == "stats":
        stats(saver)
        return
    if mode == "write":
        n = int(sys.argv[3])
        g.invoke({"count": 0, "text": "", "limit": n - 2}, {**cfg, "recursion_limit": n + 10})
        return
    t = time.perf_counter()
    out = []
    for s in g.get_state_history(cfg):
        out.append({
            "config": s.config["configurable"],
            "parent_config": s.parent_config["configurable"] if s.parent_config else None,
            "created_at": s.created_at,
            "metadata": s.metadata,
            "next": list(s.next),
            "values": {k: [m.model_dump() for m in v] if k == "window" else v for k, v in s.values.items()},
            "interrupts": [],
        })
    json.dump(out, sys.stdout)
    print(f"python history: {len(out)} snapshots in {time.perf_counter() - t:.2f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
