"""`runtime.execution_info` of the pinned Python, for tests/runtime_context/context.rs.

The graph: START -> flaky -> END, where `flaky` fails with ConnectionError on its first
two attempts under RetryPolicy(max_attempts=3) and records, at each attempt, its
`execution_info`. The run has thread "t", run_id 12345678-1234-5678-1234-567812345678
and tags ["a"].

Prints, as JSON, per attempt: node_attempt, run_id, thread_id, whether checkpoint_ns is
`flaky:<task_id>`, whether checkpoint_id is the step's checkpoint (the one saved before
the step, step 0) and whether node_first_attempt_time is the same for every attempt;
and the metadata keys of the thread's checkpoints (config tags and run_id are not stored).
"""

import json
import uuid

from typing_extensions import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy


class S(TypedDict):
    x: int


seen = []


def flaky(state, runtime: Runtime):
    seen.append(runtime.execution_info)
    if len(seen) < 3:
        raise ConnectionError("not yet")
    return {"x": 1}


g = StateGraph(S)
g.add_node("flaky", flaky, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.001, jitter=False))
g.add_edge(START, "flaky")
app = g.compile(checkpointer=InMemorySaver())
run_id = uuid.UUID("12345678-1234-5678-1234-567812345678")
cfg = {"configurable": {"thread_id": "t"}, "run_id": run_id, "tags": ["a"]}
app.invoke({"x": 0}, cfg)
history = list(app.get_state_history({"configurable": {"thread_id": "t"}}))
step0 = next(s for s in history if s.metadata["step"] == 0).config["configurable"]["checkpoint_id"]
attempts = [
    {
        "node_attempt": e.node_attempt,
        "run_id": e.run_id,
        "thread_id": e.thread_id,
        "ns_is_task": e.checkpoint_ns == f"flaky:{e.task_id}",
        "checkpoint_is_step0": e.checkpoint_id == step0,
        "same_first_time": e.node_first_attempt_time == seen[0].node_first_attempt_time,
    }
    for e in seen
]
metadata = [sorted(s.metadata) for s in history]
print(json.dumps({"attempts": attempts, "metadata": metadata}, indent=1))
