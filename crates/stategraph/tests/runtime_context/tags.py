"""Run tags in the pinned Python's streams, for tests/runtime_context/tags.rs.

The graph: START -> call -> sub -> plain -> END over MessagesState, where `call` calls a
fake chat model (streamed as chunks "hello", " ", "world" with id m-1, then returned),
`sub` is a subgraph whose `inner` node calls a model (one chunk "x", id c-1), and `plain`
returns AIMessage("done", id="p-1"). The run's config has tags ["mytag", "other"],
metadata {"who": "me"}.

Prints, as JSON, the `messages` and `tasks` events streamed with `subgraphs=True`: for a
message its namespace, content, id and metadata (task ids replaced by `*`, the fake
model's own keys `ls_provider`, `ls_model_type`, `lc_versions` left out); for a task's
start its namespace, name and metadata (absent: null). Task results are left out.
"""

import json

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

MODEL_KEYS = {"ls_provider", "ls_model_type", "lc_versions"}


def build():
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello world", id="m-1")]))
    inner_model = GenericFakeChatModel(messages=iter([AIMessage(content="x", id="c-1")]))

    def call(state):
        return {"messages": [model.invoke(state["messages"])]}

    def inner(state):
        return {"messages": [inner_model.invoke(state["messages"])]}

    def plain(state):
        return {"messages": [AIMessage(content="done", id="p-1")]}

    sub = StateGraph(MessagesState)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    sub.add_edge("inner", END)
    g = StateGraph(MessagesState)
    g.add_node("call", call)
    g.add_node("sub", sub.compile())
    g.add_node("plain", plain)
    g.add_edge(START, "call")
    g.add_edge("call", "sub")
    g.add_edge("sub", "plain")
    g.add_edge("plain", END)
    return g.compile(checkpointer=InMemorySaver())


def norm_ns(s):
    return "|".join(part.split(":")[0] + ":*" for part in s.split("|"))


def main():
    cfg = {
        "configurable": {"thread_id": "t"},
        "metadata": {"who": "me"},
        "tags": ["mytag", "other"],
    }
    out = []
    events = build().stream(
        {"messages": [HumanMessage(content="q", id="h-1")]},
        cfg,
        stream_mode=["messages", "tasks"],
        subgraphs=True,
    )
    for ns, mode, data in events:
        ns = [norm_ns(p) for p in ns]
        if mode == "tasks":
            if "triggers" in data:
                out.append({"ns": ns, "task": data["name"], "metadata": data.get("metadata")})
            continue
        msg, meta = data
        md = []
        for k, v in meta.items():
            if k in MODEL_KEYS:
                continue
            if k in ("langgraph_checkpoint_ns", "checkpoint_ns"):
                v = norm_ns(v)
            md.append([k, v])
        out.append({"ns": ns, "content": msg.content, "id": msg.id, "metadata": md})
    print(json.dumps(out, indent=1))


main()
