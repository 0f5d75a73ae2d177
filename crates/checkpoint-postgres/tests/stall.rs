//! Decoding never runs on an async worker thread: a wide row (a 100 000-key map in the
//! metadata JSONB, in a blob and in a write) is read on a current-thread runtime through a
//! serializer that records the thread of every `loads_typed`. Every decode of the row --
//! JSONB text, blobs and writes are decoded together -- must run off the runtime's thread,
//! on tokio's blocking pool, so that the runtime keeps serving its other tasks meanwhile.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer, Typed};
use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
    ListOptions, Map, Result, Value,
};

use crate::support::TestDb;

/// `JsonPlusSerializer`, recording the thread of every read.
#[derive(Debug, Default)]
struct ThreadRecorder {
    reads: Mutex<Vec<ThreadId>>,
}

impl Serializer for ThreadRecorder {
    fn dumps_typed(&self, value: &Value) -> Result<Typed> {
        JsonPlusSerializer.dumps_typed(value)
    }

    fn loads_typed(&self, tag: &str, bytes: &[u8]) -> Result<Value> {
        self.reads
            .lock()
            .expect("recorder lock")
            .push(std::thread::current().id());
        JsonPlusSerializer.loads_typed(tag, bytes)
    }
}

fn wide_map(n: usize) -> Value {
    let mut map = Map::with_capacity(n);
    for i in 0..n {
        map.push_unique(format!("key-{i}"), i as i64);
    }
    Value::Map(map)
}

#[tokio::test(flavor = "current_thread")]
async fn wide_rows_decode_off_the_runtime_thread() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let recorder = Arc::new(ThreadRecorder::default());
    let saver = stategraph_checkpoint_postgres::PostgresSaver::from_pool(db.saver.pool().clone())
        .with_serializer(recorder.clone())
        // Every read decodes its blob (none is held from the put).
        .with_blob_cache(0);
    let thread = uuid::Uuid::new_v4().to_string();
    let wide = wide_map(100_000);
    let v1 = saver.get_next_version(None);
    let mut c = Checkpoint::empty(
        stategraph_checkpoint::id::IdGenerator::system().uuid6(0),
        "2025-01-01T00:00:00+00:00",
    );
    c.channel_values.insert("wide".into(), wide.clone());
    c.channel_versions.insert("wide".into(), v1);
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0).with("wide", wide.clone());
    let new = c.channel_versions.clone();
    let config = saver
        .put(&CheckpointConfig::thread(&thread), &c, &metadata, &new)
        .await
        .expect("put");
    saver
        .put_writes(&config, &[("wide".into(), wide.clone())], "task-1", "")
        .await
        .expect("put_writes");
    recorder.reads.lock().expect("recorder lock").clear();

    let runtime_thread = std::thread::current().id();
    let tuple = saver
        .get_tuple(&CheckpointConfig::thread(&thread))
        .await
        .expect("get_tuple")
        .expect("a checkpoint");
    assert_eq!(tuple.checkpoint.channel_values.get("wide"), Some(&wide));
    assert_eq!(tuple.metadata.extra.get("wide"), Some(&wide));
    assert_eq!(tuple.pending_writes.len(), 1);
    let listed = saver
        .list(
            Some(&CheckpointConfig::thread(&thread)),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].metadata.extra.get("wide"), Some(&wide));

    let reads = recorder.reads.lock().expect("recorder lock").clone();
    assert!(reads.len() >= 4, "blob and write of both reads: {reads:?}");
    assert!(
        reads.iter().all(|t| *t != runtime_thread),
        "a decode ran on the runtime thread"
    );
}
