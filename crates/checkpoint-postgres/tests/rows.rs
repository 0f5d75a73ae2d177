//! What lands in which row, beyond the conformance suite: schema and migrations, inline
//! values and blobs, metadata, the repeated-write rule, and the blobs and parents that
//! `delete_for_runs` and `prune` leave behind.

use stategraph_checkpoint::ext::Ext;
use stategraph_checkpoint::{
    list, map, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, Error, PruneStrategy, Value,
};
use stategraph_checkpoint_postgres::{db_error, MIGRATIONS, SCHEMA_VERSION};

use crate::support::TestDb;

fn new_thread() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn new_id(step: i64) -> String {
    stategraph_checkpoint::id::IdGenerator::system().uuid6(step)
}

/// A checkpoint with `values` at `version`, all of them new.
fn cp(values: &[(&str, Value)], version: &ChannelVersion) -> (Checkpoint, ChannelVersions) {
    let mut c = Checkpoint::empty(new_id(0), "2025-01-01T00:00:00+00:00");
    for (k, v) in values {
        c.channel_values.insert((*k).to_owned(), v.clone());
        c.channel_versions.insert((*k).to_owned(), version.clone());
    }
    let new = c.channel_versions.clone();
    (c, new)
}

fn loop_md(step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new(CheckpointSource::Loop, step)
}

async fn count(
    db: &TestDb,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> i64 {
    db.raw()
        .await
        .query_one(sql, params)
        .await
        .expect(sql)
        .get(0)
}

#[tokio::test]
async fn setup_records_pythons_versions_and_is_idempotent() {
    let Some(db) = TestDb::bare().await else {
        return;
    };
    assert_eq!(db.schema_version().await.unwrap(), -1);
    db.setup().await.expect("setup");
    db.setup().await.expect("setup again");
    assert_eq!(db.schema_version().await.unwrap(), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 9);
    let raw = db.raw().await;
    let versions: Vec<i32> = raw
        .query("SELECT v FROM checkpoint_migrations ORDER BY v", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (0..MIGRATIONS.len() as i32).collect::<Vec<_>>());
    let columns: Vec<String> = raw
        .query(
            "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable \
             FROM information_schema.columns WHERE table_schema = current_schema() \
             AND table_name LIKE 'checkpoint%' ORDER BY table_name, ordinal_position",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let want = [
        "checkpoint_blobs.thread_id text NO",
        "checkpoint_blobs.checkpoint_ns text NO",
        "checkpoint_blobs.channel text NO",
        "checkpoint_blobs.version text NO",
        "checkpoint_blobs.type text NO",
        "checkpoint_blobs.blob bytea YES",
        "checkpoint_migrations.v integer NO",
        "checkpoint_writes.thread_id text NO",
        "checkpoint_writes.checkpoint_ns text NO",
        "checkpoint_writes.checkpoint_id text NO",
        "checkpoint_writes.task_id text NO",
        "checkpoint_writes.idx integer NO",
        "checkpoint_writes.channel text NO",
        "checkpoint_writes.type text YES",
        "checkpoint_writes.blob bytea NO",
        "checkpoint_writes.task_path text NO",
        "checkpoints.thread_id text NO",
        "checkpoints.checkpoint_ns text NO",
        "checkpoints.checkpoint_id text NO",
        "checkpoints.parent_checkpoint_id text YES",
        "checkpoints.type text YES",
        "checkpoints.checkpoint jsonb NO",
        "checkpoints.metadata jsonb NO",
    ];
    assert_eq!(columns, want);
    let indexes = count(
        &db,
        "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() \
         AND indexname LIKE '%thread_id_idx'",
        &[],
    )
    .await;
    assert_eq!(indexes, 3);
}

#[tokio::test]
async fn an_unchanged_value_is_stored_once_and_found_by_later_checkpoints() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = new_thread();
    let v1 = db.get_next_version(None);
    let (c1, n1) = cp(&[("items", list![1, 2]), ("name", "a".into())], &v1);
    db.put(
        &CheckpointConfig::thread(thread.as_str()),
        &c1,
        &loop_md(0),
        &n1,
    )
    .await
    .unwrap();
    let v2 = db.get_next_version(Some(&v1));
    let mut c2 = c1.clone();
    c2.id = new_id(1);
    c2.channel_values.insert("name".into(), "b".into());
    c2.channel_versions.insert("name".into(), v2.clone());
    let n2: ChannelVersions = [("name".to_owned(), v2)].into_iter().collect();
    let parent = CheckpointConfig::for_checkpoint(thread.as_str(), "", c1.id.as_str());
    db.put(&parent, &c2, &loop_md(1), &n2).await.unwrap();
    assert_eq!(
        count(&db, "SELECT count(*) FROM checkpoint_blobs", &[]).await,
        1
    );
    let head = db
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        head.checkpoint.channel_values.get("items"),
        Some(&list![1, 2])
    );
    assert_eq!(
        head.checkpoint.channel_values.get("name"),
        Some(&Value::from("b"))
    );
}

