"""Reads a thread from a SQLite checkpoint file with Python's SqliteSaver and prints it as JSON.

Usage: python read_sqlite_thread.py DB THREAD_ID
"""
import json
import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver

db, thread = sys.argv[1], sys.argv[2]
saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
out = []
for t in saver.list({"configurable": {"thread_id": thread}}):
    out.append(
        {
            "id": t.config["configurable"]["checkpoint_id"],
            "parent": t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None,
            "source": t.metadata.get("source"),
            "step": t.metadata.get("step"),
            "values": t.checkpoint["channel_values"],
            "writes": [[w[0], w[1], w[2]] for w in t.pending_writes],
        }
    )
print(json.dumps(out))
