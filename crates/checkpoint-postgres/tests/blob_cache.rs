//! The decoded-blob cache: reads take the blobs the saver holds from it, and a hit is
//! right whoever changed the rows (another saver, raw SQL in one transaction).

use stategraph_checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Value,
};
use stategraph_checkpoint_postgres::PostgresSaver;

use crate::support::TestDb;

fn new_id(step: i64) -> String {
    stategraph_checkpoint::id::IdGenerator::system().uuid6(step)
}

/// A list of `n` chat messages whose contents start with `tag` (a few KB: cached).
fn messages(tag: &str, n: usize) -> Value {
    Value::List(
        (0..n)
            .map(|i| {
                stategraph_checkpoint::map! {
                    "role" => "user",
                    "content" => format!("{tag} message {i} {}", "x".repeat(40)),
                }
            })
            .collect::<Vec<_>>()
            .into(),
    )
}

/// Puts one checkpoint with `messages` at version "1.0" under a fixed id; returns it.
async fn put_one(saver: &PostgresSaver, thread: &str, id: &str, value: Value) -> Checkpoint {
    let mut c = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    let version = stategraph_checkpoint::ChannelVersion::from("00000000000000000000000000000001.0");
    c.channel_values.insert("messages".into(), value);
    c.channel_versions
        .insert("messages".into(), version.clone());
    let new: ChannelVersions = [("messages".to_owned(), version)].into_iter().collect();
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    saver
        .put(&CheckpointConfig::thread(thread), &c, &md, &new)
        .await
        .expect("put");
    c
}

async fn head_messages(saver: &PostgresSaver, thread: &str) -> Value {
    saver
        .get_tuple(&CheckpointConfig::thread(thread))
        .await
        .expect("get_tuple")
        .expect("a checkpoint")
        .checkpoint
        .channel_values
        .get("messages")
        .cloned()
        .expect("messages")
}

#[tokio::test]
async fn a_read_after_a_put_takes_the_blob_from_the_cache() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = "cached";
    let value = messages("a", 50);
    put_one(&db, thread, &new_id(0), value.clone()).await;
    assert_eq!(db.blob_cache_stats().entries, 1);
    assert_eq!(head_messages(&db, thread).await, value);
    assert_eq!(head_messages(&db, thread).await, value);
    assert_eq!(db.blob_cache_stats().hits, 2);

    // A saver that never held it reads the bytes, then holds them.
    let other = db.another_saver(true).await;
    assert_eq!(head_messages(&other, thread).await, value);
    assert_eq!(other.blob_cache_stats().hits, 0);
    assert_eq!(head_messages(&other, thread).await, value);
    assert_eq!(other.blob_cache_stats().hits, 1);

    // Off: nothing held, the same values.
    let off = db.another_saver(true).await.with_blob_cache(0);
    assert_eq!(head_messages(&off, thread).await, value);
    assert_eq!(head_messages(&off, thread).await, value);
    assert_eq!(off.blob_cache_stats(), Default::default());
}

#[tokio::test]
async fn a_thread_deleted_and_written_again_by_another_saver_is_read_anew() {
    let Some(db) = TestDb::unfenced().await else {
        return;
    };
    let thread = "recreated";
    let id = new_id(0);
    put_one(&db, thread, &id, messages("first", 50)).await;
    assert_eq!(head_messages(&db, thread).await, messages("first", 50));

    // Another process: same thread, same checkpoint id, same channel version, other bytes
    // of the same length.
    let other = db.another_saver(false).await;
    other.delete_thread(thread).await.expect("delete");
    put_one(&other, thread, &id, messages("other", 50)).await;
    assert_eq!(head_messages(&db, thread).await, messages("other", 50));
    assert_eq!(db.blob_cache_stats().hits, 1, "only the first read hit");
}

#[tokio::test]
async fn a_blob_replaced_in_one_transaction_is_read_anew() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = "replaced";
    put_one(&db, thread, &new_id(0), messages("first", 50)).await;
    assert_eq!(head_messages(&db, thread).await, messages("first", 50));
    let hits = db.blob_cache_stats().hits;

    // Delete and insert in one transaction: the new row has the old row's xmin, not its
    // place. Then a plain update (a new xmin) of the same bytes' length.
    let raw = db.raw().await;
    let serde = db.serializer().clone();
    let second = serde.dumps_typed(&messages("other", 50)).expect("encode");
    let third = serde.dumps_typed(&messages("third", 50)).expect("encode");
    assert_eq!(second.bytes.len(), third.bytes.len());
    raw.batch_execute("BEGIN").await.expect("begin");
    raw.execute(
        "DELETE FROM checkpoint_blobs WHERE thread_id = $1",
        &[&thread],
    )
    .await
    .expect("delete");
    raw.execute(
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
         SELECT thread_id, checkpoint_ns, 'messages', \
                checkpoint -> 'channel_versions' ->> 'messages', 'msgpack', $2 \
         FROM checkpoints WHERE thread_id = $1",
        &[&thread, &second.bytes],
    )
    .await
    .expect("insert");
    raw.batch_execute("COMMIT").await.expect("commit");
    assert_eq!(head_messages(&db, thread).await, messages("other", 50));
    assert_eq!(head_messages(&db, thread).await, messages("other", 50));
    assert_eq!(db.blob_cache_stats().hits, hits + 1);

    raw.execute(
        "UPDATE checkpoint_blobs SET blob = $2 WHERE thread_id = $1",
        &[&thread, &third.bytes],
    )
    .await
    .expect("update");
    assert_eq!(head_messages(&db, thread).await, messages("third", 50));
    assert_eq!(db.blob_cache_stats().hits, hits + 1);
}

