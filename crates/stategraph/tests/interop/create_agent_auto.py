"""Runs langchain's create_agent (pinned langchain 1.5.0) with AutoModeMiddleware and a
scripted decision model on thread "agent" of the SQLite file given, for
crates/stategraph/tests/create_agent_auto.rs to compare the stored checkpoints and what
the decision model was asked with stategraph's agent.

    python create_agent_auto.py FILE.sqlite SCENARIO

Prints, as JSON: the decision model's calls ({"state": .., "questions": ..}, messages as
{type, content, ..}) and the agent's channels. The scripted answers are the same in the
Rust test: the probability that a call is risky, by tool call id.
"""
import json
import sys
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import AutoModeMiddleware
from langchain_core.decisions import BaseDecisionModel, ClassifierResponse, NoulAnswer, NoulCriteria
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

warnings.filterwarnings("ignore")

CALLS = []
RISK = {"call-1": 0.2, "call-2": 0.5, "call-3": 0.875}


def message(m):
    out = {"type": m.type, "content": m.content}
    if m.type == "tool":
        out["tool_call_id"] = m.tool_call_id
        out["name"] = m.name
        out["status"] = m.status
    if m.type == "ai":
        out["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in m.tool_calls]
    return out


class Classifier(BaseDecisionModel):
    """Answers `is_risky` from RISK by the call's id; records what it was asked."""

    model: str = "fake"

    @property
    def _provider(self):
        return "fake"

    def _classify(self, state, questions):
        seen = dict(state, messages=[message(m) for m in state["messages"]])
        CALLS.append({"state": seen, "questions": {k: q.model_dump() for k, q in questions.items()}})
        risk = RISK[state["tool_call"]["id"]]
        return ClassifierResponse(model=self.model, answers={"is_risky": NoulAnswer(type="noul", noul=risk)})


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


ADD = {"name": "add", "args": {"a": 1, "b": 2}, "id": "call-1"}
MUL = {"name": "mul", "args": {"a": 6, "b": 7}, "id": "call-2"}
SHOUT = {"name": "shout", "args": {"text": "hi"}, "id": "call-3"}
ANSWERS = [
    AIMessage("", id="ai-1", tool_calls=[ADD, MUL]),
    AIMessage("Again.", id="ai-2", tool_calls=[SHOUT]),
    AIMessage("Done.", id="ai-3"),
]

SCENARIOS = {
    # add and mul gated (add allowed at 0.2, mul blocked at 0.5), shout not gated
    "gate": lambda: AutoModeMiddleware(tools=["add", mul], classifier=Classifier()),
    # every tool gated, own instructions and criteria: shout blocked at 0.875
    "gate_all": lambda: AutoModeMiddleware(
        tools=[" add", "mul", shout],
        instructions="Is `tool_call` risky?",
        criteria=NoulCriteria(true="It writes.", false={"reads": ["public"]}),
        classifier=Classifier(),
    ),
}


def main():
    path, scenario = sys.argv[1], sys.argv[2]
    config = {"configurable": {"thread_id": "agent"}}
    error = None
    with SqliteSaver.from_conn_string(path) as saver:
        model = GenericFakeChatModel(messages=iter(ANSWERS))
        model.__class__.bind_tools = lambda self, tools, **kw: self
        agent = create_agent(model, [add, mul, shout], system_prompt="You compute.", middleware=[SCENARIOS[scenario]()], checkpointer=saver)
        try:
            agent.invoke({"messages": [HumanMessage("What is 1 + 2?", id="h-1")]}, config)
        except Exception as e:
            error = repr(e)
        channels = [[name, type(ch).__name__] for name, ch in agent.channels.items()]
        print(json.dumps({"calls": {"classifier": CALLS}, "channels": channels, "mermaid": agent.get_graph().draw_mermaid(), "error": error}))


main()
