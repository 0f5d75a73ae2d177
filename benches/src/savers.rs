//! The savers every benchmark runs against: the one place to add a backend.

use std::fmt;
use std::sync::Arc;

use stategraph_checkpoint::{CheckpointSaver, MemorySaver, Result};

use crate::temp_sqlite::TempSqlite;

/// A checkpoint saver the benches can open, fresh and empty, as often as they need.
///
/// To benchmark another backend (Postgres), add a variant here, its crate to
/// `benches/Cargo.toml`, a name in [`SaverKind::name`] (the one `bench_langgraph.py`
/// uses: `sqlite`, `postgres`, so that `compare` pairs the figures) and its opening in
/// [`SaverKind::open`]; list it in [`SaverKind::available`] (for Postgres, only when
/// its URL variable is set). Nothing else changes: both benches loop over this list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaverKind {
    /// [`MemorySaver`], LangGraph's `InMemorySaver`.
    Memory,
    /// `SqliteSaver` on a new file in the temporary directory ([`TempSqlite`]), as the
    /// Python driver uses a new file per run.
    Sqlite,
}

impl SaverKind {
    /// The savers that can run on this machine now.
    pub fn available() -> Vec<SaverKind> {
        vec![SaverKind::Memory, SaverKind::Sqlite]
    }

    /// The short name used in bench ids and by the Python driver (`--cps`).
    pub fn name(self) -> &'static str {
        match self {
            SaverKind::Memory => "memory",
            SaverKind::Sqlite => "sqlite",
        }
    }

    /// A new, empty saver of this kind.
    pub async fn open(self) -> Result<Arc<dyn CheckpointSaver>> {
        Ok(match self {
            SaverKind::Memory => Arc::new(MemorySaver::new()),
            SaverKind::Sqlite => Arc::new(TempSqlite::create()?),
        })
    }
}

impl fmt::Display for SaverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a graph is compiled with: no checkpointer, or a saver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// No checkpointer (`compile()` in Python).
    None,
    /// A checkpointer of this kind.
    Saver(SaverKind),
}

impl Backend {
    /// `none`, then every available saver.
    pub fn all() -> Vec<Backend> {
        std::iter::once(Backend::None)
            .chain(SaverKind::available().into_iter().map(Backend::Saver))
            .collect()
    }

    /// The name used in bench ids and by the Python driver.
    pub fn name(self) -> &'static str {
        match self {
            Backend::None => "none",
            Backend::Saver(k) => k.name(),
        }
    }

    /// A new saver for this backend, `None` for [`Backend::None`].
    pub async fn open(self) -> Result<Option<Arc<dyn CheckpointSaver>>> {
        match self {
            Backend::None => Ok(None),
            Backend::Saver(k) => Ok(Some(k.open().await?)),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
