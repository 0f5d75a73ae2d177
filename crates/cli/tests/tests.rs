//! The `stategraph` command end to end: databases written by Python LangGraph (SQLite and
//! Postgres) and by stategraph, each command's `--json` checked against Python's own
//! `get_state_history` / `get_state`, human output under insta snapshots, `copy` round
//! trips, and bad input (corrupt rows, unknown extensions, non-SQLite files, unreachable
//! servers) giving a clear message and a non-zero exit.
//!
//! Python runs `tests/python/threads.py` with `STATEGRAPH_PYTHON` (or the repo's
//! `target/langgraph-venv`); with `STATEGRAPH_INTEROP=1` a missing Python fails the run.
//! Postgres tests use `STATEGRAPH_TEST_POSTGRES_URL` and create their own database.

mod support;

mod checkpoint_refs;
mod delta;
mod errors;
mod history;
mod python;
#[cfg(feature = "serve")]
mod serve;
mod stategraph_db;
mod store;
mod verify;
