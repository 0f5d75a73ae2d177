"""Runs langchain's create_agent (pinned langchain 1.5.0) with a scripted model on thread
"agent" of the SQLite file given, for crates/stategraph/tests/create_agent.rs to compare
the stored checkpoints and writes, and the graph's drawing, with stategraph's agent.

    python create_agent_thread.py FILE.sqlite SCENARIO STEP [RESUME_JSON]

SCENARIO: "plain" (no middleware), "hitl" (HumanInTheLoopMiddleware on `add`), "two"
(two calls of `add`, HITL on both), or one of the built-in middleware's scenarios below
(`EXTRA`). STEP: "run" (invoke the human message), "resume"
(resume with RESUME_JSON), "draw" (print the Mermaid drawing and the channels, as JSON).
The script's model answers are the same in stategraph's test.
"""
import json
import sys
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
    SummarizationMiddleware,
    ToolCallLimitMiddleware,
)
from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
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


class Failing(GenericFakeChatModel):
    """Fails its first `fails` calls with ValueError('boom'), then answers."""

    fails: int = 0

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, *args, **kwargs):
        if self.fails > 0:
            self.fails -= 1
            raise ValueError("boom")
        return super()._generate(*args, **kwargs)


SUM_SCHEMA = {
    "title": "Sum",
    "description": "The sum of two numbers.",
    "type": "object",
    "properties": {"total": {"type": "integer"}},
    "required": ["total"],
}
SUM_CALL = {"name": "Sum", "args": {"total": 3}, "id": "call-s"}
TWO_CALLS = [AIMessage("", id="ai-1", tool_calls=[call(1, 1, 2), call(2, 3, 4)]), AIMessage("Done.", id="ai-2")]
# scenario: (answers, middleware factory, response_format, model failures)
EXTRA = {
    "model_limit": (SCRIPTS["plain"], lambda: [ModelCallLimitMiddleware(run_limit=1)], None, 0),
    "tool_limit": (TWO_CALLS, lambda: [ToolCallLimitMiddleware(run_limit=1)], None, 0),
    "tool_limit_end": (TWO_CALLS, lambda: [ToolCallLimitMiddleware(tool_name="add", run_limit=1, exit_behavior="end")], None, 0),
    "summary": (SCRIPTS["plain"], lambda: [SummarizationMiddleware(Model(messages=iter([AIMessage("The user asked for 1 + 2.")])), trigger=("messages", 3), keep=("messages", 2))], None, 0),
    "summary_tokens": (SCRIPTS["plain"], lambda: [SummarizationMiddleware(Model(messages=iter([AIMessage("The user asked for 1 + 2.")])), trigger=("tokens", 41), keep=("tokens", 30))], None, 0),
    "retry": (SCRIPTS["plain"], lambda: [ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)], None, 2),
    "retry_fail": (SCRIPTS["plain"], lambda: [ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)], None, 9),
    "fallback": (SCRIPTS["plain"], lambda: [ModelFallbackMiddleware(Model(messages=iter(SCRIPTS["plain"])))], None, 99),
    "structured_tool": ([AIMessage("", id="ai-1", tool_calls=[SUM_CALL])], lambda: [], ToolStrategy(SUM_SCHEMA), 0),
    "structured_retry": ([AIMessage("", id="ai-1", tool_calls=[{**SUM_CALL, "args": {}}]), AIMessage("", id="ai-2", tool_calls=[SUM_CALL])], lambda: [], ToolStrategy(SUM_SCHEMA), 0),
    "invalid": ([AIMessage("", id="ai-1", invalid_tool_calls=[{"type": "invalid_tool_call", "id": "call-x", "name": "add", "args": "{bad", "error": None}]), AIMessage("You are welcome.", id="ai-2")], lambda: [], None, 0),
    "structured_provider": ([AIMessage('{"total": 3}', id="ai-1")], lambda: [], ProviderStrategy(SUM_SCHEMA), 0),
}


def build(scenario, saver, answers):
    if scenario in EXTRA:
        answers, middleware, response_format, fails = EXTRA[scenario]
        model = Failing(messages=iter(answers), fails=fails) if fails else Model(messages=iter(answers))
        return create_agent(model, [add], system_prompt="You add numbers.", middleware=middleware(), response_format=response_format, checkpointer=saver)
    middleware = [] if scenario == "plain" else [HumanInTheLoopMiddleware({"add": True})]
    model = Model(messages=iter(answers))
    return create_agent(model, [add], system_prompt="You add numbers.", middleware=middleware, checkpointer=saver)


def main():
    path, scenario, step = sys.argv[1], sys.argv[2], sys.argv[3]
    config = {"configurable": {"thread_id": "agent"}}
    with SqliteSaver.from_conn_string(path) as saver:
        if step == "draw":
            agent = build(scenario, saver, [])
            channels = [[name, type(ch).__name__] for name, ch in agent.channels.items()]
            print(json.dumps({"mermaid": agent.get_graph().draw_mermaid(), "channels": channels}))
        elif step == "run":
            agent = build(scenario, saver, SCRIPTS.get(scenario))
            agent.invoke({"messages": [HumanMessage("What is 1 + 2?", id="h-1")]}, config)
            if scenario == "invalid":  # the model's next call sees the malformed call answered
                agent.invoke({"messages": [HumanMessage("Thanks!", id="h-2")]}, config)
        else:
            # The model's answers after the pause: those the first run did not use.
            agent = build(scenario, saver, SCRIPTS[scenario][1:])
            out = agent.invoke(Command(resume=json.loads(sys.argv[4])), config)
            print(json.dumps([m.content for m in out["messages"]]))


main()
