//! SqliteSaver: LangGraph's SQLite tables, behind the [`CheckpointSaver`] trait.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::BoxStream;
use stategraph_checkpoint::config::{validate_config, validate_key, validate_thread_ids};
use stategraph_checkpoint::list_cursor::stream_pages;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::version_gen::VersionGenerator;
use stategraph_checkpoint::InFlightSaves;
use stategraph_checkpoint::{
    write_index, Capabilities, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointSaver, CheckpointTuple, Error, ListOptions, PruneStrategy,
    Result, SaveOp, Value,
};

use crate::cache::{DecodedCache, DEFAULT_READ_CACHE_BYTES};
use crate::error::{named, Scope};
use crate::op::{NewCheckpoint, NewWrite, Op, WriteTarget};
use crate::pool::{blocking, Pool};
use crate::read::PageSize;
use crate::{json, maintenance, read, write, Synchronous};

/// A checkpoint saver on a SQLite database laid out as LangGraph's `SqliteSaver`.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver};
/// use stategraph_checkpoint_sqlite::SqliteSaver;
///
/// let saver = SqliteSaver::in_memory()?;
/// assert!(saver.get_tuple(&CheckpointConfig::thread("t")).await?.is_none());
/// # Ok::<(), stategraph_checkpoint::Error>(())
/// # }).unwrap();
/// ```
pub struct SqliteSaver {
    pub(crate) pool: Arc<Pool>,
    pub(crate) serde: Arc<dyn Serializer>,
    versions: VersionGenerator,
    pub(crate) fencing: bool,
    list_page: PageSize,
    cache: Arc<DecodedCache>,
    /// Saves of cancelled runs not yet stored, which reads wait for (shared by clones).
    in_flight: InFlightSaves,
}

/// The tables of an operation that reads or writes both.
pub(crate) const TABLES: &str = "checkpoints, writes";

/// What a listing works on: its thread, or every thread.
fn list_scope(name: &'static str, config: Option<&CheckpointConfig>) -> Scope {
    match config {
        Some(config) => Scope::thread(name, TABLES, &config.thread_id),
        None => Scope::every_thread(name, TABLES),
    }
}

/// The most rows a page of [`CheckpointSaver::list_stream`] reads by default.
pub const DEFAULT_LIST_PAGE_ROWS: usize = 64;

/// The encoded checkpoint bytes after which a page of [`CheckpointSaver::list_stream`]
/// ends (1 MiB): a page holds few checkpoints when they are large.
pub const LIST_PAGE_BYTES: usize = 1 << 20;

