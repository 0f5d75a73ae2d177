"""Drives a running stategraph server with the official langgraph_sdk client.

Usage: client.py URL GATE_DIR API_ONLY_URL (a second server on the same database, with
no workers of its own). The server serves `seed` (the quickstart graph), `agent` (a ReAct agent whose
scripted model adds the question's first two numbers with an `add` tool) and `gate`
(node `wait` waits until the file named by the `path` channel exists, writing a custom
event first; node `ask` then interrupts and stores the resume value in `answer`).
GATE_DIR is an empty directory for those files. Prints one line per check; exits
non-zero on the first failure.
"""

import os
import sys
import time
import uuid

import httpx
from langgraph_sdk import get_sync_client

URL = sys.argv[1]
GATE_DIR = sys.argv[2]
API_ONLY = get_sync_client(url=sys.argv[3])
T0 = time.monotonic()
OWNER = f"sdk-test-{uuid.uuid4()}"
client = get_sync_client(url=URL)
EXPECTED = {"name": "pavaneeshwar", "address": "Hyderabad residency"}


def check(name, cond, detail=""):
    if not cond:
        print(f"FAIL {name}: {detail}", flush=True)
        sys.exit(1)
    print(f"ok {name} {time.monotonic() - T0:.2f}", flush=True)


# Assistants: one per graph, id = uuid5(NAMESPACE_GRAPH, graph_id).
assistants = client.assistants.search()
check("assistants.search", sorted(a["graph_id"] for a in assistants) == ["agent", "gate", "seed"], assistants)
seed = client.assistants.search(graph_id="seed")[0]["assistant_id"]
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
thread = client.threads.create(metadata={"owner": OWNER})
tid = thread["thread_id"]
check("threads.get", client.threads.get(tid)["metadata"]["owner"] == OWNER)
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

# Fork: update_state at an older checkpoint starts a branch from it; the thread's head is
# the fork, whose parent is that checkpoint, and the branch's values build on its values.
base = history[1]
fork = client.threads.update_state(
    tid, {"address": "Rome"}, as_node="get_address",
    checkpoint_id=base["checkpoint"]["checkpoint_id"],
)
head = client.threads.get_state(tid)
check("fork is the head", head["checkpoint"]["checkpoint_id"] == fork["checkpoint"]["checkpoint_id"], head)
check("fork parent", head["parent_checkpoint"]["checkpoint_id"] == base["checkpoint"]["checkpoint_id"], head)
check("fork values", head["values"] == {**base["values"], "address": "Rome"}, (head["values"], base["values"]))

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
    ("run on unknown thread", lambda: client.runs.create("00000000-0000-0000-0000-000000000002", "seed", input={}), 404),
    ("enqueued run on unknown thread", lambda: client.runs.create("00000000-0000-0000-0000-000000000003", "seed", input={}, multitask_strategy="enqueue"), 404),
    ("malformed input", lambda: client.runs.wait(tid, "seed", input=[1, 2]), 422),
    ("bad stream mode", lambda: client.runs.create(tid, "seed", input={}, stream_mode="nope"), 422),
]:
    try:
        call()
        check(name, False, "no error")
    except httpx.HTTPStatusError as e:
        check(f"{name} -> {code}", status_of(e) == code, (status_of(e), e.response.text))
        check(f"{name} detail", "detail" in e.response.json(), e.response.text)

# 409: a second run on a thread whose run waits at the gate, under reject; enqueue is
# accepted and runs after it.
def gate_path():
    return os.path.join(GATE_DIR, str(uuid.uuid4()))


def open_gate(path):
    with open(path, "w") as f:
        f.write("open")


t3 = client.threads.create()["thread_id"]
p3 = gate_path()
r1 = client.runs.create(t3, "gate", input={"path": p3})
try:
    client.runs.create(t3, "seed", input={}, multitask_strategy="reject")
    check("busy thread under reject -> 409", False, "accepted")
except httpx.HTTPStatusError as e:
    check("busy thread under reject -> 409", status_of(e) == 409, e.response.text)
    check("409 detail", "detail" in e.response.json())
