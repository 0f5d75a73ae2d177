"""Runs langchain's create_agent (pinned langchain 1.5.0) with a scripted model on thread
"agent" of the SQLite file given, for crates/stategraph/tests/create_agent_mwe.rs: the
options the first create_agent round left out (HITL `per_call` and `when=`, the
summarization's fraction budgets, trimming and prompt, `retry_on`, `context_schema`).

    python create_agent_mwe.py FILE.sqlite SCENARIO STEP [RESUME_JSON]

STEP "run" invokes the human message and prints, as JSON, the interrupts (value,
response_schema) and the prompts the summary model got; "resume" resumes with
RESUME_JSON: a HITL response, or (per_call) tool call id to decision, which the script
turns into interrupt id to decision.
"""
import json
import sys
import warnings
from dataclasses import dataclass

from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelRetryMiddleware,
    SummarizationMiddleware,
)
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

warnings.filterwarnings("ignore")

PROMPTS = []


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


class Recording(Model):
    """Answers as Model, keeping the text of each conversation it is given."""

    def _generate(self, messages, *args, **kwargs):
        PROMPTS.append([m.text for m in messages])
        return super()._generate(messages, *args, **kwargs)


class Failing(Model):
    """Fails its first `fails` calls with ValueError('boom'), then answers."""

    fails: int = 0

    def _generate(self, *args, **kwargs):
        if self.fails > 0:
            self.fails -= 1
            raise ValueError("boom")
        return super()._generate(*args, **kwargs)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@dataclass
class Ctx:
    user: str


def call(i, a, b):
    return {"name": "add", "args": {"a": a, "b": b}, "id": f"call-{i}"}


ONE = [AIMessage("", id="ai-1", tool_calls=[call(1, 1, 2)]), AIMessage("1 + 2 = 3.", id="ai-2")]
TWO = [AIMessage("Two sums.", id="ai-1", tool_calls=[call(1, 1, 2), call(2, 3, 4)]), AIMessage("Done.", id="ai-2")]
LONG = "Line one of the notes.\nLine two, a longer one, of the notes.\nLine three: 1 < 2 & 3 > 2.\nThe last line of the notes."
THREE = [AIMessage("", id="ai-1", tool_calls=[call(1, 1, 2)]), AIMessage("And \"more\".", id="ai-2", tool_calls=[call(2, 3, 4)]), AIMessage("Done.", id="ai-3")]
SUMMARY = AIMessage("The user asked for 1 + 2.")


def summarizer(profile=None):
    return Recording(messages=iter([SUMMARY]), profile=profile)


# scenario: (answers, middleware factory, model failures, context schema)
SCENARIOS = {
    "per_call": (TWO, lambda: [HumanInTheLoopMiddleware({"add": {"allowed_decisions": ["approve", "reject"]}}, interrupt_mode="per_call")], 0, None),
    "per_call_respond": (ONE, lambda: [HumanInTheLoopMiddleware({"add": {"allowed_decisions": ["respond", "approve"], "description": "Check it."}}, interrupt_mode="per_call")], 0, None),
    "when": (TWO, lambda: [HumanInTheLoopMiddleware({"add": {"allowed_decisions": ["approve", "reject"], "when": lambda r: r.tool_call["args"]["a"] > 2}})], 0, None),
    "when_per_call": (TWO, lambda: [HumanInTheLoopMiddleware({"add": {"allowed_decisions": ["approve", "reject"], "when": lambda r: r.tool_call["args"]["a"] > 2}}, interrupt_mode="per_call")], 0, None),
    "context": (TWO, lambda: [HumanInTheLoopMiddleware({"add": {"allowed_decisions": ["approve"], "when": lambda r: r.runtime.context.user != "alice"}})], 0, Ctx),
    "retry_on_kinds": (ONE, lambda: [ModelRetryMiddleware(max_retries=2, retry_on=(TimeoutError,), initial_delay=0, jitter=False)], 1, None),
    "retry_on_callable": (ONE, lambda: [ModelRetryMiddleware(max_retries=2, retry_on=lambda e: "boom" in str(e), initial_delay=0, jitter=False)], 2, None),
    "summary_fraction": (ONE, lambda: [SummarizationMiddleware(summarizer({"max_input_tokens": 100}), trigger=("fraction", 0.4), keep=("fraction", 0.2))], 0, None),
    "summary_trim": (ONE, lambda: [SummarizationMiddleware(summarizer(), trigger=("messages", 3), keep=("messages", 1), trim_tokens_to_summarize=20)], 0, None),
    "summary_prompt": (THREE, lambda: [SummarizationMiddleware(summarizer(), trigger=("messages", 5), keep=("messages", 1))], 0, None),
}


def build(scenario, saver, answers):
    _, middleware, fails, context = SCENARIOS[scenario]
    model = Failing(messages=iter(answers), fails=fails)
    return create_agent(model, [add], system_prompt="You add numbers.", middleware=middleware(), checkpointer=saver, context_schema=context)


def human(scenario):
    text = LONG if scenario.startswith("summary") else "What is 1 + 2?"
    return HumanMessage(text, id="h-1")


def main():
    path, scenario, step = sys.argv[1], sys.argv[2], sys.argv[3]
    config = {"configurable": {"thread_id": "agent"}}
    context = Ctx(user="alice") if SCENARIOS[scenario][3] else None
    with SqliteSaver.from_conn_string(path) as saver:
        if step == "run":
            agent = build(scenario, saver, SCENARIOS[scenario][0])
            try:
                out = agent.invoke({"messages": [human(scenario)]}, config, context=context, version="v2")
            except ValueError as e:  # a failure not retried: the thread stays as it stopped
                print(json.dumps({"error": repr(e)}))
                return
            interrupts = [{"value": i.value, "response_schema": i.response_schema} for i in out.interrupts]
            print(json.dumps({"interrupts": interrupts, "prompts": PROMPTS}))
        else:
            agent = build(scenario, saver, SCENARIOS[scenario][0][1:])
            answer = json.loads(sys.argv[4])
            if "decisions" not in answer:  # per_call: by tool call id
                pending = agent.get_state(config).interrupts
                answer = {i.id: answer[i.value["tool_call_id"]] for i in pending}
            agent.invoke(Command(resume=answer), config, context=context)


main()
