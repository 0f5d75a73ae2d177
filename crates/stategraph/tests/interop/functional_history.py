"""Prints what Python's SqliteSaver reads of the functional example's thread (`essay-1`
of examples/python/functional.py) as one JSON document: per checkpoint, newest first, its
metadata, `next`, values and tasks, and its pending writes (task path, channel, value),
without ids or timestamps, so that threads written by either language compare equal.

Usage: functional_history.py DB
"""
import json
import sys

from langgraph.checkpoint.sqlite import SqliteSaver


def plain(v):
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if hasattr(v, "value") and hasattr(v, "id"):  # an Interrupt
        return {"interrupt": plain(v.value)}
    return v


with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    out = []
    for t in saver.list({"configurable": {"thread_id": "essay-1"}}):
        writes = sorted([w[1], json.dumps(plain(w[2]), sort_keys=True)] for w in t.pending_writes)
        out.append({
            "metadata": plain(t.metadata),
            "channels": sorted(t.checkpoint["channel_values"]),
            "values": plain(t.checkpoint["channel_values"].get("__end__")),
            "previous": plain(t.checkpoint["channel_values"].get("__previous__")),
            "versions_seen": sorted(t.checkpoint["versions_seen"]),
            "writes": writes,
        })
    paths = sorted({r[0] for r in saver.conn.execute("SELECT task_path FROM writes")})
    print(json.dumps({"checkpoints": out, "task_paths": paths}, sort_keys=True))
