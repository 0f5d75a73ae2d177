//! The checkpoint writer of a run: everything a run hands to its saver goes through here.
//!
//! The writer owns the saver, the durability mode, the pending writes of the current
//! checkpoint, the channel versions of the last checkpoint handed to the saver (to compute
//! each put's `new_versions`), the config of that checkpoint (the next put's parent) and the
//! run's [`ThreadLease`]. The run loop (`run_loop/`) decides *what* to save and when;
//! the writer decides *how*:
//!
//! - durability `sync`: each save is awaited before the run goes on;
//! - durability `async` (with a saver that does I/O): saves go to a **bounded** queue of
//!   [`QUEUE_BOUND`] operations drained by one background task, which hands whatever is
//!   queued to [`CheckpointSaver::put_batch`] in order (a saver may commit the batch in one
//!   transaction). A full queue makes the run wait (back-pressure), so a run that steps
//!   faster than its saver stores holds at most `QUEUE_BOUND` checkpoints in memory;
//! - durability `exit`: nothing is saved until the run ends; then the last checkpoint and
//!   the pending writes of its tasks.
//!
//! Checkpoints travel as `Arc<Checkpoint>`: queueing a save copies nothing.
//!
//! **Cancellation.** If the run is dropped while a save is in flight (a `sync` save being
//! awaited, or the `async` queue not yet drained), dropping the writer moves that work onto
//! a task of its own, which finishes it and only then releases the thread's lease; the next
//! run of the thread waits for the lease. A dropped run therefore leaves exactly what it
//! had handed to the saver, fully stored, and nothing that lands later. Until then it holds
//! the thread in the saver's in-flight registry (`in_flight.rs`), so that reads of the
//! thread (`get_state`, the saver's `get_tuple`, ...) wait for those saves too.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, SaveOp,
    Value, NULL_TASK_ID,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::head::Head;
use super::lease::ThreadLease;
use crate::config::Durability;
use crate::error::{Error, Result};

/// How many saves the durability-`async` queue holds before a run waits for its saver.
///
/// A step queues its tasks' writes and one checkpoint, so 32 operations are several steps
/// ahead of the saver: enough to overlap saving with running and to give a batching saver
/// full batches, small enough that a slow saver bounds the memory a fast run holds.
pub const QUEUE_BOUND: usize = 32;

/// The result of one save: the stored checkpoint's config for a `put`.
type SaveResult = Result<Option<CheckpointConfig>>;

/// The checkpoint writer of one run (see the module docs).
pub(crate) struct Writer {
    saver: Option<Arc<dyn CheckpointSaver>>,
    durability: Durability,
    /// The background queue of durability `async`.
    queue: Option<Queue>,
    /// A save being awaited (durability `sync`/`exit`), kept here so that a dropped run
    /// can finish it.
    in_flight: Option<BoxFuture<'static, SaveResult>>,
    /// The writes `(task_id, channel, value)` recorded against the current checkpoint.
    pending_writes: Vec<(String, String, Value)>,
    /// The channel versions of the last checkpoint handed to the saver.
    previous_versions: ChannelVersions,
    /// Thread, namespace and the id of the last checkpoint saved (the next put's parent).
    config: CheckpointConfig,
    /// The config of the checkpoint before that one.
    prev_config: Option<CheckpointConfig>,
    /// The next put starts a deliberate branch (a run addressed at an older checkpoint).
    branching: bool,
    /// Durability `exit`: the last checkpoint made and its metadata, saved at the end.
    latest: Option<(Arc<Checkpoint>, CheckpointMetadata)>,
    /// The run's hold on its thread (released after the last save is stored).
    lease: Option<Arc<ThreadLease>>,
    /// The head the saves leave, when the run keeps it (see `head.rs`).
    head: Option<Head>,
    /// Whether the run keeps [`Writer::head`].
    keep_head: bool,
}

/// What a run's writer starts from.
pub(crate) struct WriterStart {
    /// The saver, if any.
    pub saver: Option<Arc<dyn CheckpointSaver>>,
    /// The durability mode.
    pub durability: Durability,
    /// The pending writes of the loaded checkpoint.
    pub pending_writes: Vec<(String, String, Value)>,
    /// The channel versions of the loaded checkpoint.
    pub previous_versions: ChannelVersions,
    /// The loaded checkpoint's config (no id on a new thread).
    pub config: CheckpointConfig,
    /// Its parent's config.
    pub prev_config: Option<CheckpointConfig>,
    /// The first put starts a deliberate branch.
    pub branching: bool,
    /// The run's lease on its thread.
    pub lease: Option<Arc<ThreadLease>>,
    /// Keep the head the saves leave ([`Writer::take_head`]).
    pub keep_head: bool,
    /// With `keep_head`, the head the run loaded (`None` on a new thread).
    pub loaded_head: Option<Head>,
}

