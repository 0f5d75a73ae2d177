//! `MemorySaver`'s raw entry points (`put_raw`, `put_writes_raw`, `get_tuple_raw`,
//! `list_raw`, `blobs_raw`): encoded parts stored as given, read back as stored, on the
//! same layout, fence and order as the trait methods.

use stategraph_checkpoint::raw::{RawMetadata, RawState, RawTuple};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer, Typed};
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, Error, ListOptions, MemorySaver, Value,
};

const TASK: &str = "00000000-0000-0000-0000-00000000cafe";

fn checkpoint(id: &str, step: i64) -> Checkpoint {
    let mut cp = Checkpoint::empty(id, "2026-12-01T00:00:00+00:00");
    let messages = (0..=step)
        .map(|i| Value::from(format!("message {i}")))
        .collect::<Vec<_>>();
    cp.channel_values
        .insert("messages".into(), Value::list(messages));
    cp.channel_values.insert("step".into(), Value::Int(step));
    let version = ChannelVersion::Int(step + 1);
    cp.channel_versions
        .insert("messages".into(), version.clone());
    cp.channel_versions.insert("step".into(), version);
    // A channel in the versions without a value: stored as the `empty` sentinel.
    cp.channel_versions
        .insert("gone".into(), ChannelVersion::Int(step + 1));
    cp
}

fn metadata(step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new(CheckpointSource::Loop, step)
}

/// The parts a raw put takes, encoded by the same serializer as the saver's.
fn parts(cp: &Checkpoint) -> (Typed, Vec<(String, Typed)>) {
    let serde = JsonPlusSerializer;
    let values = cp
        .channel_values
        .iter()
        .map(|(k, v)| (k.clone(), serde.dumps_typed(v).expect("encode")))
        .collect();
    (serde.dumps_checkpoint(cp, false).expect("encode"), values)
}

