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
//! * **Python** keeps LangGraph's serializer (`self.serde`, a `JsonPlusSerializer`): a
//!   checkpoint (with its channel values) and every pending write are encoded by
//!   `self.serde.dumps_typed`, so Python objects (messages, dataclasses, pydantic models,
//!   datetimes, ...) become exactly the msgpack Python would store, and are rebuilt by
//!   `self.serde.loads_typed` on the way back. It also applies the parts of the protocol
//!   that are Python objects: configs (`RunnableConfig` dicts), `CheckpointTuple`s, the
//!   async methods (run in the default executor), `get_next_version`.
//! * **The boundary** carries bytes only: `(type tag, bytes)` pairs from `dumps_typed`, and
//!   msgpack for plain data (metadata, filters, the tuples read back). One crossing per call;
//!   no Python object is converted field by field.
//! * **Rust** decodes those bytes into [`stategraph_checkpoint::Value`], the lossless
//!   model of what `JsonPlusSerializer` writes (extension objects stay inert data, never
//!   rebuilt), and hands them to the saver, which re-encodes them byte for byte as Python
//!   does, builds the rows, runs the queries and, when enabled, the one-writer fence. The
//!   GIL is released for the whole operation (decode, I/O, encode), so other Python threads
//!   run meanwhile. Decoding, rather than storing the caller's bytes as they are, lets every
//!   saver feature work unchanged on Python's data: Postgres inlines primitive channel
//!   values and stores the others as blobs, the fence compares task writes, `prune` and
//!   `get_delta_channel_history` read channel values. A value our decoder cannot represent
//!   (a msgpack extension code outside LangGraph's 0 to 7, or a serializer whose tags are
//!   not `msgpack`/`bytes`/`null`, such as an encrypting one) is refused with an error,
//!   never stored altered.
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
//! that start one thread twice (see `tests/test_conformance.py`).
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
//! `maturin develop` into a venv under `target/`.

mod bridge;
mod error;
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