check("rejected run not queued", len(client.runs.list(t3)) == 1)
r2 = client.runs.create(t3, "gate", command={"resume": "42"}, multitask_strategy="enqueue")
check("enqueued run waits", client.runs.get(t3, r2["run_id"])["status"] == "pending")
open_gate(p3)
first = client.runs.join(t3, r1["run_id"])
check(
    "gate run pauses at the interrupt",
    first["opened"] is True and first["__interrupt__"][0]["value"] == "what is the answer?",
    first,
)
second = client.runs.join(t3, r2["run_id"])
check("enqueued Command(resume) answers it", second["answer"] == "42" and "__interrupt__" not in second, second)
check("runs in order", [r["status"] for r in client.runs.list(t3)] == ["success", "interrupted"])

# Custom stream mode, and interrupt + resume through runs.stream.
t4 = client.threads.create()["thread_id"]
p4 = gate_path()
open_gate(p4)
parts = list(client.runs.stream(t4, "gate", input={"path": p4}, stream_mode=["custom", "updates"]))
custom = [p.data for p in parts if p.event == "custom"]
check("custom events", custom == [{"waiting": p4}], parts)
ups = [p.data for p in parts if p.event == "updates"]
check("interrupt in updates", "__interrupt__" in ups[-1], ups)
parts = list(client.runs.stream(t4, "gate", command={"resume": "yes"}, stream_mode="values"))
check("resumed stream", parts[-1].data["answer"] == "yes", parts)

# Cancel a running run: it ends interrupted and frees the thread.
t5 = client.threads.create()["thread_id"]
r5 = client.runs.create(t5, "gate", input={"path": gate_path()})
for _ in range(200):
    if client.runs.get(t5, r5["run_id"])["status"] == "running":
        break
    time.sleep(0.02)
client.runs.cancel(t5, r5["run_id"], wait=True)
check("cancelled run", client.runs.get(t5, r5["run_id"])["status"] == "interrupted")
check("thread free after cancel", client.threads.get(t5)["status"] == "idle")
out = client.runs.wait(t5, "seed", input={})
check("thread runs again after cancel", out["name"] == "pavaneeshwar", out)

# Cancel a pending run.
p6 = gate_path()
t6 = client.threads.create()["thread_id"]
r6 = client.runs.create(t6, "gate", input={"path": p6})
r7 = client.runs.create(t6, "seed", input={}, multitask_strategy="enqueue")
client.runs.cancel(t6, r7["run_id"])
r7_status = client.runs.get(t6, r7["run_id"])["status"]
check("cancelled pending run", r7_status == "interrupted",
      (r7_status, client.runs.get(t6, r6["run_id"])["status"]))
open_gate(p6)
client.runs.join(t6, r6["run_id"])
check("cancelled pending run never ran", client.runs.get(t6, r7["run_id"])["status"] == "interrupted")

def wait_running(thread_id, run_id):
    for _ in range(500):
        if client.runs.get(thread_id, run_id)["status"] == "running":
            return
        time.sleep(0.02)
    check("run starts", False, run_id)


# multitask_strategy="interrupt": the running run is stopped (interrupted), the new one runs.
t7 = client.threads.create()["thread_id"]
r8 = client.runs.create(t7, "gate", input={"path": gate_path()})
wait_running(t7, r8["run_id"])
p7 = gate_path()
open_gate(p7)
out = client.runs.wait(t7, "gate", input={"path": p7}, multitask_strategy="interrupt")
check("interrupt strategy runs the new run", out["opened"] is True and out["path"] == p7, out)
check("interrupt strategy stops the old run", client.runs.get(t7, r8["run_id"])["status"] == "interrupted")

# multitask_strategy="rollback": the running run and its checkpoints are deleted.
t8 = client.threads.create()["thread_id"]
r9 = client.runs.create(t8, "gate", input={"path": gate_path()})
wait_running(t8, r9["run_id"])
p8 = gate_path()
open_gate(p8)
out = client.runs.wait(t8, "gate", input={"path": p8}, multitask_strategy="rollback")
check("rollback strategy runs the new run", out["opened"] is True, out)
try:
    client.runs.get(t8, r9["run_id"])
    check("rolled-back run deleted", False)
except httpx.HTTPStatusError as e:
    check("rolled-back run deleted", status_of(e) == 404)
runs8 = client.runs.list(t8)
check("one run left after rollback", len(runs8) == 1, runs8)
run_ids = {h["metadata"].get("run_id") for h in client.threads.get_history(t8, limit=50)}
check("rolled-back checkpoints deleted", run_ids == {runs8[0]["run_id"]}, run_ids)

