//! Python bindings: stategraph's savers as LangGraph `BaseCheckpointSaver` classes.
//!
//! The Python package `stategraph` (built from this crate with maturin, abi3 for CPython
//! 3.10 and later) offers `stategraph.SqliteSaver`, `stategraph.PostgresSaver` and
//! `stategraph.MemorySaver`. Each is a subclass of LangGraph's `BaseCheckpointSaver` written
//! in Python (`python/stategraph/`) over one native object of this crate, [`NativeSaver`],
//! which holds a Rust saver ([`stategraph_checkpoint_sqlite::SqliteSaver`],
//! [`stategraph_checkpoint_postgres::PostgresSaver`] or
//! [`stategraph_checkpoint::MemorySaver`]). A Python program swaps its checkpointer in one
//! line, `graph.compile(checkpointer=stategraph.SqliteSaver("x.db"))`, and the file or
//! database it writes holds the rows Python's own saver writes, so it can swap back.
//!
//! # What is done on each side, and why
//!
//! * **Python** keeps LangGraph's serializer (`self.serde`, a `JsonPlusSerializer` or any
//!   other): checkpoints and pending writes are encoded by `self.serde.dumps_typed`, so
//!   Python objects (messages, dataclasses, pydantic models, datetimes, ...) become exactly
//!   the bytes Python's own saver would store, and are rebuilt by `self.serde.loads_typed`
//!   on the way back, as Python's own saver rebuilds them. It also applies the parts of the
//!   protocol that are Python objects: configs (`RunnableConfig` dicts), `CheckpointTuple`s,
//!   the async methods (run in the default executor), `get_next_version`.
//! * **The boundary** carries bytes only: `(type tag, bytes)` pairs from `dumps_typed`, and
//!   msgpack for plain data (configs, metadata, filters, versions). One crossing per call;
//!   no Python object is converted field by field.
//! * **Rust** builds the rows, runs the queries and, when enabled, the one-writer fence,
//!   with the GIL released for the whole operation, so other Python threads run meanwhile.
//!   What it does with the pairs depends on the saver:
//!   - **Memory and SQLite: values cross once** (`NativeSaver::put_raw`,
//!     `get_tuple_raw`, `list_raw`, and `put_writes`). Python sends each saver exactly what
//!     its layout stores: SQLite the pair of the whole checkpoint, memory the pair of the
//!     checkpoint without `channel_values` plus one pair per channel of `new_versions` (as
//!     `InMemorySaver.put` makes them), and the pair of each write. Rust stores them as they
//!     are and hands them back as stored ([`stategraph_checkpoint::raw`]): it never decodes
//!     or re-encodes a channel value or a write. It decodes only the small plain parts it
//!     needs: the config, the metadata (stored as Python's saver stores it), `new_versions`,
//!     and on a memory read the checkpoint's `channel_versions` (to find its blobs). So a
//!     turn of a long chat costs one Python encode and one Python decode of the state, as
//!     with Python's own savers, and nothing more; and any serializer works, an encrypting
//!     one included, since Rust never reads the values.
//!   - **Postgres: values are decoded in Rust** (`put`, `get_tuple`, `list`). Its layout
//!     keeps primitive channel values inline in the JSONB checkpoint and stores the others
//!     as blobs (with stategraph's own rules for long strings, NaN and DeltaChannel
//!     snapshots), so Rust decodes the checkpoint pair into [`stategraph_checkpoint::Value`]
//!     (the lossless model of what `JsonPlusSerializer` writes; extension objects stay
//!     inert data), splits it, and re-encodes each blob byte for byte as Python does; reads
//!     decode the blobs (through the saver's decode memo) and return msgpack. A value the
//!     decoder cannot represent (a msgpack extension code outside LangGraph's 0 to 7, or a
//!     serializer whose tags are not `msgpack`/`bytes`/`null`) is refused with an error,
//!     never stored altered.
//!
//! The other operations (`delete_thread`, `copy_thread`, `prune`, `delete_for_runs`,
//! `get_delta_channel_history`) run on the Rust saver as they are, on the same rows: rows
//! written raw are rows of the saver's layout like any other.
//!
//! # Async methods and the fence
//!
//! The async methods (`aget_tuple`, `alist`, `aput`, ...) run the sync method in the event
//! loop's default executor. The native call releases the GIL, so the loop keeps running
//! while the saver works; a Rust-future-to-awaitable bridge (`pyo3-async-runtimes`) would
//! save the executor hop (tens of microseconds) but add a second runtime integration and
//! dependency, for calls that cost hundreds of microseconds to milliseconds of I/O anyway.
//!
//! The one-writer fence of our savers is off by default (`fencing=False`): Python LangGraph
//! does not mark its replays and `update_state` forks as deliberate branches, so with the
//! fence on they would be refused as stale writes. With `fencing=True` a stale writer gets
//! `stategraph.ConflictError`; the conformance suite then fails exactly the three checks
//! that start one thread twice (see `tests/test_conformance.py`). A graph run may also be
//! refused its own late writes: LangGraph's background executor saves a step's writes and
//! the next checkpoint concurrently, so the writes can arrive after their checkpoint's
//! child.
//!
//! # Errors
//!
//! Every [`stategraph_checkpoint::Error`] becomes a Python exception with the same message:
//! [`Error::Conflict`](stategraph_checkpoint::Error::Conflict) from the fence is
//! `stategraph.ConflictError`, an invalid config `ValueError`, an unsupported operation
//! `NotImplementedError`, anything else `stategraph.StategraphError` (the base class of
//! `ConflictError`).
//!
//! # Unsafe code
//!
//! The workspace forbids `unsafe_code`. PyO3's `#[pyclass]`, `#[pymethods]` and `#[pymodule]`
//! macros expand to FFI glue with `unsafe` blocks, which `forbid` rejects even inside macro
//! expansions; this crate alone lowers the lint to `deny`, which those expansions may allow
//! locally. The crate's own code has no `unsafe` block.
//!
//! # Tests
//!
//! The crate links against the interpreter that imports it, so it has no Rust tests; its
//! tests are pytest files in `crates/python/tests/` (LangGraph's own conformance suite,
//! `langgraph-checkpoint-conformance`, on all three savers; interop with Python's savers;
//! a Python graph that interrupts and resumes), run by `scripts/test.sh` after
//! `maturin develop` into a venv under `target/`; `tests/test_raw.py` checks that what
//! Python's serializer encodes is what the memory and SQLite savers store and hand back.

mod bridge;
mod error;
mod raw;
mod saver;

pub use error::{to_py_err, ConflictError, StategraphError};
pub use saver::NativeSaver;

use pyo3::prelude::*;

/// The native module `stategraph._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeSaver>()?;
    m.add("StategraphError", m.py().get_type::<StategraphError>())?;
    m.add("ConflictError", m.py().get_type::<ConflictError>())?;
    Ok(())
}
