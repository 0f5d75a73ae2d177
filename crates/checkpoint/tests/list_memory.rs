//! Listing a 100 000-checkpoint thread of a `MemorySaver` as a stream holds a bounded
//! amount of memory, while the `Vec` listing holds every tuple.
//!
//! A binary of its own: the global allocator counts the bytes live in this process, and
//! this file has one test, so nothing else allocates while it measures.

use std::alloc::System;

use cap::Cap;
use futures::TryStreamExt;
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, ListOptions, MemorySaver, Value,
};

#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

/// Checkpoints in the thread.
const N: usize = 100_000;
/// Bytes of the string every checkpoint holds (one blob, decoded into every tuple).
const VALUE: usize = 1024;
/// The most bytes the stream may hold above what was live before it started.
const BOUND: usize = 4 << 20;

fn id(n: usize) -> String {
    format!("1ef00000-0000-6000-8000-{n:012}")
}

#[tokio::test(flavor = "current_thread")]
async fn a_100k_thread_streams_in_bounded_memory_and_reads_its_latest_alone() {
    const _: () = assert!(
        N * VALUE > 20 * BOUND,
        "the Vec listing must exceed the bound"
    );
    let saver = MemorySaver::new();
    let value = Value::from("x".repeat(VALUE));
    let version = ChannelVersion::Int(1);
    let mut parent: Option<String> = None;
    for n in 0..N {
        let mut cp = Checkpoint::empty(id(n), "2026-01-01T00:00:00+00:00");
        cp.channel_values.insert("v".into(), value.clone());
        cp.channel_versions.insert("v".into(), version.clone());
        // The value is new in the first checkpoint only: one blob, carried by every other.
        let new_versions: ChannelVersions = if n == 0 {
            cp.channel_versions.clone()
        } else {
            ChannelVersions::default()
        };
        let mut config = CheckpointConfig::thread("long");
        config.checkpoint_id = parent.take();
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, n as i64);
        saver
            .put(&config, &cp, &metadata, &new_versions)
            .await
            .expect("put");
        parent = Some(cp.id);
    }

    // The latest checkpoint of the long thread is read without visiting the others: the
    // bytes allocated while reading it are those of one tuple.
    let before = ALLOC.total_allocated();
    let latest = saver
        .get_tuple(&CheckpointConfig::thread("long"))
        .await
        .expect("get_tuple")
        .expect("a latest checkpoint");
    let read = ALLOC.total_allocated() - before;
    assert_eq!(latest.checkpoint.id, id(N - 1));
    assert!(
        read < 64 * 1024,
        "reading the latest checkpoint allocated {read} bytes"
    );
    drop(latest);

    let base = ALLOC.allocated();
    let mut stream = saver.list_stream(
        Some(CheckpointConfig::thread("long")),
        ListOptions::default(),
    );
    let (mut seen, mut peak) = (0usize, 0usize);
    while let Some(tuple) = stream.try_next().await.expect("list_stream") {
        peak = peak.max(ALLOC.allocated().saturating_sub(base));
        assert_eq!(tuple.checkpoint.id, id(N - 1 - seen), "newest first");
        assert_eq!(tuple.checkpoint.channel_values.get("v"), Some(&value));
        seen += 1;
    }
    drop(stream);
    assert_eq!(seen, N);
    assert!(
        peak < BOUND,
        "the stream held {peak} bytes at its peak (bound {BOUND})"
    );

    // The same listing as a Vec holds all of it: far over the bound.
    let all = saver
        .list(
            Some(&CheckpointConfig::thread("long")),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    let held = ALLOC.allocated().saturating_sub(base);
    assert_eq!(all.len(), N);
    println!("stream peak: {peak} bytes; Vec listing: {held} bytes");
    assert!(held > 20 * BOUND, "the Vec listing held only {held} bytes");
}
