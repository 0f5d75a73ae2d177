"""A small LangGraph graph used by the tests: messages, an interrupt, a resume."""

from __future__ import annotations

import datetime
import uuid
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    approved: bool
    extra: Any


def ask(state: State) -> State:
    return {
        "messages": [AIMessage("shall I?")],
        # Python objects the checkpoint must carry as Python stores them.
        "extra": {
            "when": datetime.datetime(2026, 12, 1, 12, 30, tzinfo=datetime.timezone.utc),
            "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
            "tags": {"a", "b"},
            "raw": b"\x00\x01bytes",
            "nested": [1, 2.5, None, True, "x" * 300],
        },
    }


def review(state: State) -> State:
    answer = interrupt({"question": "approve?"})
    return {"approved": answer == "yes", "messages": [HumanMessage(answer)]}


def finish(state: State) -> State:
    return {"messages": [AIMessage("done" if state["approved"] else "stopped")]}


def build():
    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_node("review", review)
    builder.add_node("finish", finish)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "review")
    builder.add_edge("review", "finish")
    builder.add_edge("finish", END)
    return builder


def run_to_interrupt(graph, config) -> dict:
    return graph.invoke({"messages": [HumanMessage("hello")]}, config)


def resume(graph, config, answer: str = "yes") -> dict:
    return graph.invoke(Command(resume=answer), config)


def texts(state: dict) -> list[str]:
    return [m.content for m in state["messages"]]
