//! [`PostgresSaver`]: the saver type, its builder options, and the trait implementation.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use deadpool_postgres::Pool;
use futures::stream::BoxStream;
use stategraph_checkpoint::config::{validate_config, validate_key, validate_thread_ids};
use stategraph_checkpoint::list_cursor::stream_pages;
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::version_gen::VersionGenerator;
use stategraph_checkpoint::InFlightSaves;
use stategraph_checkpoint::{
    Capabilities, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointSaver, CheckpointTuple, ListOptions, PruneStrategy, Result,
    Value,
};

use crate::cache::{BlobCache, BlobCacheStats, DEFAULT_BLOB_CACHE_BYTES};
use crate::options::PostgresOptions;
use crate::pool::SessionSetup;
use crate::pool::{build, Built, Connections};
use crate::read::Reader;
use crate::{maintenance, schema, write};

/// The most rows a page of [`CheckpointSaver::list_stream`] reads by default.
pub const DEFAULT_LIST_PAGE_ROWS: usize = 16;

/// A checkpoint saver on Postgres, with LangGraph's `PostgresSaver` tables and rows.
///
/// ```no_run
/// # async fn demo() -> stategraph_checkpoint::Result<()> {
/// use stategraph_checkpoint_postgres::PostgresSaver;
/// let saver = PostgresSaver::connect("postgresql://postgres@127.0.0.1/postgres").await?;
/// saver.setup().await?;
/// # Ok(()) }
/// ```
///
/// Puts and task writes are fenced by default (see [`crate::fence`]): a put whose parent
/// is no longer the head of its thread, or a task write that contradicts what another run
/// stored, fails with [`Error::Conflict`](stategraph_checkpoint::Error::Conflict). [`PostgresSaver::with_fencing`] turns that off.
/// Every wait is bounded (see [`crate::options`]).
pub struct PostgresSaver {
    pub(crate) conn: Connections,
    pub(crate) serde: Arc<dyn Serializer>,
    /// Long lists recently decoded from blobs: a read whose message list starts as a
    /// remembered one decodes only the new elements ("Decode once", docs/design.md).
    memo: Arc<DecodeMemo>,
    /// Decoded blobs by thread, sent back unmoved when unchanged ([`crate::cache`]).
    cache: Arc<BlobCache>,
    versions: VersionGenerator,
    pub(crate) fencing: bool,
    list_page: usize,
    /// Saves of cancelled runs not yet stored, which reads wait for.
    in_flight: InFlightSaves,
}

impl PostgresSaver {
    /// Connects to `url` (a libpq URL or key=value string, without TLS) with the default
    /// [`PostgresOptions`]: a pool of at most [`crate::DEFAULT_POOL_SIZE`] connections and
    /// the default timeouts. Checks that one connection opens. Does not create the tables:
    /// call [`PostgresSaver::setup`] once, as with Python.
    pub async fn connect(url: &str) -> Result<PostgresSaver> {
        PostgresSaver::connect_with(url, &PostgresOptions::default()).await
    }

    /// Connects to `url` as [`PostgresSaver::connect`] does, with `options`. A
    /// `connect_timeout` or `keepalives*` parameter of the URL wins over the options.
    pub async fn connect_with(url: &str, options: &PostgresOptions) -> Result<PostgresSaver> {
        let Built {
            pool,
            connect_timeout,
            address,
        } = build(url, options)?;
        let options = PostgresOptions {
            connect_timeout,
            ..options.clone()
        };
        let saver = PostgresSaver::from_pool_with(pool, &options).at(address);
        drop(saver.conn.get("connect").await?);
        Ok(saver)
    }

    /// A saver over an existing pool (for TLS, hooks or other pool settings), with the
    /// default timeouts for its calls.
    pub fn from_pool(pool: Pool) -> PostgresSaver {
        PostgresSaver::from_pool_with(pool, &PostgresOptions::default())
    }

    /// A saver over an existing pool whose calls use the timeouts of `options` (the pool
    /// keeps its own size and timeouts; `connect_timeout` plus `pool_wait_timeout` bounds
    /// the wait for a connection in any case).
    #[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
    pub fn from_pool_with(pool: Pool, options: &PostgresOptions) -> PostgresSaver {
        PostgresSaver {
            conn: Connections {
                pool,
                address: None,
                connect_timeout: options.connect_timeout,
                pool_wait_timeout: options.pool_wait_timeout,
                statement_timeout: options.statement_timeout,
                session: SessionSetup::new(options.toast_compression),
            },
            serde: Arc::new(JsonPlusSerializer::default()),
            memo: Arc::default(),
            cache: Arc::new(BlobCache::new(DEFAULT_BLOB_CACHE_BYTES)),
            versions: VersionGenerator::default(),
            fencing: true,
            list_page: DEFAULT_LIST_PAGE_ROWS,
            in_flight: InFlightSaves::new(),
        }
    }

    /// Names the server in error messages (`host:port`), for a saver made from a pool.
    pub fn with_address(self, address: impl Into<String>) -> PostgresSaver {
        let address: String = address.into();
        self.at(Some(Arc::from(address)))
    }

