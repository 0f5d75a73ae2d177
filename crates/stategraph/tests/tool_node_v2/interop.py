"""The Python side of tool_node_v2.rs's interop tests: Python's create_react_agent
(default version="v2") with the `approve` tool on a SQLite thread, paused on two
interrupts or resumed from them, so that a thread one side paused is resumed by the other.

    python interop.py pause FILE.sqlite THREAD     # prints the interrupts as JSON
    python interop.py resume FILE.sqlite THREAD    # prints the final messages as JSON
"""
import json
import sys
import warnings

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent
from langgraph.types import Command, interrupt

warnings.filterwarnings("ignore")


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def approve(action: str) -> str:
    """Do an action once a human approves it."""
    answer = interrupt(f"approve {action}?")
    return f"{action}: {answer}"


ANSWERS = {"approve deploy?": "yes", "approve notify?": "no"}

mode, path, thread = sys.argv[1:4]
cfg = {"configurable": {"thread_id": thread}}
with SqliteSaver.from_conn_string(path) as saver:
    if mode == "pause":
        model = Model(messages=iter([AIMessage("", id="ai-1", tool_calls=[
            {"name": "approve", "args": {"action": "deploy"}, "id": "call-1"},
            {"name": "approve", "args": {"action": "notify"}, "id": "call-2"}])]))
        agent = create_react_agent(model, [approve], checkpointer=saver)
        out = agent.invoke({"messages": [HumanMessage("deploy and notify", id="h-1")]}, cfg)
        print(json.dumps([{"id": i.id, "value": i.value} for i in out["__interrupt__"]]))
    else:
        model = Model(messages=iter([AIMessage("Done.", id="ai-2")]))
        agent = create_react_agent(model, [approve], checkpointer=saver)
        pending = [i for t in agent.get_state(cfg).tasks for i in t.interrupts]
        out = agent.invoke(Command(resume={i.id: ANSWERS[i.value] for i in pending}), cfg)
        print(json.dumps([m.content for m in out["messages"]]))
