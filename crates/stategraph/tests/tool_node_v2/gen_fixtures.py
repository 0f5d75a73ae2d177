#!/usr/bin/env python3
"""Generate the fixtures of crates/stategraph/tests/tool_node_v2.rs: what the pinned
Python (langgraph 1.2.24, langgraph-prebuilt 1.1.3) stores for `create_react_agent(model,
tools)` (its default `version="v2"`: one `Send("tools", ToolCallWithContext)` per tool
call) on InMemorySaver, with a scripted model.

    /work/venvs/langgraph/bin/python crates/stategraph/tests/tool_node_v2/gen_fixtures.py

Ids, versions and timestamps are made deterministic as for tests/golden (uuid6 clock
from 2025-01-01T00:00:00Z advancing 1 ms per call, node bits from Random(1234), version
fractions from Random(1235), checkpoint `ts` from 2025-01-01T00:00:00.000001Z advancing
1 ms per call); tests/support/golden.rs installs the same sources on the Rust side. The
messages carry fixed ids, except the tool messages, which `add_messages` ids with a
random uuid4 on both sides (the test compares those as `<uuid4>`).

Each scenario writes `NAME.json`: `inmemory` (storage, writes and blobs as (type, hex)),
`history` (per checkpoint: id, next, tasks with their ids, paths and interrupts) and
`outputs` of each call.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
import warnings
from pathlib import Path
from typing import Any

import langgraph.checkpoint.base.id as id_module
import langgraph.checkpoint.memory as memory_module
import langgraph.pregel._checkpoint as checkpoint_module
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from langgraph.types import Command, interrupt

warnings.filterwarnings("ignore")

EPOCH_NS = 1_735_689_600_000_000_000
SEED = 1234
HERE = Path(__file__).resolve().parent


class Clock:
    def __init__(self) -> None:
        self.calls = 0

    def time_ns(self) -> int:
        self.calls += 1
        return EPOCH_NS + self.calls * 1_000_000


class FixedDatetime:
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


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def approve(action: str) -> str:
    """Do an action once a human approves it."""
    answer = interrupt(f"approve {action}?")
    return f"{action}: {answer}"


def calls(*pairs):
    return [{"name": name, "args": args, "id": cid} for name, args, cid in pairs]


def plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if hasattr(v, "model_dump"):
        d = v.model_dump()
        return {"type": d.get("type"), "content": d.get("content"), "id": d.get("id"),
                "name": d.get("name"), "tool_call_id": d.get("tool_call_id")}
    return v


def pair(serde, tag: str, data: bytes | None) -> dict:
    data = data or b""
    return {"type": tag, "hex": data.hex()}


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


def history(agent, cfg) -> list[dict]:
    out = []
    for s in agent.get_state_history(cfg):
        out.append({
            "checkpoint_id": s.config["configurable"]["checkpoint_id"],
            "next": list(s.next),
            "tasks": [{"id": t.id, "name": t.name, "path": [str(p) for p in t.path],
                       "interrupts": [{"id": i.id, "value": plain(i.value)} for i in t.interrupts]}
                      for t in s.tasks],
        })
    return out


def output(out) -> Any:
    """A call's output: the messages, and the interrupts it stopped at."""
    return {"messages": plain(out["messages"]),
            "interrupts": [{"id": i.id, "value": plain(i.value)}
                           for i in out.get("__interrupt__", [])]}


def two_calls() -> dict:
    """Two tool calls in one answer: two `tools` tasks, each answering its call."""
    reseed()
    saver = InMemorySaver()
    model = Model(messages=iter([
        AIMessage("Let me add them.", id="ai-1",
                  tool_calls=calls(("add", {"a": 1, "b": 2}, "call-1"),
                                   ("add", {"a": 3, "b": 4}, "call-2"))),
        AIMessage("3 and 7.", id="ai-2"),
    ]))
    agent = create_react_agent(model, [add], checkpointer=saver)
    cfg = {"configurable": {"thread_id": "v2"}}
    out = agent.invoke({"messages": [HumanMessage("1 + 2 and 3 + 4?", id="h-1")]}, cfg)
    return {"outputs": [output(out)], "inmemory": inmemory(saver),
            "history": history(agent, cfg)}


def interrupts(mode: str) -> dict:
    """Two tools interrupting in one step, resumed by interrupt id: both at once
    (`mode == "together"`) or one at a time (`"one_by_one"`)."""
    reseed()
    saver = InMemorySaver()
    model = Model(messages=iter([
        AIMessage("", id="ai-1",
                  tool_calls=calls(("approve", {"action": "deploy"}, "call-1"),
                                   ("approve", {"action": "notify"}, "call-2"))),
        AIMessage("Done.", id="ai-2"),
    ]))
    agent = create_react_agent(model, [approve], checkpointer=saver)
    cfg = {"configurable": {"thread_id": "hitl"}}
    outs = [agent.invoke({"messages": [HumanMessage("deploy and notify", id="h-1")]}, cfg)]
    ids = [i.id for i in outs[0]["__interrupt__"]]
    if mode == "together":
        outs.append(agent.invoke(Command(resume={ids[0]: "yes", ids[1]: "no"}), cfg))
    else:
        outs.append(agent.invoke(Command(resume={ids[1]: "no"}), cfg))
        outs.append(agent.invoke(Command(resume={ids[0]: "yes"}), cfg))
    return {"outputs": [output(o) for o in outs], "inmemory": inmemory(saver),
            "history": history(agent, cfg)}


def need_more_steps() -> dict:
    """The `remaining_steps` check near the recursion limit: every answer calls a tool;
    on thread `limit4` the second answer (1 step left), on `limit6` the third, is
    replaced by "Sorry, need more steps to process this request.", which ends the run.
    (With an odd limit the run ends with GraphRecursionError instead: the step after the
    replaced answer is past the limit.)
    """
    reseed()
    saver = InMemorySaver()
    outs = []
    for limit, answers in [(4, 2), (6, 3)]:
        script = [AIMessage("", id=f"ai-{limit}-{i}",
                            tool_calls=calls(("add", {"a": i, "b": 1}, f"call-{limit}-{i}")))
                  for i in range(1, answers + 1)]
        model = Model(messages=iter(script))
        agent = create_react_agent(model, [add], checkpointer=saver)
        cfg = {"configurable": {"thread_id": f"limit{limit}"}, "recursion_limit": limit}
        out = agent.invoke({"messages": [HumanMessage("count", id=f"h-{limit}")]}, cfg)
        outs.append(output(out))
    return {"outputs": outs, "inmemory": inmemory(saver),
            "history": history(agent, {"configurable": {"thread_id": "limit4"}})
            + history(agent, {"configurable": {"thread_id": "limit6"}})}


def main() -> None:
    meta = {"langgraph": __import__("importlib.metadata").metadata.version("langgraph"),
            "langgraph-prebuilt": __import__("importlib.metadata").metadata.version("langgraph-prebuilt")}
    scenarios = {"two_calls": two_calls, "interrupts_together": lambda: interrupts("together"),
                 "interrupts_one_by_one": lambda: interrupts("one_by_one"),
                 "need_more_steps": need_more_steps}
    for name, run in scenarios.items():
        trace = {"scenario": name, **meta, **run()}
        out = HERE / f"{name}.json"
        out.write_text(json.dumps(trace, indent=1) + "\n")
        print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
