"""Renders what a LangGraph saver returns as plain JSON, for comparison with the Rust side.

Every value is tagged so that JSON cannot blur types: ints are {"int": "<digits>"},
floats {"float": repr(x)}, bytes {"bytes": "<hex>"}, dicts {"map": [[key, value], ...]}
in their order; strings, booleans, None and lists stay as they are.
"""

import json
import sys


def enc(v):
    if v is None or isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, int):
        return {"int": str(v)}
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": bytes(v).hex()}
    if isinstance(v, (list, tuple)):
        return [enc(x) for x in v]
    if isinstance(v, dict):
        return {"map": [[enc(k), enc(x)] for k, x in v.items()]}
    return {"object": type(v).__module__ + "." + type(v).__qualname__}


def conf(config):
    if config is None:
        return None
    c = config["configurable"]
    return [c["thread_id"], c["checkpoint_ns"], c["checkpoint_id"]]


def tuple_json(t):
    if t is None:
        return None
    return {
        "config": conf(t.config),
        "parent_config": conf(t.parent_config),
        "checkpoint": enc(t.checkpoint),
        "metadata": enc(t.metadata),
        "pending_writes": [[task, channel, enc(value)] for task, channel, value in t.pending_writes],
    }


def dump(saver, thread_id):
    """list() of every namespace of the thread, and get_tuple() of its latest root checkpoint."""
    config = {"configurable": {"thread_id": thread_id}}
    root = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return {
        "list": [tuple_json(t) for t in saver.list(config)],
        "latest": tuple_json(saver.get_tuple(root)),
    }


def emit(obj):
    json.dump(obj, sys.stdout, ensure_ascii=True)
    sys.stdout.write("\n")
