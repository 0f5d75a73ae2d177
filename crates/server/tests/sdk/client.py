"""Drives a running stategraph server with the official langgraph_sdk client.

Usage: client.py URL. Prints one line per check; exits non-zero on the first failure.
"""

import sys
import threading
import time

import httpx
from langgraph_sdk import get_sync_client

URL = sys.argv[1]
client = get_sync_client(url=URL)
EXPECTED = {"name": "pavaneeshwar", "address": "Hyderabad residency"}


def check(name, cond, detail=""):
    if not cond:
        print(f"FAIL {name}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok {name}", flush=True)


# Assistants: one per graph, id = uuid5(NAMESPACE_GRAPH, graph_id).
assistants = client.assistants.search()
check("assistants.search", [a["graph_id"] for a in assistants] == ["seed"], assistants)
seed = assistants[0]["assistant_id"]
check("assistants.get", client.assistants.get(seed)["graph_id"] == "seed")
check("assistants.get by graph id", client.assistants.get("seed")["assistant_id"] == seed)
drawing = client.assistants.get_graph(seed)
check(
    "assistants.get_graph",
    {(e["source"], e["target"]) for e in drawing["edges"]}
    == {("__start__", "get_address"), ("get_address", "__end__")},
    drawing,
)

# runs.wait on a new thread.
thread = client.threads.create(metadata={"owner": "sdk-test"})
tid = thread["thread_id"]
check("threads.get", client.threads.get(tid)["metadata"]["owner"] == "sdk-test")
out = client.runs.wait(tid, "seed", input={})
check("runs.wait", out == EXPECTED, out)
state = client.threads.get_state(tid)
check("threads.get_state values", state["values"] == EXPECTED, state)
check("threads.get_state next", state["next"] == [], state)
check("thread idle after run", client.threads.get(tid)["status"] == "idle")
check("thread values recorded", client.threads.get(tid)["values"] == EXPECTED)

# runs.stream with values and updates.
parts = list(
    client.runs.stream(tid, "seed", input={"name": "ada"}, stream_mode=["values", "updates"])
)
events = [p.event for p in parts]
check("stream starts with metadata", events[0] == "metadata" and "run_id" in parts[0].data, events)
updates = [p.data for p in parts if p.event == "updates"]
check("stream updates", updates == [{"get_address": EXPECTED}], updates)
values = [p.data for p in parts if p.event == "values"]
check("stream values", values[0]["name"] == "ada" and values[-1] == EXPECTED, values)
run_id = parts[0].data["run_id"]
run = client.runs.get(tid, run_id)
check("runs.get after stream", run["status"] == "success", run)
check("runs.list", len(client.runs.list(tid)) == 2)
check("runs.join", client.runs.join(tid, run_id) == EXPECTED)

# History: two runs of (input, loop, node) checkpoints each, newest first.
history = client.threads.get_history(tid, limit=20)
check("history length", len(history) == 6, [h["metadata"] for h in history])
check("history newest first", history[0]["values"] == EXPECTED)
steps = [h["metadata"]["step"] for h in history]
# Steps go on across the runs of a thread, as in LangGraph.
check("history steps", steps == [4, 3, 2, 1, 0, -1], steps)
first_ckpt = history[-1]["checkpoint"]["checkpoint_id"]
old = client.threads.get_state(tid, checkpoint_id=first_ckpt)
check("get_state at checkpoint", old["checkpoint"]["checkpoint_id"] == first_ckpt and old["next"] == ["__start__"], old)

# update_state writes a new checkpoint as the node.
res = client.threads.update_state(tid, {"address": "Paris"}, as_node="get_address")
check("update_state returns a checkpoint", res["checkpoint"]["checkpoint_id"], res)
after = client.threads.get_state(tid)
check("update_state applied", after["values"] == {"name": "pavaneeshwar", "address": "Paris"}, after)
check("update_state metadata", after["metadata"]["source"] == "update", after["metadata"])

# Interrupt before the node, then resume with no input.
t2 = client.threads.create()["thread_id"]
paused = client.runs.wait(t2, "seed", input={"name": "x"}, interrupt_before=["get_address"])
check("interrupt_before pauses", paused == {"name": "x"}, paused)
st = client.threads.get_state(t2)
check("paused next", st["next"] == ["get_address"], st)
check("thread interrupted", client.threads.get(t2)["status"] == "interrupted")
check("paused run status", client.runs.list(t2)[0]["status"] == "interrupted")
resumed = client.runs.wait(t2, "seed", input=None)
check("resume finishes", resumed == EXPECTED, resumed)

# Stateless run.
out = client.runs.wait(None, "seed", input={})
check("stateless runs.wait", out == EXPECTED, out)
parts = list(client.runs.stream(None, "seed", input={}, stream_mode="updates"))
check("stateless runs.stream", [p.event for p in parts] == ["metadata", "updates"], parts)


def status_of(e):
    return e.response.status_code if isinstance(e, httpx.HTTPStatusError) else None


# 404s: unknown thread, unknown assistant; 422: malformed input.
for name, call, code in [
    ("unknown thread", lambda: client.threads.get("00000000-0000-0000-0000-000000000000"), 404),
    ("unknown assistant", lambda: client.runs.wait(tid, "nope", input={}), 404),
    ("state of unknown thread", lambda: client.threads.get_state("00000000-0000-0000-0000-000000000001"), 404),
    ("malformed input", lambda: client.runs.wait(tid, "seed", input=[1, 2]), 422),
    ("bad stream mode", lambda: client.runs.create(tid, "seed", input={}, stream_mode="nope"), 422),
]:
    try:
        call()
        check(name, False, "no error")
    except httpx.HTTPStatusError as e:
        check(f"{name} -> {code}", status_of(e) == code, (status_of(e), e.response.text))
        check(f"{name} detail", "detail" in e.response.json(), e.response.text)

# 409: a second run on a busy thread under reject. The first waits at an interrupt-free
# pending state: create it, and race a second create before a worker can finish it is
# flaky, so occupy the thread with runs queued behind a paused... instead enqueue many.
t3 = client.threads.create()["thread_id"]
r1 = client.runs.create(t3, "seed", input={}, multitask_strategy="enqueue")
r2 = client.runs.create(t3, "seed", input={}, multitask_strategy="enqueue")
codes = []
for _ in range(1):
    try:
        client.runs.create(t3, "seed", input={}, multitask_strategy="reject")
        codes.append(200)
    except httpx.HTTPStatusError as e:
        codes.append(status_of(e))
print("reject codes", codes, flush=True)
client.runs.join(t3, r1["run_id"])
out2 = client.runs.join(t3, r2["run_id"])
check("enqueued runs both finish", out2 == EXPECTED and client.runs.get(t3, r1["run_id"])["status"] == "success")

# Delete a thread.
client.threads.delete(t3)
try:
    client.threads.get(t3)
    check("deleted thread is gone", False)
except httpx.HTTPStatusError as e:
    check("deleted thread is gone", status_of(e) == 404)

found = client.threads.search(metadata={"owner": "sdk-test"})
check("threads.search", [t["thread_id"] for t in found] == [tid], found)
print("ALL OK", flush=True)
