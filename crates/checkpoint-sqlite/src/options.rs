//! The saver's options beyond its builder methods: how hard a commit presses its data to
//! disk, SQLite's `PRAGMA synchronous` ([`Synchronous`]).

/// When a committed write is on disk, the `synchronous` setting of the writer connection
/// ([`crate::SqliteSaver::with_synchronous`]). The database file is in WAL mode, where
/// both settings keep the file consistent; they differ in what a crash can take back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// Every commit waits for the write-ahead log to reach the disk (`fsync`): a commit
    /// that returned survives a process crash and a power cut. SQLite's default, and what
    /// Python's `SqliteSaver` runs with.
    #[default]
    Full,
    /// Commits do not wait for the disk; the log is synced at checkpoints of the WAL. A
    /// commit that returned survives a crash of the process (the data is in the operating
    /// system's cache), but a power cut or an operating-system crash may roll back the
    /// last commits (never corrupting the file). Several times faster for small commits.
    Normal,
}

impl Synchronous {
    /// The statement that sets it.
    pub(crate) fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => crate::sql::SYNCHRONOUS_FULL,
            Synchronous::Normal => crate::sql::SYNCHRONOUS_NORMAL,
        }
    }
}
