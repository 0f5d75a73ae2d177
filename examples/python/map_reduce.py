"""Map-reduce with Send: one worker task per subject, each taking its own input type."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send


class Overall(TypedDict):
    topic: str
    subjects: list[str]
    jokes: Annotated[list[str], operator.add]
    best: str


class Subject(TypedDict):
    subject: str


def generate_subjects(state: Overall):
    return {"subjects": [f"{state['topic']} {k}" for k in ("cats", "dogs", "birds")]}


def write_joke(s: Subject):
    return {"jokes": [f"Why did the {s['subject']} cross the road? To reach the other side."]}


def fan_out(state: Overall):
    return [Send("write_joke", {"subject": s}) for s in state["subjects"]]


def pick_best(state: Overall):
    return {"best": min(state["jokes"], key=len)}


g = StateGraph(Overall)
g.add_node("generate_subjects", generate_subjects)
g.add_node("write_joke", write_joke)
g.add_node("pick_best", pick_best)
g.add_edge(START, "generate_subjects")
g.add_conditional_edges("generate_subjects", fan_out, ["write_joke"])
g.add_edge("write_joke", "pick_best")
g.add_edge("pick_best", END)
result = g.compile().invoke({"topic": "striped"})
for joke in result["jokes"]:
    print("joke:", joke)
print("best:", result["best"])
