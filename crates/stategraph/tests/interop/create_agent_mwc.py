"""Runs langchain's create_agent (pinned langchain 1.5.0) with TodoListMiddleware,
LLMToolSelectorMiddleware, LLMToolEmulator or ModelRouterMiddleware and scripted models on
thread "agent" of the SQLite file given, for crates/stategraph/tests/create_agent_mwc.rs to
compare the stored checkpoints and what each model was sent with stategraph's agent.

    python create_agent_mwc.py FILE.sqlite SCENARIO

Prints, as JSON: per model ("agent", and the middleware's own), the calls it got, each
{"messages": [..], "tools": [{name, description, schema}]}, and the agent's channels.
The scripted answers are the same in the Rust test.
"""
import json
import sys
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import TodoListMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.sqlite import SqliteSaver

warnings.filterwarnings("ignore")

CALLS = {}


def message(m):
    out = {"type": m.type, "content": m.content}
    if m.type == "tool":
        out["tool_call_id"] = m.tool_call_id
        out["name"] = m.name
        out["status"] = m.status
    if m.type == "ai":
        out["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in m.tool_calls]
    return out


def tool_view(t):
    if isinstance(t, BaseTool):
        return {"name": t.name, "description": t.description, "schema": t.tool_call_schema.model_json_schema()}
    return t


class Model(GenericFakeChatModel):
    """Answers from its script; records each call's messages and bound tools."""

    label: str = "agent"
    bound: list = []

    def bind_tools(self, tools, **kwargs):
        return self.model_copy(update={"bound": [tool_view(t) for t in tools]})

    def _generate(self, messages, *args, **kwargs):
        CALLS.setdefault(self.label, []).append({"messages": [message(m) for m in messages], "tools": self.bound})
        return super()._generate(messages, *args, **kwargs)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def todo_call(i, todos):
    return {"name": "write_todos", "args": {"todos": todos}, "id": f"todo-{i}"}


PLAN = [{"content": "Add 1 and 2", "status": "in_progress", "note": "dropped"}, {"content": "Answer", "status": "pending"}]
DONE = [{"content": "Add 1 and 2", "status": "completed"}, {"status": "in_progress", "content": "Answer"}]
ADD = {"name": "add", "args": {"a": 1, "b": 2}, "id": "call-1"}

# scenario: (agent answers, middleware factory, system prompt)
SCENARIOS = {
    "todo": (
        [
            AIMessage("", id="ai-1", tool_calls=[todo_call(1, PLAN)]),
            AIMessage("Adding.", id="ai-2", tool_calls=[ADD, todo_call(2, DONE)]),
            AIMessage("1 + 2 = 3.", id="ai-3"),
        ],
        lambda: [TodoListMiddleware()],
        "You add numbers.",
    ),
    "todo_parallel": (
        [
            AIMessage("", id="ai-1", tool_calls=[todo_call(1, PLAN), todo_call(2, DONE), ADD]),
            AIMessage("3.", id="ai-2"),
        ],
        lambda: [TodoListMiddleware(system_prompt="Plan first.", tool_description="Write the plan.")],
        None,
    ),
    "todo_bad": (
        [
            AIMessage("", id="ai-1", tool_calls=[todo_call(1, [{"content": "x", "status": "done"}, {"status": "pending"}, 7])]),
            AIMessage("", id="ai-2", tool_calls=[{"name": "write_todos", "args": {"todos": "x"}, "id": "todo-2"}]),
            AIMessage("ok", id="ai-3"),
        ],
        lambda: [TodoListMiddleware()],
        "You add numbers.",
    ),
}


def main():
    path, scenario = sys.argv[1], sys.argv[2]
    answers, middleware, prompt = SCENARIOS[scenario]
    config = {"configurable": {"thread_id": "agent"}}
    with SqliteSaver.from_conn_string(path) as saver:
        agent = create_agent(Model(messages=iter(answers)), [add], system_prompt=prompt, middleware=middleware(), checkpointer=saver)
        agent.invoke({"messages": [HumanMessage("What is 1 + 2?", id="h-1")]}, config)
        channels = [[name, type(ch).__name__] for name, ch in agent.channels.items()]
        print(json.dumps({"calls": CALLS, "channels": channels, "mermaid": agent.get_graph().draw_mermaid()}))


main()
