//! A wrapper that overrides nothing reaches each of the inner saver's operations by its own
//! name (never a provided fallback), and one that overrides an operation changes only it.

use std::sync::Arc;

use futures::TryStreamExt;
use parking_lot::Mutex;

use super::*;
use crate::memory::MemorySaver;
use crate::metadata::CheckpointSource;

/// A saver that logs which of its operations was called, then does it on a MemorySaver.
/// Every operation is its own, so a wrapper that fell back to a provided form (a batch as
/// single puts, `get` as `get_tuple`) shows in the log.
#[derive(Default)]
struct Probe {
    memory: MemorySaver,
    flight: InFlightSaves,
    log: Mutex<Vec<&'static str>>,
}

impl Probe {
    fn saw(&self, op: &'static str) {
        self.log.lock().push(op);
    }

    fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.log.lock())
    }
}

#[async_trait]
impl CheckpointSaver for Probe {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        self.saw("get_tuple");
        self.memory.get_tuple(config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        self.saw("list");
        self.memory.list(config, options).await
    }

    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> BoxStream<'_, Result<CheckpointTuple>> {
        self.saw("list_stream");
        self.memory.list_stream(config, options)
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        self.saw("put");
        self.memory
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
        self.saw("put_writes");
        self.memory
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        self.saw("delete_thread");
        self.memory.delete_thread(thread_id).await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.saw("get_next_version");
        self.memory.get_next_version(current)
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        self.saw("put_batch");
        self.memory.put_batch(ops).await
    }

    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        self.saw("get_delta_channel_history");
        self.memory
            .get_delta_channel_history(config, channels)
            .await
    }

    async fn get(&self, config: &CheckpointConfig) -> Result<Option<Checkpoint>> {
        self.saw("get");
        self.memory.get(config).await
    }

    fn is_in_process(&self) -> bool {
        self.saw("is_in_process");
        true
    }

    fn in_flight_saves(&self) -> Option<&InFlightSaves> {
        self.saw("in_flight_saves");
        Some(&self.flight)
    }

    fn capabilities(&self) -> Capabilities {
        self.saw("capabilities");
        Capabilities {
            fence: true,
            ..Capabilities::ALL
        }
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        self.saw("delete_for_runs");
        self.memory.delete_for_runs(run_ids).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        self.saw("copy_thread");
        self.memory.copy_thread(source, target).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        self.saw("prune");
        self.memory.prune(thread_ids, strategy).await
    }
}

/// A wrapper that only names its inner saver.
struct Bare(Arc<Probe>);

impl DelegatingSaver for Bare {
    fn inner(&self) -> &dyn CheckpointSaver {
        &*self.0
    }
}

/// A wrapper that counts task writes and changes nothing else.
struct Counting {
    inner: Arc<Probe>,
    writes: Mutex<usize>,
}

#[async_trait]
impl DelegatingSaver for Counting {
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
        *self.writes.lock() += writes.len();
        self.inner()
            .put_writes(config, writes, task_id, task_path)
            .await
    }
}

const ID: &str = "1ef00000-0000-6000-8000-000000000001";

/// Calls every operation once through `saver`, in the order of the trait.
async fn call_each(saver: &dyn CheckpointSaver) {
    let thread = CheckpointConfig::thread("t");
    let checkpoint = Checkpoint::empty(ID, "2026-12-03T00:00:00+00:00");
    let metadata = CheckpointMetadata::new(CheckpointSource::Input, -1);
    let stored = saver
        .put(&thread, &checkpoint, &metadata, &ChannelVersions::default())
        .await
        .expect("put");
    let writes = vec![("a".to_owned(), Value::Int(1))];
    saver
        .put_writes(&stored, &writes, "task", "")
        .await
        .expect("put_writes");
    let batch = [SaveOp::PutWrites {
        config: stored.clone(),
        writes: writes.clone(),
        task_id: "task-2".into(),
        task_path: String::new(),
    }];
    saver.put_batch(&batch).await.expect("put_batch");
    let tuple = saver.get_tuple(&thread).await.expect("get_tuple");
    assert_eq!(tuple.expect("stored").checkpoint.id, ID);
    let listed = saver
        .list(Some(&thread), &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(listed.len(), 1);
    let streamed: Vec<_> = saver
        .list_stream(Some(thread.clone()), ListOptions::default())
        .try_collect()
        .await
        .expect("list_stream");
    assert_eq!(streamed.len(), 1);
    saver
        .get_delta_channel_history(&stored, &["a".to_owned()])
        .await
        .expect("get_delta_channel_history");
    assert_eq!(saver.get(&stored).await.expect("get").expect("one").id, ID);
    saver.get_next_version(None);
    assert!(saver.is_in_process());
    assert!(saver.in_flight_saves().is_some());
    assert!(saver.capabilities().fence);
    saver.copy_thread("t", "t2").await.expect("copy_thread");
    saver
        .prune(&["t2".to_owned()], PruneStrategy::KeepLatest)
        .await
        .expect("prune");
    saver
        .delete_for_runs(&["run".to_owned()])
        .await
        .expect("delete_for_runs");
    saver.delete_thread("t").await.expect("delete_thread");
}

const EACH: [&str; 16] = [
    "put",
    "put_writes",
    "put_batch",
    "get_tuple",
    "list",
    "list_stream",
    "get_delta_channel_history",
    "get",
    "get_next_version",
    "is_in_process",
    "in_flight_saves",
    "capabilities",
    "copy_thread",
    "prune",
    "delete_for_runs",
    "delete_thread",
];

#[tokio::test]
async fn a_bare_wrapper_reaches_every_operation_by_its_own_name() {
    let probe = Arc::new(Probe::default());
    let wrapper = Bare(probe.clone());
    call_each(&wrapper).await;
    assert_eq!(probe.take(), EACH);
    // The registry is the inner saver's own, so reads after a cancel wait on it.
    let flight = CheckpointSaver::in_flight_saves(&wrapper).expect("forwarded");
    assert!(std::ptr::eq(flight, &probe.flight));
}

#[tokio::test]
async fn an_override_changes_only_its_operation() {
    let probe = Arc::new(Probe::default());
    let wrapper = Counting {
        inner: probe.clone(),
        writes: Mutex::new(0),
    };
    call_each(&wrapper).await;
    assert_eq!(probe.take(), EACH);
    // put_writes went through the override; the batch stayed a batch (not counted).
    assert_eq!(*wrapper.writes.lock(), 1);
}