impl Writer {
    /// A writer; in durability `async` with a saver that does I/O, starts its queue.
    pub(crate) fn new(start: WriterStart) -> Writer {
        let queue = match (&start.saver, start.durability) {
            (Some(saver), Durability::Async) if !saver.is_in_process() => {
                Queue::start(saver.clone())
            }
            _ => None,
        };
        Writer {
            saver: start.saver,
            durability: start.durability,
            queue,
            in_flight: None,
            pending_writes: start.pending_writes,
            previous_versions: start.previous_versions,
            config: start.config,
            prev_config: start.prev_config,
            branching: start.branching,
            latest: None,
            lease: start.lease,
            keep_head: start.keep_head,
            head: start.loaded_head.filter(|_| start.keep_head),
        }
    }

    /// The head the run's saves leave in the saver (after [`Writer::finish`]): `None` when
    /// the run does not keep it or has stored nothing and loaded nothing.
    pub(crate) fn take_head(&mut self) -> Option<Head> {
        self.head.take()
    }

    /// Mirrors a `put_writes` of `task_id` against checkpoint `checkpoint_id` in the head.
    fn record_head(&mut self, checkpoint_id: &str, task_id: &str, writes: &[(String, Value)]) {
        if let Some(head) = self.head.as_mut().filter(|h| h.id() == checkpoint_id) {
            head.record(task_id, writes);
        }
    }

    /// Thread, namespace and the id of the last checkpoint saved.
    pub(crate) fn config(&self) -> &CheckpointConfig {
        &self.config
    }

    /// The channel versions of the last checkpoint handed to the saver.
    pub(crate) fn previous_versions(&self) -> &ChannelVersions {
        &self.previous_versions
    }

    /// Durability `exit`: the last checkpoint made and its metadata, still to be saved by
    /// [`Writer::finish`] (a DeltaChannel snapshot is added to it there).
    pub(crate) fn latest_mut(&mut self) -> Option<(&mut Arc<Checkpoint>, &mut CheckpointMetadata)> {
        self.latest.as_mut().map(|(c, m)| (c, m))
    }

    /// The config of the checkpoint saved before the last one.
    pub(crate) fn prev_config(&self) -> Option<&CheckpointConfig> {
        self.prev_config.as_ref()
    }

    /// The run's lease on its thread (subgraphs share it).
    pub(crate) fn lease(&self) -> Option<&Arc<ThreadLease>> {
        self.lease.as_ref()
    }

    /// The writes recorded against the current checkpoint.
    pub(crate) fn pending_writes(&self) -> &[(String, String, Value)] {
        &self.pending_writes
    }

    /// Keeps only the pending writes `keep` accepts (not saved: the saver keeps its rows).
    pub(crate) fn retain_pending(&mut self, keep: impl FnMut(&(String, String, Value)) -> bool) {
        self.pending_writes.retain(keep);
    }

    /// Forgets the pending writes (a new checkpoint was made).
    pub(crate) fn clear_pending(&mut self) {
        self.pending_writes.clear();
    }

    /// Records the writes of a task against checkpoint `checkpoint_id` and saves them
    /// (except in durability `exit`). A task's new writes replace its earlier ones; writes
    /// to reserved channels only keep the last value per channel. Returns the writes as
    /// recorded (for the run's events).
    pub(crate) async fn save_task_writes(
        &mut self,
        checkpoint_id: &str,
        task_id: &str,
        task_path: String,
        mut writes: Vec<(String, Value)>,
    ) -> Result<Vec<(String, Value)>> {
        let special = |c: &str| {
            stategraph_checkpoint::WRITES_IDX_MAP
                .iter()
                .any(|(s, _)| *s == c)
        };
        if writes.iter().all(|(c, _)| special(c)) {
            let mut last: IndexMap<String, Value> = IndexMap::new();
            for (c, v) in writes {
                last.insert(c, v);
            }
            writes = last.into_iter().collect();
        }
        let to_save: Vec<(String, Value)> = if task_id == NULL_TASK_ID {
            self.pending_writes
                .retain(|w| w.0 != task_id || !special(&w.1));
            writes.sort_by_key(|(c, _)| special(c));
            self.pending_writes
                .iter()
                .filter(|w| w.0 == task_id)
                .map(|w| (w.1.clone(), w.2.clone()))
                .chain(writes.iter().cloned())
                .collect()
        } else {
            self.pending_writes.retain(|w| w.0 != task_id);
            writes.clone()
        };
        self.pending_writes.extend(
            writes
                .iter()
                .map(|(c, v)| (task_id.to_owned(), c.clone(), v.clone())),
        );
        if self.durability != Durability::Exit && self.saver.is_some() {
            if let Some(saver) = self.inline_saver() {
                // The writer's own config, pointed at the checkpoint for the call: no copy
                // of the config per task.
                let parent = self.config.checkpoint_id.replace(checkpoint_id.to_owned());
                let saved = saver
                    .put_writes(&self.config, &to_save, task_id, &task_path)
                    .await;
                self.config.checkpoint_id = parent;
                saved?;
                self.record_head(checkpoint_id, task_id, &to_save);
                return Ok(writes);
            }
            let mut config = self.config.clone();
            config.checkpoint_id = Some(checkpoint_id.to_owned());
            let kept = self.keep_head.then(|| to_save.clone());
            self.save(SaveOp::PutWrites {
                config,
                writes: to_save,
                task_id: task_id.to_owned(),
                task_path,
            })
            .await?;
            if let Some(to_save) = kept {
                self.record_head(checkpoint_id, task_id, &to_save);
            }
        }
        Ok(writes)
    }