#[tokio::test]
async fn primitives_inline_others_in_blobs_and_what_jsonb_cannot_hold_too() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = new_thread();
    let v = db.get_next_version(None);
    let values = [
        ("s", Value::from("x")),
        ("i", Value::from(-7)),
        ("f", Value::from(1e16)),
        ("tiny", Value::from(5e-324)),
        ("huge", Value::from(-1.7976931348623157e308)),
        ("b", Value::from(false)),
        ("n", Value::Nil),
        ("nan", Value::from(f64::NAN)),
        ("nul", Value::from("a\0b")),
        ("bytes", Value::from(vec![0u8, 1])),
        ("delta", Value::from(Ext::DeltaSnapshot(list!["x"]))),
    ];
    let (c, new) = cp(&values, &v);
    db.put(
        &CheckpointConfig::thread(thread.as_str()),
        &c,
        &loop_md(0),
        &new,
    )
    .await
    .unwrap();
    let raw = db.raw().await;
    let row = raw
        .query_one(
            "SELECT (SELECT array_agg(k ORDER BY k) \
                     FROM jsonb_object_keys(checkpoint -> 'channel_values') AS k), \
                    checkpoint -> 'channel_values' ->> 'delta', \
                    checkpoint -> 'channel_values' ->> 'f', \
                    (SELECT array_agg(channel ORDER BY channel) FROM checkpoint_blobs) \
             FROM checkpoints",
            &[],
        )
        .await
        .unwrap();
    let inline_keys: Vec<String> = row.get(0);
    assert_eq!(
        inline_keys,
        ["b", "delta", "f", "huge", "i", "n", "s", "tiny"]
    );
    assert_eq!(row.get::<_, String>(1), "true");
    assert_eq!(row.get::<_, String>(2), "10000000000000000.0");
    let blobs: Vec<String> = row.get(3);
    assert_eq!(blobs, ["bytes", "delta", "nan", "nul"]);
    let got = db
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .unwrap()
        .unwrap();
    for (k, want) in &values {
        let value = got.checkpoint.channel_values.get(*k).unwrap();
        match want {
            Value::Float(x) if x.is_nan() => assert!(value.as_f64().is_some_and(f64::is_nan)),
            _ => assert_eq!(value, want, "channel {k}"),
        }
    }
}

#[tokio::test]
async fn metadata_is_stored_as_pythons_get_checkpoint_metadata_makes_it() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = new_thread();
    let mut config = CheckpointConfig::thread(thread.as_str())
        .with_configurable("user_id", "u\u{0}1")
        .with_configurable("__hidden", "x")
        .with_configurable("n", 5)
        .with_configurable("obj", map! { "a" => 1 })
        .with_configurable("checkpoint_map", "excluded");
    config.metadata.insert("tag".into(), "m".into());
    let md = loop_md(0)
        .with("writes", map! { "node" => 1 })
        .with("s", "a\0b")
        .with("deep", map! { "k" => list![1.5, "z"] });
    let (c, new) = cp(&[], &db.get_next_version(None));
    db.put(&config, &c, &md, &new).await.unwrap();
    let text: String = db
        .raw()
        .await
        .query_one("SELECT metadata::text FROM checkpoints", &[])
        .await
        .unwrap()
        .get(0);
    let got: serde_json::Value = serde_json::from_str(&text).unwrap();
    let want = serde_json::json!({
        "source": "loop", "step": 0, "parents": {}, "s": "ab",
        "deep": {"k": [1.5, "z"]}, "tag": "m", "user_id": "u1", "n": 5,
    });
    assert_eq!(got, want);
    // Metadata JSONB cannot hold is refused, and nothing is stored.
    let (c2, new2) = cp(&[], &db.get_next_version(None));
    let other = CheckpointConfig::thread(new_thread());
    for bad in [
        loop_md(0).with("b", vec![1u8]),
        loop_md(0).with("deep", list!["a\0b"]),
        loop_md(0).with("x", f64::INFINITY),
    ] {
        let err = db
            .put(&other, &c2, &bad, &new2)
            .await
            .expect_err("unstorable");
        assert!(matches!(err, Error::Encode(_)), "{err}");
    }
    assert_eq!(count(&db, "SELECT count(*) FROM checkpoints", &[]).await, 1);
}

