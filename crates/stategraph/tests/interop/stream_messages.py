"""stream_mode="messages" of the pinned Python LangGraph, for tests/engine/messages_mode.rs.

The graph: START -> outer -> sub -> plain -> END over MessagesState, where `outer` calls
a fake chat model (streamed as chunks "a", " ", "b" with id m-1, then returned), `sub` is
a subgraph whose `inner` node calls a model (one chunk "x", id c-1) and returns it with
AIMessage("inner", id="i-1"), and `plain` returns AIMessage("hi", id="p-1"),
HumanMessage("again") without id, and the input's HumanMessage h-1 again.

Prints, as JSON, the messages events with and without `subgraphs=True`: namespace, message
type, its field names, content, id and metadata (task ids replaced by `*`, generated ids by `<uuid>`, the
fake model's own keys `ls_provider`, `ls_model_type`, `lc_versions` left out).
"""

import json

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

MODEL_KEYS = {"ls_provider", "ls_model_type", "lc_versions"}


def build():
    outer_model = GenericFakeChatModel(messages=iter([AIMessage(content="a b", id="m-1")]))
    inner_model = GenericFakeChatModel(messages=iter([AIMessage(content="x", id="c-1")]))

    def outer(state):
        return {"messages": [outer_model.invoke(state["messages"])]}

    def inner(state):
        return {"messages": [inner_model.invoke(state["messages"]), AIMessage(content="inner", id="i-1")]}

    def plain(state):
        return {
            "messages": [
                AIMessage(content="hi", id="p-1"),
                HumanMessage(content="again"),
                state["messages"][0],
            ]
        }

    sub = StateGraph(MessagesState)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    sub.add_edge("inner", END)
    g = StateGraph(MessagesState)
    g.add_node("outer", outer)
    g.add_node("sub", sub.compile())
    g.add_node("plain", plain)
    g.add_edge(START, "outer")
    g.add_edge("outer", "sub")
    g.add_edge("sub", "plain")
    g.add_edge("plain", END)
    return g.compile(checkpointer=InMemorySaver())


def norm_ns(s):
    return "|".join(part.split(":")[0] + ":*" for part in s.split("|"))


def norm_id(i):
    if isinstance(i, str) and len(i) == 36 and i.count("-") == 4:
        return "<uuid>"
    return i


def jsonable(v):
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def run(subgraphs):
    app = build()
    cfg = {"configurable": {"thread_id": "t"}, "metadata": {"who": "me"}}
    out = []
    events = app.stream(
        {"messages": [HumanMessage(content="q", id="h-1")]},
        cfg,
        stream_mode="messages",
        subgraphs=subgraphs,
    )
    for event in events:
        ns, (msg, meta) = event if subgraphs else ((), event)
        md = []
        for k, v in meta.items():
            if k in MODEL_KEYS:
                continue
            if k in ("langgraph_checkpoint_ns", "checkpoint_ns"):
                v = norm_ns(v)
            md.append([k, jsonable(v)])
        out.append(
            {
                "ns": [norm_ns(p) for p in ns],
                "type": msg.type,
                "fields": list(msg.model_dump().keys()),
                "content": msg.content,
                "id": norm_id(msg.id),
                "metadata": md,
            }
        )
    return out


print(json.dumps({"subgraphs": run(True), "root": run(False)}, indent=1))
