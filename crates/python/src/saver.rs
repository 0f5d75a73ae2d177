//! [`NativeSaver`]: one Rust saver behind the Python `BaseCheckpointSaver` subclasses.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use stategraph_checkpoint::serde::Typed;
use stategraph_checkpoint::{
    ChannelVersion, CheckpointMetadata, CheckpointSaver, Error, ListOptions, MemorySaver,
    PruneStrategy, Result,
};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_checkpoint_sqlite::SqliteSaver;
use tokio::runtime::Runtime;

use crate::bridge;
use crate::error::to_py_err;
use crate::raw;

/// The runtime every saver of the process runs on (Postgres needs one; SQLite uses its
/// blocking pool). Built on first use.
fn runtime() -> Result<&'static Runtime> {
    static RUNTIME: OnceLock<std::result::Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("stategraph-saver")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::Backend(format!("cannot start the tokio runtime: {e}").into()))
}

/// The saver a [`NativeSaver`] holds.
enum Backend {
    Memory(MemorySaver),
    Sqlite(SqliteSaver),
    Postgres(PostgresSaver),
}

/// A Rust saver, driven from Python (`stategraph._native.NativeSaver`).
///
/// Every method takes and returns bytes (`(type tag, bytes)` pairs and msgpack, see the
/// crate docs) and runs with the GIL released.
#[pyclass(module = "stategraph._native", frozen)]
pub struct NativeSaver {
    backend: Arc<Backend>,
}

impl NativeSaver {
    fn saver(&self) -> &dyn CheckpointSaver {
        match self.backend.as_ref() {
            Backend::Memory(s) => s,
            Backend::Sqlite(s) => s,
            Backend::Postgres(s) => s,
        }
    }

    /// Runs `f` on the runtime with the GIL released, mapping its error to Python.
    fn run<T, F>(&self, py: Python<'_>, f: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&dyn CheckpointSaver, &Runtime) -> Result<T> + Send,
    {
        py.detach(|| {
            let rt = runtime()?;
            let _guard = rt.enter();
            f(self.saver(), rt)
        })
        .map_err(to_py_err)
    }
}

fn bytes(py: Python<'_>, data: Vec<u8>) -> Py<PyBytes> {
    PyBytes::new(py, &data).unbind()
}

/// `blobs_raw` asked of a saver that is not the memory saver.
fn no_raw() -> Error {
    Error::Unsupported("blobs_raw (only the memory saver stores blobs by version apart)")
}

fn strategy(name: &str) -> Result<PruneStrategy> {
    match name {
        "keep_latest" => Ok(PruneStrategy::KeepLatest),
        "delete" => Ok(PruneStrategy::Delete),
        other => Err(Error::InvalidConfig(format!(
            "unknown prune strategy {other:?} (expected \"keep_latest\" or \"delete\")"
        ))),
    }
}

#[pymethods]
impl NativeSaver {
    /// An in-memory saver (`MemorySaver`).
    #[staticmethod]
    #[pyo3(signature = (fencing = false))]
    fn memory(fencing: bool) -> NativeSaver {
        NativeSaver {
            backend: Arc::new(Backend::Memory(MemorySaver::new().with_fencing(fencing))),
        }
    }

    /// A SQLite saver on the file `path` (created with its tables if missing; `":memory:"`
    /// for a private in-memory database).
    #[staticmethod]
    #[pyo3(signature = (path, fencing = false))]
    fn sqlite(py: Python<'_>, path: String, fencing: bool) -> PyResult<NativeSaver> {
        let saver = py
            .detach(|| {
                if path == ":memory:" {
                    SqliteSaver::in_memory()
                } else {
                    SqliteSaver::open(&path)
                }
            })
            .map_err(to_py_err)?
            .with_fencing(fencing);
        Ok(NativeSaver {
            backend: Arc::new(Backend::Sqlite(saver)),
        })
    }

    /// A Postgres saver connected to `url` (run `setup` once per database).
    #[staticmethod]
    #[pyo3(signature = (url, fencing = false))]
    fn postgres(py: Python<'_>, url: String, fencing: bool) -> PyResult<NativeSaver> {
        let saver = py
            .detach(|| runtime()?.block_on(PostgresSaver::connect(&url)))
            .map_err(to_py_err)?
            .with_fencing(fencing);
        Ok(NativeSaver {
            backend: Arc::new(Backend::Postgres(saver)),
        })
    }

    /// Creates or migrates the tables (Postgres; the other savers do it when opened).
    fn setup(&self, py: Python<'_>) -> PyResult<()> {
        let backend = Arc::clone(&self.backend);
        self.run(py, move |_, rt| match backend.as_ref() {
            Backend::Postgres(s) => rt.block_on(s.setup()),
            Backend::Memory(_) | Backend::Sqlite(_) => Ok(()),
        })
    }

