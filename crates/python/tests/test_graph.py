"""A Python LangGraph graph on stategraph's savers: runs, interrupts, resumes, replays."""

from __future__ import annotations

import asyncio
import threading

import pytest
from graphs import build, resume, run_to_interrupt, texts
from langchain_core.messages import HumanMessage

import stategraph

EXPECTED = ["hello", "shall I?", "yes", "done"]


def savers(tmp_path):
    return {
        "sqlite": stategraph.SqliteSaver(tmp_path / "g.db"),
        "memory": stategraph.MemorySaver(),
    }


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
def test_graph_interrupts_and_resumes(tmp_path, kind):
    saver = savers(tmp_path)[kind]
    graph = build().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t1"}}

    first = run_to_interrupt(graph, config)
    assert "__interrupt__" in first
    assert first["__interrupt__"][0].value == {"question": "approve?"}
    state = graph.get_state(config)
    assert state.next == ("review",)
    # Python objects in the state come back as the objects they were.
    extra = state.values["extra"]
    assert extra["tags"] == {"a", "b"} and extra["raw"] == b"\x00\x01bytes"
    assert extra["when"].isoformat() == "2026-12-01T12:30:00+00:00"

    final = resume(graph, config)
    assert texts(final) == EXPECTED
    assert graph.get_state(config).next == ()
    history = list(graph.get_state_history(config))
    assert len(history) >= 5
    # Newest first, each the child of the next.
    for newer, older in zip(history, history[1:]):
        assert newer.parent_config["configurable"]["checkpoint_id"] == (
            older.config["configurable"]["checkpoint_id"]
        )


def test_graph_survives_reopening_the_file(tmp_path):
    path = tmp_path / "reopen.db"
    config = {"configurable": {"thread_id": "t"}}
    run_to_interrupt(build().compile(checkpointer=stategraph.SqliteSaver(path)), config)
    # A new process would see the same: a fresh saver on the same file resumes the run.
    graph = build().compile(checkpointer=stategraph.SqliteSaver(path))
    assert texts(resume(graph, config)) == EXPECTED


def test_graph_async(tmp_path):
    graph = build().compile(checkpointer=stategraph.SqliteSaver(tmp_path / "a.db"))
    config = {"configurable": {"thread_id": "async"}}

    async def go():
        await graph.ainvoke({"messages": [HumanMessage("hello")]}, config)
        from langgraph.types import Command

        out = await graph.ainvoke(Command(resume="no"), config)
        return out, [s async for s in graph.aget_state_history(config)]

    out, history = asyncio.run(go())
    assert texts(out) == ["hello", "shall I?", "no", "stopped"]
    assert history[0].values["approved"] is False


def _replay_scenario(saver):
    """Runs, then forks at the interrupt twice (resume again, and update_state + replay)."""
    from langgraph.types import Command

    graph = build().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "replay"}}
    run_to_interrupt(graph, config)
    resume(graph, config, "yes")
    at_interrupt = next(s for s in graph.get_state_history(config) if s.next == ("review",))
    again = texts(graph.invoke(Command(resume="no"), at_interrupt.config))
    forked = graph.update_state(at_interrupt.config, {"approved": False})
    replayed = texts(graph.invoke(Command(resume="no"), forked))
    history = [(s.next, s.metadata["source"], s.metadata["step"]) for s in graph.get_state_history(config)]
    return again, replayed, history


def test_replay_and_fork_behave_as_with_pythons_saver(tmp_path):
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver as PySqliteSaver

    ours = _replay_scenario(stategraph.SqliteSaver(tmp_path / "r.db"))
    python = _replay_scenario(
        PySqliteSaver(sqlite3.connect(tmp_path / "py.db", check_same_thread=False))
    )
    assert ours == python
    assert len(ours[2]) > 5


def test_fencing_refuses_a_stale_writer_with_conflict_error(tmp_path):
    # The thread is written unfenced: LangGraph saves a step's writes and the next
    # checkpoint concurrently (its background executor), so a fenced saver may refuse the
    # late writes of a graph's own run (see the crate docs).
    config = {"configurable": {"thread_id": "fenced"}}
    unfenced = stategraph.SqliteSaver(tmp_path / "f.db")
    run_to_interrupt(build().compile(checkpointer=unfenced), config)
    saver = stategraph.SqliteSaver(tmp_path / "f.db", fencing=True)
    head = saver.get_tuple(config)
    parent = saver.get_tuple(head.parent_config)
    # A writer that still sees the parent as the head tries to put a sibling.
    stale = dict(parent.checkpoint)
    stale["id"] = saver.get_tuple(config).checkpoint["id"][:-1] + "f"
    with pytest.raises(stategraph.ConflictError) as err:
        saver.put(parent.parent_config, stale, {"source": "loop", "step": 99}, {})
    assert isinstance(err.value, stategraph.StategraphError)
    assert "conflict" in str(err.value)
    # Nothing was stored by the refused call.
    assert saver.get_tuple(config).checkpoint["id"] == head.checkpoint["id"]


def test_errors_keep_the_rust_message(tmp_path):
    saver = stategraph.SqliteSaver(tmp_path / "e.db")
    with pytest.raises(ValueError, match="thread id is 2000 bytes long"):
        saver.get_tuple({"configurable": {"thread_id": "x" * 2000}})
    with pytest.raises(ValueError, match="unknown prune strategy"):
        saver.prune(["t"], strategy="nope")
    with pytest.raises(ValueError, match="put_writes needs a checkpoint_id"):
        saver.put_writes({"configurable": {"thread_id": "t"}}, [("ch", 1)], "task")
    with pytest.raises(stategraph.StategraphError, match="opening the database failed"):
        stategraph.SqliteSaver(tmp_path / "no" / "such" / "dir" / "e.db")


def test_threads_run_while_a_call_is_in_rust(tmp_path):
    """The GIL is released during native calls: several threads use one saver at once."""
    saver = stategraph.SqliteSaver(tmp_path / "threads.db")
    graph = build().compile(checkpointer=saver)
    errors = []

    def worker(i):
        try:
            config = {"configurable": {"thread_id": f"w{i}"}}
            run_to_interrupt(graph, config)
            assert texts(resume(graph, config)) == EXPECTED
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len({t.config["configurable"]["thread_id"] for t in saver.list(None)}) == 4


def test_list_before_takes_a_bare_checkpoint_id(tmp_path):
    """LangGraph's subgraph replay lists with ``before={"configurable": {"checkpoint_id":
    ...}}`` and no thread id; the answer must be Python's saver's."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver as PySqliteSaver

    path = tmp_path / "before.db"
    ours = stategraph.SqliteSaver(path)
    config = {"configurable": {"thread_id": "b"}}
    run_to_interrupt(build().compile(checkpointer=ours), config)
    python = PySqliteSaver(sqlite3.connect(path, check_same_thread=False))
    head = ours.get_tuple(config)
    before = {"configurable": {"checkpoint_id": head.checkpoint["id"]}}
    got = list(ours.list(config, before=before, limit=1))
    assert got == list(python.list(config, before=before, limit=1))
    assert [t.config for t in got] == [head.parent_config]
