//! Listing a 100 000-checkpoint thread of a SQLite file as a stream holds a bounded amount
//! of memory (on the Rust heap; SQLite's own page cache is bounded by its settings), while
//! the `Vec` listing holds every tuple.
//!
//! A binary of its own: the global allocator counts the bytes live in this process, and
//! this file has one test, so nothing else allocates while it measures.

use std::alloc::System;

use cap::Cap;
use futures::TryStreamExt;
use stategraph_checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, ListOptions, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

/// Checkpoints in the thread.
const N: usize = 100_000;
/// Bytes of the string every checkpoint holds inline.
const VALUE: usize = 1024;
/// The most bytes the stream may hold above what was live before it started.
const BOUND: usize = 4 << 20;

fn id(n: usize) -> String {
    format!("1ef00000-0000-6000-8000-{n:012}")
}

/// Removes the database file and its companions when dropped.
struct Files(std::path::PathBuf);

impl Drop for Files {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut name = self.0.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100k_thread_streams_in_bounded_memory_and_reads_its_latest_alone() {
    const _: () = assert!(
        N * VALUE > 20 * BOUND,
        "the Vec listing must exceed the bound"
    );
    let files = Files(std::env::temp_dir().join(format!(
        "stategraph-list-memory-{}.sqlite",
        uuid::Uuid::new_v4()
    )));
    let saver = SqliteSaver::open(&files.0).expect("open");
    let value = Value::from("x".repeat(VALUE));
    let checkpoint = |n: usize| {
        let mut cp = Checkpoint::empty(id(n), "2026-01-01T00:00:00+00:00");
        cp.channel_values.insert("v".into(), value.clone());
        cp
    };
    // The first row through the saver; the other rows are the same bytes but for the
    // checkpoint's id, inserted in one transaction (a put each would be 100 000 commits).
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let config = CheckpointConfig::thread("long");
    saver
        .put(
            &config,
            &checkpoint(0),
            &metadata,
            &ChannelVersions::default(),
        )
        .await
        .expect("put");
    {
        let mut raw = rusqlite::Connection::open(&files.0).expect("raw connection");
        let tx = raw.transaction().expect("begin");
        let meta: Vec<u8> = tx
            .query_row("SELECT metadata FROM checkpoints", [], |r| r.get(0))
            .expect("metadata");
        let mut insert = tx
            .prepare(
                "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
                 parent_checkpoint_id, type, checkpoint, metadata) \
                 VALUES ('long', '', ?1, ?2, ?3, ?4, ?5)",
            )
            .expect("prepare");
        for n in 1..N {
            let typed = saver
                .serializer()
                .dumps_checkpoint(&checkpoint(n), true)
                .expect("encode");
            insert
                .execute(rusqlite::params![
                    id(n),
                    id(n - 1),
                    typed.tag.as_ref(),
                    typed.bytes,
                    meta
                ])
                .expect("insert");
        }
        drop(insert);
        tx.commit().expect("commit");
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
    let mut stream = saver.list_stream(Some(config.clone()), ListOptions::default());
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
        .list(Some(&config), &ListOptions::default())
        .await
        .expect("list");
    let held = ALLOC.allocated().saturating_sub(base);
    assert_eq!(all.len(), N);
    println!("stream peak: {peak} bytes; Vec listing: {held} bytes");
    assert!(held > 20 * BOUND, "the Vec listing held only {held} bytes");
}
