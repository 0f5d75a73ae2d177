//! The raw path: stored `(tag, bytes)` pairs handed to Python as they are.
//!
//! The savers store the pairs Python's serializer made and read them back
//! as stored ([`stategraph_checkpoint::raw`]); this module turns what they read into Python
//! objects (tuples, lists, `bytes`), which `python/stategraph/_saver.py` decodes with
//! `self.serde`, as Python's own savers do.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use stategraph_checkpoint::raw::{RawMetadata, RawState, RawTuple};
use stategraph_checkpoint::serde::Typed;

/// A `(tag, bytes)` pair as the Python tuple `(str, bytes)`.
fn pair<'py>(py: Python<'py>, typed: &Typed) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            typed.tag.as_ref().into_pyobject(py)?.into_any(),
            PyBytes::new(py, &typed.bytes).into_any(),
        ],
    )
}

/// `(channel, pair)`s as the Python list `[(channel, tag, bytes)]`.
pub(crate) fn values_to_py<'py>(
    py: Python<'py>,
    values: &[(String, Typed)],
) -> PyResult<Bound<'py, PyList>> {
    let items = values
        .iter()
        .map(|(channel, v)| {
            PyTuple::new(
                py,
                [
                    channel.as_str().into_pyobject(py)?.into_any(),
                    v.tag.as_ref().into_pyobject(py)?.into_any(),
                    PyBytes::new(py, &v.bytes).into_any(),
                ],
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// A tuple read as stored, as the Python tuple
/// `(thread_id, checkpoint_ns, checkpoint_id, parent_id | None, (tag, bytes),
/// [(channel, tag, bytes)] | None, metadata, [(task_id, channel, tag, bytes)])`.
///
/// The second item is the pair of the whole checkpoint (SQLite; the list is `None`), the
/// pair of the checkpoint without `channel_values` and the list its values (memory; `None`
/// when the saver could not read the checkpoint's versions: Python then asks with
/// `NativeSaver::blobs_raw`), or the checkpoint's JSON text (`str`) and the list its
/// blobs (Postgres).
/// `metadata` is JSON text (`bytes`), `None` for a NULL column, or a `(tag, bytes)` pair.
pub(crate) fn tuple_to_py<'py>(py: Python<'py>, t: &RawTuple) -> PyResult<Bound<'py, PyTuple>> {
    let (checkpoint, values) = match &t.state {
        RawState::Whole(typed) => (pair(py, typed)?.into_any(), py.None().into_bound(py)),
        RawState::Split { checkpoint, values } => {
            let values = match values {
                Some(values) => values_to_py(py, values)?.into_any(),
                None => py.None().into_bound(py),
            };
            (pair(py, checkpoint)?.into_any(), values)
        }
        RawState::Json { checkpoint, values } => (
            checkpoint.as_str().into_pyobject(py)?.into_any(),
            values_to_py(py, values)?.into_any(),
        ),
    };
    let metadata = match &t.metadata {
        RawMetadata::Json(Some(text)) => PyBytes::new(py, text).into_any(),
        RawMetadata::Json(None) => py.None().into_bound(py),
        RawMetadata::Typed(typed) => pair(py, typed)?.into_any(),
    };
    let writes = t
        .pending_writes
        .iter()
        .map(|w| {
            PyTuple::new(
                py,
                [
                    w.task_id.as_str().into_pyobject(py)?.into_any(),
                    w.channel.as_str().into_pyobject(py)?.into_any(),
                    w.value.tag.as_ref().into_pyobject(py)?.into_any(),
                    PyBytes::new(py, &w.value.bytes).into_any(),
                ],
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    let parent = match &t.parent_checkpoint_id {
        Some(p) => p.as_str().into_pyobject(py)?.into_any(),
        None => py.None().into_bound(py),
    };
    PyTuple::new(
        py,
        [
            t.thread_id.as_str().into_pyobject(py)?.into_any(),
            t.checkpoint_ns.as_str().into_pyobject(py)?.into_any(),
            t.checkpoint_id.as_str().into_pyobject(py)?.into_any(),
            parent,
            checkpoint,
            values,
            metadata,
            writes.into_pyobject(py)?.into_any(),
        ],
    )
}

/// `(channel, tag, bytes)` triples, as Python sends values and writes.
pub(crate) type Triples = Vec<(String, String, Vec<u8>)>;

/// The new channel versions of a memory put (a msgpack map) and the values of those of its
/// channels that have one.
pub(crate) type Blobs = (Vec<u8>, Triples);

/// `(channel, tag, bytes)` triples from Python as `(channel, pair)`.
pub(crate) fn typed_values(values: Triples) -> Vec<(String, Typed)> {
    values
        .into_iter()
        .map(|(channel, tag, bytes)| (channel, Typed::new(tag, bytes)))
        .collect()
}

/// The tuples of a listing, handed to Python one at a time (`stategraph._native.RawTuples`,
/// an iterator): each is made into Python objects when asked for and its Rust bytes freed
/// then, so a long history is not held twice (as Rust bytes and as Python `bytes`) at once.
#[pyclass(module = "stategraph._native")]
pub struct RawTuples {
    rows: std::vec::IntoIter<RawTuple>,
}

impl RawTuples {
    /// An iterator over `rows`, in order.
    pub(crate) fn new(rows: Vec<RawTuple>) -> RawTuples {
        RawTuples {
            rows: rows.into_iter(),
        }
    }
}

#[pymethods]
impl RawTuples {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        mut slf: PyRefMut<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match slf.rows.next() {
            Some(row) => tuple_to_py(py, &row).map(Some),
            None => Ok(None),
        }
    }
}