    fn at(mut self, address: Option<Arc<str>>) -> PostgresSaver {
        self.conn.address = address;
        self
    }

    /// Uses another serializer, e.g. an `EncryptedSerializer` (builder style). Blobs and
    /// writes go through it; inline primitives and metadata are JSON, as in Python.
    pub fn with_serializer(mut self, serde: Arc<dyn Serializer>) -> PostgresSaver {
        self.serde = serde;
        // A remembered value depends on the serializer that decoded it.
        self.memo = Arc::default();
        self.cache = Arc::new(BlobCache::new(self.cache.max_bytes()));
        self
    }

    /// Keeps decoded blobs of at most `max_bytes` encoded bytes in all (default
    /// [`DEFAULT_BLOB_CACHE_BYTES`]; 0 turns the cache off), so that reads do not move
    /// blobs the saver holds ([`crate::cache`]) (builder style).
    pub fn with_blob_cache(mut self, max_bytes: usize) -> PostgresSaver {
        self.cache = Arc::new(BlobCache::new(max_bytes));
        self
    }

    /// Uses another version generator, e.g. a seeded one (builder style).
    pub fn with_versions(mut self, versions: VersionGenerator) -> PostgresSaver {
        self.versions = versions;
        self
    }

    /// Turns the fences of [`crate::fence`] on (the default) or off (builder style). Off,
    /// a put or a task write stores what Python's saver stores whatever other runs did.
    pub fn with_fencing(mut self, fencing: bool) -> PostgresSaver {
        self.fencing = fencing;
        self
    }

    /// The most rows each page of [`CheckpointSaver::list_stream`] reads (at least 1;
    /// default [`DEFAULT_LIST_PAGE_ROWS`]) (builder style).
    pub fn with_list_page(mut self, rows: usize) -> PostgresSaver {
        self.list_page = rows.max(1);
        self
    }

    /// What the decoded-blob cache holds and how often reads hit it
    /// ([`crate::cache`]).
    pub fn blob_cache_stats(&self) -> BlobCacheStats {
        self.cache.stats()
    }

    /// Whether puts and task writes are fenced.
    pub fn fencing(&self) -> bool {
        self.fencing
    }

    /// The connection pool.
    pub fn pool(&self) -> &Pool {
        &self.conn.pool
    }

    /// The server's `host:port` as error messages name it, when known.
    pub fn address(&self) -> Option<&str> {
        self.conn.address.as_deref()
    }

    /// The serializer values are stored with.
    pub fn serializer(&self) -> &Arc<dyn Serializer> {
        &self.serde
    }

    /// Creates the tables and indexes, or brings an older schema up to date, with
    /// LangGraph's numbered migrations ([`crate::schema::MIGRATIONS`]). Idempotent.
    ///
    /// Not bounded by the statement timeout: a migration that builds an index on a large
    /// table may take long, and one cut short leaves an invalid index behind. Getting the
    /// connection is bounded as usual.
    pub async fn setup(&self) -> Result<()> {
        let client = self.conn.get("setup").await?;
        let done = Some(schema::setup(&client).await);
        self.conn.finish("setup", client, done)
    }

    /// The latest migration version recorded in the database (`-1` before `setup`).
    pub async fn schema_version(&self) -> Result<i32> {
        let client = self.conn.get("schema_version").await?;
        let done = self.conn.within(schema::applied_version(&client)).await;
        self.conn.finish("schema_version", client, done)
    }
}

impl fmt::Debug for PostgresSaver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresSaver")
            .field("pool", &self.conn.pool.status())
            .field("address", &self.conn.address)
            .field("statement_timeout", &self.conn.statement_timeout)
            .field("serde", &self.serde)
            .field("fencing", &self.fencing)
            .finish_non_exhaustive()
    }
}

impl PostgresSaver {
    /// The reads on `client` with this saver's serializer and caches.
    fn reader<'a>(&'a self, client: &'a deadpool_postgres::Client) -> Reader<'a> {
        Reader {
            client,
            serde: &self.serde,
            memo: &self.memo,
            cache: &self.cache,
            versions: &self.versions,
        }
    }
}

