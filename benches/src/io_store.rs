//! The savers of scenarios S4–S7, each with a way to measure what it stores, as
//! `bench_langgraph.py`'s `CP.storage` measures it: the in-memory saver's serialized
//! bytes, the SQLite file (after a WAL checkpoint), the Postgres tables' total relation
//! size (heap, TOAST and indexes).

use std::path::PathBuf;
use std::sync::Arc;

use stategraph::checkpoint::{CheckpointSaver, MemorySaver};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_checkpoint_sqlite::SqliteSaver;

/// Errors of the I/O benchmarks: anything, with its message.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The result type of the I/O benchmarks.
pub type IoResult<T> = Result<T, BoxError>;

/// The server the Postgres runs use, from `STATEGRAPH_BENCH_PG` (default: user `postgres`
/// on 127.0.0.1:5432, database `postgres`). Each run creates a database beside the one
/// named, and drops it.
pub fn postgres_admin_url() -> String {
    std::env::var("STATEGRAPH_BENCH_PG")
        .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// `url` with its database replaced by `db` (a URL without query parameters).
pub fn url_with_database(url: &str, db: &str) -> String {
    match url.rsplit_once('/') {
        Some((base, _)) => format!("{base}/{db}"),
        None => format!("{url}/{db}"),
    }
}

/// Runs one statement on the admin database (to create or drop a database).
pub async fn admin(sql: &str) -> IoResult<()> {
    let saver = PostgresSaver::connect(&postgres_admin_url()).await?;
    let client = saver.pool().get().await?;
    client.batch_execute(sql).await?;
    Ok(())
}

/// A new, empty Postgres database named `db`, with the tables set up.
pub async fn fresh_database(db: &str) -> IoResult<String> {
    admin(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await?;
    admin(&format!("CREATE DATABASE {db}")).await?;
    let url = url_with_database(&postgres_admin_url(), db);
    PostgresSaver::connect(&url).await?.setup().await?;
    Ok(url)
}

/// A saver of one kind on fresh storage, with its storage measurable.
pub enum IoSaver {
    /// The in-memory saver.
    Memory(Arc<MemorySaver>),
    /// SQLite on a new file.
    Sqlite {
        /// The saver.
        saver: Arc<SqliteSaver>,
        /// Its file.
        path: PathBuf,
    },
    /// Postgres on a new database.
    Postgres {
        /// The saver (fenced, the default).
        saver: Arc<PostgresSaver>,
        /// The database, dropped by [`IoSaver::close`].
        db: String,
    },
}

impl IoSaver {
    /// Opens a saver of `kind` (`memory`, `sqlite`, `postgres`) on fresh storage named
    /// after `tag`. SQLite files go to `STATEGRAPH_BENCH_DATA` (default: the temporary
    /// directory).
    pub async fn open(kind: &str, tag: &str) -> IoResult<IoSaver> {
        let tag: String = format!("sg_io_{}_{}", tag, std::process::id())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        match kind {
            "memory" => Ok(IoSaver::Memory(Arc::new(MemorySaver::new()))),
            "sqlite" => {
                let dir = std::env::var_os("STATEGRAPH_BENCH_DATA")
                    .map_or_else(std::env::temp_dir, PathBuf::from);
                std::fs::create_dir_all(&dir)?;
                let path = dir.join(format!("{tag}.sqlite"));
                remove_sqlite(&path);
                Ok(IoSaver::Sqlite {
                    saver: Arc::new(SqliteSaver::open(&path)?),
                    path,
                })
            }
            "postgres" => {
                let url = fresh_database(&tag).await?;
                Ok(IoSaver::Postgres {
                    saver: Arc::new(PostgresSaver::connect(&url).await?),
                    db: tag,
                })
            }
            other => Err(format!("unknown saver {other:?}").into()),
        }
    }

    /// The saver, as the engine takes it.
    pub fn saver(&self) -> Arc<dyn CheckpointSaver> {
        match self {
            IoSaver::Memory(s) => s.clone(),
            IoSaver::Sqlite { saver, .. } => saver.clone(),
            IoSaver::Postgres { saver, .. } => saver.clone(),
        }
    }

    /// Bytes stored now, and the number of checkpoints. Bytes are the serialized
    /// checkpoints, metadata, blobs and writes (memory); the database file after
    /// `wal_checkpoint(TRUNCATE)` plus what is left of the WAL (SQLite);
    /// `pg_total_relation_size` of the three tables (Postgres).
    pub async fn measure(&self) -> IoResult<(u64, u64)> {
        match self {
            IoSaver::Memory(s) => {
                let layout = s.storage_snapshot();
                let checkpoints: usize = layout
                    .storage
                    .iter()
                    .map(|e| e.checkpoint.bytes.len() + e.metadata.bytes.len())
                    .sum();
                let blobs: usize = layout.blobs.iter().map(|b| b.value.bytes.len()).sum();
                let writes: usize = layout.writes.iter().map(|w| w.value.bytes.len()).sum();
                Ok((
                    (checkpoints + blobs + writes) as u64,
                    layout.storage.len() as u64,
                ))
            }
            IoSaver::Sqlite { path, .. } => {
                let conn = rusqlite::Connection::open(path)?;
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
                let n: i64 =
                    conn.query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))?;
                drop(conn);
                let size = |suffix: &str| {
                    let mut p = path.as_os_str().to_owned();
                    p.push(suffix);
                    std::fs::metadata(p).map_or(0, |m| m.len())
                };
                Ok((size("") + size("-wal"), u64::try_from(n)?))
            }
            IoSaver::Postgres { saver, .. } => {
                let client = saver.pool().get().await?;
                let row = client
                    .query_one(
                        "SELECT (pg_total_relation_size('checkpoints') \
                         + pg_total_relation_size('checkpoint_blobs') \
                         + pg_total_relation_size('checkpoint_writes'))::int8, \
                         (SELECT count(*) FROM checkpoints)",
                        &[],
                    )
                    .await?;
                Ok((
                    u64::try_from(row.try_get::<_, i64>(0)?)?,
                    u64::try_from(row.try_get::<_, i64>(1)?)?,
                ))
            }
        }
    }

    /// Releases the storage: deletes the SQLite file, drops the Postgres database.
    pub async fn close(self) -> IoResult<()> {
        match self {
            IoSaver::Memory(_) => Ok(()),
            IoSaver::Sqlite { saver, path } => {
                drop(saver);
                remove_sqlite(&path);
                Ok(())
            }
            IoSaver::Postgres { saver, db } => {
                drop(saver);
                admin(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await
            }
        }
    }
}

/// Removes a database file and its `-wal` and `-shm` companions, if present.
fn remove_sqlite(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}
