//! Unit tests of the writer: the durability-`async` queue hands `put_batch` everything
//! queued, in order, holds at most `QUEUE_BOUND` operations while the saver is busy, and a
//! dropped writer finishes its saves before its thread's lease passes on, and holds the
//! thread's reads until then.
//!
//! They run on a current-thread runtime, so "everything runnable has run" is reached by
//! yielding, without any clock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, InFlightSaves, ListOptions, MemorySaver, SaveOp, Value,
};
use tokio::sync::Semaphore;

use super::*;
use crate::pregel::{in_flight, lease};

/// A saver that does "I/O" (it is not in-process): `put_batch` waits for a permit of its
/// gate, then records the task id of each op and the batch's size.
struct GatedSaver {
    inner: MemorySaver,
    gate: Semaphore,
    ops: Mutex<Vec<String>>,
    batches: Mutex<Vec<usize>>,
    waiting: AtomicUsize,
    /// With a registry, `get_tuple` waits for the thread's in-flight saves, as the savers
    /// of this workspace do.
    in_flight: Option<InFlightSaves>,
}

impl GatedSaver {
    fn new() -> Arc<GatedSaver> {
        Arc::new(GatedSaver::unshared(None))
    }

    fn unshared(in_flight: Option<InFlightSaves>) -> GatedSaver {
        GatedSaver {
            inner: MemorySaver::new(),
            gate: Semaphore::new(0),
            ops: Mutex::new(Vec::new()),
            batches: Mutex::new(Vec::new()),
            waiting: AtomicUsize::new(0),
            in_flight,
        }
    }
}

#[async_trait]
impl CheckpointSaver for GatedSaver {
    async fn get_tuple(
        &self,
        config: &CheckpointConfig,
    ) -> stategraph_checkpoint::Result<Option<CheckpointTuple>> {
        if let Some(saves) = &self.in_flight {
            saves.settled(Some(&config.thread_id)).await;
        }
        self.inner.get_tuple(config).await
    }

