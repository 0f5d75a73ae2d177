"""Streams one run of the `real` graph (an agent on the local model server) with the
official langgraph_sdk client, stream mode `messages-tuple`.

Usage: real_model.py URL. Prints one JSON object: the `messages` events' data (each
`[chunk, metadata]`) and the thread's stored messages after the run.
"""

import json
import sys

from langgraph_sdk import get_sync_client

client = get_sync_client(url=sys.argv[1])
thread = client.threads.create()["thread_id"]
question = {"messages": [{"role": "user", "content": "Shout hello."}]}
parts = client.runs.stream(thread, "real", input=question, stream_mode="messages-tuple")
events = [p.data for p in parts if p.event == "messages"]
stored = client.threads.get_state(thread)["values"]["messages"]
print(json.dumps({"events": events, "stored": stored}))