#[tokio::test]
async fn an_older_checkpoint_read_twice_hits_the_second_time() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = "older";
    let first = put_one(&db, thread, &new_id(0), messages("a", 50)).await;
    // A fresh saver, so that nothing was put through it.
    let reader = db.another_saver(true).await;
    let config = CheckpointConfig::for_checkpoint(thread, "", first.id.as_str());
    for _ in 0..3 {
        let got = reader
            .get_tuple(&config)
            .await
            .expect("get")
            .expect("found");
        assert_eq!(
            got.checkpoint.channel_values.get("messages"),
            Some(&messages("a", 50))
        );
    }
    assert_eq!(reader.blob_cache_stats().hits, 2);
}

/// A DeltaChannel snapshot of `n` messages (a few KB: cached).
fn snapshot(tag: &str, n: usize) -> Value {
    Value::ext(stategraph_checkpoint::Ext::DeltaSnapshot(messages(tag, n)))
}

/// Snapshot → delta step (with a write on the snapshot's checkpoint): returns the
/// config of the second checkpoint.
async fn delta_thread(saver: &PostgresSaver, thread: &str, seed: Value) -> CheckpointConfig {
    use stategraph_checkpoint_conformance::fixtures::{loop_step, write, NewCheckpoint};
    let first = NewCheckpoint::new()
        .value("m", seed, 1)
        .put(saver, &CheckpointConfig::thread(thread), &loop_step(0))
        .await
        .expect("put snapshot");
    saver
        .put_writes(&first, &[write("m", messages("w", 1))], "t1", "")
        .await
        .expect("writes");
    NewCheckpoint::new()
        .unstored("m", 2)
        .put(saver, &first, &loop_step(1))
        .await
        .expect("put delta")
}

async fn seed_of(saver: &PostgresSaver, config: &CheckpointConfig) -> Option<Value> {
    saver
        .get_delta_channel_history(config, &["m".to_owned()])
        .await
        .expect("history")
        .get("m")
        .and_then(|h| h.seed.clone())
}

#[tokio::test]
async fn a_delta_seed_is_taken_from_the_cache_until_its_row_changes() {
    let Some(db) = TestDb::unfenced().await else {
        return;
    };
    let thread = "delta";
    let head = delta_thread(&db, thread, snapshot("first", 50)).await;
    let hits = db.blob_cache_stats().hits;
    assert_eq!(seed_of(&db, &head).await, Some(snapshot("first", 50)));
    assert_eq!(seed_of(&db, &head).await, Some(snapshot("first", 50)));
    assert_eq!(
        db.blob_cache_stats().hits,
        hits + 2,
        "the put's snapshot is held"
    );
    let cold = db.another_saver(false).await.with_blob_cache(0);
    assert_eq!(
        cold.get_delta_channel_history(&head, &["m".to_owned()])
            .await
            .expect("history"),
        db.get_delta_channel_history(&head, &["m".to_owned()])
            .await
            .expect("history"),
    );

    // Another process deletes the thread and writes it again, with the same versions.
    let other = db.another_saver(false).await;
    other.delete_thread(thread).await.expect("delete");
    let again = delta_thread(&other, thread, snapshot("other", 50)).await;
    assert_eq!(seed_of(&db, &again).await, Some(snapshot("other", 50)));
}

#[tokio::test]
async fn a_group_commit_keeps_its_blobs_like_a_single_put() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = "batched";
    let value = messages("b", 50);
    let version = stategraph_checkpoint::ChannelVersion::from("00000000000000000000000000000001.0");
    let mut c = Checkpoint::empty(new_id(0), "2025-01-01T00:00:00+00:00");
    c.channel_values.insert("messages".into(), value.clone());
    c.channel_versions
        .insert("messages".into(), version.clone());
    let put = stategraph_checkpoint::SaveOp::Put {
        config: CheckpointConfig::thread(thread),
        checkpoint: std::sync::Arc::new(c.clone()),
        metadata: CheckpointMetadata::new(CheckpointSource::Loop, 0),
        new_versions: [("messages".to_owned(), version)].into_iter().collect(),
    };
    let writes = stategraph_checkpoint::SaveOp::PutWrites {
        config: CheckpointConfig::for_checkpoint(thread, "", &c.id),
        writes: vec![("messages".to_owned(), Value::from("hi"))],
        task_id: "t1".to_owned(),
        task_path: String::new(),
    };
    db.put_batch(&[put, writes]).await.expect("put_batch");
    assert_eq!(db.blob_cache_stats().entries, 1);
    assert_eq!(head_messages(&db, thread).await, value);
    assert_eq!(db.blob_cache_stats().hits, 1);
}
