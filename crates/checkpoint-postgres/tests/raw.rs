//! The raw entry points (`put_raw`, `put_writes_raw`, `get_tuple_raw`, `list_raw`): a
//! checkpoint split as Python's `PostgresSaver` splits it (primitives inline, a
//! DeltaChannel snapshot as `true`, the other values as the caller's pairs) lands in the
//! rows a trait put writes, and reads hand back the rows as stored.

use stategraph_checkpoint::ext::Ext;
use stategraph_checkpoint::raw::{RawMetadata, RawState};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer, Typed};
use stategraph_checkpoint::{
    list, ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, ListOptions, Value,
};

use crate::support::TestDb;

const TASK: &str = "00000000-0000-0000-0000-00000000cafe";

/// Step `step` of a thread: a list that grows, a short and a long string that never
/// change after step 0, a number, and a DeltaChannel snapshot.
fn checkpoint(step: i64) -> Checkpoint {
    let mut cp = Checkpoint::empty(format!("{step}"), "2026-12-01T00:00:00+00:00");
    let version = |v: i64| ChannelVersion::Int(v + 1);
    let items = (0..=step).map(Value::Int).collect::<Vec<_>>();
    for (k, v, at) in [
        ("list", Value::list(items), step),
        ("short", Value::from("hi"), 0),
        ("long", Value::from("x".repeat(2000)), 0),
        ("n", Value::Int(step), step),
        ("delta", Value::from(Ext::DeltaSnapshot(list!["s"])), step),
    ] {
        cp.channel_values.insert(k.to_owned(), v);
        cp.channel_versions.insert(k.to_owned(), version(at));
    }
    cp
}

/// The versions that are new at `step`.
fn new_versions(cp: &Checkpoint, step: i64) -> stategraph_checkpoint::ChannelVersions {
    cp.channel_versions
        .iter()
        .filter(|(_, v)| **v == ChannelVersion::Int(step + 1))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The checkpoint as Python's saver splits it: the inline part, and the pairs.
fn split(cp: &Checkpoint) -> (Checkpoint, Vec<(String, Typed)>) {
    let mut plain = cp.clone();
    let mut pairs = Vec::new();
    for (k, v) in &cp.channel_values {
        let inline = matches!(
            v,
            Value::Nil | Value::Bool(_) | Value::Int(_) | Value::UInt(_) | Value::Float(_)
        ) || matches!(v, Value::Str(_));
        if inline {
            continue;
        }
        pairs.push((
            k.clone(),
            JsonPlusSerializer.dumps_typed(v).expect("encode"),
        ));
        if matches!(v, Value::Ext(e) if matches!(**e, Ext::DeltaSnapshot(_))) {
            plain.channel_values.insert(k.clone(), Value::Bool(true));
        } else {
            plain.channel_values.shift_remove(k);
        }
    }
    (plain, pairs)
}

fn writes() -> Vec<(String, Value)> {
    vec![
        ("list".to_owned(), Value::Int(9)),
        ("n".to_owned(), Value::from("w")),
    ]
}

fn encoded(writes: &[(String, Value)]) -> Vec<(String, Typed)> {
    writes
        .iter()
        .map(|(c, v)| {
            (
                c.clone(),
                JsonPlusSerializer.dumps_typed(v).expect("encode"),
            )
        })
        .collect()
}

fn metadata(step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new(CheckpointSource::Loop, step)
}

async fn rows(db: &TestDb) -> Vec<String> {
    let raw = db.raw().await;
    let mut out = Vec::new();
    for sql in [
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, \
         checkpoint::text, metadata::text FROM checkpoints ORDER BY checkpoint_id",
        "SELECT thread_id, channel, version, type, encode(blob, 'hex') FROM checkpoint_blobs \
         ORDER BY channel, version",
        "SELECT thread_id, checkpoint_id, task_id, idx, channel, type, encode(blob, 'hex') \
         FROM checkpoint_writes ORDER BY checkpoint_id, idx",
    ] {
        for row in raw.query(sql, &[]).await.expect(sql) {
            let cells: Vec<String> = (0..row.len())
                .map(|i| {
                    row.try_get::<_, Option<String>>(i)
                        .ok()
                        .flatten()
                        .or_else(|| row.try_get::<_, i32>(i).ok().map(|n| n.to_string()))
                        .unwrap_or_default()
                })
                .collect();
            out.push(cells.join("|"));
        }
    }
    out
}

#[tokio::test]
async fn a_raw_put_stores_the_rows_the_trait_put_stores() {
    let (Some(by_trait), Some(by_raw)) = (TestDb::create().await, TestDb::create().await) else {
        return;
    };
    let (mut a, mut b) = (CheckpointConfig::thread("t"), CheckpointConfig::thread("t"));
    for step in 0..3 {
        let cp = checkpoint(step);
        let new = new_versions(&cp, step);
        a = by_trait
            .put(&a, &cp, &metadata(step), &new)
            .await
            .expect("put");
        by_trait
            .put_writes(&a, &writes(), TASK, "")
            .await
            .expect("writes");
        let (plain, pairs) = split(&cp);
        b = by_raw
            .put_raw(&b, &plain, &metadata(step), &new, pairs)
            .await
            .expect("put_raw");
        by_raw
            .put_writes_raw(&b, encoded(&writes()), TASK, "")
            .await
            .expect("writes");
    }
    let (want, got) = (rows(&by_trait).await, rows(&by_raw).await);
    assert!(want.len() > 9, "{want:?}");
    assert_eq!(got, want);
    let read = by_raw
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("a tuple");
    assert_eq!(read.checkpoint, checkpoint(2));
}

#[tokio::test]
async fn a_raw_read_hands_back_the_row_as_stored() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let cp = checkpoint(0);
    let config = db
        .put(
            &CheckpointConfig::thread("t"),
            &cp,
            &metadata(0),
            &new_versions(&cp, 0),
        )
        .await
        .expect("put");
    db.put_writes(&config, &writes(), TASK, "")
        .await
        .expect("writes");
    let raw = db
        .get_tuple_raw(&config)
        .await
        .expect("get")
        .expect("a tuple");
    let RawState::Json { checkpoint, values } = &raw.state else {
        panic!("Postgres reads JSON: {:?}", raw.state);
    };
    let doc: serde_json::Value = serde_json::from_str(checkpoint).expect("json");
    assert_eq!(
        doc["channel_values"],
        serde_json::json!({"short": "hi", "n": 0, "delta": true})
    );
    let mut values = values.clone();
    values.sort_by(|a, b| a.0.cmp(&b.0));
    let serde = JsonPlusSerializer;
    let want: Vec<(String, Typed)> = ["delta", "list", "long"]
        .into_iter()
        .map(|k| {
            (
                k.to_owned(),
                serde.dumps_typed(&cp.channel_values[k]).expect("encode"),
            )
        })
        .collect();
    assert_eq!(values, want);
    let RawMetadata::Json(Some(md)) = &raw.metadata else {
        panic!("Postgres metadata is JSON: {:?}", raw.metadata);
    };
    let md: serde_json::Value = serde_json::from_slice(md).expect("json");
    assert_eq!(md["step"], 0);
    let got: Vec<(String, Typed)> = raw
        .pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    assert_eq!(got, encoded(&writes()));
    let listed = db
        .list_raw(
            Some(&CheckpointConfig::thread("t")),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    assert_eq!(listed, vec![raw]);
    let none = db
        .list_raw(None, &ListOptions::default().filter("step", 5))
        .await
        .expect("list");
    assert!(none.is_empty());
}