#[tokio::test]
async fn a_repeated_reserved_write_keeps_the_last_value_even_in_a_mixed_batch() {
    let Some(db) = TestDb::unfenced().await else {
        return;
    };
    let thread = new_thread();
    let (c, new) = cp(&[], &db.get_next_version(None));
    let stored = db
        .put(
            &CheckpointConfig::thread(thread.as_str()),
            &c,
            &loop_md(0),
            &new,
        )
        .await
        .unwrap();
    let w = |ch: &str, v: &str| (ch.to_owned(), Value::from(v));
    db.put_writes(&stored, &[w("__resume__", "X"), w("a", "1")], "t", "p")
        .await
        .unwrap();
    // Python keeps "X" here (its mixed batch ignores every conflict); the trait's rule
    // keeps the last reserved value and the first normal one.
    db.put_writes(&stored, &[w("__resume__", "Y"), w("a", "2")], "t", "p")
        .await
        .unwrap();
    // Twice in one batch: the last one.
    db.put_writes(
        &stored,
        &[w("__error__", "e1"), w("b", "3"), w("__error__", "e2")],
        "t2",
        "p",
    )
    .await
    .unwrap();
    let got = db.get_tuple(&stored).await.unwrap().unwrap();
    let writes: Vec<(&str, &str, &Value)> = got
        .pending_writes
        .iter()
        .map(|w| (w.task_id.as_str(), w.channel.as_str(), &w.value))
        .collect();
    assert_eq!(
        writes,
        [
            ("t", "__resume__", &Value::from("Y")),
            ("t", "a", &Value::from("1")),
            ("t2", "__error__", &Value::from("e2")),
            ("t2", "b", &Value::from("3")),
        ]
    );
}

#[tokio::test]
async fn delete_for_runs_keeps_the_blobs_survivors_use() {
    let Some(db) = TestDb::unfenced().await else {
        return;
    };
    let thread = new_thread();
    let v1 = db.get_next_version(None);
    let (c1, n1) = cp(&[("shared", list![1]), ("own", list![2])], &v1);
    let md1 = loop_md(0).with("run_id", "r1");
    db.put(&CheckpointConfig::thread(thread.as_str()), &c1, &md1, &n1)
        .await
        .unwrap();
    let v2 = db.get_next_version(Some(&v1));
    let mut c2 = c1.clone();
    c2.id = new_id(1);
    c2.channel_values.insert("own".into(), list![3]);
    c2.channel_versions.insert("own".into(), v2.clone());
    let n2: ChannelVersions = [("own".to_owned(), v2)].into_iter().collect();
    let parent = CheckpointConfig::for_checkpoint(thread.as_str(), "", c1.id.as_str());
    db.put(&parent, &c2, &loop_md(1).with("run_id", "r2"), &n2)
        .await
        .unwrap();
    db.put_writes(&parent, &[("x".into(), Value::from(1))], "t", "")
        .await
        .unwrap();
    assert_eq!(
        count(&db, "SELECT count(*) FROM checkpoint_blobs", &[]).await,
        3
    );

    db.delete_for_runs(&["r1".to_owned(), "unknown".to_owned()])
        .await
        .unwrap();
    assert_eq!(
        count(&db, "SELECT count(*) FROM checkpoint_blobs", &[]).await,
        2
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM checkpoint_writes", &[]).await,
        0
    );
    let head = db
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        head.checkpoint.channel_values.get("shared"),
        Some(&list![1])
    );
    assert!(head.parent_config.is_none());

    db.delete_for_runs(&["r2".to_owned()]).await.unwrap();
    assert_eq!(
        count(&db, "SELECT count(*) FROM checkpoint_blobs", &[]).await,
        0
    );
    assert_eq!(count(&db, "SELECT count(*) FROM checkpoints", &[]).await, 0);
}