# Rollback on a thread whose previous run this process holds the head of: the rolled-back
# run's checkpoints go and the thread's head is the previous run's again; the next run
# builds on it (no checkpoint left without its parent).
t10 = client.threads.create()["thread_id"]
p10 = gate_path()
open_gate(p10)
client.runs.wait(t10, "gate", input={"path": p10})
r10 = client.runs.create(t10, "gate", input={"path": gate_path()})
wait_running(t10, r10["run_id"])
p11 = gate_path()
open_gate(p11)
out = client.runs.wait(t10, "gate", input={"path": p11}, multitask_strategy="rollback")
check("rollback after a finished run", out["opened"] is True and out["path"] == p11, out)
hist10 = client.threads.get_history(t10, limit=50)
ids10 = {h["checkpoint"]["checkpoint_id"] for h in hist10}
check("rollback leaves a linked history", all(h["parent_checkpoint"] is None or h["parent_checkpoint"]["checkpoint_id"] in ids10 for h in hist10), hist10)
check("rollback keeps both other runs", len({h["metadata"].get("run_id") for h in hist10}) == 2, hist10)

# Thread copy and metadata update.
copied = client.threads.copy(tid)
check("threads.copy state", client.threads.get_state(copied["thread_id"])["values"] == client.threads.get_state(tid)["values"])
check("threads.copy history", len(client.threads.get_history(copied["thread_id"], limit=50)) == len(client.threads.get_history(tid, limit=50)))
patched = client.threads.update(tid, metadata={"tag": "x"})
check("threads.update merges metadata", patched["metadata"]["tag"] == "x" and patched["metadata"]["owner"] == OWNER, patched)

# A body over the limit is refused in the server's error shape.
big = httpx.post(URL + "/threads", content=b'{"metadata": {"x": "' + b"a" * (3 << 20) + b'"}}', headers={"content-type": "application/json"})
check("huge body -> 413", big.status_code == 413 and "detail" in big.json(), big.text[:200])

# The ReAct agent: messages in LangChain's dict form, tool call and answer.
ta2 = client.threads.create()["thread_id"]
out = client.runs.wait(ta2, "agent", input={"messages": [{"role": "user", "content": "What is 2 + 40?"}]})
kinds = [m["type"] for m in out["messages"]]
check("agent messages", kinds == ["human", "ai", "tool", "ai"], out)
check("agent tool call", out["messages"][1]["tool_calls"][0]["args"] == {"a": 2, "b": 40}, out)
check("agent tool answer", out["messages"][2]["content"] == "42", out)
check("agent answer", out["messages"][3]["content"] == "The sum is 42.", out)
parts = list(
    client.runs.stream(
        ta2,
        "agent",
        input={"messages": [{"role": "user", "content": "And 1 + 2?"}]},
        stream_mode=["messages-tuple", "updates"],
    )
)
msgs = [p.data for p in parts if p.event == "messages"]
check("agent streams messages", len(msgs) > 0 and all(len(m) == 2 for m in msgs), parts)
said = "".join(m[0]["content"] for m in msgs if m[1].get("langgraph_node") == "agent")
check("agent streams its answer", "The sum is 3." in said, said)
ups = [list(p.data) for p in parts if p.event == "updates"]
check("agent updates", ups == [["agent"], ["tools"], ["agent"]], ups)
hist = client.threads.get_state(ta2)["values"]["messages"]
check("agent thread keeps both turns", len(hist) == 8, hist)

# A conversation: a run with new input starts from the head the thread's last run left in
# this process, unread, when the claim finds it is still the stored head. What changed the
# thread meanwhile (update_state, a fork at an older checkpoint) is read, not overwritten.
def say(thread, text):
    return client.runs.wait(thread, "agent", input={"messages": [{"role": "user", "content": text}]})


def contents(out):
    return [m["content"] for m in out["messages"]]


