//! A [`SqliteSaver`] on a fresh file that is deleted, with its WAL files, when the saver
//! is dropped: the "SQLite (a file)" saver of the scenarios.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use stategraph_checkpoint::{CheckpointSaver, Result};
use stategraph_checkpoint_sqlite::SqliteSaver;

/// A [`SqliteSaver`] on its own temporary file; every operation is the inner saver's.
pub struct TempSqlite {
    inner: SqliteSaver,
    path: PathBuf,
}

impl TempSqlite {
    /// Opens a new database file in the system's temporary directory.
    pub fn create() -> Result<TempSqlite> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "stategraph-bench-{}-{n}.sqlite",
            std::process::id()
        ));
        remove_files(&path);
        Ok(TempSqlite {
            inner: SqliteSaver::open(&path)?,
            path,
        })
    }
}

/// Removes a database file and its `-wal` and `-shm` companions, if present.
fn remove_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

impl Drop for TempSqlite {
    fn drop(&mut self) {
        remove_files(&self.path);
    }
}

impl stategraph_checkpoint::DelegatingSaver for TempSqlite {
    fn inner(&self) -> &dyn CheckpointSaver {
        &self.inner
    }
}
