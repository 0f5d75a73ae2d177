//! Long strings (over `INLINE_STRING_MAX` bytes): stored once per version in
//! `checkpoint_blobs` instead of inline in every checkpoint row, and carried into a blob
//! when a thread whose rows hold them inline (Python's) goes on here.

use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, Value,
};
use stategraph_checkpoint_postgres::{PostgresSaver, INLINE_STRING_MAX};

use crate::support::TestDb;

fn new_thread() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn new_id(step: i64) -> String {
    stategraph_checkpoint::id::IdGenerator::system().uuid6(step)
}

fn loop_md(step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new(CheckpointSource::Loop, step)
}

/// Long strings with both msgpack headers a long string can have (`str16`, `str32`),
/// multi-byte characters (the limit and the header count bytes) and JSON escapes.
fn long_strings() -> Vec<(&'static str, String)> {
    vec![
        ("just_over", "s".repeat(INLINE_STRING_MAX + 1)),
        ("str16", format!("\"q\"\n{}", "é".repeat(INLINE_STRING_MAX))),
        ("str32", "ab\u{1F600}".repeat(70_000 / 6 + 1)),
    ]
}

/// The number of rows of `sql`.
async fn count(db: &TestDb, sql: &str) -> i64 {
    db.raw().await.query_one(sql, &[]).await.expect(sql).get(0)
}

/// A chain of three checkpoints: the long strings and a counter in the first, then only
/// the counter changes. Returns the ids.
async fn put_chain(saver: &PostgresSaver, thread: &str) -> Vec<String> {
    let v1 = saver.get_next_version(None);
    let mut c = Checkpoint::empty(new_id(0), "2025-01-01T00:00:00+00:00");
    for (k, s) in long_strings() {
        c.channel_values.insert(k.into(), Value::from(s));
        c.channel_versions.insert(k.into(), v1.clone());
    }
    c.channel_values.insert("counter".into(), 0.into());
    c.channel_versions.insert("counter".into(), v1.clone());
    let mut new = c.channel_versions.clone();
    let mut config = CheckpointConfig::thread(thread);
    let mut ids = Vec::new();
    let mut version = v1;
    for step in 0..3 {
        config = saver
            .put(&config, &c, &loop_md(step), &new)
            .await
            .expect("put");
        ids.push(c.id.clone());
        version = saver.get_next_version(Some(&version));
        c.id = new_id(step + 1);
        c.channel_values.insert("counter".into(), (step + 1).into());
        c.channel_versions.insert("counter".into(), version.clone());
        new = [("counter".to_owned(), version.clone())]
            .into_iter()
            .collect();
    }
    ids
}

/// Every checkpoint of the thread reads the long strings back as they were put.
async fn assert_read_back(saver: &PostgresSaver, thread: &str, ids: &[String]) {
    for id in ids {
        let got = saver
            .get_tuple(&CheckpointConfig::for_checkpoint(thread, "", id.as_str()))
            .await
            .expect("get_tuple")
            .expect("a stored checkpoint");
        for (k, s) in long_strings() {
            assert_eq!(
                got.checkpoint.channel_values.get(k),
                Some(&Value::from(s)),
                "{k} of {id}"
            );
        }
    }
}

#[tokio::test]
async fn a_long_string_is_stored_once_in_blobs_not_in_every_checkpoint_row() {
    for fenced in [true, false] {
        let Some(db) = (if fenced {
            TestDb::create().await
        } else {
            TestDb::unfenced().await
        }) else {
            return;
        };
        let thread = new_thread();
        let ids = put_chain(&db, &thread).await;
        // One blob per long string for three checkpoints; the counter stays inline.
        assert_eq!(
            count(
                &db,
                "SELECT count(*) FROM checkpoint_blobs WHERE type = 'msgpack'"
            )
            .await,
            3
        );
        assert_eq!(count(&db, "SELECT count(*) FROM checkpoint_blobs").await, 3);
        let inline_keys = count(
            &db,
            "SELECT count(*) FROM checkpoints, jsonb_object_keys(checkpoint -> 'channel_values') k \
             WHERE k <> 'counter'",
        )
        .await;
        assert_eq!(inline_keys, 0);
        // The blobs are what the serializer writes for those strings.
        let raw = db.raw().await;
        for (k, s) in long_strings() {
            let blob: Vec<u8> = raw
                .query_one(
                    "SELECT blob FROM checkpoint_blobs WHERE channel = $1",
                    &[&k],
                )
                .await
                .unwrap()
                .get(0);
            let want = JsonPlusSerializer.dumps_typed(&Value::from(s)).unwrap();
            assert_eq!(blob, want.bytes, "{k}");
        }
        assert_read_back(&db, &thread, &ids).await;
    }
}

