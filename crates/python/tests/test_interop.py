"""Interop with LangGraph's own savers: the same rows, and each side reads the other's.

* Row equality: one graph run feeds every `put` / `put_writes` to Python's saver and to
  ours (same arguments); the two databases must then hold the same rows, byte for byte.
* Cross reading: a thread run to its interrupt through one saver is read and resumed
  through the other, on the same file or database.
"""

from __future__ import annotations

import copy
import sqlite3

import psycopg
import pytest
from conftest import require_postgres
from graphs import build, resume, run_to_interrupt, texts
from langgraph.checkpoint.postgres import PostgresSaver as PyPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver as PySqliteSaver

import stategraph

EXPECTED = ["hello", "shall I?", "yes", "done"]


def mirrored(base: type, other):
    """A subclass of Python saver `base` that also hands every write to `other`."""

    # The arguments are copied once and both savers get the copy: the graph saves in the
    # background while its nodes go on (and `add_messages` assigns message ids in place),
    # so two saves of the live objects could see two states of them.
    class Mirror(base):
        def put(self, *args):
            args = copy.deepcopy(args)
            other.put(*args)
            return super().put(*args)

        def put_writes(self, config, writes, task_id, task_path=""):
            args = copy.deepcopy((config, writes, task_id, task_path))
            other.put_writes(*args)
            return super().put_writes(*args)

    return Mirror


def run_both_threads(saver):
    graph = build().compile(checkpointer=saver)
    for thread, answer in (("t-yes", "yes"), ("t-no", "no")):
        config = {"configurable": {"thread_id": thread}}
        run_to_interrupt(graph, config)
        resume(graph, config, answer)


def tuples(saver, thread):
    return list(saver.list({"configurable": {"thread_id": thread}}))


# -- SQLite -------------------------------------------------------------------------------


def sqlite_rows(path):
    with sqlite3.connect(path) as conn:
        return {
            "checkpoints": conn.execute(
                "SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id"
            ).fetchall(),
            "writes": conn.execute(
                "SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, "
                "task_id, idx"
            ).fetchall(),
        }


def test_sqlite_rows_equal_pythons(tmp_path):
    ours = stategraph.SqliteSaver(tmp_path / "ours.db")
    conn = sqlite3.connect(tmp_path / "python.db", check_same_thread=False)
    run_both_threads(mirrored(PySqliteSaver, ours)(conn))
    conn.commit()
    mine, theirs = sqlite_rows(tmp_path / "ours.db"), sqlite_rows(tmp_path / "python.db")
    assert len(theirs["checkpoints"]) >= 10 and len(theirs["writes"]) >= 10
    assert mine == theirs


def test_python_sqlite_reads_and_resumes_ours(tmp_path):
    path = tmp_path / "shared.db"
    ours = stategraph.SqliteSaver(path)
    config = {"configurable": {"thread_id": "t"}}
    run_to_interrupt(build().compile(checkpointer=ours), config)
    python = PySqliteSaver(sqlite3.connect(path, check_same_thread=False))
    assert tuples(python, "t") == tuples(ours, "t")
    assert texts(resume(build().compile(checkpointer=python), config)) == EXPECTED
    # And back: ours reads what Python just added.
    assert tuples(ours, "t") == tuples(python, "t")
    assert ours.get_tuple(config).checkpoint == python.get_tuple(config).checkpoint


def test_ours_reads_and_resumes_python_sqlite(tmp_path):
    path = tmp_path / "shared.db"
    python = PySqliteSaver(sqlite3.connect(path, check_same_thread=False))
    config = {"configurable": {"thread_id": "t"}}
    run_to_interrupt(build().compile(checkpointer=python), config)
    ours = stategraph.SqliteSaver(path)
    assert tuples(ours, "t") == tuples(python, "t")
    assert texts(resume(build().compile(checkpointer=ours), config)) == EXPECTED
    assert tuples(python, "t") == tuples(ours, "t")


# -- Postgres -----------------------------------------------------------------------------


PG_TABLES = {
    "checkpoints": "thread_id, checkpoint_ns, checkpoint_id",
    "checkpoint_blobs": "thread_id, checkpoint_ns, channel, version",
    "checkpoint_writes": "thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
}


def pg_rows(url):
    with psycopg.connect(url) as conn:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            for table, order in PG_TABLES.items()
        }


@pytest.fixture
def pg_pair():
    from conftest import create_database, drop_database

    require_postgres()
    made = [create_database(), create_database()]
    try:
        yield [url for url, _ in made]
    finally:
        for _, name in made:
            drop_database(name)


def py_pg_saver(url, cls=PyPostgresSaver):
    conn = psycopg.connect(url, autocommit=True, prepare_threshold=0,
                           row_factory=psycopg.rows.dict_row)
    saver = cls(conn)
    saver.setup()
    return saver


def test_postgres_rows_equal_pythons(pg_pair):
    ours_url, python_url = pg_pair
    ours = stategraph.PostgresSaver(ours_url)
    ours.setup()
    run_both_threads(py_pg_saver(python_url, mirrored(PyPostgresSaver, ours)))
    mine, theirs = pg_rows(ours_url), pg_rows(python_url)
    assert len(theirs["checkpoints"]) >= 10 and len(theirs["checkpoint_writes"]) >= 10
    assert len(theirs["checkpoint_blobs"]) >= 1
    assert mine == theirs


def test_postgres_each_side_reads_and_resumes_the_other(pg_url):
    ours = stategraph.PostgresSaver(pg_url)
    ours.setup()
    python = py_pg_saver(pg_url)
    for thread, first, second in (("a", ours, python), ("b", python, ours)):
        config = {"configurable": {"thread_id": thread}}
        run_to_interrupt(build().compile(checkpointer=first), config)
        assert tuples(second, thread) == tuples(first, thread)
        assert texts(resume(build().compile(checkpointer=second), config)) == EXPECTED
        assert tuples(first, thread) == tuples(second, thread)
