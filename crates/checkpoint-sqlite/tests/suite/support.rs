//! Helpers shared by the tests: temporary database files and raw row access.

use std::ops::Deref;
use std::path::{Path, PathBuf};

use stategraph_checkpoint_sqlite::SqliteSaver;

/// A fresh path in the temp directory; the file and its `-wal`/`-shm` companions are
/// removed when this is dropped.
pub(crate) struct TempPath(PathBuf);

impl TempPath {
    pub(crate) fn new(label: &str) -> TempPath {
        TempPath(std::env::temp_dir().join(format!(
            "stategraph-sqlite-{label}-{}.sqlite",
            uuid::Uuid::new_v4()
        )))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    /// A raw connection to the file, for looking at rows the saver wrote.
    pub(crate) fn raw(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(&self.0).expect("raw connection")
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = self.0.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
    }
}

/// A saver on a temporary file; the saver is closed before the files are removed.
pub(crate) struct TempSaver {
    saver: Option<SqliteSaver>,
    // Declared after `saver` so that it is dropped (files removed) after it.
    pub(crate) file: TempPath,
}

impl TempSaver {
    pub(crate) fn new(label: &str) -> TempSaver {
        let file = TempPath::new(label);
        let saver = SqliteSaver::open(file.path()).expect("open saver");
        TempSaver {
            saver: Some(saver),
            file,
        }
    }

    /// A saver on a temporary file with the fence off.
    pub(crate) fn unfenced(label: &str) -> TempSaver {
        let mut saver = TempSaver::new(label);
        saver.saver = saver.saver.take().map(|s| s.with_fencing(false));
        saver
    }
}

impl Deref for TempSaver {
    type Target = SqliteSaver;

    fn deref(&self) -> &SqliteSaver {
        self.saver.as_ref().expect("saver is open")
    }
}

impl Drop for TempSaver {
    fn drop(&mut self) {
        self.saver.take();
    }
}

/// Counts the rows of a table.
pub(crate) fn count(conn: &rusqlite::Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .expect("count rows")
}
