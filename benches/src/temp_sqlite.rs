//! A [`SqliteSaver`] on a fresh file that is deleted, with its WAL files, when the saver
//! is dropped: the "SQLite (a file)" saver of the scenarios.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use stategraph_checkpoint::{
    Capabilities, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointSaver, CheckpointTuple, ListOptions, PruneStrategy, Result,
    SaveOp, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

/// A [`SqliteSaver`] on its own temporary file; every operation is the inner saver's.
pub struct TempSqlite {
    inner: SqliteSaver,
    path: PathBuf,
}

impl TempSqlite {
    /// Opens a new database file in the system's temporary directory.
    pub fn create() -> Result<TempSqlite> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "stategraph-bench-{}-{n}.sqlite",
            std::process::id()
        ));
        remove_files(&path);
        Ok(TempSqlite {
            inner: SqliteSaver::open(&path)?,
            path,
        })
    }
}

/// Removes a database file and its `-wal` and `-shm` companions, if present.
fn remove_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

impl Drop for TempSqlite {
    fn drop(&mut self) {
        remove_files(&self.path);
    }
}

#[async_trait]
impl CheckpointSaver for TempSqlite {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        self.inner.get_tuple(config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        self.inner.list(config, options).await
    }

    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> futures::stream::BoxStream<'_, Result<CheckpointTuple>> {
        self.inner.list_stream(config, options)
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        self.inner
            .put(config, checkpoint, metadata, new_versions)
            .await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        self.inner.put_batch(ops).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        self.inner.delete_thread(thread_id).await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.inner.get_next_version(current)
    }

    async fn get(&self, config: &CheckpointConfig) -> Result<Option<Checkpoint>> {
        self.inner.get(config).await
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        self.inner.delete_for_runs(run_ids).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        self.inner.copy_thread(source, target).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        self.inner.prune(thread_ids, strategy).await
    }
}