#[tokio::test]
async fn a_string_of_the_limit_stays_inline() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = new_thread();
    let v = db.get_next_version(None);
    let mut c = Checkpoint::empty(new_id(0), "2025-01-01T00:00:00+00:00");
    let edge = "x".repeat(INLINE_STRING_MAX);
    c.channel_values.insert("edge".into(), edge.as_str().into());
    c.channel_versions.insert("edge".into(), v);
    let new = c.channel_versions.clone();
    db.put(
        &CheckpointConfig::thread(thread.as_str()),
        &c,
        &loop_md(0),
        &new,
    )
    .await
    .unwrap();
    assert_eq!(count(&db, "SELECT count(*) FROM checkpoint_blobs").await, 0);
    let inline: String = db
        .raw()
        .await
        .query_one(
            "SELECT checkpoint -> 'channel_values' ->> 'edge' FROM checkpoints",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(inline, edge);
}

/// Stores a checkpoint row as Python's saver does: every string inline.
async fn put_inline_row(db: &TestDb, thread: &str, id: &str, version: &ChannelVersion) {
    let mut values = serde_json::Map::new();
    let mut versions = serde_json::Map::new();
    for (k, s) in long_strings() {
        values.insert(k.into(), serde_json::Value::from(s));
        versions.insert(k.into(), serde_json::Value::from(version.as_text()));
    }
    let doc = serde_json::json!({
        "v": 4, "id": id, "ts": "2025-01-01T00:00:00+00:00",
        "channel_values": values, "channel_versions": versions,
        "versions_seen": {}, "updated_channels": null,
    });
    db.raw()
        .await
        .execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) \
             VALUES ($1, '', $2, $3::text::jsonb, '{\"source\": \"loop\", \"step\": 0}')",
            &[&thread, &id, &doc.to_string()],
        )
        .await
        .expect("a Python-style row");
}

#[tokio::test]
async fn a_long_string_stored_inline_by_python_is_carried_into_a_blob() {
    for fenced in [true, false] {
        let Some(db) = (if fenced {
            TestDb::create().await
        } else {
            TestDb::unfenced().await
        }) else {
            return;
        };
        let thread = new_thread();
        let v1 = db.get_next_version(None);
        let parent_id = new_id(0);
        put_inline_row(&db, &thread, &parent_id, &v1).await;

        // The child changes another channel only: the long strings are carried.
        let mut c = Checkpoint::empty(new_id(1), "2025-01-01T00:00:01+00:00");
        for (k, s) in long_strings() {
            c.channel_values.insert(k.into(), Value::from(s));
            c.channel_versions.insert(k.into(), v1.clone());
        }
        let v2 = db.get_next_version(Some(&v1));
        c.channel_values.insert("counter".into(), 1.into());
        c.channel_versions.insert("counter".into(), v2.clone());
        let new: ChannelVersions = [("counter".to_owned(), v2)].into_iter().collect();
        let parent = CheckpointConfig::for_checkpoint(thread.as_str(), "", parent_id.as_str());
        let saved = db.put(&parent, &c, &loop_md(1), &new).await.unwrap();
        let child_inline = count(
            &db,
            &format!(
                "SELECT count(*) FROM checkpoints, jsonb_object_keys(checkpoint -> 'channel_values') k \
                 WHERE checkpoint_id = '{}' AND k <> 'counter'",
                c.id
            ),
        )
        .await;
        assert_eq!(child_inline, 0);
        let raw = db.raw().await;
        for (k, s) in long_strings() {
            let row = raw
                .query_one(
                    "SELECT type, blob, version FROM checkpoint_blobs WHERE channel = $1",
                    &[&k],
                )
                .await
                .unwrap();
            let want = JsonPlusSerializer.dumps_typed(&Value::from(s)).unwrap();
            assert_eq!(row.get::<_, String>(0), "msgpack");
            assert_eq!(row.get::<_, Vec<u8>>(1), want.bytes, "{k}");
            assert_eq!(row.get::<_, String>(2), v1.as_text());
        }
        assert_read_back(&db, &thread, &[parent_id.clone(), c.id.clone()]).await;

        // A grandchild carries them again: the blobs exist, nothing more is stored.
        let mut g = c.clone();
        g.id = new_id(2);
        db.put(&saved, &g, &loop_md(2), &ChannelVersions::default())
            .await
            .unwrap();
        assert_eq!(count(&db, "SELECT count(*) FROM checkpoint_blobs").await, 3);
        assert_read_back(&db, &thread, &[g.id.clone()]).await;
    }
}
