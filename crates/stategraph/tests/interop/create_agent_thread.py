"""Runs langchain's create_agent (pinned langchain 1.5.0) with a scripted model on thread
"agent" of the SQLite file given, for crates/stategraph/tests/create_agent.rs to compare
the stored checkpoints and writes, and the graph's drawing, with stategraph's agent.

    python create_agent_thread.py FILE.sqlite SCENARIO STEP [RESUME_JSON]

SCENARIO: "plain" (no middleware), "hitl" (HumanInTheLoopMiddleware on `add`), "two"
(two calls of `add`, HITL on both). STEP: "run" (invoke the human message), "resume"
(resume with RESUME_JSON), "draw" (print the Mermaid drawing and the channels, as JSON).
The script's model answers are the same in stategraph's test.
"""
import json
import sys
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

warnings.filterwarnings("ignore")


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def call(i, a, b):
    return {"name": "add", "args": {"a": a, "b": b}, "id": f"call-{i}"}


SCRIPTS = {
    "plain": [AIMessage("", id="ai-1", tool_calls=[call(1, 1, 2)]), AIMessage("1 + 2 = 3.", id="ai-2")],
    "hitl": [AIMessage("", id="ai-1", tool_calls=[call(1, 1, 2)]), AIMessage("1 + 2 = 3.", id="ai-2")],
    "two": [AIMessage("Two sums.", id="ai-1", tool_calls=[call(1, 1, 2), call(2, 3, 4)]), AIMessage("Done.", id="ai-2")],
}


def build(scenario, saver, answers):
    middleware = [] if scenario == "plain" else [HumanInTheLoopMiddleware({"add": True})]
    model = Model(messages=iter(answers))
    return create_agent(model, [add], system_prompt="You add numbers.", middleware=middleware, checkpointer=saver)


def main():
    path, scenario, step = sys.argv[1], sys.argv[2], sys.argv[3]
    config = {"configurable": {"thread_id": "agent"}}
    with SqliteSaver.from_conn_string(path) as saver:
        if step == "draw":
            agent = build(scenario, saver, [])
            print(json.dumps({"mermaid": agent.get_graph().draw_mermaid(), "channels": list(agent.channels)}))
        elif step == "run":
            build(scenario, saver, SCRIPTS[scenario]).invoke({"messages": [HumanMessage("What is 1 + 2?", id="h-1")]}, config)
        else:
            # The model's answers after the pause: those the first run did not use.
            agent = build(scenario, saver, SCRIPTS[scenario][1:])
            out = agent.invoke(Command(resume=json.loads(sys.argv[4])), config)
            print(json.dumps([m.content for m in out["messages"]]))


main()
