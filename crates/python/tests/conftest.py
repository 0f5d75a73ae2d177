"""Fixtures shared by the tests of the `stategraph` Python package.

Postgres tests use ``STATEGRAPH_TEST_POSTGRES_URL`` (a server where the user may create
databases); each test gets its own database, dropped afterwards. Without the variable they
are skipped, unless ``STATEGRAPH_REQUIRE_POSTGRES=1``, where they fail.
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

PG_URL = os.environ.get("STATEGRAPH_TEST_POSTGRES_URL")


def require_postgres() -> str:
    if not PG_URL:
        if os.environ.get("STATEGRAPH_REQUIRE_POSTGRES") == "1":
            pytest.fail("STATEGRAPH_REQUIRE_POSTGRES=1 but STATEGRAPH_TEST_POSTGRES_URL is unset")
        pytest.skip("STATEGRAPH_TEST_POSTGRES_URL is unset")
    return PG_URL


def _with_db(url: str, db: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + db))


def create_database() -> tuple[str, str]:
    """A fresh database on the test server: (its url, its name)."""
    import psycopg

    base = require_postgres()
    name = "sg_py_" + uuid.uuid4().hex[:16]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return _with_db(base, name), name


def drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect(require_postgres(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url():
    url, name = create_database()
    try:
        yield url
    finally:
        drop_database(name)