    /// The tuple addressed by the config, decoded by the Rust saver and sent as msgpack (see
    /// [`bridge::tuple_value`]), or None: Python reads a Postgres checkpoint of format 3 or
    /// older this way, which migrates its parent's sends in.
    #[pyo3(signature = (thread_id, checkpoint_ns, checkpoint_id))]
    fn get_tuple(
        &self,
        py: Python<'_>,
        thread_id: String,
        checkpoint_ns: Option<String>,
        checkpoint_id: Option<String>,
    ) -> PyResult<Option<Py<PyBytes>>> {
        let config = bridge::address(thread_id, checkpoint_ns, checkpoint_id);
        let encoded = self.run(py, |saver, rt| {
            rt.block_on(saver.get_tuple(&config))?
                .map(|t| bridge::dumps_plain(&bridge::tuple_value(&t)))
                .transpose()
        })?;
        Ok(encoded.map(|b| bytes(py, b)))
    }

    /// Stores one task's writes, each `(channel, tag, bytes)`, as given.
    fn put_writes(
        &self,
        py: Python<'_>,
        config: Vec<u8>,
        writes: Vec<(String, String, Vec<u8>)>,
        task_id: String,
        task_path: String,
    ) -> PyResult<()> {
        let backend = Arc::clone(&self.backend);
        py.detach(move || {
            let config = bridge::config(&config)?;
            let writes = raw::typed_values(writes);
            match backend.as_ref() {
                Backend::Memory(s) => s.put_writes_raw(&config, writes, &task_id, &task_path),
                Backend::Sqlite(s) => s.put_writes_raw(&config, writes, &task_id, &task_path),
                Backend::Postgres(s) => {
                    runtime()?.block_on(s.put_writes_raw(&config, writes, &task_id, &task_path))
                }
            }
        })
        .map_err(to_py_err)
    }

    /// Stores a checkpoint from its encoded parts, as stored (see the crate docs); returns
    /// its `(thread_id, checkpoint_ns, checkpoint_id)`. `checkpoint` is the `(tag, bytes)`
    /// of the whole checkpoint (SQLite), of the checkpoint without `channel_values`
    /// (memory), or msgpack of the checkpoint with only its inline values (Postgres); for
    /// memory and Postgres `blobs` is `(new_versions, values)`: `new_versions` a msgpack
    /// map, `values` the `(channel, tag, bytes)` of the blob values of its channels.
    #[pyo3(signature = (config, checkpoint_id, checkpoint, metadata, blobs = None))]
    fn put_raw(
        &self,
        py: Python<'_>,
        config: Vec<u8>,
        checkpoint_id: String,
        checkpoint: (String, Vec<u8>),
        metadata: Vec<u8>,
        blobs: Option<raw::Blobs>,
    ) -> PyResult<(String, String, String)> {
        let backend = Arc::clone(&self.backend);
        py.detach(move || {
            let config = bridge::config(&config)?;
            let checkpoint = Typed::new(checkpoint.0, checkpoint.1);
            let metadata = CheckpointMetadata::from_value(bridge::loads_plain(&metadata)?)?;
            let stored = match backend.as_ref() {
                Backend::Sqlite(s) => s.put_raw(&config, &checkpoint_id, checkpoint, &metadata)?,
                Backend::Memory(s) => {
                    let (new_versions, values) = match blobs {
                        Some((versions, values)) => {
                            (bridge::versions(&versions)?, raw::typed_values(values))
                        }
                        None => Default::default(),
                    };
                    s.put_raw(
                        &config,
                        &checkpoint_id,
                        checkpoint,
                        &metadata,
                        &new_versions,
                        values,
                    )?
                }
                Backend::Postgres(s) => {
                    let plain = stategraph_checkpoint::Checkpoint::from_value(bridge::loads(
                        &checkpoint.tag,
                        &checkpoint.bytes,
                    )?)?;
                    let (new_versions, values) = match blobs {
                        Some((versions, values)) => {
                            (bridge::versions(&versions)?, raw::typed_values(values))
                        }
                        None => Default::default(),
                    };
                    runtime()?.block_on(s.put_raw(
                        &config,
                        &plain,
                        &metadata,
                        &new_versions,
                        values,
                    ))?
                }
            };
            Ok((
                stored.thread_id.clone(),
                stored.ns().to_owned(),
                stored.checkpoint_id.unwrap_or_default(),
            ))
        })
        .map_err(to_py_err)
    }

    /// The tuple addressed, as stored (see [`raw::tuple_to_py`]), or None.
    #[pyo3(signature = (thread_id, checkpoint_ns, checkpoint_id))]
    fn get_tuple_raw<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        checkpoint_ns: Option<String>,
        checkpoint_id: Option<String>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let config = bridge::address(thread_id, checkpoint_ns, checkpoint_id);
        let backend = Arc::clone(&self.backend);
        let found = py
            .detach(move || match backend.as_ref() {
                Backend::Sqlite(s) => s.get_tuple_raw(&config),
                Backend::Memory(s) => s.get_tuple_raw(&config),
                Backend::Postgres(s) => runtime()?.block_on(s.get_tuple_raw(&config)),
            })
            .map_err(to_py_err)?;
        found.map(|t| raw::tuple_to_py(py, &t)).transpose()
    }