    /// Hands a new checkpoint to the saver (durability `sync`/`async`), or keeps it for the
    /// end of the run (durability `exit`). Nothing happens without a saver.
    pub(crate) async fn put_checkpoint(
        &mut self,
        checkpoint: Arc<Checkpoint>,
        metadata: &CheckpointMetadata,
    ) -> Result<()> {
        if self.saver.is_none() {
            return Ok(());
        }
        if self.durability == Durability::Exit {
            self.latest = Some((checkpoint, metadata.clone()));
            return Ok(());
        }
        self.prev_config = self
            .config
            .checkpoint_id
            .as_ref()
            .map(|_| self.config.clone());
        let new_versions = super::algo::advance_versions(
            &mut self.previous_versions,
            &checkpoint.channel_versions,
        );
        self.mark_branch();
        let id = checkpoint.id.clone();
        if self.keep_head {
            self.head = Some(Head::put(checkpoint.clone(), metadata, &self.config));
        }
        if let Some(saver) = self.inline_saver() {
            saver
                .put(&self.config, &checkpoint, metadata, &new_versions)
                .await?;
        } else {
            self.save(SaveOp::Put {
                config: self.config.clone(),
                checkpoint,
                metadata: metadata.clone(),
                new_versions,
            })
            .await?;
        }
        self.config.checkpoint_id = Some(id);
        Ok(())
    }

    /// The saver when a save may run inline from borrowed arguments: no queue, and a saver
    /// without I/O (its save completes within one poll, so a cancellation never finds it
    /// half done).
    fn inline_saver(&self) -> Option<Arc<dyn CheckpointSaver>> {
        self.saver
            .as_ref()
            .filter(|s| self.queue.is_none() && s.is_in_process())
            .cloned()
    }

    /// Puts the branch marker on the next put's config if it starts a branch (and takes it
    /// off otherwise).
    fn mark_branch(&mut self) {
        if std::mem::take(&mut self.branching) {
            self.config.configurable.insert(
                stategraph_checkpoint::CONFIG_KEY_BRANCH.into(),
                Value::Bool(true),
            );
        } else {
            self.config
                .configurable
                .shift_remove(stategraph_checkpoint::CONFIG_KEY_BRANCH);
        }
    }

    /// Ends the run's saving: waits for the background queue (durability `async`); in
    /// durability `exit`, when `persist`, saves the last checkpoint (if the run made one)
    /// and the pending writes of its tasks against it. `current_id` is the id of the run's
    /// current checkpoint; `path_of` gives a task's path.
    pub(crate) async fn finish(
        &mut self,
        persist: bool,
        current_id: &str,
        path_of: impl Fn(&str) -> String,
    ) -> Result<()> {
        if let Some(queue) = self.queue.as_mut() {
            let drained = queue.drain().await;
            self.queue = None;
            drained?;
        }
        if self.saver.is_none() || self.durability != Durability::Exit || !persist {
            return Ok(());
        }
        let stored = match self.latest.take() {
            None => {
                let mut cfg = self.config.clone();
                cfg.checkpoint_id = Some(current_id.to_owned());
                cfg
            }
            Some((checkpoint, metadata)) => {
                let new_versions = super::algo::new_versions(
                    &self.previous_versions,
                    &checkpoint.channel_versions,
                );
                self.mark_branch();
                let id = checkpoint.id.clone();
                if self.keep_head {
                    self.head = Some(Head::put(checkpoint.clone(), &metadata, &self.config));
                }
                let put = SaveOp::Put {
                    config: self.config.clone(),
                    checkpoint,
                    metadata,
                    new_versions,
                };
                match self.save(put).await? {
                    Some(cfg) => cfg,
                    None => {
                        let mut cfg = self.config.clone();
                        cfg.checkpoint_id = Some(id);
                        cfg
                    }
                }
            }
        };
        let mut by_task: IndexMap<String, Vec<(String, Value)>> = IndexMap::new();
        for (t, c, v) in &self.pending_writes {
            if t != NULL_TASK_ID {
                by_task
                    .entry(t.clone())
                    .or_default()
                    .push((c.clone(), v.clone()));
            }
        }
        let stored_id = stored.checkpoint_id.clone().unwrap_or_default();
        for (task_id, writes) in by_task {
            let task_path = path_of(&task_id);
            self.record_head(&stored_id, &task_id, &writes);
            self.save(SaveOp::PutWrites {
                config: stored.clone(),
                writes,
                task_id,
                task_path,
            })
            .await?;
        }
        self.config = stored;
        Ok(())
    }