tc = client.threads.create()["thread_id"]
say(tc, "What is 1 + 2?")
out = say(tc, "What is 3 + 4?")
check("conversation turns", contents(out)[3::4] == ["The sum is 3.", "The sum is 7."], contents(out))
client.threads.update_state(tc, {"messages": [{"role": "ai", "content": "noted"}]}, as_node="agent")
out = say(tc, "What is 5 + 6?")
check("a run after update_state builds on it", contents(out)[8:] == ["noted", "What is 5 + 6?", "Let me add them.", "11", "The sum is 11."], contents(out))
first = [h for h in client.threads.get_history(tc, limit=50) if h["metadata"]["step"] == 4][0]
client.threads.update_state(tc, {"messages": [{"role": "ai", "content": "forked"}]}, as_node="agent", checkpoint_id=first["checkpoint"]["checkpoint_id"])
out = say(tc, "What is 7 + 8?")
check("a run after a fork builds on the fork", contents(out)[4:] == ["forked", "What is 7 + 8?", "Let me add them.", "15", "The sum is 15."], contents(out))
# A run at a checkpoint_id reads it (the cached head is not that checkpoint); the run after
# it builds on the branch it made.
out = client.runs.wait(tc, "agent", input={"messages": [{"role": "user", "content": "What is 9 + 1?"}]}, checkpoint_id=first["checkpoint"]["checkpoint_id"])
check("a run at a checkpoint_id builds on it", contents(out)[4:] == ["What is 9 + 1?", "Let me add them.", "10", "The sum is 10."], contents(out))
out = say(tc, "What is 2 + 2?")
check("the run after it builds on its branch", contents(out)[4:] == ["What is 9 + 1?", "Let me add them.", "10", "The sum is 10.", "What is 2 + 2?", "Let me add them.", "4", "The sum is 4."], contents(out))

# stream_mode="messages" (not -tuple): the server's messages/metadata once per message,
# then the message so far at each chunk (messages/partial), or a whole message
# (messages/complete); the agent's model streams a chunk per word, then its tool calls.
tm = client.threads.create()["thread_id"]
parts = list(
    client.runs.stream(tm, "agent", input={"messages": [{"role": "user", "content": "What is 1 + 2?"}]}, stream_mode="messages")
)
names = [p.event for p in parts]
check(
    "messages stream names",
    names[0] == "metadata" and set(names[1:]) == {"messages/metadata", "messages/partial", "messages/complete"},
    names,
)
ids_seen = []
for p in parts[1:]:
    if p.event == "messages/metadata":
        check("one metadata per message", len(p.data) == 1 and list(p.data)[0] not in ids_seen, p.data)
        ids_seen.extend(p.data)
    else:
        check("a message per event, after its metadata", len(p.data) == 1 and p.data[0]["id"] in ids_seen, p)
metas = [list(p.data.values())[0]["metadata"] for p in parts if p.event == "messages/metadata"]
check("messages metadata", [m["langgraph_node"] for m in metas] == ["agent", "tools", "agent"] and metas[0]["thread_id"] == tm, metas)
partials = [p.data[0] for p in parts if p.event == "messages/partial"]
last_of = {}
for m in partials:
    last_of[m["id"]] = m
asked, answered = list(last_of.values())
check(
    "partials accumulate the answer",
    [m["content"] for m in partials if m["id"] == answered["id"]] == ["The ", "The sum ", "The sum is ", "The sum is 3."],
    partials,
)
check(
    "partial is a message with the tool call",
    asked["type"] == "ai" and asked["content"] == "Let me add them." and asked["tool_calls"][0]["args"] == {"a": 1, "b": 2}
    and "tool_call_chunks" not in asked,
    asked,
)
completes = [p.data[0] for p in parts if p.event == "messages/complete"]
check("tool answer is complete", [(m["type"], m["content"]) for m in completes] == [("tool", "3")], completes)
stored = client.threads.get_state(tm)["values"]["messages"]
check("partials end as the stored answers", [stored[1]["id"], stored[3]["id"]] == [asked["id"], answered["id"]], stored)
parts = list(client.runs.stream(None, "seed", input={}, stream_mode="messages"))
check("seed streams no messages", [p.event for p in parts] == ["metadata"], parts)