impl SqliteSaver {
    /// Opens the database file at `path`, creating the file and the tables if needed and
    /// switching it to WAL mode. A file written by LangGraph's `SqliteSaver` opens as is.
    ///
    /// A file that cannot be opened or set up is an [`Error::Backend`] whose text names
    /// the path and SQLite's reason.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteSaver> {
        let path = path.as_ref();
        let pool = Pool::open(path.to_path_buf()).map_err(|e| match e {
            Error::Backend(cause) => {
                let shown = path.display().to_string();
                let cause = cause.to_string();
                // SQLite's text may end with the path; it is said once, up front.
                let cause = cause.strip_suffix(&format!(": {shown}")).unwrap_or(&cause);
                crate::error::backend_msg(format!(
                    "sqlite {shown}: opening the database failed: {cause}"
                ))
            }
            other => other,
        })?;
        Ok(SqliteSaver::with_pool(pool))
    }

    /// A private database in memory, gone when the saver is dropped. Reads and writes
    /// share its single connection.
    pub fn in_memory() -> Result<SqliteSaver> {
        Ok(SqliteSaver::with_pool(Pool::in_memory()?))
    }

    #[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
    pub(crate) fn with_pool(pool: Pool) -> SqliteSaver {
        SqliteSaver {
            pool: Arc::new(pool),
            serde: Arc::new(JsonPlusSerializer::default()),
            versions: VersionGenerator::default(),
            list_page: PageSize {
                rows: DEFAULT_LIST_PAGE_ROWS,
                bytes: LIST_PAGE_BYTES,
            },
            fencing: true,
            cache: Arc::new(DecodedCache::new(DEFAULT_READ_CACHE_BYTES)),
            in_flight: InFlightSaves::new(),
        }
    }

    /// Sets how many encoded checkpoint bytes the decoded-checkpoint cache holds (builder
    /// style; [`DEFAULT_READ_CACHE_BYTES`] unless set, 0 turns it off). `get_tuple` keeps
    /// the checkpoints it decodes there, so reading the same checkpoint again (the latest
    /// one of a thread, a checkpoint being inspected) skips decoding its state. A hit needs
    /// the row's bytes to equal the cached ones, so rows written by another process or
    /// replaced are read afresh.
    pub fn with_read_cache(mut self, max_bytes: usize) -> SqliteSaver {
        self.cache = Arc::new(DecodedCache::new(max_bytes));
        self
    }

    /// Turns the one-writer-per-thread fence (see the crate docs) on (the default) or off
    /// (builder style). Unfenced, the saver stores what LangGraph's `SqliteSaver` stores
    /// whatever the order of the calls, forks included.
    pub fn with_fencing(mut self, fencing: bool) -> SqliteSaver {
        self.fencing = fencing;
        self
    }

    /// Whether the fence is on.
    pub fn fencing(&self) -> bool {
        self.fencing
    }

    /// Sets how hard a commit presses its data to disk (builder style; [`Synchronous::Full`]
    /// unless set). Applies to this saver's writer connection, not to the file: another
    /// process keeps its own setting.
    pub fn with_synchronous(self, mode: Synchronous) -> Result<SqliteSaver> {
        self.pool.set_synchronous(mode)?;
        Ok(self)
    }

    /// The serialized row of a `put`.
    pub(crate) fn prepare_put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
    ) -> Result<Op> {
        validate_config(config).and(validate_key("checkpoint id", &checkpoint.id))?;
        let row = NewCheckpoint {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.ns().to_owned(),
            checkpoint_id: checkpoint.id.clone(),
            parent: config.checkpoint_id.clone(),
            checkpoint: self.serde.dumps_checkpoint(checkpoint, true)?,
            metadata: json::to_json(&metadata.for_put(config).to_value())?.into_bytes(),
        };
        Ok(Op::Put {
            config: config.clone(),
            row,
        })
    }

    /// The serialized rows of a `put_writes`.
    pub(crate) fn prepare_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<Op> {
        let target = WriteTarget::of(config, task_id, task_path)?;
        let rows = writes
            .iter()
            .enumerate()
            .map(|(i, (channel, value))| {
                Ok(NewWrite {
                    idx: write_index(channel, i),
                    channel: channel.clone(),
                    value: self.serde.dumps_typed(value)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Op::Writes {
            config: config.clone(),
            target,
            rows,
        })
    }

    /// Runs serialized ops in one write transaction (see [`write::apply`]); a failure
    /// names `scope`.
    pub(crate) async fn run(&self, ops: Vec<Op>, scope: impl FnOnce() -> Scope) -> Result<()> {
        let (serde, fencing) = (Arc::clone(&self.serde), self.fencing);
        let refused = self
            .on_pool(scope, move |pool| {
                pool.write(|tx| write::apply(tx, &ops, fencing, serde.as_ref()))
            })
            .await?;
        refused.map_or(Ok(()), Err)
    }

    /// Runs `f` off the async threads ([`blocking`]); a backend failure becomes a
    /// [`crate::SqliteError`] naming the file and `scope`.
    async fn on_pool<T, F>(&self, scope: impl FnOnce() -> Scope, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Pool) -> Result<T> + Send + 'static,
    {
        blocking(&self.pool, f)
            .await
            .map_err(|e| self.name_error(e, scope()))
    }

    /// Names a backend failure with the file and `scope` ([`crate::SqliteError`]).
    pub(crate) fn name_error(&self, e: Error, scope: Scope) -> Error {
        named(e, self.pool.database(), scope)
    }

    /// The most rows each page of [`CheckpointSaver::list_stream`] reads (at least 1;
    /// default [`DEFAULT_LIST_PAGE_ROWS`]); a page also ends once its checkpoints reach
    /// [`LIST_PAGE_BYTES`] (builder style).
    pub fn with_list_page(mut self, rows: usize) -> SqliteSaver {
        self.list_page.rows = rows.max(1);
        self
    }

    /// Uses another serializer for checkpoints and writes, e.g. an `EncryptedSerializer`
    /// (builder style). Metadata stays plain JSON, as in LangGraph.
    pub fn with_serializer(mut self, serde: Arc<dyn Serializer>) -> SqliteSaver {
        self.serde = serde;
        // Entries were decoded by the previous serializer.
        self.cache.clear();
        self
    }

    /// Uses another version generator, e.g. a seeded one (builder style).
    pub fn with_versions(mut self, versions: VersionGenerator) -> SqliteSaver {
        self.versions = versions;
        self
    }

    /// Both tables' rows for one thread, values decoded, for a person to read (what the
    /// quickstart prints).
    pub async fn dump(&self, thread_id: &str) -> Result<String> {
        let serde = self.serde.clone();
        let thread = thread_id.to_owned();
        let scope = || Scope::thread("dump", TABLES, thread_id);
        self.on_pool(scope, move |pool| {
            pool.read(|conn| crate::dump::dump(conn, serde.as_ref(), &thread))
        })
        .await
    }

    /// The serializer values are stored with.
    pub fn serializer(&self) -> &Arc<dyn Serializer> {
        &self.serde
    }
}

impl fmt::Debug for SqliteSaver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteSaver")
            .field("pool", &self.pool)
            .field("serde", &self.serde)
            .field("versions", &self.versions)
            .field("fencing", &self.fencing)
            .field("cache", &self.cache)
            .finish()
    }
}

