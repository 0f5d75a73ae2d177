"""Values cross the boundary once: what Python's serializer encodes is stored as it is and
handed back as it is.

* The SQLite row of a checkpoint holding messages and extension values (datetime, UUID, a
  dataclass) is ``serde.dumps_typed(checkpoint)`` byte for byte, and so are its writes.
* The memory saver's stored pairs (the checkpoint without its values, one blob per new
  channel version, the writes) are the serializer's bytes, as ``InMemorySaver`` keeps them.
* Postgres: the blob rows of the non-primitive values and the write rows are the
  serializer's bytes, the primitives are inline in the checkpoint's JSON.
* All read back equal to what was put.
* A serializer whose tag Rust cannot decode (here a wrapping one with its own tag) is
  stored and read back through it on all three, since Rust never decodes the values.
"""

from __future__ import annotations

import datetime
import sqlite3
import uuid
from dataclasses import dataclass

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

import stategraph


@dataclass
class Point:
    x: int
    label: str


MESSAGES = [
    HumanMessage(content="hello", id="m1"),
    AIMessage(content="hi there", id="m2"),
    HumanMessage(content="ünïcode ✓", id="m3"),
]
WHEN = datetime.datetime(2026, 12, 1, 12, 30, tzinfo=datetime.timezone.utc)
UID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def checkpoint_with_values():
    cp = empty_checkpoint()
    cp["channel_values"] = {
        "messages": list(MESSAGES),
        "when": WHEN,
        "uid": UID,
        "point": Point(3, "p"),
        "count": 7,
    }
    cp["channel_versions"] = {k: 1 for k in cp["channel_values"]}
    return cp


ROOT = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
WRITES = [("messages", [AIMessage(content="next", id="m4")]), ("when", WHEN)]


def put_one(saver):
    cp = checkpoint_with_values()
    stored = saver.put(ROOT, cp, {"source": "input", "step": -1}, dict(cp["channel_versions"]))
    saver.put_writes(stored, WRITES, "task-1")
    return cp, stored


def assert_reads_back(saver, cp, stored):
    got = saver.get_tuple(stored)
    assert got.checkpoint == cp
    assert got.metadata == {"source": "input", "step": -1}
    assert got.pending_writes == [("task-1", ch, v) for ch, v in WRITES]
    listed = list(saver.list({"configurable": {"thread_id": "t"}}))
    assert [t.checkpoint for t in listed] == [cp]
    assert listed[0].pending_writes == got.pending_writes


def test_sqlite_stores_the_serializers_bytes(tmp_path):
    path = tmp_path / "raw.db"
    saver = stategraph.SqliteSaver(path)
    cp, stored = put_one(saver)
    serde = saver.serde
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT type, checkpoint FROM checkpoints").fetchone()
        writes = conn.execute("SELECT channel, type, value FROM writes ORDER BY idx").fetchall()
    assert row == serde.dumps_typed(cp)
    assert writes == [(ch, *serde.dumps_typed(v)) for ch, v in WRITES]
    assert_reads_back(saver, cp, stored)


def test_memory_stores_the_serializers_bytes():
    saver = stategraph.MemorySaver()
    cp, stored = put_one(saver)
    serde = saver.serde
    row = saver._native.get_tuple_raw("t", "", stored["configurable"]["checkpoint_id"])
    _, _, _, parent, pair, values, metadata, writes = row
    plain = {k: v for k, v in cp.items() if k != "channel_values"}
    assert pair == serde.dumps_typed(plain)
    assert values == [(k, *serde.dumps_typed(v)) for k, v in cp["channel_values"].items()]
    assert writes == [("task-1", ch, *serde.dumps_typed(v)) for ch, v in WRITES]
    assert parent is None
    assert serde.loads_typed(metadata) == {"source": "input", "step": -1}
    assert_reads_back(saver, cp, stored)


def test_postgres_stores_the_serializers_bytes(pg_url):
    saver = stategraph.PostgresSaver(pg_url)
    saver.setup()
    cp, stored = put_one(saver)
    serde = saver.serde
    with psycopg.connect(pg_url) as conn:
        (doc,) = conn.execute("SELECT checkpoint FROM checkpoints").fetchone()
        blobs = conn.execute(
            "SELECT channel, type, blob FROM checkpoint_blobs ORDER BY channel"
        ).fetchall()
        writes = conn.execute(
            "SELECT channel, type, blob FROM checkpoint_writes ORDER BY idx"
        ).fetchall()
    assert doc["channel_values"] == {"count": 7}
    values = cp["channel_values"]
    assert blobs == [
        (k, *serde.dumps_typed(values[k])) for k in sorted(values) if k != "count"
    ]
    assert writes == [(ch, *serde.dumps_typed(v)) for ch, v in WRITES]
    assert_reads_back(saver, cp, stored)


class Wrapping(JsonPlusSerializer):
    """A serializer with a tag of its own (as an encrypting one has): Rust cannot decode it."""

    def dumps_typed(self, obj):
        tag, data = super().dumps_typed(obj)
        return ("wrapped+" + tag, data[::-1])

    def loads_typed(self, data):
        tag, payload = data
        assert tag.startswith("wrapped+"), tag
        return super().loads_typed((tag[len("wrapped+"):], payload[::-1]))


@pytest.mark.parametrize("kind", ["sqlite", "memory", "postgres"])
def test_a_serializer_rust_cannot_read_is_stored_as_is(tmp_path, request, kind):
    if kind == "sqlite":
        saver = stategraph.SqliteSaver(tmp_path / "w.db", serde=Wrapping())
    elif kind == "memory":
        saver = stategraph.MemorySaver(serde=Wrapping())
    else:
        saver = stategraph.PostgresSaver(request.getfixturevalue("pg_url"), serde=Wrapping())
        saver.setup()
    cp, stored = put_one(saver)
    assert_reads_back(saver, cp, stored)


def test_postgres_old_format_reads_as_pythons_saver_reads_it(pg_url):
    """A format 3 checkpoint gets its parent's sends as ``__pregel_tasks`` (the fallback to
    the Rust saver's decoding read), as Python's ``PostgresSaver`` migrates it."""
    from langgraph.checkpoint.postgres import PostgresSaver as PyPostgresSaver

    saver = stategraph.PostgresSaver(pg_url)
    saver.setup()
    parent = empty_checkpoint()
    parent["channel_values"] = {"count": 1}
    parent["channel_versions"] = {"count": 1}
    at_parent = saver.put(ROOT, parent, {"source": "loop", "step": 0}, {"count": 1})
    sends = [("__pregel_tasks", "send-a"), ("__pregel_tasks", "send-b")]
    saver.put_writes(at_parent, sends, "t1")
    child = empty_checkpoint()
    child["v"] = 3
    child["channel_values"] = {"count": 2}
    child["channel_versions"] = {"count": 2}
    at_child = saver.put(at_parent, child, {"source": "loop", "step": 1}, {"count": 2})
    ours = saver.get_tuple(at_child)
    assert ours.checkpoint["channel_values"]["__pregel_tasks"] == ["send-a", "send-b"]
    with psycopg.connect(
        pg_url, autocommit=True, prepare_threshold=0, row_factory=psycopg.rows.dict_row
    ) as conn:
        python = PyPostgresSaver(conn).get_tuple(at_child)
    assert ours.checkpoint == python.checkpoint
    assert [t.checkpoint for t in saver.list(ROOT)] == [ours.checkpoint, parent]