# stream_mode="events": the run as astream_events (v2) reports it.
te = client.threads.create()["thread_id"]
parts = list(
    client.runs.stream(te, "agent", input={"messages": [{"role": "user", "content": "What is 1 + 2?"}]}, stream_mode="events")
)
check("events stream names", parts[0].event == "metadata" and {p.event for p in parts[1:]} == {"events"}, parts)
run_id = parts[0].data["run_id"]
evs = [p.data for p in parts[1:]]
check(
    "events have the astream_events keys",
    all(set(e) == {"event", "data", "name", "tags", "run_id", "metadata", "parent_ids"} for e in evs),
    evs[0],
)
first, last = evs[0], evs[-1]
check(
    "events start with the graph",
    (first["event"], first["name"], first["run_id"], first["parent_ids"]) == ("on_chain_start", "agent", run_id, [])
    and first["data"]["input"]["messages"][0]["content"] == "What is 1 + 2?",
    first,
)
check(
    "events end with the graph's output",
    (last["event"], last["run_id"]) == ("on_chain_end", run_id)
    and last["data"]["output"]["messages"][-1]["content"] == "The sum is 3.",
    last,
)
nodes = [(e["event"], e["name"]) for e in evs[1:-1] if e["event"].startswith("on_chain")]
check(
    "events of each node",
    nodes == [(k, n) for n in ["agent", "tools", "agent"] for k in ["on_chain_start", "on_chain_stream", "on_chain_end"]],
    nodes,
)
starts = [e for e in evs[1:-1] if e["event"] == "on_chain_start"]
check(
    "node events carry step, node and parent",
    [(e["metadata"]["langgraph_step"], e["metadata"]["langgraph_node"], e["tags"]) for e in starts]
    == [(1, "agent", ["graph:step:1"]), (2, "tools", ["graph:step:2"]), (3, "agent", ["graph:step:3"])]
    and all(e["parent_ids"] == [run_id] and e["metadata"]["thread_id"] == te for e in starts),
    starts,
)
node_end = next(e for e in evs if e["event"] == "on_chain_end" and e["name"] == "tools")
check("a node's end has its output", node_end["data"]["output"]["messages"][0]["content"] == "3", node_end)
model = [e for e in evs if e["event"].startswith("on_chat_model")]
kinds = [e["event"] for e in model]
check(
    "chat model events",
    kinds == ["on_chat_model_start"] + ["on_chat_model_stream"] * 5 + ["on_chat_model_end"]
    + ["on_chat_model_start"] + ["on_chat_model_stream"] * 4 + ["on_chat_model_end"],
    kinds,
)
second = [e for e in model if e["run_id"] == model[-1]["run_id"]]
said = "".join(e["data"]["chunk"]["content"] for e in second if e["event"] == "on_chat_model_stream")
check("chat model streams the answer", said == "The sum is 3." and second[-1]["data"]["output"]["content"] == said, second)
first_node = starts[0]["run_id"]
in_node = [i for i, e in enumerate(evs) if e["run_id"] == first_node]
check(
    "chat model runs inside its node",
    all(e["parent_ids"] == [run_id, first_node] for e in model[:7])
    and in_node[0] < evs.index(model[0]) and evs.index(model[6]) < in_node[-1]
    and model[1]["data"]["chunk"]["type"] == "AIMessageChunk" and model[1]["metadata"]["langgraph_node"] == "agent",
    model[:2],
)
parts = list(client.runs.stream(None, "seed", input={"name": "x"}, stream_mode=["updates", "events"]))
check("events beside updates", [p.data for p in parts if p.event == "updates"] == [{"get_address": EXPECTED}], parts)
evs = [(p.data["event"], p.data["name"]) for p in parts if p.event == "events"]
check(
    "seed events",
    evs == [("on_chain_start", "seed"), ("on_chain_start", "get_address"), ("on_chain_stream", "get_address"),
            ("on_chain_end", "get_address"), ("on_chain_end", "seed")]
    and parts[-1].data["data"]["output"] == EXPECTED,
    evs,
)

# The API-only process: its runs are run by the other process's workers; it streams
# their events from the database and sees their results.
ta = API_ONLY.threads.create()["thread_id"]
parts = list(API_ONLY.runs.stream(ta, "seed", input={"name": "far"}, stream_mode=["values", "updates"]))
check(
    "stream through an API-only process",
    [p.event for p in parts] == ["metadata", "values", "updates", "values"]
    and parts[-1].data == EXPECTED,
    parts,
)
check("wait through an API-only process", API_ONLY.runs.wait(ta, "seed", input={}) == EXPECTED)
ra = client.runs.create(ta, "seed", input={})
check("join through the other process", API_ONLY.runs.join(ta, ra["run_id"]) == EXPECTED)
replay = list(API_ONLY.runs.join_stream(ta, ra["run_id"]))
check(
    "join_stream replays the run's events",
    replay[0].event == "metadata"
    and {p.event for p in replay[1:]} == {"values"}
    and replay[-1].data == EXPECTED,
    replay,
)
# Each event of the log carries its number; a client that lost the stream gets what
# followed the last one it saw.
ids = [p.id for p in replay[1:]]
check("join_stream events have ids", ids == [str(i) for i in range(1, len(ids) + 1)], replay)
rest = list(API_ONLY.runs.join_stream(ta, ra["run_id"], last_event_id=ids[0]))
check("join_stream after Last-Event-ID", rest == replay[2:], rest)
try:
    client.runs.join_stream(ta, ra["run_id"], last_event_id="not-a-number").__next__()
    check("bad Last-Event-ID -> 422", False, "accepted")
