//! What a failed open says: the path and SQLite's reason, once.

use stategraph_checkpoint::Error;
use stategraph_checkpoint_sqlite::SqliteSaver;

#[test]
fn opening_a_file_in_a_missing_directory_names_the_path_and_the_cause() {
    let dir = std::env::temp_dir().join(format!("sg-open-errors-{}", std::process::id()));
    let path = dir.join("missing-dir").join("threads.db");
    let err = SqliteSaver::open(&path).expect_err("no such directory");
    assert!(matches!(err, Error::Backend(_)), "{err:?}");
    let text = err.to_string();
    assert_eq!(
        text,
        format!(
            "backend error: sqlite {}: opening the database failed: unable to open database file",
            path.display()
        )
    );
    assert!(
        std::error::Error::source(&err).is_none(),
        "the cause is in the text once, not again as a source"
    );
}

#[test]
fn opening_a_file_that_is_not_a_database_names_the_path() {
    let path = std::env::temp_dir().join(format!("sg-not-a-db-{}.txt", std::process::id()));
    std::fs::write(&path, vec![b'x'; 4096]).expect("write the file");
    let err = SqliteSaver::open(&path).expect_err("not a database");
    let text = err.to_string();
    let _ = std::fs::remove_file(&path);
    assert!(
        text.starts_with(&format!("backend error: sqlite {}: ", path.display())),
        "{text}"
    );
    assert!(text.contains("not a database"), "{text}");
}
