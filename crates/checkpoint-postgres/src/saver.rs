//! [`PostgresSaver`]: the saver type, its builder options, and the trait implementation.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::version_gen::VersionGenerator;
use stategraph_checkpoint::{
    Capabilities, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointSaver, CheckpointTuple, Error, ListOptions, PruneStrategy,
    Result, Value,
};
use tokio_postgres::NoTls;

use crate::error::pool;
use crate::read::Reader;
use crate::{maintenance, prune, schema, write};

/// Connections a pool made by [`PostgresSaver::connect`] opens at most.
pub const DEFAULT_POOL_SIZE: usize = 16;

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
/// Puts are fenced by default (see [`crate::fence`]): a put whose parent is no longer
/// the head of its thread fails with [`Error::Conflict`]. [`PostgresSaver::with_fencing`]
/// turns that off.
pub struct PostgresSaver {
    pool: Pool,
    serde: Arc<dyn Serializer>,
    versions: VersionGenerator,
    fencing: bool,
}

impl PostgresSaver {
    /// Connects to `url` (a libpq URL or key=value string, without TLS) through a pool of
    /// at most [`DEFAULT_POOL_SIZE`] connections, and checks that one connection opens.
    /// Does not create the tables: call [`PostgresSaver::setup`] once, as with Python.
    pub async fn connect(url: &str) -> Result<PostgresSaver> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| Error::InvalidConfig(format!("postgres url: {e}")))?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(DEFAULT_POOL_SIZE)
            .build()
            .map_err(|e| Error::InvalidConfig(format!("postgres pool: {e}")))?;
        drop(pool.get().await.map_err(crate::error::pool)?);
        Ok(PostgresSaver::from_pool(pool))
    }

    /// A saver over an existing pool (for TLS, other sizes, timeouts or hooks).
    #[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
    pub fn from_pool(pool: Pool) -> PostgresSaver {
        PostgresSaver {
            pool,
            serde: Arc::new(JsonPlusSerializer::default()),
            versions: VersionGenerator::default(),
            fencing: true,
        }
    }

    /// Uses another serializer, e.g. an `EncryptedSerializer` (builder style). Blobs and
    /// writes go through it; inline primitives and metadata are JSON, as in Python.
    pub fn with_serializer(mut self, serde: Arc<dyn Serializer>) -> PostgresSaver {
        self.serde = serde;
        self
    }

    /// Uses another version generator, e.g. a seeded one (builder style).
    pub fn with_versions(mut self, versions: VersionGenerator) -> PostgresSaver {
        self.versions = versions;
        self
    }

    /// Turns the fence of [`crate::fence`] on (the default) or off (builder style). Off,
    /// a put stores what Python's saver stores whatever the thread's head is.
    pub fn with_fencing(mut self, fencing: bool) -> PostgresSaver {
        self.fencing = fencing;
        self
    }

    /// Whether puts are fenced.
    pub fn fencing(&self) -> bool {
        self.fencing
    }

    /// The connection pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The serializer values are stored with.
    pub fn serializer(&self) -> &Arc<dyn Serializer> {
        &self.serde
    }

    /// Creates the tables and indexes, or brings an older schema up to date, with
    /// LangGraph's numbered migrations ([`crate::schema::MIGRATIONS`]). Idempotent.
    pub async fn setup(&self) -> Result<()> {
        schema::setup(&self.client().await?).await
    }

    /// The latest migration version recorded in the database (`-1` before `setup`).
    pub async fn schema_version(&self) -> Result<i32> {
        schema::applied_version(&self.client().await?).await
    }

    async fn client(&self) -> Result<Object> {
        self.pool.get().await.map_err(pool)
    }
}

impl fmt::Debug for PostgresSaver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresSaver")
            .field("pool", &self.pool.status())
            .field("serde", &self.serde)
            .field("fencing", &self.fencing)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl CheckpointSaver for PostgresSaver {
    /// The addressed checkpoint, or the greatest id of `(thread, ns or "")`, with its
    /// values, metadata, parent and writes, in one query.
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        let client = self.client().await?;
        let reader = Reader {
            client: &client,
            serde: self.serde.as_ref(),
            versions: &self.versions,
        };
        reader.get_tuple(config).await
    }

    /// Reads the parent chain, the seeds and the writes in one statement (a recursive CTE
    /// that stops at the farthest seed).
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<indexmap::IndexMap<String, stategraph_checkpoint::DeltaChannelHistory>> {
        let client = self.client().await?;
        crate::delta::history(&client, self.serde.as_ref(), config, channels).await
    }

    /// Checkpoints by id descending (across namespaces and threads too, unlike the
    /// in-memory saver's grouping), filtered by JSONB containment, in one query.
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        let client = self.client().await?;
        let reader = Reader {
            client: &client,
            serde: self.serde.as_ref(),
            versions: &self.versions,
        };
        reader.list(config, options).await
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
        let client = self.client().await?;
        // A deliberate branch (a replay, an update of an older checkpoint) is not a race.
        let fenced = self.fencing && !stategraph_checkpoint::starts_branch(config);
        write::put(
            client,
            self.serde.as_ref(),
            fenced,
            config,
            checkpoint,
            metadata,
            new_versions,
        )
        .await
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
        let client = self.client().await?;
        write::put_writes(
            &client,
            self.serde.as_ref(),
            config,
            writes,
            task_id,
            task_path,
        )
        .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        maintenance::delete_thread(&self.client().await?, thread_id).await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.versions.next(current)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
    }

    /// Deletes the checkpoints whose metadata `run_id` (a string) is listed, in every
    /// thread, with their writes and the blobs only they referenced, in one transaction.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        maintenance::delete_for_runs(&mut self.client().await?, run_ids).await
    }

    /// Copies every checkpoint, blob and write of `source` to `target` in one statement.
    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        maintenance::copy_thread(&self.client().await?, source, target).await
    }

    /// Python's `prune` (spec §12.6); see [`crate::prune`].
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        prune::prune(&mut self.client().await?, thread_ids, strategy).await
    }
}
