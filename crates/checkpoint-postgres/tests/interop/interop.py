"""Drives LangGraph's own PostgresSaver for the Rust interop tests (tests/interop.rs).

    interop.py read  URL THREAD      print what Python's saver reads for THREAD
    interop.py write URL SPEC.json   set up the schema, store SPEC with Python's saver,
                                     then print what it reads back

Output is one JSON document: the list of the thread's checkpoint tuples, newest first,
each as {config, parent, checkpoint, metadata, pending_writes}. Values use a tagged JSON
form shared with the Rust side: bytes are {"$bytes": hex}, floats that JSON cannot hold
{"$float": "nan" | "inf" | "-inf"}, tuples are lists; everything else is plain JSON.
"""

import json
import math
import sys

from langgraph.checkpoint.postgres import PostgresSaver


def encode(value):
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    raise TypeError(f"no tagged form for {type(value).__name__}: {value!r}")


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return bytes.fromhex(value["$bytes"])
        if set(value) == {"$float"}:
            return float(value["$float"])
        return {k: decode(v) for k, v in value.items()}
    return value


def tuple_json(t):
    conf = t.config["configurable"]
    parent = t.parent_config["configurable"]["checkpoint_id"] if t.parent_config else None
    return {
        "config": {
            "thread_id": conf["thread_id"],
            "checkpoint_ns": conf["checkpoint_ns"],
            "checkpoint_id": conf["checkpoint_id"],
        },
        "parent": parent,
        "checkpoint": encode(dict(t.checkpoint)),
        "metadata": encode(dict(t.metadata)),
        "pending_writes": [[task, channel, encode(v)] for task, channel, v in t.pending_writes],
    }


def dump(saver, thread):
    listed = list(saver.list({"configurable": {"thread_id": thread}}))
    out = [tuple_json(t) for t in listed]
    # get_tuple by id must agree with list, row for row.
    for t, j in zip(listed, out):
        got = saver.get_tuple(t.config)
        if got is None or tuple_json(got) != j:
            raise SystemExit(f"get_tuple disagrees with list for {t.config}")
    return out


def write(saver, spec):
    saver.setup()
    for op in spec["ops"]:
        config = {"configurable": dict(op["config"])}
        if op["op"] == "put":
            checkpoint = decode(op["checkpoint"])
            saver.put(config, checkpoint, decode(op["metadata"]), op["new_versions"])
        else:
            writes = [(c, decode(v)) for c, v in op["writes"]]
            saver.put_writes(config, writes, op["task_id"], op["task_path"])


def main():
    mode, url, arg = sys.argv[1:4]
    with PostgresSaver.from_conn_string(url) as saver:
        if mode == "write":
            with open(arg) as f:
                spec = json.load(f)
            write(saver, spec)
            thread = spec["thread_id"]
        else:
            thread = arg
        print(json.dumps(dump(saver, thread)))


if __name__ == "__main__":
    main()
