"""The Python side of tests/models_interop.rs: LangGraph's create_react_agent with
ChatOpenAI on the local OpenAI-compatible server (or, with PROVIDER=anthropic in the
environment, ChatAnthropic on the local Anthropic-speaking proxy), on a SQLite file shared
with Rust.

    agent.py DB BASE_URL MODEL write THREAD   # runs the agent: one tool call, then text
    agent.py DB BASE_URL MODEL plain THREAD   # runs an agent without tools: one answer
    agent.py DB BASE_URL MODEL read THREAD    # prints the thread's messages, as JSON

`read` loads the stored messages with LangChain's classes and prints, for each, its class
and the shape of what it stores (see `shape`), so that Rust compares a thread written in
Rust with one written here by ChatOpenAI.
"""

import json
import sys

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
import os

from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent


@tool
def shout(word: str) -> str:
    """Shouts a word."""
    return word.upper()


def shape(value):
    """A stored value's shape: maps keep their keys (in order) with shaped values,
    lists their items; strings, numbers and the rest become their type's name."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    if value is None:
        return None
    return type(value).__name__


def message_shape(m):
    d = m.model_dump()
    out = {"class": type(m).__name__}
    for key in ("content", "additional_kwargs", "response_metadata", "tool_calls",
                "invalid_tool_calls", "usage_metadata", "name", "type"):
        if key in d:
            out[key] = shape(d[key])
    ident = m.id or ""
    out["id"] = ("lc_run--" + ("<run>-0" if ident.endswith("-0") else "<run>")) \
        if ident.startswith("lc_run--") else "<uuid>"
    return out


def chat_model(base_url, model, max_tokens):
    """The provider's LangChain client on the local server."""
    if os.environ.get("PROVIDER") == "anthropic":
        from langchain_anthropic import ChatAnthropic
        return ChatAnthropic(model=model, base_url=base_url, api_key="none",
                             temperature=0.0, max_tokens=max_tokens)
    return ChatOpenAI(model=model, base_url=base_url, api_key="none",
                      temperature=0.0, max_tokens=max_tokens, seed=7)


@tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def chunk_calls(base_url, model):
    """The tool calls LangChain reads from each streamed chunk of two parallel calls (the
    chunks with tool-call fragments; ids left out: the server makes new ones each time),
    and the tools as sent."""
    from langchain_core.utils.function_calling import convert_to_openai_tool
    llm = chat_model(base_url, model, 256).bind_tools([add, shout])
    prompt = "Add 2 and 3 and shout hi: call both tools in parallel."
    out = []
    for chunk in llm.stream(prompt):
        if not chunk.tool_call_chunks:
            continue
        out.append({
            "tool_call_chunks": [[c["name"], c["args"], c["index"]] for c in chunk.tool_call_chunks],
            "tool_calls": [[c["name"], c["args"]] for c in chunk.tool_calls],
            "invalid_tool_calls": [[c["name"], c["args"], c["error"]] for c in chunk.invalid_tool_calls],
        })
    tools = [convert_to_openai_tool(t) for t in (add, shout)]
    print(json.dumps({"chunks": out, "tools": tools, "prompt": prompt}))


def main():
    db, base_url, model, action, thread = sys.argv[1:6]
    if action == "chunks":
        return chunk_calls(base_url, model)
    with SqliteSaver.from_conn_string(db) as saver:
        config = {"configurable": {"thread_id": thread}}
        if action == "plain":
            llm = chat_model(base_url, model, 24)
            agent = create_react_agent(llm, [], checkpointer=saver)
            agent.invoke({"messages": [("user", "Say hello.")]}, config)
        if action == "write":
            llm = chat_model(base_url, model, 256)
            agent = create_react_agent(llm, [shout], checkpointer=saver)
            agent.invoke({"messages": [("user", "Shout hello.")]}, config)
        state = saver.get_tuple(config).checkpoint["channel_values"]["messages"]
        print(json.dumps([message_shape(m) for m in state]))
        for m in state:
            if isinstance(m, AIMessage):
                assert m.usage_metadata is not None, m
                provider = os.environ.get("PROVIDER", "openai")
                assert m.response_metadata.get("model_provider") == provider, m


if __name__ == "__main__":
    main()
