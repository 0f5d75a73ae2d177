"""Writes create_agent_mwb.json (next to this script) for crates/stategraph/tests/create_agent_mwb.rs:
the pinned langchain 1.5.0's PII detectors and strategies on sample texts, and the
stored conversation (at each checkpoint) and the model's requests of create_agent runs with PIIMiddleware and
ContextEditingMiddleware (a scripted fake model; the Rust test uses the same answers).

    python create_agent_mwb.py
"""
import json
import pathlib
import re
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware, PIIMiddleware
from langchain.agents.middleware._redaction import BUILTIN_DETECTORS, apply_strategy, resolve_detector
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

warnings.filterwarnings("ignore")

TEXTS = [
    "Mail john.doe+x@example.co.uk or ADMIN@Test.ORG, not a@b or x@y.c.",
    "Cards 4532015112830366, 4532-0151-1283-0366, 4532 0151 1283 0366 and 1234567812345678.",
    "Hosts 192.168.1.1, 10.0.0.255, 256.1.1.1, 01.2.3.4, 0.0.0.0 and 1.2.3.4.5.",
    "MACs 00:1A:2B:3C:4D:5E and 00-1a-2b-3c-4d-5e, not 00:1A:2B:3C:4D.",
    "See https://example.com/a?b=1#c, http:///x, www.example.org, example.com/docs/x, example.com and https://a.b/c.",
    "Key sk-abcdEFGH12 and sk-short; café über@straße.de ünï 4532015112830366x.",
    "Café — mail é@x.io, ok@example.com; IP 8.8.8.8 ✓ 4111 1111 1111 1111 ✓ sk-12345678.",
    # Where Python's `\\w`, `\\s` and `\\d` differ from the regex crate's defaults:
    # a `No` number, a combining mark, a connector, `\\x1f`, Arabic-Indic digits, a circled letter.
    "²jo@corp.com, e\u0301jo@corp.com, a\u203fjo@corp.com ⓐjo@corp.com",
    "4532\x1f0151\x1f1283\x1f0366 and ٤٥٣٢٠١٥١١٢٨٣٠٣٦٦ and 4532015112830366² and https://x.io/a\x1fb",
    "00:1A:2B:3C:4D:5E² ²00:1A:2B:3C:4D:5F 1.2.3.4\u0301 5.6.7.8 www.a\u0301b.com/x",
    "Nothing here.",
]
CUSTOM = r"sk-[a-zA-Z0-9]{8}"


def detectors():
    out = []
    for text in TEXTS:
        row = {"text": text, "types": {}}
        for name, detector in [*BUILTIN_DETECTORS.items(), ("api_key", resolve_detector("api_key", CUSTOM))]:
            matches = detector(text)
            row["types"][name] = {
                "matches": [[m["type"], m["value"], m["start"], m["end"]] for m in matches],
                **{s: apply_strategy(text, matches, s) for s in ("redact", "mask", "hash")},
            }
        out.append(row)
    return out


class Model(GenericFakeChatModel):
    """Records the messages of each call."""

    requests: list = []

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, *args, **kwargs):
        self.requests.append([dump(m) for m in messages])
        return super()._generate(messages, *args, **kwargs)


@tool
def lookup(query: str) -> str:
    """Look a customer up."""
    return f"Customer {query}: reached from 10.0.0.7, card 4532015112830366."


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"Results for {query}: " + "lorem ipsum " * 8


def dump(m):
    d = {"type": m.type, "content": m.content, "id": m.id, "response_metadata": m.response_metadata}
    if m.type == "ai":
        d["tool_calls"] = [[c["name"], c["args"], c["id"]] for c in m.tool_calls]
    if m.type == "tool":
        d["name"], d["tool_call_id"], d["artifact"] = m.name, m.tool_call_id, m.artifact
    return d


def call(name, i, query):
    return {"name": name, "args": {"query": query}, "id": f"call-{i}"}


PII_SCRIPT = [
    AIMessage("", id="ai-1", tool_calls=[call("lookup", 1, "jo@corp.com")]),
    AIMessage("Write to jo@corp.com, or see www.corp.com/help.", id="ai-2"),
]
CTX_SCRIPT = [
    AIMessage("", id="ai-1", tool_calls=[call("search", 1, "rust")]),
    AIMessage("", id="ai-2", tool_calls=[call("lookup", 2, "ann"), call("search", 3, "go")]),
    AIMessage("", id="ai-3", tool_calls=[call("search", 4, "zig")]),
    AIMessage("Done.", id="ai-4"),
]
HUMAN = "I am jo@corp.com, card 4532-0151-1283-0366, from 192.168.0.1 (MAC 00:1A:2B:3C:4D:5E)."
# scenario: (answers, middleware factory)
SCENARIOS = {
    "pii": (PII_SCRIPT, lambda: [
        PIIMiddleware("email", apply_to_output=True),
        PIIMiddleware("credit_card", strategy="mask", apply_to_tool_results=True),
        PIIMiddleware("ip", strategy="hash", apply_to_tool_results=True),
        PIIMiddleware("mac_address", strategy="mask"),
        PIIMiddleware("url", strategy="redact", apply_to_input=False, apply_to_output=True),
    ]),
    "pii_custom": (PII_SCRIPT, lambda: [
        PIIMiddleware("ticket", detector=r"T-\d{3}", strategy="hash"),
        PIIMiddleware("corp", detector=lambda s: [{"text": m.group(), "start": m.start(), "end": m.end()} for m in re.finditer("corp", s)], strategy="mask", apply_to_output=True),
    ]),
    "pii_block": (PII_SCRIPT, lambda: [PIIMiddleware("email", strategy="block", apply_to_input=False, apply_to_tool_results=True)]),
    "ctx": (CTX_SCRIPT, lambda: [ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=60, keep=1, exclude_tools=["lookup"])])]),
    "ctx_inputs": (CTX_SCRIPT, lambda: [ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=60, keep=0, clear_at_least=70, clear_tool_inputs=True, placeholder="[gone]")])]),
    "ctx_default": (CTX_SCRIPT, lambda: [ContextEditingMiddleware()]),
}
INPUTS = {"pii_custom": "Ticket T-123 for corp, T-45 and T-678."}


def run(name):
    answers, middleware = SCENARIOS[name]
    model = Model(messages=iter(answers))
    model.requests = []
    agent = create_agent(model, [lookup, search], system_prompt="Be brief.", middleware=middleware(), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": name}}
    error = None
    try:
        agent.invoke({"messages": [HumanMessage(INPUTS.get(name, HUMAN), id="h-1")]}, config)
    except Exception as e:  # noqa: BLE001
        error = f"{type(e).__name__}: {e}"
    state = agent.get_state(config)
    return {
        "messages": [dump(m) for m in state.values["messages"]],
        "requests": model.requests,
        "error": error,
        "next": list(state.next),
        "history": [
            [s.metadata["step"], list(s.next), [dump(m) for m in s.values.get("messages", [])]]
            for s in reversed(list(agent.get_state_history(config)))
        ],
        "mermaid": agent.get_graph().draw_mermaid(),
    }


fixture = {"detectors": detectors(), "agents": {name: run(name) for name in SCENARIOS}}
path = pathlib.Path(__file__).with_name("create_agent_mwb.json")
path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
