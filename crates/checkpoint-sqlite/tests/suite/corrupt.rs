//! A database file with a valid header and damaged pages: every read and write error names
//! the file, the operation with its tables, and the thread (as a failed open names the
//! file), and SQLite's code stays reachable.

use std::path::Path;

use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource, Error,
    ListOptions,
};
use stategraph_checkpoint_sqlite::rusqlite::ErrorCode;
use stategraph_checkpoint_sqlite::{SqliteError, SqliteSaver};

use super::support::TempPath;

const THREAD: &str = "thread-on-a-damaged-page";

/// Writes a real database (a few checkpoints and writes) at `path` and closes it, so every
/// committed page is in the main file.
async fn write_real_database(path: &Path) {
    let saver = SqliteSaver::open(path).expect("open");
    let mut parent = CheckpointConfig::thread(THREAD);
    for i in 0..20 {
        let id = format!("1f0a0000-0000-6000-8000-{i:012}");
        let cp = Checkpoint::empty(id.as_str(), "2026-12-03T00:00:00+00:00");
        let md = CheckpointMetadata::new(CheckpointSource::Loop, i).with("pad", "x".repeat(300));
        parent = saver
            .put(&parent, &cp, &md, &Default::default())
            .await
            .expect("put");
        let writes = [("ch".to_owned(), "v".repeat(200).into())];
        saver
            .put_writes(&parent, &writes, &format!("task-{i}"), "")
            .await
            .expect("put_writes");
    }
}

/// Overwrites every page after the first (which holds the 100-byte header and the
/// schema, so the file still opens) with garbage.
fn damage_pages_after_the_first(path: &Path) {
    let mut bytes = std::fs::read(path).expect("read the copy");
    let page_size = match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        n => usize::from(n),
    };
    assert!(
        bytes.len() > 3 * page_size,
        "the database has pages beyond the schema"
    );
    for (i, b) in bytes[page_size..].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31) ^ 0xA5;
    }
    std::fs::write(path, bytes).expect("write the damaged copy");
}

/// The named error of a failed call: its text names everything, the source is a
/// [`SqliteError`] with SQLite's code.
fn assert_named(err: &Error, path: &Path, operation: &str, tables: &str) {
    let text = err.to_string();
    let want = format!(
        "backend error: sqlite {}: {operation} of thread {THREAD:?} (tables {tables}) failed: ",
        path.display()
    );
    assert!(
        text.starts_with(&want),
        "{text}\nwanted it to start with {want}"
    );
    assert!(text.contains("malformed"), "{text}");
    let Error::Backend(source) = err else {
        panic!("not a backend error: {err:?}");
    };
    let named = source
        .downcast_ref::<SqliteError>()
        .expect("the source is a SqliteError");
    assert_eq!(named.database(), path.display().to_string());
    assert_eq!(named.operation(), operation);
    assert_eq!(named.tables(), tables);
    assert_eq!(named.subject(), format!("thread {THREAD:?}"));
    assert_eq!(named.code(), Some(ErrorCode::DatabaseCorrupt), "{text}");
}

#[tokio::test]
async fn reads_and_writes_on_damaged_pages_name_the_file_the_operation_and_the_thread() {
    let original = TempPath::new("corrupt-original");
    write_real_database(original.path()).await;
    let copy = TempPath::new("corrupt-copy");
    std::fs::copy(original.path(), copy.path()).expect("copy the database");
    damage_pages_after_the_first(copy.path());

    let saver = SqliteSaver::open(copy.path()).expect("the header and schema are intact");
    let err = saver
        .get_tuple(&CheckpointConfig::thread(THREAD))
        .await
        .expect_err("get_tuple reads a damaged page");
    assert_named(&err, copy.path(), "get_tuple", "checkpoints, writes");

    let config = Some(CheckpointConfig::thread(THREAD));
    let err = saver
        .list(config.as_ref(), &ListOptions::default())
        .await
        .expect_err("list reads a damaged page");
    assert_named(&err, copy.path(), "list", "checkpoints, writes");

    let cp = Checkpoint::empty(
        "1f0a0000-0000-6000-8000-999999999999",
        "2026-12-03T00:00:00+00:00",
    );
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    let err = saver
        .put(
            &CheckpointConfig::thread(THREAD),
            &cp,
            &md,
            &Default::default(),
        )
        .await
        .expect_err("put writes into a damaged table");
    assert_named(&err, copy.path(), "put", "checkpoints");

    let err = saver
        .delete_thread(THREAD)
        .await
        .expect_err("delete_thread reads a damaged table");
    assert_named(&err, copy.path(), "delete_thread", "checkpoints, writes");

    // The original is untouched: the errors come from the damage, not from the saver.
    let intact = SqliteSaver::open(original.path()).expect("open the original");
    assert!(intact
        .get_tuple(&CheckpointConfig::thread(THREAD))
        .await
        .expect("the original reads")
        .is_some());
}
