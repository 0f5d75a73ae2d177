#!/usr/bin/env python3
"""Generate tests/golden/functional.json: LangGraph's functional API (`@entrypoint`,
`@task`) run by the pinned Python LangGraph (1.2.x) on an InMemorySaver.

    /work/venvs/langgraph/bin/python tests/golden/gen_functional.py

Ids, versions and timestamps are made deterministic as for the other golden traces
(tests/support/golden.rs reads them back): uuid6 clock from 2025-01-01T00:00:00Z
advancing 1 ms per call, uuid6 node bits from Random(1234), version fractions from
Random(1235), checkpoint `ts` from 2025-01-01T00:00:00.000001Z advancing 1 ms per call.

Two threads (crates/stategraph/tests/functional/golden.rs runs the same in Rust):

* `numbers`: `add_all(nums)` calls the task `add_one` once per number (concurrently),
  asks `interrupt({"question": ..., "sums": ...})`, and returns
  `entrypoint.final(value={"sums", "answer", "previous"}, save=sum(sums))`; resumed with
  "yes"; then run again on [5] (its `previous` is the saved sum) and resumed with "no".
* `review`: `review(topic)` calls `compose` then `ask`, a task that interrupts itself;
  resumed with "great".
* `nested`: `nested(x)` calls `double_then_ask`, a task that calls the task `double` and
  then interrupts; resumed with "sure".

The file holds `calls` (each call's input and its stream: `[mode, chunk]` of the modes
`updates`, `values`, `checkpoints` and `tasks`), `inmemory`
(InMemorySaver's storage, writes and blobs as (type, hex)) and `history`
(get_state_history per thread: checkpoint id, values, next, metadata, tasks).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from pathlib import Path
from typing import Any

import langgraph.checkpoint.base.id as id_module
import langgraph.checkpoint.memory as memory_module
import langgraph.pregel._checkpoint as checkpoint_module
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.types import Command, Interrupt, interrupt

EPOCH_NS = 1_735_689_600_000_000_000
SEED = 1234
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
    memory_module.random = random.Random(SEED + 1)
    FixedDatetime.calls = 0
    checkpoint_module.datetime = FixedDatetime


# --- the entrypoints ----------------------------------------------------------
@task
def add_one(x: int) -> int:
    return x + 1


@task
def compose(topic: str) -> str:
    return f"an essay about {topic}"


@task
def ask(essay: str) -> str:
    answer = interrupt({"review": essay})
    return f"{essay}: {answer}"


@task
def double(x: int) -> int:
    return 2 * x


@task
def double_then_ask(x: int) -> dict:
    doubled = double(x).result()  # a task calling a task
    return {"doubled": doubled, "answer": interrupt(f"double {x}?")}


def build(saver: InMemorySaver):
    @entrypoint(checkpointer=saver)
    def add_all(nums: list, *, previous: Any = None) -> entrypoint.final[dict, int]:
        sums = [f.result() for f in [add_one(n) for n in nums]]
        answer = interrupt({"question": "keep these sums?", "sums": sums})
        return entrypoint.final(
            value={"sums": sums, "answer": answer, "previous": previous}, save=sum(sums)
        )

    @entrypoint(checkpointer=saver)
    def review(topic: str) -> dict:
        essay = compose(topic).result()
        return {"essay": essay, "review": ask(essay).result()}

    @entrypoint(checkpointer=saver)
    def nested(x: int) -> dict:
        return double_then_ask(x).result()

    return add_all, review, nested


def conversation(add_all, review, nested) -> list[dict]:
    calls = []
    plan = [
        (add_all, "numbers", [1, 2]),
        (add_all, "numbers", Command(resume="yes")),
        (add_all, "numbers", [5]),
        (add_all, "numbers", Command(resume="no")),
        (review, "review", "cats"),
        (review, "review", Command(resume="great")),
        (nested, "nested", 21),
        (nested, "nested", Command(resume="sure")),
    ]
    for graph, thread, value in plan:
        cfg = {"configurable": {"thread_id": thread}}
        chunks = [[mode, plain(c)] for mode, c in
                  graph.stream(value, cfg, stream_mode=["updates", "values", "checkpoints", "tasks"])]
        calls.append({"thread": thread, "entrypoint": graph.name,
                      "input": plain(value.resume if isinstance(value, Command) else value),
                      "resume": isinstance(value, Command), "updates": chunks})
    return calls


# --- rendering --------------------------------------------------------------
def plain(v: Any) -> Any:
    if isinstance(v, Interrupt):
        return {"$type": "langgraph.types.Interrupt", "value": plain(v.value), "id": v.id,
                "response_schema": plain(v.response_schema)}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
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


def history(graphs) -> dict[str, list[dict]]:
    out = {}
    for graph, thread in graphs:
        cfg = {"configurable": {"thread_id": thread}}
        out[thread] = [{"checkpoint_id": s.config["configurable"]["checkpoint_id"],
                        "values": plain(s.values), "next": list(s.next),
                        "metadata": plain(s.metadata),
                        "tasks": [{"id": t.id, "name": t.name, "result": plain(t.result),
                                   "interrupts": plain(t.interrupts)} for t in s.tasks],
                        "interrupts": plain(s.interrupts)}
                       for s in graph.get_state_history(cfg)]
    return out


def main() -> None:
    trace: dict[str, Any] = {
        "scenario": "functional",
        "langgraph": __import__("importlib.metadata").metadata.version("langgraph"),
    }
    reseed()
    memory = InMemorySaver()
    add_all, review, nested = build(memory)
    trace["calls"] = conversation(add_all, review, nested)
    trace["inmemory"] = inmemory(memory)
    trace["history"] = history([(add_all, "numbers"), (review, "review"), (nested, "nested")])
    out = HERE / "functional.json"
    out.write_text(json.dumps(trace, indent=1, sort_keys=False) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
