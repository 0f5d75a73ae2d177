"""A human approves an agent's tool call through HumanInTheLoopMiddleware, across two
processes sharing one SQLite file (langchain 1.x's create_agent). The model is scripted.
Twin of crates/stategraph/examples/agent_middleware.rs (either resumes the other's thread).

    python examples/python/agent_middleware.py start a.db
    python examples/python/agent_middleware.py approve a.db
"""
import sys

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


step, db = sys.argv[1], sys.argv[2]
ask = AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "call-1"}])
answers = [ask] if step == "start" else [AIMessage("1 + 2 = 3.")]
with SqliteSaver.from_conn_string(db) as saver:
    agent = create_agent(
        FakeModel(messages=iter(answers)),
        [add],
        system_prompt="You add numbers.",
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"add": True})],
        checkpointer=saver,
    )
    thread = {"configurable": {"thread_id": "agent-1"}}
    if step == "start":
        out = agent.invoke({"messages": [("user", "What is 1 + 2?")]}, thread)
        action = out["__interrupt__"][0].value["action_requests"][0]
        print(f"review: {action['name']!r} {action['args']!r}")
    else:
        out = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), thread)
        for m in out["messages"]:
            print(f"{m.type}: {m.text}")
