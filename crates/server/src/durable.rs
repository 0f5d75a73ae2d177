//! Which finished tasks have their writes stored: a saver decorator the served graphs
//! save through, so that a worker publishes a task's update only once it is durable.
//!
//! **Why.** Under durability `async` (the default) the engine queues a finished task's
//! writes for the saver and emits its `updates` event at once. A worker killed between
//! the two would leave a client that saw the update and a database without the writes:
//! the worker that takes the run over runs the task again and its update is streamed a
//! second time. So the worker holds a task's update (and whatever follows it, to keep the
//! order) until [`Stored`] has seen the task's writes stored, then publishes them
//! (`worker.rs`). A task's update is therefore published at most once before the takeover
//! and, when it was, the task is not run again; what the new worker replays of it is kept
//! out by [`crate::replay`].
//!
//! **How.** [`Watched`] forwards every call to the server's saver and, after a
//! `put_writes` (alone or in a batch) returns, records its task id under its thread, for
//! the threads a worker watches ([`Stored::watch`], for the length of a run). The engine
//! streams a task's result (`tasks` mode, asked for internally) right after its update,
//! with the task id, which is what the worker waits for.
//!
//! **Cost.** One lock and one hash insert per stored write batch of a watched thread, and
//! a publication delayed by the saver's latency (the run itself does not wait).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver, Result, SaveOp, Value};
use tokio::sync::Notify;

/// The task ids whose writes were stored, per watched thread.
#[derive(Default)]
pub(crate) struct Stored {
    threads: Mutex<HashMap<String, HashSet<String>>>,
    changed: Notify,
}

impl Stored {
    /// Starts recording the stored writes of `thread`.
    pub(crate) fn watch(&self, thread: &str) {
        self.threads.lock().entry(thread.to_owned()).or_default();
    }

    /// Stops recording for `thread` and forgets what was recorded.
    pub(crate) fn forget(&self, thread: &str) {
        self.threads.lock().remove(thread);
    }

    fn record<'a>(&self, tasks: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let mut any = false;
        {
            let mut threads = self.threads.lock();
            for (thread, task) in tasks {
                if let Some(done) = threads.get_mut(thread) {
                    done.insert(task.to_owned());
                    any = true;
                }
            }
        }
        if any {
            self.changed.notify_waiters();
        }
    }

    fn has(&self, thread: &str, task: &str) -> bool {
        self.threads
            .lock()
            .get(thread)
            .is_some_and(|done| done.contains(task))
    }

    /// Waits until the writes of `task` in `thread` are stored, at most `timeout`; whether
    /// they are.
    pub(crate) async fn wait(&self, thread: &str, task: &str, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            // Registered before looking, so a record in between is not missed.
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            if self.has(thread, task) {
                return true;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.has(thread, task);
            }
        }
    }
}

/// The server's saver, recording the stored writes into a [`Stored`].
pub(crate) struct Watched {
    inner: Arc<dyn CheckpointSaver>,
    stored: Arc<Stored>,
}

impl Watched {
    /// `inner`, recording into `stored`.
    pub(crate) fn new(inner: Arc<dyn CheckpointSaver>, stored: Arc<Stored>) -> Watched {
        Watched { inner, stored }
    }
}

#[async_trait]
impl stategraph_checkpoint::DelegatingSaver for Watched {
    fn inner(&self) -> &dyn CheckpointSaver {
        &*self.inner
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
            .await?;
        self.stored.record([(config.thread_id.as_str(), task_id)]);
        Ok(())
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        self.inner.put_batch(ops).await?;
        self.stored.record(ops.iter().filter_map(|op| match op {
            SaveOp::PutWrites {
                config, task_id, ..
            } => Some((config.thread_id.as_str(), task_id.as_str())),
            SaveOp::Put { .. } => None,
        }));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use stategraph_checkpoint::MemorySaver;

    use super::*;

    fn config(thread: &str) -> CheckpointConfig {
        let mut c = CheckpointConfig::thread(thread);
        c.checkpoint_id = Some("1ef00000-0000-6000-8000-000000000000".into());
        c
    }

    #[tokio::test]
    async fn stored_writes_of_watched_threads_are_recorded() {
        let stored = Arc::new(Stored::default());
        let saver = Watched::new(Arc::new(MemorySaver::new()), stored.clone());
        stored.watch("t");
        let writes = vec![("a".to_owned(), Value::Int(1))];
        saver
            .put_writes(&config("t"), &writes, "task-1", "")
            .await
            .expect("put_writes");
        saver
            .put_batch(&[SaveOp::PutWrites {
                config: config("t"),
                writes: writes.clone(),
                task_id: "task-2".into(),
                task_path: String::new(),
            }])
            .await
            .expect("put_batch");
        // An unwatched thread records nothing.
        saver
            .put_writes(&config("u"), &writes, "task-3", "")
            .await
            .expect("put_writes");
        assert!(stored.has("t", "task-1"));
        assert!(stored.has("t", "task-2"));
        assert!(!stored.has("u", "task-3"));
        assert!(!stored.has("t", "task-4"));
        stored.forget("t");
        assert!(!stored.has("t", "task-1"));
    }

    #[tokio::test]
    async fn a_waiter_wakes_when_the_writes_are_stored() {
        let stored = Arc::new(Stored::default());
        let saver = Arc::new(Watched::new(Arc::new(MemorySaver::new()), stored.clone()));
        stored.watch("t");
        assert!(!stored.wait("t", "late", Duration::from_millis(20)).await);
        let writer = {
            let saver = saver.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(30)).await;
                let writes = vec![("a".to_owned(), Value::Int(1))];
                saver
                    .put_writes(&config("t"), &writes, "late", "")
                    .await
                    .expect("put_writes");
            })
        };
        assert!(stored.wait("t", "late", Duration::from_secs(10)).await);
        writer.await.expect("the writer");
    }
}
