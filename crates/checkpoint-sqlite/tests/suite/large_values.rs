//! Rows with large blobs are written in place (zeroblob, then incremental blob I/O): the
//! stored rows are byte for byte those of the ordinary path, and the write rules (first
//! write wins, a reserved index replaces) hold for them too.

use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use super::support::TempSaver;

const ID: &str = "1ef00000-0000-6000-8000-000000000001";

/// A string of `len` bytes that is not all one byte (a misplaced page would show).
fn text(len: usize, seed: u8) -> String {
    (0..len)
        .map(|i| char::from(b'a' + ((i / 4093 + usize::from(seed)) % 26) as u8))
        .collect()
}

fn checkpoint(big: &str) -> Checkpoint {
    let mut cp = Checkpoint::empty(ID, "2025-01-01T00:00:00+00:00");
    cp.channel_values.insert("big".into(), Value::from(big));
    cp.channel_versions
        .insert("big".into(), ChannelVersion::Int(1));
    cp
}

/// The raw `(type, checkpoint, metadata)` of the one checkpoint row.
fn checkpoint_row(saver: &TempSaver) -> (String, Vec<u8>, Vec<u8>) {
    saver
        .file
        .raw()
        .query_row(
            "SELECT type, checkpoint, metadata FROM checkpoints",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("the row")
}

#[tokio::test]
async fn a_large_checkpoint_is_stored_byte_for_byte() {
    let saver = TempSaver::new("large-put");
    let big = text(3 << 20, 0);
    let cp = checkpoint(&big);
    let mut metadata = CheckpointMetadata::new(CheckpointSource::Loop, 1);
    metadata
        .extra
        .insert("note".into(), Value::from(text(1 << 20, 1)));
    saver
        .put(
            &CheckpointConfig::thread("t"),
            &cp,
            &metadata,
            &Default::default(),
        )
        .await
        .expect("put");
    let (tag, stored, stored_metadata) = checkpoint_row(&saver);
    let expected = JsonPlusSerializer
        .dumps_checkpoint(&cp, true)
        .expect("encode");
    assert_eq!(tag, expected.tag);
    assert!(stored == expected.bytes, "the checkpoint bytes differ");
    let json: serde_json::Value = serde_json::from_slice(&stored_metadata).expect("json");
    assert_eq!(json["note"].as_str().map(str::len), Some(1 << 20));
    // Read back by a saver without a cache: decoded from the stored bytes.
    let reader = SqliteSaver::open(saver.file.path())
        .expect("open")
        .with_read_cache(0);
    let tuple = reader
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("row");
    assert_eq!(tuple.checkpoint, cp);
    assert_eq!(tuple.metadata.step, Some(1));
    assert_eq!(tuple.metadata.extra.get("note"), metadata.extra.get("note"));
}

#[tokio::test]
async fn large_writes_keep_the_first_write_and_replace_reserved_ones() {
    let saver = TempSaver::unfenced("large-writes");
    saver
        .put(
            &CheckpointConfig::thread("t"),
            &checkpoint("small"),
            &CheckpointMetadata::new(CheckpointSource::Loop, 1),
            &Default::default(),
        )
        .await
        .expect("put");
    let config = CheckpointConfig::for_checkpoint("t", "", ID);
    let (first, second) = (text(2 << 20, 2), text(2 << 20, 3));
    for value in [&first, &second] {
        let writes = [
            ("big".to_owned(), Value::from(value.as_str())),
            ("__error__".to_owned(), Value::from(value.as_str())),
        ];
        saver
            .put_writes(&config, &writes, "task", "")
            .await
            .expect("put_writes");
    }
    let reader = SqliteSaver::open(saver.file.path())
        .expect("open")
        .with_read_cache(0);
    let tuple = reader.get_tuple(&config).await.expect("get").expect("row");
    let values: Vec<(&str, Option<&str>)> = tuple
        .pending_writes
        .iter()
        .map(|w| (w.channel.as_str(), w.value.as_str()))
        .collect();
    // Normal index: the first write stays; reserved index (`__error__`): the last wins.
    assert_eq!(
        values,
        vec![
            ("__error__", Some(second.as_str())),
            ("big", Some(first.as_str()))
        ]
    );
}