except httpx.HTTPStatusError as e:
    check("bad Last-Event-ID -> 422", status_of(e) == 422, e.response.text)
# A resumable stream names where the SDK reconnects if it breaks.
with httpx.stream(
    "POST",
    f"{URL}/threads/{ta}/runs/stream",
    json={"assistant_id": "seed", "input": {}, "stream_resumable": True},
) as r:
    loc = r.headers.get("location", "")
    r.read()
check(
    "resumable stream has a Location",
    loc.startswith(f"/threads/{ta}/runs/") and loc.endswith("/stream"),
    dict(r.headers),
)
pa = gate_path()
rb = API_ONLY.runs.create(ta, "gate", input={"path": pa})
wait_running(ta, rb["run_id"])
API_ONLY.runs.cancel(ta, rb["run_id"], wait=True)
check("cancel through the other process", client.runs.get(ta, rb["run_id"])["status"] == "interrupted")

# RemoteGraph: the server's graph as a node of a Python graph.
from typing import TypedDict  # noqa: E402

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.pregel.remote import RemoteGraph  # noqa: E402

remote = RemoteGraph("seed", url=URL)
check("RemoteGraph.invoke", remote.invoke({}) == EXPECTED)


class Outer(TypedDict):
    name: str
    address: str


outer = StateGraph(Outer)
outer.add_node("remote", remote)
outer.add_edge(START, "remote")
outer.add_edge("remote", END)
out = outer.compile().invoke({"name": "n", "address": "a"})
check("RemoteGraph as a node", out == EXPECTED, out)
t9 = client.threads.create()["thread_id"]
cfg = {"configurable": {"thread_id": t9}}
remote.invoke({}, config=cfg)
check("RemoteGraph.get_state", remote.get_state(cfg).values == EXPECTED)

# The store.
ns = ["users", OWNER]
client.store.put_item(ns, "prefs", {"color": "blue", "n": 1})
client.store.put_item(ns + ["deep"], "other", {"color": "red"})
item = client.store.get_item(ns, "prefs")
check("store get", item["value"] == {"color": "blue", "n": 1} and item["namespace"] == ns, item)
found = client.store.search_items(["users", OWNER], filter={"color": "red"})
check("store search filter", [i["key"] for i in found["items"]] == ["other"], found)
found = client.store.search_items(["users", OWNER])
check("store search prefix", sorted(i["key"] for i in found["items"]) == ["other", "prefs"], found)
spaces = client.store.list_namespaces(prefix=["users", OWNER])
check("store namespaces", sorted(spaces["namespaces"]) == [ns, ns + ["deep"]], spaces)
client.store.delete_item(ns, "prefs")
check("store delete", client.store.get_item(ns, "prefs") is None)
try:
    client.store.put_item(ns, "bad", [1, 2])
    check("store bad value -> 422", False, "accepted")
except httpx.HTTPStatusError as e:
    check("store bad value -> 422", status_of(e) == 422, e.response.text)

# Delete a thread.
client.threads.delete(t3)
try:
    client.threads.get(t3)
    check("deleted thread is gone", False)
except httpx.HTTPStatusError as e:
    check("deleted thread is gone", status_of(e) == 404)

found = client.threads.search(metadata={"owner": OWNER, "tag": "x"})
check("threads.search", [t["thread_id"] for t in found] == [tid], found)
found = client.threads.search(metadata={"owner": OWNER})
check("threads.search finds the copy", {t["thread_id"] for t in found} == {tid, copied["thread_id"]}, found)
print("ALL OK", flush=True)
