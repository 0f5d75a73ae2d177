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

/// A checkpoint of `t` with id `…{n}` holding `label` (a 30-element list).
fn numbered(label: &str, n: u64) -> Checkpoint {
    let mut cp = checkpoint(label, 30);
    cp.id = format!("1ef00000-0000-6000-8000-{n:012}");
    cp
}

/// Puts `cp` on `t` (unfenced callers: any parent).
async fn put_on(saver: &SqliteSaver, cp: &Checkpoint, step: i64) {
    saver
        .put(
            &CheckpointConfig::thread("t"),
            cp,
            &CheckpointMetadata::new(CheckpointSource::Loop, step),
            &Default::default(),
        )
        .await
        .expect("put");
}

/// The id, step and pending-write count of the latest checkpoint of `t`.
async fn latest(saver: &SqliteSaver) -> (String, i64, usize) {
    let t = saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("a checkpoint");
    (
        t.checkpoint.id,
        t.metadata.step.unwrap_or(-100),
        t.pending_writes.len(),
    )
}

/// Repeated reads answer from the cache until something commits; each kind of commit
/// must show in the very next read: a newer checkpoint, writes on the latest, a changed
/// row, a deleted thread, through this saver and through another connection.
async fn every_commit_shows_in_the_next_read(saver: &SqliteSaver, other: &SqliteSaver) {
    assert!(saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .is_none());
    for (n, writer) in [(1u64, saver), (2, other), (3, saver), (4, other)] {
        put_on(writer, &numbered("m", n), n as i64).await;
        for _ in 0..3 {
            assert_eq!(latest(saver).await, (numbered("m", n).id, n as i64, 0));
        }
        let config = CheckpointConfig::for_checkpoint("t", "", numbered("m", n).id.as_str());
        let writes = [("messages".to_owned(), Value::from(format!("w{n}")))];
        writer
            .put_writes(&config, &writes, "task", "")
            .await
            .expect("put_writes");
        assert_eq!(latest(saver).await, (numbered("m", n).id, n as i64, 1));
        let by_id = saver.get_tuple(&config).await.expect("get").expect("row");
        assert_eq!(by_id.pending_writes[0].value, Value::from(format!("w{n}")));
    }
    // The same id re-put with other values by the other connection.
    put_on(other, &numbered("z", 4), 40).await;
    let t = saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("row");
    assert_eq!(
        (
            label_of(&t.checkpoint.channel_values["messages"]),
            t.metadata.step
        ),
        ("z-0".into(), Some(40))
    );
    other.delete_thread("t").await.expect("delete");
    assert!(saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .is_none());
}

#[tokio::test]
async fn commits_of_this_saver_and_of_another_saver_show_in_the_next_read() {
    let file = TempPath::new("cache-stamps");
    let saver = SqliteSaver::open(file.path())
        .expect("open")
        .with_fencing(false);
    let other = SqliteSaver::open(file.path())
        .expect("open")
        .with_fencing(false);
    every_commit_shows_in_the_next_read(&saver, &other).await;
}

#[tokio::test]
async fn an_in_memory_saver_sees_its_own_commits() {
    let saver = SqliteSaver::in_memory().expect("open").with_fencing(false);
    every_commit_shows_in_the_next_read(&saver, &saver).await;
}

#[tokio::test]
async fn a_row_changed_by_a_raw_connection_is_read_afresh() {
    let file = TempPath::new("cache-raw");
    let saver = SqliteSaver::open(file.path()).expect("open");
    put_on(&saver, &numbered("m", 1), 1).await;
    assert_eq!(latest(&saver).await.1, 1);
    assert_eq!(latest(&saver).await.1, 1);
    file.raw()
        .execute(
            "UPDATE checkpoints SET metadata = CAST('{\"source\": \"loop\", \"step\": 7}' AS BLOB)",
            [],
        )
        .expect("update");
    assert_eq!(latest(&saver).await.1, 7);
}

/// The environment variable that makes `writer_process_entry` put a checkpoint numbered
/// by its value into the file named by [`CHILD_DB`].
const CHILD_N: &str = "STATEGRAPH_SQLITE_CACHE_CHILD_N";
const CHILD_DB: &str = "STATEGRAPH_SQLITE_CACHE_CHILD_DB";

/// Not a test of its own: what the child process of
/// `a_checkpoint_put_by_another_process_shows_in_the_next_read` runs.
#[tokio::test]
async fn writer_process_entry() {
    let (Ok(path), Ok(n)) = (std::env::var(CHILD_DB), std::env::var(CHILD_N)) else {
        return;
    };
    let n: u64 = n.parse().expect("a number");
    let saver = SqliteSaver::open(path).expect("open").with_fencing(false);
    put_on(&saver, &numbered("child", n), n as i64).await;
}

#[tokio::test]
async fn a_checkpoint_put_by_another_process_shows_in_the_next_read() {
    let file = TempPath::new("cache-process");
    let saver = SqliteSaver::open(file.path())
        .expect("open")
        .with_fencing(false);
    put_on(&saver, &numbered("m", 1), 1).await;
    for n in [2u64, 3] {
        assert_eq!(latest(&saver).await.1, n as i64 - 1);
        assert_eq!(latest(&saver).await.1, n as i64 - 1);
        let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "suite::read_cache::writer_process_entry",
                "--exact",
                "--test-threads=1",
            ])
            .env(CHILD_DB, file.path())
            .env(CHILD_N, n.to_string())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("run the child");
        assert!(status.success());
        let (id, step, _) = latest(&saver).await;
        assert_eq!((id, step), (numbered("child", n).id, n as i64));
    }
}