fn writes() -> Vec<(String, Value)> {
    vec![
        ("messages".to_owned(), Value::from("late")),
        ("step".to_owned(), Value::Int(9)),
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

/// Two steps of one thread with a task's writes on the first, through the trait.
async fn through_trait(saver: &MemorySaver) {
    let mut config = CheckpointConfig::thread("t");
    for (id, step) in [("1", 0), ("2", 1)] {
        let cp = checkpoint(id, step);
        let versions: ChannelVersions = cp.channel_versions.clone();
        config = saver
            .put(&config, &cp, &metadata(step), &versions)
            .await
            .expect("put");
        if step == 0 {
            saver
                .put_writes(&config, &writes(), TASK, "")
                .await
                .expect("writes");
        }
    }
}

/// The same, through the raw entry points.
fn through_raw(saver: &MemorySaver) {
    let mut config = CheckpointConfig::thread("t");
    for (id, step) in [("1", 0), ("2", 1)] {
        let cp = checkpoint(id, step);
        let (plain, values) = parts(&cp);
        config = saver
            .put_raw(
                &config,
                id,
                plain,
                &metadata(step),
                &cp.channel_versions,
                values,
            )
            .expect("put_raw");
        if step == 0 {
            saver
                .put_writes_raw(&config, encoded(&writes()), TASK, "")
                .expect("writes");
        }
    }
}

#[tokio::test]
async fn a_raw_put_stores_the_layout_the_trait_put_stores() {
    let (by_trait, by_raw) = (MemorySaver::new(), MemorySaver::new());
    through_trait(&by_trait).await;
    through_raw(&by_raw);
    assert_eq!(by_raw.storage_snapshot(), by_trait.storage_snapshot());
    // And the trait reads what the raw path stored.
    let got = by_raw
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("a tuple");
    assert_eq!(got.checkpoint, checkpoint("2", 1));
}

#[tokio::test]
async fn a_raw_read_hands_back_the_stored_pairs() {
    let saver = MemorySaver::new();
    through_trait(&saver).await;
    let config = CheckpointConfig::for_checkpoint("t", "", "1");
    let raw = saver.get_tuple_raw(&config).expect("get").expect("a tuple");
    let cp = checkpoint("1", 0);
    let (plain, mut values) = parts(&cp);
    values.retain(|(channel, _)| channel != "gone");
    assert_eq!(
        raw.state,
        RawState::Split {
            checkpoint: plain,
            values: Some(values),
        }
    );
    assert_eq!(raw.parent_checkpoint_id, None);
    let RawMetadata::Typed(md) = &raw.metadata else {
        panic!("memory metadata is a pair: {:?}", raw.metadata);
    };
    let md = JsonPlusSerializer
        .loads_typed(&md.tag, &md.bytes)
        .expect("decode");
    assert_eq!(
        CheckpointMetadata::from_value(md).expect("metadata").step,
        Some(0)
    );
    let got: Vec<(String, Typed)> = raw
        .pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    assert_eq!(got, encoded(&writes()));
    // The latest, with its parent.
    let latest = saver
        .get_tuple_raw(&CheckpointConfig::thread("t"))
        .expect("get")
        .expect("a tuple");
    assert_eq!(
        (
            latest.checkpoint_id.as_str(),
            latest.parent_checkpoint_id.as_deref()
        ),
        ("2", Some("1"))
    );
}

#[tokio::test]
async fn list_raw_lists_what_list_lists() {
    let saver = MemorySaver::new();
    through_trait(&saver).await;
    let thread = CheckpointConfig::thread("t");
    for options in [
        ListOptions::default(),
        ListOptions::default().limit(1),
        ListOptions::default().filter("step", 0),
        ListOptions::default().filter("step", 5),
        ListOptions::default().before(CheckpointConfig::for_checkpoint("t", "", "2")),
    ] {
        let want: Vec<String> = saver
            .list(Some(&thread), &options)
            .await
            .expect("list")
            .into_iter()
            .map(|t| t.checkpoint.id)
            .collect();
        let got: Vec<String> = saver
            .list_raw(Some(&thread), &options)
            .expect("list_raw")
            .into_iter()
            .map(|t: RawTuple| t.checkpoint_id)
            .collect();
        assert_eq!(got, want, "{options:?}");
    }
}

#[test]
fn a_raw_put_behind_the_head_is_refused_and_stores_nothing() {
    let saver = MemorySaver::new();
    through_raw(&saver);
    let stale = checkpoint("3", 2);
    let (plain, values) = parts(&stale);
    let err = saver
        .put_raw(
            &CheckpointConfig::for_checkpoint("t", "", "1"),
            "3",
            plain,
            &metadata(2),
            &stale.channel_versions,
            values,
        )
        .expect_err("behind the head");
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    let listed = saver
        .list_raw(
            Some(&CheckpointConfig::thread("t")),
            &ListOptions::default(),
        )
        .expect("list");
    assert_eq!(listed.len(), 2);
}

#[test]
fn a_checkpoint_the_serializer_cannot_read_is_stored_and_its_values_found_by_version() {
    let saver = MemorySaver::new().with_fencing(false);
    let cp = checkpoint("1", 0);
    let (_, values) = parts(&cp);
    let opaque = Typed::new("sealed", b"\x01\x02".to_vec());
    let config = saver
        .put_raw(
            &CheckpointConfig::thread("t"),
            "1",
            opaque.clone(),
            &metadata(0),
            &cp.channel_versions,
            values.clone(),
        )
        .expect("put_raw");
    let raw = saver.get_tuple_raw(&config).expect("get").expect("a tuple");
    assert_eq!(
        raw.state,
        RawState::Split {
            checkpoint: opaque,
            values: None,
        }
    );
    // The caller decodes the checkpoint itself and asks for its versions' values.
    assert_eq!(saver.blobs_raw("t", "", &cp.channel_versions), values);
    assert!(saver
        .blobs_raw("t", "other", &cp.channel_versions)
        .is_empty());
}
