"""LangGraph's own checkpointer conformance suite on stategraph's savers.

``langgraph-checkpoint-conformance`` (0.0.2) is the suite LangGraph's SQLite and Postgres
savers run. Every base capability (put, put_writes, get_tuple, list, delete_thread) and
every extended one (delete_for_runs, copy_thread, prune) is detected on our savers, so the
report must show all eight detected and passing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from conftest import create_database, drop_database
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks

import stategraph

ALL = {
    "put",
    "put_writes",
    "get_tuple",
    "list",
    "delete_thread",
    "delete_for_runs",
    "copy_thread",
    "prune",
}


def assert_all_passed(report) -> None:
    report.print_report()
    detected = {name for name, r in report.results.items() if r.detected}
    assert detected == ALL, f"capabilities not detected: {ALL - detected}"
    failed = {
        name: [str(f) for f in r.failures]
        for name, r in report.results.items()
        if r.passed is not True
    }
    assert not failed, failed
    assert report.passed_all_base()
    # The 0.0.2 suite has 81 checks over the eight capabilities: all of them ran.
    ran = sum(r.tests_passed for r in report.results.values())
    assert ran >= 81, f"only {ran} conformance checks ran"


@checkpointer_test(name="stategraph.MemorySaver")
async def memory_saver():
    yield stategraph.MemorySaver()


@checkpointer_test(name="stategraph.SqliteSaver")
async def sqlite_saver():
    with tempfile.TemporaryDirectory() as tmp:
        yield stategraph.SqliteSaver(Path(tmp) / "checkpoints.db")


@checkpointer_test(name="stategraph.SqliteSaver(:memory:)")
async def sqlite_memory_saver():
    yield stategraph.SqliteSaver(":memory:")


_pg = {}


async def pg_lifespan():
    url, name = create_database()
    _pg["url"] = url
    stategraph.PostgresSaver(url).setup()
    try:
        yield
    finally:
        drop_database(name)


@checkpointer_test(name="stategraph.PostgresSaver", lifespan=pg_lifespan)
async def postgres_saver():
    saver = stategraph.PostgresSaver(_pg["url"])
    yield saver


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "registered", [memory_saver, sqlite_saver, sqlite_memory_saver], ids=lambda r: r.name
)
async def test_conformance(registered):
    report = await validate(registered, progress=ProgressCallbacks.verbose())
    assert_all_passed(report)


@pytest.mark.asyncio
async def test_conformance_postgres():
    from conftest import require_postgres

    require_postgres()
    report = await validate(postgres_saver, progress=ProgressCallbacks.verbose())
    assert_all_passed(report)


@checkpointer_test(name="stategraph.SqliteSaver(fencing=True)")
async def fenced_sqlite_saver():
    with tempfile.TemporaryDirectory() as tmp:
        yield stategraph.SqliteSaver(Path(tmp) / "checkpoints.db", fencing=True)


@checkpointer_test(name="stategraph.MemorySaver(fencing=True)")
async def fenced_memory_saver():
    yield stategraph.MemorySaver(fencing=True)


# With the one-writer fence on, exactly the checks that put several parentless checkpoints
# on one thread (two writers each starting the thread, to the fence) are refused, with
# ConflictError; every other check passes.
FENCED_FAILURES = {
    ("list", "test_list_metadata_filter_multiple_keys"),
    ("list", "test_list_metadata_custom_keys"),
    ("delete_for_runs", "test_delete_for_runs_preserves_other_runs"),
}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "registered", [fenced_sqlite_saver, fenced_memory_saver], ids=lambda r: r.name
)
async def test_conformance_fenced(registered):
    errors = {}

    def on_result(capability, test_name, passed, error):
        if not passed:
            errors[(capability, test_name)] = error

    report = await validate(registered, progress=ProgressCallbacks(on_test_result=on_result))
    assert set(errors) == FENCED_FAILURES
    for error in errors.values():
        assert "stategraph.ConflictError: conflict:" in error, error
    ran = sum(r.tests_passed + r.tests_failed for r in report.results.values())
    assert ran >= 81
