"""Runs langchain's create_agent (pinned langchain 1.5.0) with a scripted model and the
middleware of crates/stategraph/tests/create_agent_mwa.rs (ToolRetryMiddleware,
ToolErrorMiddleware, ModelRefusalMiddleware, the decorator forms) on thread "agent" of
the SQLite file given, for the Rust test to compare the stored checkpoints.

    python create_agent_mwa.py FILE.sqlite SCENARIO [draw]

With "draw", prints the graph's Mermaid drawing. Otherwise runs, and prints "ok", or the type and text of the error the run raised ("ValueError: boom").
The tool `flaky` fails its first FAILS calls with ValueError("boom"), then adds.
"""
import sys
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import (
    ModelRefusalMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

warnings.filterwarnings("ignore")


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


FAILS = {"left": 0}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def flaky(a: int, b: int) -> int:
    """Add two integers, failing at first."""
    if FAILS["left"] > 0:
        FAILS["left"] -= 1
        raise ValueError("boom")
    return a + b


def call(name, i=1, a=1, b=2):
    return {"name": name, "args": {"a": a, "b": b}, "id": f"call-{i}"}


def calls(name):
    return [AIMessage("", id="ai-1", tool_calls=[call(name)]), AIMessage("1 + 2 = 3.", id="ai-2")]


@before_agent
def start(state, runtime):
    return None


@before_model(can_jump_to=["end"])
def enough(state, runtime):
    if any(m.type == "tool" for m in state["messages"]):
        return {"jump_to": "end"}
    return None


@after_model
def audit(state, runtime):
    return {"messages": [HumanMessage("audited", id=f"audit-{len(state['messages'])}")]}


@after_agent
def finish(state, runtime):
    return None


@wrap_model_call
def passthrough(request, handler):
    return handler(request)


@wrap_tool_call
def tens(request, handler):
    return handler(request.override(tool_call={**request.tool_call, "args": {"a": 10, "b": 20}}))


@dynamic_prompt
def prompt(request):
    return f"You add numbers; {len(request.messages)} messages so far."


def on_error(exc, request):
    if isinstance(exc, ValueError):
        return f"`{request.tool_call['name']}` failed with {type(exc).__name__}; fix the input."
    return None


RETRY = dict(initial_delay=0, jitter=False)
# scenario: (answers, middleware factory, flaky's failures)
SCENARIOS = {
    "retry": (calls("flaky"), lambda: [ToolRetryMiddleware(max_retries=2, **RETRY)], 2),
    "retry_fail": (calls("flaky"), lambda: [ToolRetryMiddleware(max_retries=2, **RETRY)], 9),
    "retry_once": (calls("flaky"), lambda: [ToolRetryMiddleware(max_retries=0, **RETRY)], 9),
    "retry_custom": (calls("flaky"), lambda: [ToolRetryMiddleware(max_retries=1, on_failure=lambda e: f"custom: {e}", **RETRY)], 9),
    "retry_error": (calls("flaky"), lambda: [ToolRetryMiddleware(max_retries=1, on_failure="error", **RETRY)], 9),
    "retry_filtered": (calls("flaky"), lambda: [ToolRetryMiddleware(tools=["add"], **RETRY)], 1),
    "retry_on": (calls("flaky"), lambda: [ToolRetryMiddleware(retry_on=(KeyError,), **RETRY)], 1),
    "tool_error": (calls("flaky"), lambda: [ToolErrorMiddleware(on_error)], 9),
    "tool_error_other": (calls("flaky"), lambda: [ToolErrorMiddleware(on_error, tools=[add])], 9),
    "error_and_retry": (calls("flaky"), lambda: [ToolErrorMiddleware(on_error), ToolRetryMiddleware(max_retries=1, on_failure="error", **RETRY)], 9),
    "refusal": ([AIMessage([{"type": "refusal", "refusal": "I cannot help.", "extras": {"category": "cyber"}}], id="ai-1")], lambda: [ModelRefusalMiddleware()], 0),
    "no_refusal": (calls("add"), lambda: [ModelRefusalMiddleware()], 0),
    "decorated": (calls("add"), lambda: [start, audit, finish, passthrough, tens, prompt], 0),
    "decorated_jump": (calls("add"), lambda: [enough], 0),
}


def main():
    path, scenario = sys.argv[1], sys.argv[2]
    answers, middleware, fails = SCENARIOS[scenario]
    FAILS["left"] = fails
    config = {"configurable": {"thread_id": "agent"}}
    with SqliteSaver.from_conn_string(path) as saver:
        agent = create_agent(Model(messages=iter(answers)), [add, flaky], system_prompt="You add numbers.", middleware=middleware(), checkpointer=saver)
        if sys.argv[3:] == ["draw"]:
            print(agent.get_graph().draw_mermaid())
            return
        try:
            agent.invoke({"messages": [HumanMessage("What is 1 + 2?", id="h-1")]}, config)
            print("ok")
        except Exception as exc:  # the run's error, for the test to compare
            print(f"{type(exc).__name__}: {exc}")


main()
