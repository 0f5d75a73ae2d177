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
//!   other, an encrypting one included): checkpoint values and pending writes are encoded
//!   by `self.serde.dumps_typed`, split as each of Python's own savers splits a checkpoint,
//!   so Python objects (messages, dataclasses, pydantic models, datetimes, ...) become
//!   exactly the bytes Python's own saver would store; what is read is decoded by
//!   `self.serde.loads_typed`, as Python's own saver decodes it. Python also handles the
//!   parts of the protocol that are Python objects: configs (`RunnableConfig` dicts),
//!   `CheckpointTuple`s, the async methods (run in the default executor),
//!   `get_next_version`.
//! * **The boundary** carries bytes only, once per call: `(type tag, bytes)` pairs from
//!   `dumps_typed`, msgpack for plain data (configs, metadata, filters, versions), and on
//!   the way back Python tuples of `str` and `bytes`. No Python object is converted field by
//!   field.
//! * **Rust** stores the pairs as they are and hands them back as stored
//!   ([`stategraph_checkpoint::raw`]; `NativeSaver::put_raw`, `put_writes`,
//!   `get_tuple_raw`, `list_raw`): it never decodes or re-encodes a channel value or a
//!   write. It builds the rows, runs the queries and, when enabled, the one-writer fence,
//!   with the GIL released for the whole call, so other Python threads run meanwhile.
//!   What each saver receives is what its layout stores:
//!   - **SQLite**: the pair of the whole checkpoint (`channel_values` included), as
//!     Python's `SqliteSaver`; reads return it with the metadata's JSON text.
//!   - **Memory**: the pair of the checkpoint without `channel_values` and one pair per
//!     channel of `new_versions` (the `empty` sentinel for a channel without a value), as
//!     `InMemorySaver.put` makes them; a read decodes only the checkpoint pair's
//!     `channel_versions`, to find its blobs (with a serializer Rust cannot read, Python
//!     asks for the blobs of the versions it decoded: `NativeSaver::blobs_raw`).
//!   - **Postgres**: msgpack of the checkpoint with its primitive values inline (a
//!     DeltaChannel snapshot as `true`) and the pair of each other value with a new version,
//!     as Python's `PostgresSaver.put` splits them; the saver applies its layout rules to
//!     the inline part (a long string, NaN or a string with NUL goes to a blob) and turns
//!     the pairs into blob rows. Reads return the JSON document, the blob pairs and the
//!     write pairs; Python merges the decoded blobs over the inline values, as Python's
//!     saver does. A checkpoint of format 3 or older is read through the Rust saver's
//!     decoding `get_tuple` (`NativeSaver::get_tuple`), which migrates its parent's sends.
//!
//!   Rust decodes only the small plain parts it needs: the config, the metadata (stored
//!   as the Python saver stores it: JSON for SQLite and Postgres, msgpack for memory),
//!   `new_versions`, and the Postgres inline part. So a turn of a long chat costs one
//!   Python encode and one Python decode of the state, as with Python's own savers.
//!
//! The other operations (`delete_thread`, `copy_thread`, `prune`, `delete_for_runs`,
//! `get_delta_channel_history`) run on the Rust saver as they are, on the same rows: rows
//! written from Python are rows of the saver's layout like any other. Those that read
//! channel values (`prune` on a thread with DeltaChannels, `get_delta_channel_history`)
//! decode them with the Rust saver's serializer, LangGraph's `JsonPlusSerializer`.
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
//! Python's serializer encodes is what the savers store and hand back, on all three.

mod bridge;
mod error;
mod raw;
mod saver;

pub use error::{to_py_err, ConflictError, StategraphError};
pub use raw::RawTuples;
pub use saver::NativeSaver;

use pyo3::prelude::*;

/// The native module `stategraph._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeSaver>()?;
    m.add_class::<raw::RawTuples>()?;
    m.add("StategraphError", m.py().get_type::<StategraphError>())?;
    m.add("ConflictError", m.py().get_type::<ConflictError>())?;
    Ok(())
}