#[tokio::test]
async fn prune_keep_latest_drops_old_blobs_and_finished_subgraph_calls() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = new_thread();
    let v1 = db.get_next_version(None);
    let (c1, n1) = cp(&[("a", list![1])], &v1);
    db.put(
        &CheckpointConfig::thread(thread.as_str()),
        &c1,
        &loop_md(0),
        &n1,
    )
    .await
    .unwrap();
    let v2 = db.get_next_version(Some(&v1));
    let (mut c2, n2) = cp(&[("a", list![2])], &v2);
    c2.id = new_id(1);
    let parent = CheckpointConfig::for_checkpoint(thread.as_str(), "", c1.id.as_str());
    db.put(&parent, &c2, &loop_md(1), &n2).await.unwrap();
    // A subgraph call started from c1 (pruned), and a checkpointer=True subgraph (no ':').
    let (s, ns_new) = cp(&[("x", list![9])], &v1);
    let mut call_md = loop_md(0);
    call_md.parents = Some([(String::new(), c1.id.clone())].into());
    let call = CheckpointConfig::thread(thread.as_str()).with_ns("sub:abc");
    db.put(&call, &s, &call_md, &ns_new).await.unwrap();
    let kept = CheckpointConfig::thread(thread.as_str()).with_ns("inner");
    db.put(&kept, &s, &call_md, &ns_new).await.unwrap();
    let other = new_thread();
    db.put(
        &CheckpointConfig::thread(other.as_str()),
        &c1,
        &loop_md(0),
        &n1,
    )
    .await
    .unwrap();

    db.prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest)
        .await
        .unwrap();
    let namespaces: Vec<String> = db
        .raw()
        .await
        .query(
            "SELECT checkpoint_ns || ':' || channel FROM checkpoint_blobs WHERE thread_id = $1 \
             ORDER BY 1",
            &[&thread],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(namespaces, [":a", "inner:x"]);
    let head = db
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(head.checkpoint.id, c2.id);
    assert_eq!(head.checkpoint.channel_values.get("a"), Some(&list![2]));
    assert!(head.parent_config.is_none());
    assert!(db.get_tuple(&call).await.unwrap().is_none());
    assert!(db.get_tuple(&kept).await.unwrap().is_some());
    let untouched = CheckpointConfig::thread(other.as_str());
    assert!(db.get_tuple(&untouched).await.unwrap().is_some());
}

#[tokio::test]
async fn prune_keep_latest_refuses_threads_with_a_delta_channel() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = new_thread();
    let v = db.get_next_version(None);
    let (c1, n1) = cp(&[("d", Value::from(Ext::DeltaSnapshot(list![1])))], &v);
    db.put(
        &CheckpointConfig::thread(thread.as_str()),
        &c1,
        &loop_md(0),
        &n1,
    )
    .await
    .unwrap();
    let (mut c2, _) = cp(&[], &v);
    c2.id = new_id(1);
    let parent = CheckpointConfig::for_checkpoint(thread.as_str(), "", c1.id.as_str());
    db.put(&parent, &c2, &loop_md(1), &ChannelVersions::default())
        .await
        .unwrap();
    let err = db
        .prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest)
        .await
        .expect_err("a delta thread");
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    assert_eq!(count(&db, "SELECT count(*) FROM checkpoints", &[]).await, 2);
    db.prune(std::slice::from_ref(&thread), PruneStrategy::Delete)
        .await
        .unwrap();
    assert_eq!(
        count(&db, "SELECT count(*) FROM checkpoint_blobs", &[]).await,
        0
    );
}

