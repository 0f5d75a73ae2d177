#!/usr/bin/env python3
"""Generate tests/golden/delta_chat.json: a chat thread whose message list is a
LangGraph DeltaChannel, run by the pinned Python LangGraph (1.2.x).

    /work/langgraph-venv/bin/python tests/golden/gen_delta.py
    PG_DSN=postgresql://postgres@127.0.0.1:5432/some_scratch_db \
        /work/langgraph-venv/bin/python tests/golden/gen_delta.py   # also Postgres rows

Ids, versions and timestamps are made deterministic the same way as for the other
golden traces (tests/support/golden.rs reads them back): uuid6 clock from
2025-01-01T00:00:00Z advancing 1 ms per call, uuid6 node bits from Random(1234),
version fractions from Random(1235), checkpoint `ts` from 2025-01-01T00:00:00.000001Z
advancing 1 ms per call. Each saver run is reseeded, so all savers see the same ids.

The file holds: `calls` (what was invoked and returned), `inmemory` (InMemorySaver's
storage, writes and blobs as (type, hex)), `history` (get_state_history per thread: id, values, next
and metadata of each checkpoint), `sqlite` (rows of SqliteSaver) and, with PG_DSN, `postgres` rows,
plus `graph.channels` (the compiled graph's channels in order) for the savers' row
replays.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

import langgraph.checkpoint.base.id as id_module
import langgraph.checkpoint.memory as memory_module
import langgraph.checkpoint.sqlite as sqlite_module
import langgraph.pregel._checkpoint as checkpoint_module
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Overwrite

EPOCH_NS = 1_735_689_600_000_000_000
SEED = 1234
SNAPSHOT_FREQUENCY = 2
THREAD = "chat"
BRANCH = "branch"
HERE = Path(__file__).resolve().parent


class Clock:
    """time.time_ns stand-in for uuid6: +1 ms per call."""

    def __init__(self) -> None:
        self.calls = 0

    def time_ns(self) -> int:
        self.calls += 1
        return EPOCH_NS + self.calls * 1_000_000


class FixedDatetime:
    """datetime stand-in for checkpoint timestamps: +1 ms per call."""

    calls = 0

    @classmethod
    def now(cls, tz=None):
        cls.calls += 1
        base = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
        return base + dt.timedelta(microseconds=1 + 1000 * cls.calls)


def reseed() -> None:
    id_module._last_v6_timestamp = None
    id_module.time = Clock()
    id_module.random = random.Random(SEED)
    versions = random.Random(SEED + 1)
    memory_module.random = versions
    sqlite_module.random = versions
    try:
        import langgraph.checkpoint.postgres.base as pg_base

        pg_base.random = versions
    except ImportError:
        pass
    FixedDatetime.calls = 0
    checkpoint_module.datetime = FixedDatetime


# --- the graph --------------------------------------------------------------
def append_all(state: list, writes: list) -> list:
    """Batch reducer: concatenates every written list (batch-invariant)."""
    out = list(state)
    for w in writes:
        out.extend(w)
    return out


class Chat(TypedDict):
    messages: Annotated[list, DeltaChannel(append_all, snapshot_frequency=SNAPSHOT_FREQUENCY)]
    turns: int


def bot(state: Chat) -> dict:
    return {"messages": ["echo:" + state["messages"][-1]], "turns": state.get("turns", 0) + 1}


def build():
    g = StateGraph(Chat)
    g.add_node("bot", bot)
    g.add_edge(START, "bot")
    g.add_edge("bot", END)
    return g


def conversation(graph) -> list[dict]:
    """Thread `chat`: three turns, an update_state as the bot, two more turns. Thread
    `branch`: two turns, a replay from the second turn's input checkpoint (a fork whose
    first checkpoint must snapshot the channel without a new write: a version bump),
    a turn whose input overwrites the list, and a last turn."""
    calls = chat(graph)
    cfg = {"configurable": {"thread_id": BRANCH}}
    for text in ["one", "two"]:
        out = graph.invoke({"messages": [text]}, cfg)
        calls.append({"kind": "invoke", "thread": BRANCH, "input": {"messages": [text]},
                      "output": out})
    at = next(s for s in graph.get_state_history(cfg) if s.metadata["step"] == 2)
    out = graph.invoke(None, at.config)
    calls.append({"kind": "replay", "thread": BRANCH,
                  "checkpoint_id": at.config["configurable"]["checkpoint_id"], "output": out})
    out = graph.invoke({"messages": Overwrite(["reset"])}, cfg)
    calls.append({"kind": "overwrite", "thread": BRANCH, "input": {"messages": ["reset"]},
                  "output": out})
    out = graph.invoke({"messages": ["after"]}, cfg)
    calls.append({"kind": "invoke", "thread": BRANCH, "input": {"messages": ["after"]},
                  "output": out})
    return calls


def chat(graph) -> list[dict]:
    cfg = {"configurable": {"thread_id": THREAD}}
    calls = []
    for text in ["hello", "how are you", "bye"]:
        out = graph.invoke({"messages": [text]}, cfg)
        calls.append({"kind": "invoke", "thread": THREAD, "input": {"messages": [text]},
                      "output": out})
    got = graph.update_state(cfg, {"messages": ["(edited)"]}, as_node="bot")
    calls.append({"kind": "update_state", "thread": THREAD, "values": {"messages": ["(edited)"]},
                  "as_node": "bot", "output": got["configurable"]["checkpoint_id"]})
    for text in ["again", "end"]:
        out = graph.invoke({"messages": [text]}, cfg)
        calls.append({"kind": "invoke", "thread": THREAD, "input": {"messages": [text]},
                      "output": out})
    return calls


# --- rendering --------------------------------------------------------------
def plain(v: Any) -> Any:
    if isinstance(v, _DeltaSnapshot):
        return {"$delta_snapshot": plain(v.value)}
    if isinstance(v, Overwrite):  # a dataclass, rendered as the other traces render them
        return {"$type": "langgraph.types.Overwrite", "value": plain(v.value),
                "type": "__overwrite__"}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, bytes):
        return {"$bytes": v.hex()}
    return v


def pair(serde, tag: str, data: bytes | None) -> dict:
    data = data or b""
    decoded = None if tag == "empty" else plain(serde.loads_typed((tag, data)))
    return {"type": tag, "hex": data.hex(), "decoded": decoded}


def inmemory(saver: InMemorySaver) -> dict:
    storage, writes, blobs = [], [], []
    for thread, namespaces in saver.storage.items():
        for ns, checkpoints in namespaces.items():
            for cid, (cp, md, parent) in checkpoints.items():
                storage.append({"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid,
                                "parent_checkpoint_id": parent,
                                "checkpoint": pair(saver.serde, *cp),
                                "metadata": pair(saver.serde, *md)})
    for (thread, ns, cid), entries in saver.writes.items():
        for (task_id, idx), (_, channel, value, path) in entries.items():
            writes.append({"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid,
                           "task_id": task_id, "idx": idx, "channel": channel,
                           "task_path": path, "value": pair(saver.serde, *value)})
    for (thread, ns, channel, version), value in saver.blobs.items():
        blobs.append({"thread_id": thread, "checkpoint_ns": ns, "channel": channel,
                      "version": version, "value": pair(saver.serde, *value)})
    storage.sort(key=lambda r: (r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"]))
    writes.sort(key=lambda r: (r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"],
                               r["task_path"], r["task_id"], r["idx"]))
    blobs.sort(key=lambda r: (r["thread_id"], r["checkpoint_ns"], r["version"], r["channel"]))
    return {"storage": storage, "writes": writes, "blobs": blobs}


def sqlite_rows(conn: sqlite3.Connection) -> dict:
    checkpoints = [
        {"thread_id": r[0], "checkpoint_ns": r[1], "checkpoint_id": r[2],
         "parent_checkpoint_id": r[3], "type": r[4], "checkpoint_hex": r[5].hex(),
         "metadata_text": r[6].decode()}
        for r in conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            "checkpoint, metadata FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id")
    ]
    writes = [
        {"thread_id": r[0], "checkpoint_ns": r[1], "checkpoint_id": r[2], "task_id": r[3],
         "task_path": r[4], "idx": r[5], "channel": r[6], "type": r[7],
         "value_hex": (r[8] or b"").hex()}
        for r in conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
            "type, value FROM writes "
            "ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_path, task_id, idx")
    ]
    return {"checkpoints": checkpoints, "writes": writes}


def postgres_rows(dsn: str) -> tuple[dict, list]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(dsn) as pg:
        pg.setup()
        with pg._cursor() as cur:
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
                cur.execute(f"DELETE FROM {table}")
        reseed()
        graph = build().compile(checkpointer=pg)
        conversation(graph)
        out: dict[str, Any] = {}
        with pg._cursor() as cur:
            out["checkpoints"] = [dict(r) for r in cur.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
                "checkpoint::text AS checkpoint_jsonb_text, metadata::text AS metadata_jsonb_text "
                "FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id").fetchall()]
            out["checkpoint_blobs"] = [
                {"thread_id": r["thread_id"], "checkpoint_ns": r["checkpoint_ns"],
                 "channel": r["channel"], "version": r["version"], "type": r["type"],
                 "blob_hex": None if r["blob"] is None else bytes(r["blob"]).hex()}
                for r in cur.execute(
                    "SELECT * FROM checkpoint_blobs "
                    "ORDER BY thread_id, checkpoint_ns, version, channel").fetchall()]
            out["checkpoint_writes"] = [
                {"thread_id": r["thread_id"], "checkpoint_ns": r["checkpoint_ns"],
                 "checkpoint_id": r["checkpoint_id"], "task_id": r["task_id"],
                 "task_path": r["task_path"], "idx": r["idx"], "channel": r["channel"],
                 "type": r["type"], "blob_hex": bytes(r["blob"]).hex()}
                for r in cur.execute(
                    "SELECT * FROM checkpoint_writes ORDER BY thread_id, checkpoint_ns, "
                    "checkpoint_id, task_path, task_id, idx").fetchall()]
        return out, history(graph)


def history(graph) -> dict[str, list[dict]]:
    out = {}
    for thread in (THREAD, BRANCH):
        cfg = {"configurable": {"thread_id": thread}}
        out[thread] = [{"checkpoint_id": s.config["configurable"]["checkpoint_id"],
                        "values": plain(s.values), "next": list(s.next),
                        "metadata": plain(s.metadata)}
                       for s in graph.get_state_history(cfg)]
    return out


def main() -> None:
    import os

    trace: dict[str, Any] = {
        "scenario": "delta_chat",
        "langgraph": __import__("importlib.metadata").metadata.version("langgraph"),
        "snapshot_frequency": SNAPSHOT_FREQUENCY,
        "thread_id": THREAD,
    }
    reseed()
    memory = InMemorySaver()
    graph = build().compile(checkpointer=memory)
    # The compiled graph's channels, in order (`channel_values` keys follow it).
    trace["graph"] = {"channels": {k: {"type": type(c).__name__}
                                   for k, c in graph.channels.items()}}
    trace["calls"] = plain(conversation(graph))
    trace["inmemory"] = inmemory(memory)
    trace["history"] = history(graph)

    reseed()
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    graph = build().compile(checkpointer=SqliteSaver(conn))
    conversation(graph)
    trace["sqlite"] = sqlite_rows(conn)
    assert history(graph) == trace["history"], "SqliteSaver history differs"

    if dsn := os.environ.get("PG_DSN"):
        trace["postgres"], pg_history = postgres_rows(dsn)
        assert pg_history == trace["history"], "PostgresSaver history differs"

    out = HERE / "delta_chat.json"
    out.write_text(json.dumps(trace, indent=1, sort_keys=False) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