#[async_trait]
impl CheckpointSaver for SqliteSaver {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        validate_config(config)?;
        self.in_flight.settled(Some(&config.thread_id)).await;
        let serde = Arc::clone(&self.serde);
        let cache = Arc::clone(&self.cache);
        let scope = || Scope::thread("get_tuple", TABLES, &config.thread_id);
        let (serde, config) = (serde, config.clone());
        self.on_pool(scope, move |pool| {
            pool.read_stamped(|conn, stamp| {
                read::get_tuple(conn, serde.as_ref(), &cache, &config, stamp)
            })
        })
        .await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        config.map_or(Ok(()), validate_config)?;
        let thread = config.map(|c| c.thread_id.as_str());
        self.in_flight.settled(thread).await;
        let (serde, cache) = (Arc::clone(&self.serde), Arc::clone(&self.cache));
        let scope = || list_scope("list", config);
        let (config, options) = (config.cloned(), options.clone());
        self.on_pool(scope, move |pool| {
            pool.read(|conn| read::list(conn, serde.as_ref(), &cache, config.as_ref(), &options))
        })
        .await
    }

    /// Keyset pages: each page is one query in its own read transaction on a reader
    /// connection (never the write lock), resuming after the last row of the previous page
    /// by `(checkpoint_id, thread_id, checkpoint_ns)`. A page of one thread and namespace
    /// is a range scan of the primary key, so every page costs the same however long the
    /// thread is. A page ends after [`SqliteSaver::with_list_page`] rows or once its
    /// checkpoints reach [`LIST_PAGE_BYTES`].
    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> BoxStream<'_, Result<CheckpointTuple>> {
        let size = self.list_page;
        let scope = list_scope("list_stream", config.as_ref());
        let thread = config.as_ref().map(|c| c.thread_id.clone());
        stream_pages(config, options, move |mut cursor| {
            let (serde, cache) = (Arc::clone(&self.serde), Arc::clone(&self.cache));
            let (scope, thread) = (scope.clone(), thread.clone());
            async move {
                // Every page, not only the first: cheap (one atomic load when nothing waits).
                self.in_flight.settled(thread.as_deref()).await;
                self.on_pool(
                    || scope,
                    move |pool| {
                        let page = pool.read(|conn| {
                            read::list_page(conn, serde.as_ref(), &cache, &mut cursor, size)
                        })?;
                        Ok((page, cursor))
                    },
                )
                .await
            }
        })
    }

    /// Stores the whole checkpoint (`channel_values` inline, as LangGraph's SQLite saver
    /// does; `new_versions` is not needed), its metadata as JSON text (through
    /// [`CheckpointMetadata::for_put`]) and the parent id `config.checkpoint_id`, in one
    /// transaction. A config without a namespace stores at the root.
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        _new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let op = self.prepare_put(config, checkpoint, metadata)?;
        let scope = || Scope::thread("put", "checkpoints", &config.thread_id);
        self.run(vec![op], scope).await?;
        Ok(CheckpointConfig::for_checkpoint(
            config.thread_id.as_str(),
            config.ns(),
            checkpoint.id.as_str(),
        ))
    }

    /// Stores the writes of one task on `config.checkpoint_id` (which must be set), in one
    /// transaction, by the rule of the trait: each write gets the index [`write_index`]
    /// gives; at a reserved (negative) index it replaces a stored write, at a normal index
    /// it is ignored if one is stored.
    ///
    /// LangGraph's `SqliteSaver` picks one rule per batch instead (replace only when every
    /// write of the batch is reserved), so in a batch mixing both kinds a repeated reserved
    /// write is ignored there and replaces here. Batches of one kind behave the same.
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        let op = self.prepare_writes(config, writes, task_id, task_path)?;
        let scope = || Scope::thread("put_writes", "writes", &config.thread_id);
        self.run(vec![op], scope).await
    }

    /// Group commit: the ops in one `BEGIN IMMEDIATE` transaction (split past 16 MiB of
    /// serialized ops), each fenced as its own call would be; a refused op leaves the ops
    /// before it stored, as one call per op does (`batch/mod.rs`).
    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        self.group_commit(ops).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        validate_key("thread id", thread_id)?;
        self.in_flight.settled(Some(thread_id)).await;
        self.cache.forget_threads(&[thread_id.to_owned()]);
        let scope = || Scope::thread("delete_thread", TABLES, thread_id);
        let thread = thread_id.to_owned();
        self.on_pool(scope, move |pool| {
            pool.write(|tx| maintenance::delete_thread(tx, &thread))
        })
        .await
    }

    /// Reads the parent chain and the channels' writes in one statement (a recursive CTE
    /// stepped only until every channel found its seed).
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<indexmap::IndexMap<String, stategraph_checkpoint::DeltaChannelHistory>> {
        validate_config(config)?;
        self.in_flight.settled(Some(&config.thread_id)).await;
        let scope = || Scope::thread("get_delta_channel_history", TABLES, &config.thread_id);
        let (serde, target, channels) =
            (Arc::clone(&self.serde), config.clone(), channels.to_vec());
        let cache = Arc::clone(&self.cache);
        self.on_pool(scope, move |pool| {
            pool.read(|conn| {
                crate::delta::history(conn, serde.as_ref(), &cache, &target, &channels)
            })
        })
        .await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.versions.next(current)
    }

    fn in_flight_saves(&self) -> Option<&InFlightSaves> {
        Some(&self.in_flight)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            fence: self.fencing,
            ..Capabilities::ALL
        }
    }

    /// Deletes the checkpoints whose metadata `run_id` (a string) is listed, with their
    /// writes; a remaining checkpoint whose parent was deleted gets no parent.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        // Which threads lose checkpoints is not known here; entries only free memory.
        self.cache.clear();
        let scope = || {
            Scope::many(
                "delete_for_runs",
                TABLES,
                "runs",
                run_ids.iter().map(String::as_str),
            )
        };
        let runs = run_ids.to_vec();
        self.on_pool(scope, move |pool| {
            pool.write(|tx| maintenance::delete_for_runs(tx, &runs))
        })
        .await
    }

    /// Copies the checkpoints and writes of every namespace of `source` to `target`,
    /// keeping ids. An unknown source copies nothing.
    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        validate_thread_ids([source, target])?;
        self.in_flight.settled(Some(source)).await;
        self.in_flight.settled(Some(target)).await;
        let scope = || Scope::many("copy_thread", TABLES, "threads", [source, target]);
        let (source, target) = (source.to_owned(), target.to_owned());
        self.on_pool(scope, move |pool| {
            pool.write(|tx| maintenance::copy_thread(tx, &source, &target))
        })
        .await
    }

    /// `KeepLatest` keeps, per namespace of each listed thread, the newest checkpoint with
    /// its writes (with, on a thread with DeltaChannels, the ancestors they are rebuilt
    /// from) and removes every other checkpoint and write (the kept checkpoint's
    /// parent link is cleared when its parent was removed); `Delete` removes the threads.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        validate_thread_ids(thread_ids.iter().map(String::as_str))?;
        for thread in thread_ids {
            self.in_flight.settled(Some(thread)).await;
        }
        self.cache.forget_threads(thread_ids);
        let scope = || {
            Scope::many(
                "prune",
                TABLES,
                "threads",
                thread_ids.iter().map(String::as_str),
            )
        };
        let (serde, threads) = (Arc::clone(&self.serde), thread_ids.to_vec());
        self.on_pool(scope, move |pool| {
            pool.write(|tx| maintenance::prune(tx, serde.as_ref(), &threads, strategy))
        })
        .await
    }
}