    /// The values a memory saver stores for `versions` (a msgpack map of channel to
    /// version) in `(thread_id, checkpoint_ns)`, as `[(channel, tag, bytes)]`: the second
    /// step of a raw read whose checkpoint Rust could not read (see [`raw::tuple_to_py`]).
    fn blobs_raw<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        checkpoint_ns: String,
        versions: Vec<u8>,
    ) -> PyResult<Bound<'py, PyList>> {
        let backend = Arc::clone(&self.backend);
        let values = py
            .detach(move || match backend.as_ref() {
                Backend::Memory(s) => {
                    Ok(s.blobs_raw(&thread_id, &checkpoint_ns, &bridge::versions(&versions)?))
                }
                Backend::Sqlite(_) | Backend::Postgres(_) => Err(no_raw()),
            })
            .map_err(to_py_err)?;
        raw::values_to_py(py, &values)
    }

    /// The tuples listed, newest first, as stored: an iterator of the tuples of
    /// [`raw::tuple_to_py`], each made when Python asks for it (see [`raw::RawTuples`]).
    /// `config` and `before` are `(thread_id, checkpoint_ns, checkpoint_id)` or None;
    /// `filter` is msgpack of a map.
    #[pyo3(signature = (config, filter, before, limit))]
    fn list_raw(
        &self,
        py: Python<'_>,
        config: Option<(String, Option<String>, Option<String>)>,
        filter: Option<Vec<u8>>,
        before: Option<(String, Option<String>, Option<String>)>,
        limit: Option<usize>,
    ) -> PyResult<raw::RawTuples> {
        let backend = Arc::clone(&self.backend);
        let tuples = py
            .detach(move || {
                let config = config.map(|(t, ns, id)| bridge::address(t, ns, id));
                let options = ListOptions {
                    filter: filter
                        .map(|f| bridge::string_map(bridge::loads_plain(&f)?, "filter"))
                        .transpose()?,
                    before: before.map(|(t, ns, id)| bridge::address(t, ns, id)),
                    limit,
                };
                match backend.as_ref() {
                    Backend::Sqlite(s) => s.list_raw(config.as_ref(), &options),
                    Backend::Memory(s) => s.list_raw(config.as_ref(), &options),
                    Backend::Postgres(s) => {
                        runtime()?.block_on(s.list_raw(config.as_ref(), &options))
                    }
                }
            })
            .map_err(to_py_err)?;
        Ok(raw::RawTuples::new(tuples))
    }

    /// Removes every checkpoint and write of a thread.
    fn delete_thread(&self, py: Python<'_>, thread_id: String) -> PyResult<()> {
        self.run(py, |saver, rt| rt.block_on(saver.delete_thread(&thread_id)))
    }

    /// Removes the checkpoints (and writes) whose metadata `run_id` is listed.
    fn delete_for_runs(&self, py: Python<'_>, run_ids: Vec<String>) -> PyResult<()> {
        self.run(py, |saver, rt| rt.block_on(saver.delete_for_runs(&run_ids)))
    }

    /// Copies a thread, ids and writes included.
    fn copy_thread(&self, py: Python<'_>, source: String, target: String) -> PyResult<()> {
        self.run(py, |saver, rt| {
            rt.block_on(saver.copy_thread(&source, &target))
        })
    }

    /// Thins threads: `"keep_latest"` or `"delete"`.
    fn prune(&self, py: Python<'_>, thread_ids: Vec<String>, strategy: String) -> PyResult<()> {
        self.run(py, |saver, rt| {
            let strategy = self::strategy(&strategy)?;
            rt.block_on(saver.prune(&thread_ids, strategy))
        })
    }

    /// The DeltaChannel histories at a checkpoint, as msgpack (see
    /// [`bridge::histories_value`]).
    fn get_delta_channel_history(
        &self,
        py: Python<'_>,
        thread_id: String,
        checkpoint_ns: Option<String>,
        checkpoint_id: Option<String>,
        channels: Vec<String>,
    ) -> PyResult<Py<PyBytes>> {
        let config = bridge::address(thread_id, checkpoint_ns, checkpoint_id);
        let encoded = self.run(py, |saver, rt| {
            let histories: IndexMap<_, _> =
                rt.block_on(saver.get_delta_channel_history(&config, &channels))?;
            bridge::dumps_plain(&bridge::histories_value(&histories))
        })?;
        Ok(bytes(py, encoded))
    }

    /// The version after `current` (None, an int or a version string), as the Rust saver
    /// mints it (LangGraph's `"{int:032}.{random:016}"` strings).
    #[pyo3(signature = (current))]
    fn get_next_version(
        &self,
        py: Python<'_>,
        current: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let current = match current {
            None => None,
            Some(c) => Some(match c.extract::<i64>() {
                Ok(n) => ChannelVersion::Int(n),
                Err(_) => ChannelVersion::Str(c.extract::<String>()?),
            }),
        };
        Ok(match self.saver().get_next_version(current.as_ref()) {
            ChannelVersion::Int(n) => n.into_pyobject(py)?.into_any().unbind(),
            ChannelVersion::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        })
    }
}
