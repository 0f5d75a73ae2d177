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
from langchain.agents.middleware import (
    LLMToolEmulator,
    LLMToolSelectorMiddleware,
    ModelChoice,
    ModelRouterMiddleware,
    TodoListMiddleware,
)
from langchain_core.decisions import BaseDecisionModel, ChoiceAnswer, ClassifierResponse
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
    return {"name": t["title"], "description": t["description"], "schema": t}  # a structured-output schema


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


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def shout(text: str) -> str:
    """Shout a text."""
    return text.upper()


def select(*names):
    return AIMessage("", tool_calls=[{"name": "ToolSelectionResponse", "args": {"tools": list(names)}, "id": "sel"}])


def todo_call(i, todos):
    return {"name": "write_todos", "args": {"todos": todos}, "id": f"todo-{i}"}


PLAN = [{"content": "Add 1 and 2", "status": "in_progress", "note": "dropped"}, {"content": "Answer", "status": "pending"}]
DONE = [{"content": "Add 1 and 2", "status": "completed"}, {"status": "in_progress", "content": "Answer"}]
ADD = {"name": "add", "args": {"a": 1, "b": 2}, "id": "call-1"}

class Classifier(BaseDecisionModel):
    """Answers `model_route` with `choice`; records what it was asked."""

    model: str = "fake"
    choice: str = "smart"

    @property
    def _provider(self):
        return "fake"

    def _classify(self, state, questions):
        asked = {k: q.model_dump() for k, q in questions.items()}
        CALLS.setdefault("classifier", []).append({"state": message(state), "questions": asked})
        answer = ChoiceAnswer(type="choice", choice=self.choice, probabilities={"fast": 0.25, "smart": 0.75}, confidence=0.75)
        return ClassifierResponse(model=self.model, answers={"model_route": answer})


def router(m):
    choices = {
        "fast": ModelChoice(model=m["fast"], criteria="Simple tasks."),
        "smart": ModelChoice(model=m["smart"], criteria={"when": ["hard", "long"], "cost": 2}),
    }
    return [ModelRouterMiddleware(choices=choices, instructions="Pick the cheapest model that fits.", classifier=Classifier())]


MUL = {"name": "mul", "args": {"a": 6, "b": 7}, "id": "call-2"}
ANSWER = AIMessage("Done.", id="ai-9")

# scenario: (agent answers, middleware factory given the models, system prompt, models' answers)
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
    "select": (
        [AIMessage("", id="ai-1", tool_calls=[MUL]), ANSWER],
        lambda m: [LLMToolSelectorMiddleware(model=m["selector"], max_tools=1, always_include=["shout"])],
        "You compute.",
        {"selector": [select("mul", "add"), AIMessage("no idea"), select("add", "mul")]},
    ),
    "select_agent_model": (
        [select("add", "add", "shout"), AIMessage("", id="ai-1", tool_calls=[ADD]), select(), ANSWER],
        lambda m: [LLMToolSelectorMiddleware(system_prompt="Pick tools.")],
        None,
        {},
    ),
    "select_fallback": (
        [ANSWER],
        lambda m: [LLMToolSelectorMiddleware(model=m["selector"], max_tools=1, max_retries=0, on_parsing_failure="all")],
        None,
        {"selector": [AIMessage("?")]},
    ),
    "select_fallback_list": (
        [ANSWER],
        lambda m: [LLMToolSelectorMiddleware(model=m["selector"], max_retries=2, on_parsing_failure=["shout", "add"])],
        None,
        {"selector": [AIMessage("?"), AIMessage("", tool_calls=[{"name": "other", "args": {}, "id": "x"}]), AIMessage("")]},
    ),
    "select_malformed": (
        [ANSWER],
        lambda m: [LLMToolSelectorMiddleware(model=m["selector"])],
        None,
        {"selector": [AIMessage("?"), AIMessage("", tool_calls=[{"name": "ToolSelectionResponse", "args": {"tools": "add"}, "id": "x"}])]},
    ),
    "select_invalid": (
        [ANSWER],
        lambda m: [LLMToolSelectorMiddleware(model=m["selector"])],
        None,
        {"selector": [select("add", "nope", 3)]},
    ),
    "select_missing": (
        [ANSWER],
        lambda m: [LLMToolSelectorMiddleware(model=m["selector"], always_include=["nope", "add"])],
        None,
        {"selector": []},
    ),
    "emulate": (
        [AIMessage("", id="ai-1", tool_calls=[ADD, MUL]), ANSWER],
        lambda m: [LLMToolEmulator(tools=["mul"], model=m["emulator"])],
        None,
        {"emulator": [AIMessage("The product is 42.")]},
    ),
    "emulate_all": (
        [AIMessage("", id="ai-1", tool_calls=[{"name": "weather", "args": {"city": "Paris", "days": [1, 2]}, "id": "call-3"}]), ANSWER],
        lambda m: [LLMToolEmulator(model=m["emulator"])],
        None,
        {"emulator": [AIMessage([{"type": "text", "text": "Sunny."}])]},
    ),
    "route": (
        [],
        router,
        "You compute.",
        {"fast": [], "smart": [AIMessage("", id="ai-1", tool_calls=[ADD]), ANSWER]},
    ),
}


def main():
    path, scenario = sys.argv[1], sys.argv[2]
    answers, middleware, prompt, *models = SCENARIOS[scenario]
    if models:
        models = {label: Model(messages=iter(script), label=label) for label, script in models[0].items()}
        middleware_list, tools = middleware(models), [add, mul, shout]
    else:
        middleware_list, tools = middleware(), [add]
    config = {"configurable": {"thread_id": "agent"}}
    error = None
    with SqliteSaver.from_conn_string(path) as saver:
        agent = create_agent(Model(messages=iter(answers)), tools, system_prompt=prompt, middleware=middleware_list, checkpointer=saver)
        try:
            agent.invoke({"messages": [HumanMessage("What is 1 + 2?", id="h-1")]}, config)
        except Exception as e:  # the error scenarios
            error = repr(e)
        channels = [[name, type(ch).__name__] for name, ch in agent.channels.items()]
        print(json.dumps({"calls": CALLS, "channels": channels, "mermaid": agent.get_graph().draw_mermaid(), "error": error}))


main()
