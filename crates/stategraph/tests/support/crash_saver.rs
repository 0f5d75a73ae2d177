//! `CrashSaver`: a fault-injecting wrapper around any saver that fails a chosen `put` or
//! `put_writes` call and counts the calls it sees (redb's `CrashBackend`, for the engine).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use stategraph::checkpoint::saver::put_each;
use stategraph::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointTuple, Error, Result, SaveOp, Value,
};

/// The text of an injected failure (so a test can tell it from a real one).
pub const CRASH: &str = "injected crash";

/// Wraps a saver; the `n`-th call (1-based, counted from creation) of `put` or
/// `put_writes` armed with [`CrashSaver::fail_put`] / [`CrashSaver::fail_put_writes`]
/// fails with `Error::Backend` and stores nothing. Every other call, before and after,
/// goes through to the wrapped saver, so the same saver can be used to rerun.
pub struct CrashSaver {
    inner: Arc<dyn CheckpointSaver>,
    fail_put: Option<usize>,
    fail_put_writes: Option<usize>,
    puts: AtomicUsize,
    put_writes: AtomicUsize,
    get_tuples: AtomicUsize,
    crashes: AtomicUsize,
}

impl CrashSaver {
    /// A wrapper that fails nothing (yet) and only counts.
    pub fn new(inner: Arc<dyn CheckpointSaver>) -> CrashSaver {
        CrashSaver {
            inner,
            fail_put: None,
            fail_put_writes: None,
            puts: AtomicUsize::new(0),
            put_writes: AtomicUsize::new(0),
            get_tuples: AtomicUsize::new(0),
            crashes: AtomicUsize::new(0),
        }
    }

    /// Fails the `n`-th `put` (builder style).
    pub fn fail_put(mut self, n: usize) -> CrashSaver {
        self.fail_put = Some(n);
        self
    }

    /// Fails the `n`-th `put_writes` (builder style).
    pub fn fail_put_writes(mut self, n: usize) -> CrashSaver {
        self.fail_put_writes = Some(n);
        self
    }

    /// How many times `put` was called (the failed call included).
    pub fn puts(&self) -> usize {
        self.puts.load(Ordering::SeqCst)
    }

    /// How many times `put_writes` was called (the failed call included).
    pub fn put_writes_calls(&self) -> usize {
        self.put_writes.load(Ordering::SeqCst)
    }

    /// How many times `get_tuple` was called.
    pub fn get_tuples(&self) -> usize {
        self.get_tuples.load(Ordering::SeqCst)
    }

    /// How many failures were injected.
    pub fn crashes(&self) -> usize {
        self.crashes.load(Ordering::SeqCst)
    }

    /// Waits (yielding to the runtime) until `put_writes` was called at least `n` times.
    pub async fn wait_for_put_writes(&self, n: usize) {
        while self.put_writes_calls() < n {
            tokio::task::yield_now().await;
        }
    }

    fn crash(&self, what: &str, n: usize) -> Error {
        self.crashes.fetch_add(1, Ordering::SeqCst);
        Error::Backend(format!("{CRASH}: {what} #{n}").into())
    }
}

/// True when `err` (as the engine reports it) is a failure injected by a [`CrashSaver`].
pub fn is_crash(err: &stategraph::Error) -> bool {
    match err {
        stategraph::Error::Checkpoint(Error::Backend(e)) => e.to_string().starts_with(CRASH),
        _ => false,
    }
}

/// Counts `get_tuple` and counts or fails `put` and `put_writes`; everything else is the
/// wrapped saver's, but for two operations these tests need as they are:
/// * `put_batch` applies its ops one `put` / `put_writes` at a time, so a failure can be
///   injected into any single save of a batch (durability `async` hands every save to
///   `put_batch`), and a crash leaves the ops before it stored, as per-op saving does;
/// * `is_in_process` is false, so durability `async` runs the engine's background writer
///   even over an in-process saver (MemorySaver would be saved inline).
#[async_trait]
impl stategraph::checkpoint::DelegatingSaver for CrashSaver {
    fn inner(&self) -> &dyn CheckpointSaver {
        &*self.inner
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        self.get_tuples.fetch_add(1, Ordering::SeqCst);
        self.inner.get_tuple(config).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let n = self.puts.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fail_put == Some(n) {
            return Err(self.crash("put", n));
        }
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
        let n = self.put_writes.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fail_put_writes == Some(n) {
            return Err(self.crash("put_writes", n));
        }
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        put_each(self, ops).await
    }

    fn is_in_process(&self) -> bool {
        false
    }
}
