//! [`NativeSaver`]: one Rust saver behind the Python `BaseCheckpointSaver` subclasses.

use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use stategraph_checkpoint::{
    ChannelVersion, CheckpointMetadata, CheckpointSaver, Error, ListOptions, MemorySaver,
    PruneStrategy, Result, Value,
};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_checkpoint_sqlite::SqliteSaver;
use tokio::runtime::Runtime;

use crate::bridge;
use crate::error::to_py_err;

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

    /// The tuple addressed by the config, as msgpack (see [`bridge::tuple_value`]), or None.
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

    /// The tuples listed, newest first, as msgpack of a list of tuples. `config` is
    /// `(thread_id, checkpoint_ns, checkpoint_id)` or None; `filter` is msgpack of a map.
    #[pyo3(signature = (config, filter, before, limit))]
    fn list(
        &self,
        py: Python<'_>,
        config: Option<(String, Option<String>, Option<String>)>,
        filter: Option<Vec<u8>>,
        before: Option<(String, Option<String>, Option<String>)>,
        limit: Option<usize>,
    ) -> PyResult<Py<PyBytes>> {
        let encoded = self.run(py, |saver, rt| {
            let config = config.map(|(t, ns, id)| bridge::address(t, ns, id));
            let options = ListOptions {
                filter: filter
                    .map(|f| bridge::string_map(bridge::loads_plain(&f)?, "filter"))
                    .transpose()?,
                before: before.map(|(t, ns, id)| bridge::address(t, ns, id)),
                limit,
            };
            let tuples = rt.block_on(saver.list(config.as_ref(), &options))?;
            let list: Vec<Value> = tuples.iter().map(bridge::tuple_value).collect();
            bridge::dumps_plain(&Value::list(list))
        })?;
        Ok(bytes(py, encoded))
    }

    /// Stores a checkpoint; returns its `(thread_id, checkpoint_ns, checkpoint_id)`.
    /// `checkpoint` is the `(tag, bytes)` of the whole checkpoint dict, `metadata` and
    /// `new_versions` msgpack maps, `config` as [`bridge::config`] reads it.
    fn put(
        &self,
        py: Python<'_>,
        config: Vec<u8>,
        checkpoint: (String, Vec<u8>),
        metadata: Vec<u8>,
        new_versions: Vec<u8>,
    ) -> PyResult<(String, String, String)> {
        self.run(py, |saver, rt| {
            let config = bridge::config(&config)?;
            let checkpoint = stategraph_checkpoint::Checkpoint::from_value(bridge::loads(
                &checkpoint.0,
                &checkpoint.1,
            )?)?;
            let metadata = CheckpointMetadata::from_value(bridge::loads_plain(&metadata)?)?;
            let new_versions = bridge::versions(&new_versions)?;
            let stored = rt.block_on(saver.put(&config, &checkpoint, &metadata, &new_versions))?;
            Ok((
                stored.thread_id.clone(),
                stored.ns().to_owned(),
                stored.checkpoint_id.unwrap_or_default(),
            ))
        })
    }

    /// Stores one task's writes, each `(channel, tag, bytes)`.
    fn put_writes(
        &self,
        py: Python<'_>,
        config: Vec<u8>,
        writes: Vec<(String, String, Vec<u8>)>,
        task_id: String,
        task_path: String,
    ) -> PyResult<()> {
        self.run(py, |saver, rt| {
            let config = bridge::config(&config)?;
            let writes = writes
                .into_iter()
                .map(|(channel, tag, data)| Ok((channel, bridge::loads(&tag, &data)?)))
                .collect::<Result<Vec<_>>>()?;
            rt.block_on(saver.put_writes(&config, &writes, &task_id, &task_path))
        })
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
