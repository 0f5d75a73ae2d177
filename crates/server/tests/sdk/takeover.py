"""The client side of tests/takeover.rs: streams a `steps` run through an API-only server
while the worker running it dies and another takes it over.

Usage: takeover.py URL GATE_PATH. Prints ALL OK when the stream ends with the final state.
"""

import sys

from langgraph_sdk import get_sync_client

client = get_sync_client(url=sys.argv[1])
gate = sys.argv[2]
thread = client.threads.create()["thread_id"]
parts = list(
    # The default durability, `async`: when `two` runs, the checkpoint after `one` may or
    # may not be stored yet; either way `one` is not run or streamed again.
    client.runs.stream(thread, "steps", input={"path": gate}, stream_mode=["values", "updates"])
)
events = [p.event for p in parts]
final = parts[-1].data
expected = {"path": gate, "a": 1, "b": 2}
if parts[-1].event != "values" or final != expected:
    print("FAIL final state", events, final, flush=True)
    sys.exit(1)
run_id = parts[0].data["run_id"]
run = client.runs.get(thread, run_id)
if run["status"] != "success":
    print("FAIL run status", run, flush=True)
    sys.exit(1)
updates = [p.data for p in parts if p.event == "updates"]
# `one`'s update was streamed once, before the death; `two`'s once, after the takeover.
if updates != [{"one": {"a": 1}}, {"two": {"b": 2}}]:
    print("FAIL updates", updates, flush=True)
    sys.exit(1)
values = [p.data for p in parts if p.event == "values"]
if values != [{"path": gate}, {"path": gate, "a": 1}, expected]:
    print("FAIL values", values, flush=True)
    sys.exit(1)
if client.threads.get_state(thread)["values"] != expected:
    print("FAIL state", flush=True)
    sys.exit(1)
print("ALL OK", events, flush=True)
