//! The raw entry points (`put_raw`, `put_writes_raw`, `get_tuple_raw`, `list_raw`): the
//! caller's pairs stored as given, read back as stored, in the rows, order and fence of the
//! trait methods.

use stategraph_checkpoint::raw::{RawMetadata, RawState};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer, Typed};
use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Error, ListOptions, Value,
};

use super::support::TempSaver;

const TASK: &str = "00000000-0000-0000-0000-00000000cafe";

fn checkpoint(id: &str, step: i64) -> Checkpoint {
    let mut cp = Checkpoint::empty(id, "2026-12-01T00:00:00+00:00");
    let messages = (0..=step)
        .map(|i| Value::from(format!("message {i}")))
        .collect::<Vec<_>>();
    cp.channel_values
        .insert("messages".into(), Value::list(messages));
    cp.channel_versions
        .insert("messages".into(), ChannelVersion::Int(step + 1));
    cp
}

fn metadata(step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new(CheckpointSource::Loop, step)
}

fn writes() -> Vec<(String, Value)> {
    vec![
        ("messages".to_owned(), Value::from("late")),
        ("__error__".to_owned(), Value::from("boom")),
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

const STEPS: [(&str, i64); 3] = [("1", 0), ("2", 1), ("3", 2)];

async fn through_trait(saver: &TempSaver) {
    let mut config = CheckpointConfig::thread("t");
    for (id, step) in STEPS {
        let cp = checkpoint(id, step);
        let versions = cp.channel_versions.clone();
        config = saver
            .put(&config, &cp, &metadata(step), &versions)
            .await
            .expect("put");
        saver
            .put_writes(&config, &writes(), TASK, "")
            .await
            .expect("writes");
    }
}

fn through_raw(saver: &TempSaver) {
    let mut config = CheckpointConfig::thread("t");
    for (id, step) in STEPS {
        let whole = JsonPlusSerializer
            .dumps_checkpoint(&checkpoint(id, step), true)
            .expect("encode");
        config = saver
            .put_raw(&config, id, whole, &metadata(step))
            .expect("put_raw");
        saver
            .put_writes_raw(&config, encoded(&writes()), TASK, "")
            .expect("writes");
    }
}

type Rows = Vec<Vec<rusqlite::types::Value>>;

fn rows(saver: &TempSaver, table: &str) -> Rows {
    let conn = saver.file.raw();
    let mut stmt = conn
        .prepare(&format!("SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5, 6"))
        .expect("select");
    let n = stmt.column_count();
    stmt.query_map([], |row| (0..n).map(|i| row.get(i)).collect())
        .expect("query")
        .collect::<rusqlite::Result<Rows>>()
        .expect("rows")
}

#[tokio::test]
async fn a_raw_put_stores_the_rows_the_trait_put_stores() {
    let (by_trait, by_raw) = (TempSaver::new("raw-a"), TempSaver::new("raw-b"));
    through_trait(&by_trait).await;
    through_raw(&by_raw);
    for table in ["checkpoints", "writes"] {
        let (want, got) = (rows(&by_trait, table), rows(&by_raw, table));
        assert!(!want.is_empty());
        assert_eq!(got, want, "{table}");
    }
    let got = by_raw
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("a tuple");
    assert_eq!(got.checkpoint, checkpoint("3", 2));
}

#[tokio::test]
async fn a_raw_read_hands_back_the_stored_bytes() {
    let saver = TempSaver::new("raw-read");
    through_trait(&saver).await;
    let raw = saver
        .get_tuple_raw(&CheckpointConfig::for_checkpoint("t", "", "2"))
        .expect("get")
        .expect("a tuple");
    let whole = JsonPlusSerializer
        .dumps_checkpoint(&checkpoint("2", 1), true)
        .expect("encode");
    assert_eq!(raw.state, RawState::Whole(whole));
    assert_eq!(raw.parent_checkpoint_id.as_deref(), Some("1"));
    let stored: Vec<u8> = saver
        .file
        .raw()
        .query_row(
            "SELECT metadata FROM checkpoints WHERE checkpoint_id = '2'",
            [],
            |r| r.get(0),
        )
        .expect("metadata");
    assert_eq!(raw.metadata, RawMetadata::Json(Some(stored)));
    let got: Vec<(String, Typed)> = raw
        .pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    // Read order is (task_path, task_id, idx): the reserved `__error__` index (-1) first.
    let mut want = encoded(&writes());
    want.reverse();
    assert_eq!(got, want);
    assert!(saver
        .get_tuple_raw(&CheckpointConfig::thread("nobody"))
        .expect("get")
        .is_none());
}

#[tokio::test]
async fn list_raw_lists_what_list_lists() {
    let saver = TempSaver::new("raw-list");
    through_trait(&saver).await;
    let thread = CheckpointConfig::thread("t");
    for options in [
        ListOptions::default(),
        ListOptions::default().limit(2),
        ListOptions::default().limit(0),
        ListOptions::default().filter("step", 1),
        ListOptions::default().filter("step", 1).limit(1),
        ListOptions::default().before(CheckpointConfig::for_checkpoint("t", "", "3")),
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
            .map(|t| t.checkpoint_id)
            .collect();
        assert_eq!(got, want, "{options:?}");
    }
}

#[test]
fn a_fenced_raw_put_behind_the_head_is_refused_and_stores_nothing() {
    let saver = TempSaver::new("raw-fence");
    through_raw(&saver);
    let whole = JsonPlusSerializer
        .dumps_checkpoint(&checkpoint("4", 3), true)
        .expect("encode");
    let err = saver
        .put_raw(
            &CheckpointConfig::for_checkpoint("t", "", "1"),
            "4",
            whole,
            &metadata(3),
        )
        .expect_err("behind the head");
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    // Writes against a checkpoint that has a child, with a different result: refused.
    let err = saver
        .put_writes_raw(
            &CheckpointConfig::for_checkpoint("t", "", "1"),
            encoded(&[("messages".to_owned(), Value::from("other"))]),
            TASK,
            "",
        )
        .expect_err("moved past");
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    assert_eq!(rows(&saver, "checkpoints").len(), 3);
}