    fn in_flight_saves(&self) -> Option<&InFlightSaves> {
        self.in_flight.as_ref()
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> stategraph_checkpoint::Result<Vec<CheckpointTuple>> {
        self.inner.list(config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> stategraph_checkpoint::Result<CheckpointConfig> {
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
    ) -> stategraph_checkpoint::Result<()> {
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    async fn delete_thread(&self, thread_id: &str) -> stategraph_checkpoint::Result<()> {
        self.inner.delete_thread(thread_id).await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.inner.get_next_version(current)
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> stategraph_checkpoint::Result<()> {
        self.waiting.store(ops.len(), Ordering::SeqCst);
        let permit = self.gate.acquire().await;
        permit.map(|p| p.forget()).ok();
        self.waiting.store(0, Ordering::SeqCst);
        self.batches.lock().push(ops.len());
        for op in ops {
            if let SaveOp::PutWrites { task_id, .. } = op {
                self.ops.lock().push(task_id.clone());
            }
        }
        for op in ops {
            match op {
                SaveOp::Put {
                    config,
                    checkpoint,
                    metadata,
                    new_versions,
                } => {
                    self.inner
                        .put(config, checkpoint, metadata, new_versions)
                        .await?;
                }
                SaveOp::PutWrites {
                    config,
                    writes,
                    task_id,
                    task_path,
                } => {
                    self.inner
                        .put_writes(config, writes, task_id, task_path)
                        .await?
                }
            }
        }
        Ok(())
    }
}

fn writer(saver: Arc<GatedSaver>, lease: Option<Arc<ThreadLease>>) -> Writer {
    Writer::new(WriterStart {
        saver: Some(saver),
        durability: Durability::Async,
        pending_writes: Vec::new(),
        previous_versions: ChannelVersions::default(),
        config: CheckpointConfig::thread("t"),
        prev_config: None,
        branching: false,
        lease,
        keep_head: false,
        loaded_head: None,
    })
}

/// Lets every runnable task run until nothing moves.
async fn settle() {
    for _ in 0..1000 {
        tokio::task::yield_now().await;
    }
}

fn write(i: usize) -> Vec<(String, Value)> {
    vec![("x".to_owned(), Value::from(i as i64))]
}

#[tokio::test(flavor = "current_thread")]
async fn async_saves_are_batched_in_order_and_the_queue_is_bounded() {
    const OPS: usize = 3 * QUEUE_BOUND;
    let saver = GatedSaver::new();
    let submitted = Arc::new(AtomicUsize::new(0));
    let producer = {
        let saver = saver.clone();
        let submitted = submitted.clone();
        tokio::spawn(async move {
            let mut w = writer(saver, None);
            for i in 0..OPS {
                w.save_task_writes("cp", &format!("task-{i:03}"), String::new(), write(i))
                    .await
                    .unwrap();
                submitted.fetch_add(1, Ordering::SeqCst);
            }
            w.finish(true, "cp", |_| String::new()).await.unwrap();
        })
    };
    settle().await;
    // The saver holds its first batch; the run could queue QUEUE_BOUND more, then waits.
    let first = saver.waiting.load(Ordering::SeqCst);
    assert!(first >= 1, "the saver got a batch");
    assert_eq!(submitted.load(Ordering::SeqCst), first + QUEUE_BOUND);
    saver.gate.add_permits(OPS);
    producer.await.unwrap();
    let expected: Vec<String> = (0..OPS).map(|i| format!("task-{i:03}")).collect();
    assert_eq!(*saver.ops.lock(), expected, "every save, in order");
    let batches = saver.batches.lock().clone();
    assert_eq!(batches.iter().sum::<usize>(), OPS);
    assert!(batches.iter().all(|n| *n <= QUEUE_BOUND), "{batches:?}");
    assert!(
        batches.iter().any(|n| *n > 1),
        "queued saves share a batch: {batches:?}"
    );
    // The rows are those of one call each.
    let cfg = CheckpointConfig::thread("t");
    let stored = saver.inner.list(Some(&cfg), &ListOptions::default()).await;
    assert!(stored.unwrap().is_empty(), "writes only, no checkpoint");
}

#[tokio::test(flavor = "current_thread")]
async fn a_dropped_writer_stores_its_queue_before_the_thread_is_free() {
    let saver = GatedSaver::new();
    let as_dyn: Arc<dyn CheckpointSaver> = saver.clone();
    let held = Arc::new(lease::acquire(&as_dyn, "t").await);
    let mut w = writer(saver.clone(), Some(held));
    for i in 0..5 {
        w.save_task_writes("cp", &format!("task-{i}"), String::new(), write(i))
            .await
            .unwrap();
    }
    settle().await;
    drop(w);
    // The next run of the thread waits: the dropped writer's saves are not stored yet.
    let next = tokio::spawn({
        let as_dyn = as_dyn.clone();
        async move { lease::acquire(&as_dyn, "t").await }
    });
    settle().await;
    assert!(!next.is_finished(), "the thread was free before the saves");
    // Another thread of the same saver is not held up.
    let other = lease::acquire(&as_dyn, "other").await;
    drop(other);
    saver.gate.add_permits(10);
    let _lease = next.await.unwrap();
    let expected: Vec<String> = (0..5).map(|i| format!("task-{i}")).collect();
    assert_eq!(*saver.ops.lock(), expected);
}

/// A dropped writer holds its thread's reads until its queue is stored: the engine's wait
/// (`in_flight::settled`, what `get_state` awaits) for a saver without a registry of its
/// own, and the saver's own `get_tuple` too for a saver with one. A live writer's queue
/// holds nothing up, and neither does the dropped one for other threads.
#[tokio::test(flavor = "current_thread")]
async fn a_dropped_writer_holds_reads_of_its_thread_until_its_saves_are_stored() {
    for registry in [None, Some(InFlightSaves::new())] {
        let own = registry.is_some();
        let saver = Arc::new(GatedSaver::unshared(registry));
        let as_dyn: Arc<dyn CheckpointSaver> = saver.clone();
        let mut w = writer(saver.clone(), None);
        for i in 0..5 {
            w.save_task_writes("cp", &format!("task-{i}"), String::new(), write(i))
                .await
                .unwrap();
        }
        settle().await;
        assert!(
            saver.waiting.load(Ordering::SeqCst) >= 1,
            "a save is in flight"
        );
        in_flight::settled(&as_dyn, "t").await; // a live run's saves hold nothing up
        drop(w);
        let engine_read = tokio::spawn({
            let as_dyn = as_dyn.clone();
            async move { in_flight::settled(&as_dyn, "t").await }
        });
        let saver_read = tokio::spawn({
            let as_dyn = as_dyn.clone();
            async move { as_dyn.get_tuple(&CheckpointConfig::thread("t")).await }
        });
        settle().await;
        assert!(
            !engine_read.is_finished(),
            "registry {own}: read before the saves"
        );
        assert_eq!(saver_read.is_finished(), !own, "registry {own}");
        in_flight::settled(&as_dyn, "other").await;
        saver.gate.add_permits(10);
        engine_read.await.unwrap();
        saver_read.await.unwrap().unwrap();
        assert_eq!(
            saver.ops.lock().len(),
            5,
            "registry {own}: every save stored first"
        );
    }
}