#[tokio::test]
async fn an_old_format_checkpoint_reads_its_parents_sends() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let raw = db.raw().await;
    raw.batch_execute(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, \
         checkpoint, metadata) VALUES \
         ('t', '', '1', NULL, '{\"v\": 3, \"id\": \"1\", \"ts\": \"x\", \"channel_values\": {}, \
           \"channel_versions\": {}, \"versions_seen\": {}}', '{\"step\": 0}'), \
         ('t', '', '2', '1', '{\"v\": 3, \"id\": \"2\", \"ts\": \"x\", \"channel_values\": {\"k\": 1}, \
           \"channel_versions\": {\"k\": \"00000000000000000000000000000002.0.5\"}, \
           \"versions_seen\": {}}', '{\"step\": 1}'); \
         INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, \
         idx, channel, type, blob) VALUES \
         ('t', '', '1', 'b', '', 0, '__pregel_tasks', 'msgpack', '\\xa15a'), \
         ('t', '', '1', 'a', '', 0, '__pregel_tasks', 'msgpack', '\\xa15b');",
    )
    .await
    .unwrap();
    let got = db
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        got.checkpoint.channel_values.get("__pregel_tasks"),
        Some(&list!["[", "Z"])
    );
    assert_eq!(
        got.checkpoint.channel_versions.get("__pregel_tasks"),
        Some(&ChannelVersion::from(
            "00000000000000000000000000000002.0.5"
        ))
    );
    let listed = db.list(None, &Default::default()).await.unwrap();
    assert_eq!(listed[0], got);
    assert!(!listed[1]
        .checkpoint
        .channel_values
        .contains_key("__pregel_tasks"));
}

#[tokio::test]
async fn a_server_error_keeps_its_sqlstate() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    db.raw()
        .await
        .batch_execute("DROP TABLE checkpoint_writes")
        .await
        .unwrap();
    let err = db
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect_err("no table");
    assert!(matches!(err, Error::Backend(_)));
    let code = db_error(&err).map(|e| e.code().clone());
    assert_eq!(code, Some(tokio_postgres::error::SqlState::UNDEFINED_TABLE));
}

/// A chat-like list: `len` maps, the first one's text `head`.
fn messages(head: &str, len: usize) -> Value {
    let items: Vec<Value> = (0..len)
        .map(|i| {
            let text = if i == 0 {
                head.to_owned()
            } else {
                format!("message {i}")
            };
            let mut m = stategraph_checkpoint::Map::new();
            m.insert(Value::from("content"), Value::from(text));
            m.insert(Value::from("n"), Value::from(i as i64));
            Value::Map(m)
        })
        .collect();
    Value::from(items)
}

#[tokio::test]
async fn long_lists_read_back_exactly_in_any_order() {
    // Lists of 18+ elements go through the saver's decode memo; the fourth list shares no
    // first element with the third, the fifth is shorter than the one before.
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = new_thread();
    let lists = [
        messages("a", 20),
        messages("a", 21),
        messages("a", 23),
        messages("b", 23),
        messages("b", 18),
    ];
    let mut ids = Vec::new();
    let mut version = None;
    for (i, list) in lists.iter().enumerate() {
        let v = db.get_next_version(version.as_ref());
        let (mut c, new) = cp(&[("messages", list.clone())], &v);
        c.id = new_id(i as i64);
        let mut config = CheckpointConfig::thread(thread.as_str());
        config.checkpoint_id = ids.last().cloned();
        db.put(&config, &c, &loop_md(i as i64), &new).await.unwrap();
        ids.push(c.id.clone());
        version = Some(v);
    }
    for n in [2, 1, 3, 0, 4, 2, 2, 0] {
        let config = CheckpointConfig::for_checkpoint(thread.as_str(), "", ids[n].as_str());
        let got = db.get_tuple(&config).await.unwrap().unwrap();
        assert_eq!(
            got.checkpoint.channel_values["messages"], lists[n],
            "checkpoint {n}"
        );
    }
    let listed = db
        .list(
            Some(&CheckpointConfig::thread(thread.as_str())),
            &Default::default(),
        )
        .await
        .unwrap();
    let got: Vec<Value> = listed
        .iter()
        .map(|t| t.checkpoint.channel_values["messages"].clone())
        .collect();
    let want: Vec<Value> = lists.iter().rev().cloned().collect();
    assert_eq!(got, want);
}
