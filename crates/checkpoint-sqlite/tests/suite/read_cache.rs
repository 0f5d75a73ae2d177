//! The decoded-checkpoint cache: a read served from it equals a fresh read, and a row
//! changed behind the saver's back (another saver on the file, a deleted and re-created
//! thread) is read afresh.

use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use super::support::TempPath;

const ID: &str = "1ef00000-0000-6000-8000-000000000001";

/// A checkpoint `ID` whose channel `messages` holds `n` strings tagged `label`.
fn checkpoint(label: &str, n: usize) -> Checkpoint {
    let mut cp = Checkpoint::empty(ID, "2025-01-01T00:00:00+00:00");
    let list: Vec<Value> = (0..n)
        .map(|i| Value::from(format!("{label}-{i}")))
        .collect();
    cp.channel_values
        .insert("messages".into(), Value::List(list.into()));
    cp.channel_versions
        .insert("messages".into(), ChannelVersion::Int(1));
    cp
}

async fn put(saver: &SqliteSaver, cp: &Checkpoint) {
    saver
        .put(
            &CheckpointConfig::thread("t"),
            cp,
            &CheckpointMetadata::new(CheckpointSource::Loop, 0),
            &Default::default(),
        )
        .await
        .expect("put");
}

/// The `messages` value of the latest checkpoint of `t` and of the checkpoint `ID`.
async fn read(saver: &SqliteSaver) -> (Value, Value) {
    let mut out = Vec::new();
    for config in [
        CheckpointConfig::thread("t"),
        CheckpointConfig::for_checkpoint("t", "", ID),
    ] {
        let tuple = saver.get_tuple(&config).await.expect("get").expect("a row");
        out.push(tuple.checkpoint.channel_values["messages"].clone());
    }
    (out.remove(0), out.remove(0))
}

fn label_of(value: &Value) -> String {
    let first = value.as_list().and_then(|l| l.first()).cloned();
    match first {
        Some(Value::Str(s)) => s.to_string(),
        other => panic!("unexpected value {other:?}"),
    }
}

#[tokio::test]
async fn repeated_reads_equal_uncached_reads() {
    let file = TempPath::new("cache-equal");
    let cached = SqliteSaver::open(file.path()).expect("open");
    let uncached = SqliteSaver::open(file.path())
        .expect("open")
        .with_read_cache(0);
    put(&cached, &checkpoint("a", 50)).await;
    for _ in 0..3 {
        let config = CheckpointConfig::thread("t");
        let a = cached.get_tuple(&config).await.expect("get").expect("row");
        let b = uncached
            .get_tuple(&config)
            .await
            .expect("get")
            .expect("row");
        assert_eq!(a.checkpoint, b.checkpoint);
        assert_eq!(a.config, b.config);
        assert_eq!(a.metadata, b.metadata);
        let listed = cached
            .list(Some(&config), &Default::default())
            .await
            .expect("list");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].checkpoint, b.checkpoint);
    }
}

#[tokio::test]
async fn a_row_replaced_by_another_saver_is_read_afresh() {
    let file = TempPath::new("cache-replaced");
    let reader = SqliteSaver::open(file.path())
        .expect("open")
        .with_fencing(false);
    let other = SqliteSaver::open(file.path())
        .expect("open")
        .with_fencing(false);
    put(&other, &checkpoint("a", 20)).await;
    let (latest, by_id) = read(&reader).await;
    assert_eq!(
        (label_of(&latest), label_of(&by_id)),
        ("a-0".into(), "a-0".into())
    );
    // Same ids, other bytes: INSERT OR REPLACE from the other saver.
    put(&other, &checkpoint("b", 20)).await;
    let (latest, by_id) = read(&reader).await;
    assert_eq!(
        (label_of(&latest), label_of(&by_id)),
        ("b-0".into(), "b-0".into())
    );
    // Deleted and re-created with the same ids by the other saver.
    other.delete_thread("t").await.expect("delete");
    put(&other, &checkpoint("c", 20)).await;
    let (latest, by_id) = read(&reader).await;
    assert_eq!(
        (label_of(&latest), label_of(&by_id)),
        ("c-0".into(), "c-0".into())
    );
    // And back to the first bytes: equal bytes decode to the equal value.
    put(&other, &checkpoint("a", 20)).await;
    let (latest, _) = read(&reader).await;
    assert_eq!(label_of(&latest), "a-0");
}

#[tokio::test]
async fn a_thread_deleted_through_the_saver_is_gone() {
    let file = TempPath::new("cache-deleted");
    let saver = SqliteSaver::open(file.path()).expect("open");
    put(&saver, &checkpoint("a", 5)).await;
    let _ = read(&saver).await;
    saver.delete_thread("t").await.expect("delete");
    assert!(saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .is_none());
    put(&saver, &checkpoint("d", 5)).await;
    let (latest, by_id) = read(&saver).await;
    assert_eq!(
        (label_of(&latest), label_of(&by_id)),
        ("d-0".into(), "d-0".into())
    );
}

#[tokio::test]
async fn a_growing_history_reads_as_without_the_cache() {
    let file = TempPath::new("cache-history");
    let cached = SqliteSaver::open(file.path()).expect("open");
    let uncached = SqliteSaver::open(file.path())
        .expect("open")
        .with_read_cache(0);
    let mut parent: Option<String> = None;
    for step in 0..12usize {
        let id = format!("1ef00000-0000-6000-8000-{step:012}");
        let mut cp = checkpoint("m", 20 + 2 * step);
        cp.id = id.clone();
        if step == 7 {
            // An edit in the middle of the list, not an append.
            if let Some(Value::List(list)) = cp.channel_values.get_mut("messages") {
                list.make_mut()[3] = Value::from("edited");
            }
        }
        let config = match &parent {
            Some(p) => CheckpointConfig::for_checkpoint("t", "", p.as_str()),
            None => CheckpointConfig::thread("t"),
        };
        cached
            .put(
                &config,
                &cp,
                &CheckpointMetadata::new(CheckpointSource::Loop, step as i64),
                &Default::default(),
            )
            .await
            .expect("put");
        // The engine reads the latest checkpoint before each step.
        let latest = cached
            .get_tuple(&CheckpointConfig::thread("t"))
            .await
            .expect("get")
            .expect("row");
        assert_eq!(latest.checkpoint, cp);
        parent = Some(id);
    }
    let config = CheckpointConfig::thread("t");
    for _ in 0..2 {
        let a = cached
            .list(Some(&config), &Default::default())
            .await
            .expect("list");
        let b = uncached
            .list(Some(&config), &Default::default())
            .await
            .expect("list");
        assert_eq!(a.len(), 12);
        let ids = |v: &[stategraph_checkpoint::CheckpointTuple]| {
            v.iter().map(|t| t.checkpoint.clone()).collect::<Vec<_>>()
        };
        assert_eq!(ids(&a), ids(&b));
    }
}
