"""The client side of tests/kill_worker.rs: streams a `relay` run through the API process
(default durability, `async`) while the worker running it is killed with SIGKILL and
another takes it over.

Usage: kill_worker.py URL GATE_PATH. Prints ALL OK when the stream has each node's update
once and ends with the final state.
"""

import sys

from langgraph_sdk import get_sync_client

client = get_sync_client(url=sys.argv[1])
gate = sys.argv[2]
thread = client.threads.create()["thread_id"]
parts = list(
    client.runs.stream(thread, "relay", input={"gate": gate}, stream_mode=["values", "updates"])
)
events = [p.event for p in parts]
final = parts[-1].data
expected = {"gate": gate, "quick": 1, "late": 2, "sum": 3}
if parts[-1].event != "values" or final != expected:
    print("FAIL final state", events, final, flush=True)
    sys.exit(1)
run_id = parts[0].data["run_id"]
run = client.runs.get(thread, run_id)
if run["status"] != "success":
    print("FAIL run status", run, flush=True)
    sys.exit(1)
updates = [p.data for p in parts if p.event == "updates"]
# Each node's update once: `fast`'s before the kill, `slow`'s and `join`'s after the
# takeover (not `fast`'s again, although the new worker resumed from the checkpoint
# before the step that `fast` finished).
want = [{"fast": {"quick": 1}}, {"slow": {"late": 2}}, {"join": {"sum": 3}}]
if updates != want:
    print("FAIL updates", updates, flush=True)
    sys.exit(1)
values = [p.data for p in parts if p.event == "values"]
# The input, then each step's state, each once.
want_values = [
    {"gate": gate},
    {"gate": gate, "quick": 1, "late": 2},
    expected,
]
if values != want_values:
    print("FAIL values", values, flush=True)
    sys.exit(1)
if client.threads.get_state(thread)["values"] != expected:
    print("FAIL state", flush=True)
    sys.exit(1)
print("ALL OK", events, flush=True)
