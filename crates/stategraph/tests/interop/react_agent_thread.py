"""Runs Python's create_react_agent (version="v1": the tool calls of one answer in one
`tools` task, as stategraph's `.version(AgentVersion::V1)` runs them) with a scripted model on thread "agent" of
the SQLite file given, for crates/stategraph/tests/prebuilt.rs to compare its stored writes
with stategraph's.

    python react_agent_thread.py FILE.sqlite
"""
import sys
import warnings

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

warnings.filterwarnings("ignore")


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


model = Model(messages=iter([
    AIMessage("Let me add them.", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "call-1"}]),
    AIMessage("1 + 2 = 3."),
]))
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    agent = create_react_agent(model, [add], prompt="You add numbers.", checkpointer=saver, version="v1")
    agent.invoke({"messages": [HumanMessage("What is 1 + 2?")]}, {"configurable": {"thread_id": "agent"}})
