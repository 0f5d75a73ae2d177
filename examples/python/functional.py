"""An essay reviewed by a human across processes, with LangGraph's functional API.

Usage: functional.py start|approve|again DB   (each step is a separate process)
The Rust twin is crates/stategraph/examples/functional.rs; both print the same lines.
"""
import sys

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.func import entrypoint, task
from langgraph.types import Command, interrupt

ran = []  # the tasks that ran in this process


@task
def compose(topic: str) -> str:
    ran.append("compose")
    return f"an essay about {topic}"


@task
def count_words(essay: str) -> int:
    ran.append("count_words")
    return len(essay.split())


step, db = sys.argv[1], sys.argv[2]
with SqliteSaver.from_conn_string(db) as saver:

    @entrypoint(checkpointer=saver)
    def review(topic: str, *, previous=None):
        essay = compose(topic).result()
        words = count_words(essay).result()
        verdict = interrupt({"essay": essay, "words": words})
        n = (previous or 0) + 1  # the reviews before, saved
        value = {"essay": essay, "verdict": verdict, "reviews": n}
        return entrypoint.final(value=value, save=n)

    thread = {"configurable": {"thread_id": "essay-1"}}
    if step == "start":  # process 1: runs the tasks, stops at the interrupt
        out = review.invoke("cats", thread)
        print(f"paused: {out['__interrupt__'][0].value!r}")
    elif step == "approve":  # process 2: the tasks' results come from the checkpoint
        print(f"done: {review.invoke(Command(resume='good'), thread)!r}")
    else:  # process 3: a second review on the thread sees the first one's saved count
        out = review.invoke("dogs", thread)
        print(f"paused: {out['__interrupt__'][0].value!r}")
        print(f"done: {review.invoke(Command(resume='bad'), thread)!r}")
    print("tasks run:", ", ".join(ran) or "none")