#[async_trait]
impl CheckpointSaver for PostgresSaver {
    /// The addressed checkpoint, or the greatest id of `(thread, ns or "")`, with its
    /// values, metadata, parent and writes, in one query.
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        validate_config(config)?;
        self.in_flight.settled(Some(&config.thread_id)).await;
        let client = self.conn.get("get_tuple").await?;
        let reader = self.reader(&client);
        let done = self.conn.within(reader.get_tuple(config)).await;
        self.conn.finish("get_tuple", client, done)
    }

    /// Reads the parent chain, the seeds and the writes in one statement (a recursive CTE
    /// that stops at the farthest seed).
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<indexmap::IndexMap<String, stategraph_checkpoint::DeltaChannelHistory>> {
        validate_config(config)?;
        self.in_flight.settled(Some(&config.thread_id)).await;
        let client = self.conn.get("get_delta_channel_history").await?;
        let done = self
            .conn
            .within(crate::delta::history(
                &client,
                &self.serde,
                (&self.cache, &self.memo),
                config,
                channels,
            ))
            .await;
        self.conn.finish("get_delta_channel_history", client, done)
    }

    /// Checkpoints by id descending (across namespaces and threads too, unlike the
    /// in-memory saver's grouping), filtered by equality of metadata values, in one query.
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        config.map_or(Ok(()), validate_config)?;
        self.in_flight
            .settled(config.map(|c| c.thread_id.as_str()))
            .await;
        let client = self.conn.get("list").await?;
        let reader = self.reader(&client);
        let done = self.conn.within(reader.list(config, options)).await;
        self.conn.finish("list", client, done)
    }

    /// Keyset pages: each page is one query on a pooled connection (held only for that
    /// query), resuming after the last row of the previous page by `(checkpoint_id,
    /// thread_id, checkpoint_ns)`; a page of one thread and namespace is a range scan of
    /// the primary key. A page holds at most [`PostgresSaver::with_list_page`] tuples.
    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> BoxStream<'_, Result<CheckpointTuple>> {
        let thread = config.as_ref().map(|c| c.thread_id.clone());
        stream_pages(config, options, move |mut cursor| {
            let thread = thread.clone();
            async move {
                // Every page, not only the first: cheap (one atomic load when nothing waits).
                self.in_flight.settled(thread.as_deref()).await;
                let client = self.conn.get("list").await?;
                let reader = self.reader(&client);
                let done = self
                    .conn
                    .within(reader.list_page(&mut cursor, Some(self.list_page)))
                    .await;
                let page = self.conn.finish("list", client, done)?;
                Ok((page, cursor))
            }
        })
    }

    /// Stores the checkpoint row (primitives inline) and the blobs of its new
    /// non-primitive values in one round trip; fenced unless turned off.
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        validate_config(config).and(validate_key("checkpoint id", &checkpoint.id))?;
        let client = self.conn.get_writer("put").await?;
        // A deliberate branch (a replay, an update of an older checkpoint) is not a race.
        let fenced = self.fencing && !stategraph_checkpoint::starts_branch(config);
        let put = write::put(
            &client,
            &self.serde,
            (&self.cache, &self.memo),
            fenced,
            config,
            checkpoint,
            metadata,
            new_versions,
        );
        let done = self.conn.within(put).await;
        self.conn.finish("put", client, done)
    }

    /// Stores the writes of one task in one statement: a repeated reserved index is
    /// replaced, a repeated normal index kept.
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        validate_config(config).and(validate_key("task id", task_id))?;
        let client = self.conn.get_writer("put_writes").await?;
        let fenced = self.fencing && !stategraph_checkpoint::starts_branch(config);
        let put = write::put_writes(
            &client,
            self.serde.as_ref(),
            fenced,
            config,
            writes,
            task_id,
            task_path,
        );
        let done = self.conn.within(put).await;
        self.conn.finish("put_writes", client, done)
    }

    /// Group commit: the ops in one transaction, each fenced as its own call would be; a
    /// refused op leaves the ops before it stored, as one call per op does (`batch.rs`).
    async fn put_batch(&self, ops: &[stategraph_checkpoint::SaveOp]) -> Result<()> {
        crate::batch::put_batch(
            self,
            &self.conn,
            &self.serde,
            (&self.cache, &self.memo),
            self.fencing,
            ops,
        )
        .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        validate_key("thread id", thread_id)?;
        self.in_flight.settled(Some(thread_id)).await;
        let client = self.conn.get("delete_thread").await?;
        let done = self
            .conn
            .within(maintenance::delete_thread(&client, thread_id))
            .await;
        self.cache.forget_thread(thread_id);
        self.conn.finish("delete_thread", client, done)
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

    /// Deletes the checkpoints whose metadata `run_id` (a string) is listed, in every
    /// thread, with their writes and the blobs only they referenced, in one transaction.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        let mut client = self.conn.get("delete_for_runs").await?;
        let done = self
            .conn
            .within(maintenance::delete_for_runs(&mut client, run_ids))
            .await;
        self.conn.finish("delete_for_runs", client, done)
    }

    /// Copies every checkpoint, blob and write of `source` to `target` in one statement.
    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        validate_thread_ids([source, target])?;
        self.in_flight.settled(Some(source)).await;
        self.in_flight.settled(Some(target)).await;
        let client = self.conn.get("copy_thread").await?;
        let done = self
            .conn
            .within(maintenance::copy_thread(&client, source, target))
            .await;
        self.conn.finish("copy_thread", client, done)
    }

    /// Python's `prune`; see [`crate::maintenance`].
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        validate_thread_ids(thread_ids.iter().map(String::as_str))?;
        for thread in thread_ids {
            self.in_flight.settled(Some(thread)).await;
        }
        let mut client = self.conn.get("prune").await?;
        let done = self
            .conn
            .within(maintenance::prune(&mut client, thread_ids, strategy))
            .await;
        for thread in thread_ids {
            self.cache.forget_thread(thread);
        }
        self.conn.finish("prune", client, done)
    }
}