    /// Runs one save: queued in durability `async`, else awaited here.
    async fn save(&mut self, op: SaveOp) -> SaveResult {
        let Some(saver) = self.saver.clone() else {
            return Ok(None);
        };
        if let Some(queue) = &self.queue {
            queue.submit(op).await?;
            return Ok(None);
        }
        if saver.is_in_process() {
            // No I/O: the save completes within one poll, so a cancellation never finds
            // it half done.
            return run_op(saver.as_ref(), &op).await;
        }
        self.in_flight = Some(Box::pin(async move { run_op(saver.as_ref(), &op).await }));
        let result = InFlight(&mut self.in_flight).await;
        self.in_flight = None;
        result
    }
}

/// Polls the writer's in-flight save (which stays in the writer if the run is dropped).
struct InFlight<'a>(&'a mut Option<BoxFuture<'static, SaveResult>>);

impl Future for InFlight<'_> {
    type Output = SaveResult;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<SaveResult> {
        match self.0.as_mut() {
            Some(f) => f.as_mut().poll(cx),
            None => std::task::Poll::Ready(Ok(None)),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let in_flight = self.in_flight.take();
        let queue = self.queue.take();
        let lease = self.lease.take();
        if in_flight.is_none() && queue.is_none() {
            return;
        }
        // The run was dropped with saves under way: finish them before the thread's lease
        // is released (outside a runtime there is nothing in flight to wait for). The
        // hold, taken before this drop returns, makes reads of the thread wait for them.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let hold = self
                .saver
                .as_ref()
                .map(|saver| super::in_flight::hold(saver, &self.config.thread_id));
            rt.spawn(async move {
                if let Some(save) = in_flight {
                    if let Err(e) = save.await {
                        tracing::warn!(error = %e, "a save of a cancelled run failed");
                    }
                }
                if let Some(mut queue) = queue {
                    if let Err(e) = queue.drain().await {
                        tracing::warn!(error = %e, "a queued save of a cancelled run failed");
                    }
                }
                drop(hold);
                drop(lease);
            });
        }
    }
}

/// One save on `saver`.
async fn run_op(saver: &dyn CheckpointSaver, op: &SaveOp) -> SaveResult {
    Ok(op.apply(saver).await?)
}

/// The bounded queue of durability `async`: one tokio task hands everything queued to
/// `put_batch`, in order. The first failure stops it; it is reported by
/// [`Queue::drain`] (later submissions fail).
struct Queue {
    tx: Option<mpsc::Sender<SaveOp>>,
    worker: JoinHandle<Result<()>>,
}

impl Queue {
    /// Starts the worker; `None` outside a tokio runtime (saves then happen inline).
    fn start(saver: Arc<dyn CheckpointSaver>) -> Option<Queue> {
        let rt = tokio::runtime::Handle::try_current().ok()?;
        let (tx, mut rx) = mpsc::channel::<SaveOp>(QUEUE_BOUND);
        let worker = rt.spawn(async move {
            let mut batch = Vec::with_capacity(QUEUE_BOUND);
            while rx.recv_many(&mut batch, QUEUE_BOUND).await > 0 {
                saver.put_batch(&batch).await?;
                batch.clear();
            }
            Ok(())
        });
        Some(Queue {
            tx: Some(tx),
            worker,
        })
    }

    /// Queues a save, waiting while the queue is full. Fails when the worker stopped on
    /// an error.
    async fn submit(&self, op: SaveOp) -> Result<()> {
        let sent = match &self.tx {
            Some(tx) => tx.send(op).await.is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            Err(Error::Checkpoint(stategraph_checkpoint::Error::Backend(
                "a background save failed; see the run's error".into(),
            )))
        }
    }

    /// Closes the queue and waits until every queued save is done; the first failure.
    async fn drain(&mut self) -> Result<()> {
        self.tx = None;
        match (&mut self.worker).await {
            Ok(r) => r,
            Err(e) => Err(Error::Checkpoint(stategraph_checkpoint::Error::Backend(
                Box::new(e),
            ))),
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
