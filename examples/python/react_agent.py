"""A ReAct agent: a scripted chat model asks for a tool, reads its answer, then replies.
The model's words are streamed (stream_mode="messages"); the thread is kept in SQLite,
or in Postgres with `--postgres URL`. Twin of crates/stategraph/examples/react_agent.rs.

    python examples/python/react_agent.py [--postgres URL]
"""
import json
import os
import re
import sys
import tempfile
import uuid
import warnings

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent

warnings.filterwarnings("ignore")  # create_react_agent is deprecated in favour of langchain's


class FakeModel(GenericFakeChatModel):
    """GenericFakeChatModel, with the tool calls streamed too (it drops them)."""

    def bind_tools(self, tools, **kwargs):
        return self

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        answer = next(self.messages)
        chunks = [AIMessageChunk(content=w) for w in re.split(r"(\s)", answer.content)]
        if answer.tool_calls:
            calls = [dict(c, args=json.dumps(c["args"]), index=i) for i, c in enumerate(answer.tool_calls)]
            chunks.append(AIMessageChunk(content="", tool_call_chunks=calls))
        for chunk in chunks:
            yield ChatGenerationChunk(message=chunk)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def saver():
    if len(sys.argv) > 2 and sys.argv[1] == "--postgres":
        from langgraph.checkpoint.postgres import PostgresSaver
        return PostgresSaver.from_conn_string(sys.argv[2])
    from langgraph.checkpoint.sqlite import SqliteSaver
    return SqliteSaver.from_conn_string(os.path.join(tempfile.gettempdir(), "react_agent.sqlite"))


model = FakeModel(messages=iter([
    AIMessage("Let me add them.", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "call-1"}]),
    AIMessage("1 + 2 = 3."),
]))
with saver() as checkpointer:
    checkpointer.setup()
    agent = create_react_agent(model, [add], prompt="You add numbers.", checkpointer=checkpointer)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    question = {"messages": [("user", "What is 1 + 2?")]}
    for chunk, meta in agent.stream(question, config, stream_mode="messages"):
        if meta["langgraph_node"] == "agent" and chunk.content:
            print(chunk.content, end="|", flush=True)
    print()
    for message in agent.get_state(config).values["messages"]:
        print(f"{message.type}: {message.content}")
