//! Opening a database named on the command line, and the few aggregate reads the savers'
//! API has no call for (sizes, thread ids, raw write rows with their index and task path).
//!
//! Checkpoints themselves are always read and written through the savers
//! ([`SqliteSaver`], [`PostgresSaver`]); this module only adds reads of row sizes and of
//! the raw rows that `verify` must see before decoding.
//!
//! Reading never changes a database: a SQLite file is opened with
//! [`SqliteSaver::open_read_only`] (no WAL switch, no migration, no new files) and every
//! Postgres connection of a reading pool runs with `default_transaction_read_only = on`,
//! so each statement is a read-only transaction that the server refuses to let write.

use std::path::PathBuf;
use std::sync::Arc;

use futures::{pin_mut, TryStreamExt};
use parking_lot::Mutex;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{CheckpointSaver, Error};
use stategraph_checkpoint_postgres::deadpool_postgres::{
    tokio_postgres::{self, NoTls},
    Manager, ManagerConfig, Pool, RecyclingMethod,
};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_checkpoint_sqlite::rusqlite::{self, Connection, OpenFlags};
use stategraph_checkpoint_sqlite::{read_only, SqliteSaver};

use crate::error::{CliError, Result};

/// An open database: its saver and a raw handle for aggregate reads.
pub struct Db {
    /// What the user named (path or URL), for messages.
    pub name: String,
    /// The saver over the database.
    pub saver: Arc<dyn CheckpointSaver>,
    /// The serializer its values use.
    pub serde: Arc<dyn Serializer>,
    raw: Raw,
}

enum Raw {
    Sqlite(Mutex<Connection>),
    Postgres(Pool),
}

/// Which kind of database a name designates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A SQLite file.
    Sqlite,
    /// A Postgres database.
    Postgres,
}

/// The kind of database `name` designates: a `postgres://` or `postgresql://` URL, or a
/// SQLite path.
pub fn kind_of(name: &str) -> Kind {
    if name.starts_with("postgresql://") || name.starts_with("postgres://") {
        Kind::Postgres
    } else {
        Kind::Sqlite
    }
}

/// One thread and namespace, as counted by [`Db::thread_rows`].
#[derive(Debug, Clone)]
pub struct NsRow {
    /// The thread id.
    pub thread_id: String,
    /// The namespace.
    pub ns: String,
    /// How many checkpoints.
    pub checkpoints: i64,
    /// The greatest checkpoint id.
    pub latest: String,
    /// Bytes of checkpoint and metadata rows.
    pub bytes: i64,
}

/// One stored write, as the tables hold it (value still encoded).
#[derive(Debug, Clone)]
pub struct RawWrite {
    /// The task id.
    pub task_id: String,
    /// The task path.
    pub task_path: String,
    /// The index (negative for reserved channels).
    pub idx: i64,
    /// The channel.
    pub channel: String,
    /// The serializer tag.
    pub tag: String,
    /// The encoded value.
    pub bytes: Vec<u8>,
}

/// One encoded value of any table, for `verify`.
#[derive(Debug)]
pub struct RawValue {
    /// Where the row is (table and key), for the report.
    pub location: String,
    /// The serializer tag (`"json"` for Postgres JSONB columns, given as text).
    pub tag: String,
    /// The encoded value.
    pub bytes: Vec<u8>,
}

impl Db {
    /// Opens `name` for reading only.
    pub async fn open_read(name: &str) -> Result<Db> {
        match kind_of(name) {
            Kind::Sqlite => {
                let path = PathBuf::from(name);
                let saver = SqliteSaver::open_read_only(&path)?;
                let conn = read_only::connect(&path)?;
                Ok(Db::sqlite(name, saver, conn))
            }
            Kind::Postgres => {
                let pool = pg_pool(name, true).await?;
                let saver = PostgresSaver::from_pool(pool.clone());
                let db = Db::postgres(name, saver, pool);
                db.check_postgres_tables().await?;
                Ok(db)
            }
        }
    }

    /// Opens `name` for writing: a SQLite file is created if missing and set up as
    /// LangGraph's saver sets it up; a Postgres database gets the tables (`setup`).
    /// Fencing is off (SQLite and Postgres): maintenance writes whole threads, forks included.
    pub async fn open_write(name: &str) -> Result<Db> {
        match kind_of(name) {
            Kind::Sqlite => {
                let saver = SqliteSaver::open(name)?.with_fencing(false);
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn = Connection::open_with_flags(name, flags).map_err(sql)?;
                Ok(Db::sqlite(name, saver, conn))
            }
            Kind::Postgres => {
                let pool = pg_pool(name, false).await?;
                let saver = PostgresSaver::from_pool(pool.clone()).with_fencing(false);
                saver.setup().await?;
                Ok(Db::postgres(name, saver, pool))
            }
        }
    }

    fn sqlite(name: &str, saver: SqliteSaver, conn: Connection) -> Db {
        let serde = Arc::clone(saver.serializer());
        Db {
            name: name.to_owned(),
            saver: Arc::new(saver),
            serde,
            raw: Raw::Sqlite(Mutex::new(conn)),
        }
    }

    fn postgres(name: &str, saver: PostgresSaver, pool: Pool) -> Db {
        let serde = Arc::clone(saver.serializer());
        Db {
            name: name.to_owned(),
            saver: Arc::new(saver),
            serde,
            raw: Raw::Postgres(pool),
        }
    }

    /// The kind of database.
    pub fn kind(&self) -> Kind {
        match self.raw {
            Raw::Sqlite(_) => Kind::Sqlite,
            Raw::Postgres(_) => Kind::Postgres,
        }
    }

    async fn check_postgres_tables(&self) -> Result<()> {
        let Raw::Postgres(pool) = &self.raw else {
            return Ok(());
        };
        let client = pool.get().await.map_err(pg_pool_err)?;
        let row = client
            .query_one(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = \
                 current_schema() AND table_name IN ('checkpoints', 'checkpoint_blobs', \
                 'checkpoint_writes')",
                &[],
            )
            .await
            .map_err(pg)?;
        let n: i64 = row.get(0);
        if n != 3 {
            return Err(CliError::Database(format!(
                "{}: not a checkpoint database (no LangGraph checkpoint tables)",
                self.name
            )));
        }
        Ok(())
    }

    /// Every (thread, namespace) with its checkpoint count, latest id and row bytes.
    pub async fn thread_rows(&self) -> Result<Vec<NsRow>> {
        match &self.raw {
            Raw::Sqlite(conn) => {
                let conn = conn.lock();
                let mut stmt = conn
                    .prepare(
                        "SELECT thread_id, checkpoint_ns, count(*), max(checkpoint_id), \
                         coalesce(sum(length(checkpoint) + length(metadata)), 0) \
                         FROM checkpoints GROUP BY thread_id, checkpoint_ns \
                         ORDER BY thread_id, checkpoint_ns",
                    )
                    .map_err(sql)?;
                let rows = stmt
                    .query_map([], |r| {
                        Ok(NsRow {
                            thread_id: r.get(0)?,
                            ns: r.get(1)?,
                            checkpoints: r.get(2)?,
                            latest: r.get(3)?,
                            bytes: r.get(4)?,
                        })
                    })
                    .map_err(sql)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(sql)
            }
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                let rows = client
                    .query(
                        "SELECT thread_id, checkpoint_ns, count(*), max(checkpoint_id), \
                         coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)::int8 \
                         FROM checkpoints GROUP BY thread_id, checkpoint_ns \
                         ORDER BY thread_id, checkpoint_ns",
                        &[],
                    )
                    .await
                    .map_err(pg)?;
                Ok(rows
                    .iter()
                    .map(|r| NsRow {
                        thread_id: r.get(0),
                        ns: r.get(1),
                        checkpoints: r.get(2),
                        latest: r.get(3),
                        bytes: r.get(4),
                    })
                    .collect())
            }
        }
    }

    /// The size of every thread, the one definition `threads` and `stats` share: the
    /// bytes the database stores for it, in every namespace: its checkpoint rows
    /// (checkpoint and metadata columns), its pending writes and, on Postgres, its channel
    /// blobs. A byte count is the length of each stored value: `length()` on SQLite; on
    /// Postgres `octet_length()` of byte columns, `pg_column_size()` of JSONB ones.
    pub async fn thread_sizes(&self) -> Result<std::collections::HashMap<String, i64>> {
        let mut out: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
        for row in self.thread_rows().await? {
            *out.entry(row.thread_id).or_default() += row.bytes;
        }
        for (thread, bytes) in self.other_bytes().await? {
            *out.entry(thread).or_default() += bytes;
        }
        Ok(out)
    }

    /// Calls `f` on every checkpoint row of `(thread, ns)` of a SQLite database, oldest
    /// first, one row at a time: `(id, parent id, type, checkpoint bytes, row bytes)`.
    /// Returns `false` (and calls nothing) on Postgres, whose rows hold no values.
    pub fn for_each_sqlite_checkpoint(
        &self,
        thread: &str,
        ns: &str,
        mut f: impl FnMut(String, Option<String>, String, &[u8], u64) -> Result<()>,
    ) -> Result<bool> {
        let Raw::Sqlite(conn) = &self.raw else {
            return Ok(false);
        };
        let conn = conn.lock();
        let mut stmt = conn
            .prepare(
                "SELECT checkpoint_id, parent_checkpoint_id, coalesce(type, ''), \
                 coalesce(checkpoint, x''), coalesce(length(metadata), 0) FROM checkpoints \
                 WHERE thread_id = ?1 AND checkpoint_ns = ?2 ORDER BY checkpoint_id",
            )
            .map_err(sql)?;
        let mut rows = stmt.query([thread, ns]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let bytes = r
                .get_ref(3)
                .map_err(sql)?
                .as_blob_or_null()
                .map_err(|e| sql(e.into()))?;
            let bytes = bytes.unwrap_or_default();
            let meta: i64 = r.get(4).map_err(sql)?;
            f(
                r.get(0).map_err(sql)?,
                r.get(1).map_err(sql)?,
                r.get(2).map_err(sql)?,
                bytes,
                bytes.len() as u64 + u64::try_from(meta).unwrap_or(0),
            )?;
        }
        Ok(true)
    }

    /// How many checkpoints `(thread, ns)` has.
    pub async fn count_checkpoints(&self, thread: &str, ns: &str) -> Result<u64> {
        let n: i64 = match &self.raw {
            Raw::Sqlite(conn) => conn
                .lock()
                .query_row(
                    "SELECT count(*) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2",
                    [thread, ns],
                    |r| r.get(0),
                )
                .map_err(sql)?,
            Raw::Postgres(pool) => pool
                .get()
                .await
                .map_err(pg_pool_err)?
                .query_one(
                    "SELECT count(*) FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2",
                    &[&thread, &ns],
                )
                .await
                .map_err(pg)?
                .get(0),
        };
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Bytes of writes (and, on Postgres, blobs) per thread.
    pub async fn other_bytes(&self) -> Result<Vec<(String, i64)>> {
        match &self.raw {
            Raw::Sqlite(conn) => {
                let conn = conn.lock();
                let mut stmt = conn
                    .prepare(
                        "SELECT thread_id, coalesce(sum(length(value)), 0) FROM writes \
                         GROUP BY thread_id",
                    )
                    .map_err(sql)?;
                let rows = stmt
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .map_err(sql)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(sql)
            }
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                let rows = client
                    .query(
                        "SELECT thread_id, sum(n)::int8 FROM ( \
                         SELECT thread_id, coalesce(octet_length(blob), 0) AS n FROM checkpoint_blobs \
                         UNION ALL SELECT thread_id, octet_length(blob) FROM checkpoint_writes) t \
                         GROUP BY thread_id",
                        &[],
                    )
                    .await
                    .map_err(pg)?;
                Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
            }
        }
    }

    /// Bytes of each checkpoint row of a thread (checkpoint and metadata columns), by
    /// namespace and id.
    pub async fn checkpoint_bytes(&self, thread: &str) -> Result<Vec<(String, String, i64)>> {
        match &self.raw {
            Raw::Sqlite(conn) => {
                let conn = conn.lock();
                let mut stmt = conn
                    .prepare(
                        "SELECT checkpoint_ns, checkpoint_id, \
                         coalesce(length(checkpoint), 0) + coalesce(length(metadata), 0) \
                         FROM checkpoints WHERE thread_id = ?1",
                    )
                    .map_err(sql)?;
                let rows = stmt
                    .query_map([thread], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .map_err(sql)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(sql)
            }
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                let rows = client
                    .query(
                        "SELECT checkpoint_ns, checkpoint_id, \
                         (pg_column_size(checkpoint) + pg_column_size(metadata))::int8 \
                         FROM checkpoints WHERE thread_id = $1",
                        &[&thread],
                    )
                    .await
                    .map_err(pg)?;
                Ok(rows
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect())
            }
        }
    }

    /// The stored writes of one checkpoint, with their task path and index, in the
    /// savers' order (task path, task id, index).
    pub async fn raw_writes(&self, thread: &str, ns: &str, id: &str) -> Result<Vec<RawWrite>> {
        match &self.raw {
            Raw::Sqlite(conn) => {
                let conn = conn.lock();
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT task_id, task_path, idx, channel, coalesce(type, ''), \
                         coalesce(value, x'') FROM writes WHERE thread_id = ?1 AND \
                         checkpoint_ns = ?2 AND checkpoint_id = ?3 \
                         ORDER BY task_path, task_id, idx",
                    )
                    .map_err(sql)?;
                let rows = stmt
                    .query_map([thread, ns, id], |r| {
                        Ok(RawWrite {
                            task_id: r.get(0)?,
                            task_path: r.get(1)?,
                            idx: r.get(2)?,
                            channel: r.get(3)?,
                            tag: r.get(4)?,
                            bytes: r.get(5)?,
                        })
                    })
                    .map_err(sql)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(sql)
            }
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                let rows = client
                    .query(
                        "SELECT task_id, task_path, idx::int8, channel, coalesce(type, ''), blob \
                         FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 \
                         AND checkpoint_id = $3 ORDER BY task_path, task_id, idx",
                        &[&thread, &ns, &id],
                    )
                    .await
                    .map_err(pg)?;
                Ok(rows
                    .iter()
                    .map(|r| RawWrite {
                        task_id: r.get(0),
                        task_path: r.get(1),
                        idx: r.get(2),
                        channel: r.get(3),
                        tag: r.get(4),
                        bytes: r.get(5),
                    })
                    .collect())
            }
        }
    }

    /// Calls `f` on every encoded value of every table, one row at a time (memory stays
    /// bounded whatever the database's size). `total` is called first with the row count.
    ///
    /// A SQLite file whose pages are damaged does not stop the pass: each table that
    /// cannot be read to its end, and each problem SQLite's `PRAGMA quick_check` finds
    /// (indexes, free pages), is returned as a [`Damage`], and the rows read before it
    /// are still checked.
    pub async fn for_each_raw_value(
        &self,
        total: impl FnOnce(u64),
        f: impl FnMut(RawValue),
    ) -> Result<Vec<Damage>> {
        match &self.raw {
            Raw::Sqlite(conn) => sqlite_raw_values(&conn.lock(), total, f),
            Raw::Postgres(pool) => {
                let mut f = f;
                let client = pool.get().await.map_err(pg_pool_err)?;
                let n: i64 = client
                    .query_one(
                        "SELECT (SELECT count(*) FROM checkpoints) * 2 + \
                         (SELECT count(*) FROM checkpoint_blobs) + (SELECT count(*) FROM checkpoint_writes)",
                        &[],
                    )
                    .await
                    .map_err(pg)?
                    .get(0);
                total(u64::try_from(n).unwrap_or(0));
                let queries: [(&str, &str); 3] = [
                    (
                        "SELECT 'checkpoints[thread=' || to_json(thread_id)::text || ', ns=' || \
                         to_json(checkpoint_ns)::text || ', id=' || checkpoint_id || ']', \
                         'json', convert_to(checkpoint::text, 'UTF8'), \
                         convert_to(metadata::text, 'UTF8') FROM checkpoints",
                        "checkpoint",
                    ),
                    (
                        "SELECT 'checkpoint_blobs[thread=' || to_json(thread_id)::text || ', ns=' || \
                         to_json(checkpoint_ns)::text || ', channel=' || to_json(channel)::text || \
                         ', version=' || version || ']', coalesce(type, ''), coalesce(blob, ''::bytea), \
                         NULL::bytea FROM checkpoint_blobs",
                        "",
                    ),
                    (
                        "SELECT 'checkpoint_writes[thread=' || to_json(thread_id)::text || ', ns=' || \
                         to_json(checkpoint_ns)::text || ', id=' || checkpoint_id || ', task=' || task_id \
                         || ', idx=' || idx || ', channel=' || to_json(channel)::text || ']', \
                         coalesce(type, ''), blob, NULL::bytea FROM checkpoint_writes",
                        "",
                    ),
                ];
                for (query, first) in queries {
                    let stream = client
                        .query_raw(query, std::iter::empty::<&str>())
                        .await
                        .map_err(pg)?;
                    pin_mut!(stream);
                    while let Some(r) = stream.try_next().await.map_err(pg)? {
                        let key: String = r.get(0);
                        let meta: Option<Vec<u8>> = r.get(3);
                        let location = if first.is_empty() {
                            key.clone()
                        } else {
                            format!("{key}.{first}")
                        };
                        f(RawValue {
                            location,
                            tag: r.get(1),
                            bytes: r.get(2),
                        });
                        if let Some(meta) = meta {
                            f(RawValue {
                                location: format!("{key}.metadata"),
                                tag: "json".into(),
                                bytes: meta,
                            });
                        }
                    }
                }
                // The server keeps its own pages; a damaged one fails the query above.
                Ok(Vec::new())
            }
        }
    }
}

/// A part of a SQLite file that cannot be read: which table (or index) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The table (`None` when SQLite does not say).
    pub table: Option<String>,
    /// The index of the table, when the damage is in one.
    pub index: Option<String>,
    /// SQLite's words.
    pub reason: String,
}

/// At most this many `quick_check` messages are kept.
const QUICK_CHECK_MESSAGES: usize = 20;

/// [`Db::for_each_raw_value`] on a SQLite connection.
fn sqlite_raw_values(
    conn: &Connection,
    total: impl FnOnce(u64),
    mut f: impl FnMut(RawValue),
) -> Result<Vec<Damage>> {
    let mut damage = Vec::new();
    let n: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM checkpoints) * 2 + (SELECT count(*) FROM writes)",
            [],
            |r| r.get(0),
        )
        .or_else(|e| corrupt(e).map(|_| 0))?;
    total(u64::try_from(n).unwrap_or(0));
    let checkpoints = scan_sqlite_checkpoints(conn, &mut f);
    if let Some(d) = damaged("checkpoints", checkpoints)? {
        damage.push(d);
    }
    let writes = scan_sqlite_writes(conn, &mut f);
    if let Some(d) = damaged("writes", writes)? {
        damage.push(d);
    }
    // What the scans did not read (indexes, free pages); a check that stops on damage
    // already reported adds nothing.
    for d in quick_check(conn)? {
        let known = damage
            .iter()
            .any(|x| x.table == d.table && x.index == d.index);
        let says_where = d.table.is_some() || damage.is_empty();
        if !known && says_where {
            damage.push(d);
        }
    }
    Ok(damage)
}

fn scan_sqlite_checkpoints(
    conn: &Connection,
    f: &mut impl FnMut(RawValue),
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, coalesce(type, ''), \
         coalesce(checkpoint, x''), coalesce(metadata, x'') FROM checkpoints",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let key = format!(
            "checkpoints[thread={:?}, ns={:?}, id={}]",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?
        );
        f(RawValue {
            location: format!("{key}.checkpoint"),
            tag: r.get(3)?,
            bytes: r.get(4)?,
        });
        f(RawValue {
            location: format!("{key}.metadata"),
            tag: "json".into(),
            bytes: r.get(5)?,
        });
    }
    Ok(())
}

fn scan_sqlite_writes(conn: &Connection, f: &mut impl FnMut(RawValue)) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
         coalesce(type, ''), coalesce(value, x'') FROM writes",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        f(RawValue {
            location: format!(
                "writes[thread={:?}, ns={:?}, id={}, task={}, idx={}, channel={:?}]",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, String>(5)?,
            ),
            tag: r.get(6)?,
            bytes: r.get(7)?,
        });
    }
    Ok(())
}

/// Whether a command's error is SQLite saying the file is damaged (a malformed page, not
/// a file that is no database at all).
pub fn is_damage(e: &CliError) -> bool {
    let CliError::Checkpoint(Error::Backend(source)) = e else {
        return false;
    };
    source.downcast_ref::<rusqlite::Error>().is_some_and(|e| {
        e.sqlite_error_code()
            == Some(stategraph_checkpoint_sqlite::rusqlite::ErrorCode::DatabaseCorrupt)
    })
}

/// Whether a SQLite error says the file is damaged (rather than, say, busy).
fn is_corrupt(e: &rusqlite::Error) -> bool {
    use stategraph_checkpoint_sqlite::rusqlite::ErrorCode;
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// `Ok(e)` for a damaged file's error (to be reported), `Err` for any other.
fn corrupt(e: rusqlite::Error) -> Result<rusqlite::Error> {
    if is_corrupt(&e) {
        Ok(e)
    } else {
        Err(sql(e))
    }
}

/// The damage a scan of `table` met, if any; other errors are returned.
fn damaged(table: &str, scan: rusqlite::Result<()>) -> Result<Option<Damage>> {
    match scan {
        Ok(()) => Ok(None),
        Err(e) => corrupt(e).map(|e| {
            Some(Damage {
                table: Some(table.to_owned()),
                index: None,
                reason: e.to_string(),
            })
        }),
    }
}

/// What `PRAGMA quick_check` finds, each message under the table or index it names
/// (`Tree N` is the b-tree whose root is page N in `sqlite_master`).
fn quick_check(conn: &Connection) -> Result<Vec<Damage>> {
    let rows: Vec<String> = match conn.prepare("PRAGMA quick_check(20)").and_then(|mut stmt| {
        stmt.query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()
    }) {
        Ok(m) => m,
        Err(e) => vec![corrupt(e)?.to_string()],
    };
    if rows == ["ok"] {
        return Ok(Vec::new());
    }
    let mut out: Vec<Damage> = Vec::new();
    let messages = rows
        .iter()
        .flat_map(|r| r.lines())
        .filter(|m| !m.starts_with("*** in database"));
    for message in messages.take(QUICK_CHECK_MESSAGES) {
        let (table, index) = tree_name(conn, message).unwrap_or_default();
        match out
            .iter_mut()
            .find(|d| d.table == table && d.index == index)
        {
            Some(d) => {
                d.reason.push_str("; ");
                d.reason.push_str(message);
            }
            None => out.push(Damage {
                table,
                index,
                reason: message.to_owned(),
            }),
        }
    }
    Ok(out)
}

/// The table (and index) a `quick_check` message is about: `Tree N ...` (root page N) or
/// `... in index NAME`.
fn tree_name(conn: &Connection, message: &str) -> Option<(Option<String>, Option<String>)> {
    let by_page = |page: i64| -> rusqlite::Result<(String, String, String)> {
        conn.query_row(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE rootpage = ?1",
            [page],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
    };
    let by_name = |name: &str| -> rusqlite::Result<(String, String, String)> {
        conn.query_row(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
    };
    let found = if let Some(index) = message.split(" index ").nth(1) {
        by_name(index.split_whitespace().next()?).ok()?
    } else {
        let page: i64 = message
            .strip_prefix("Tree ")?
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        by_page(page).ok()?
    };
    let (kind, name, table) = found;
    Some((Some(table), (kind == "index").then_some(name)))
}

/// A pool on `url`; `read_only` makes every transaction of every connection read-only.
pub(crate) async fn pg_pool(url: &str, read_only: bool) -> Result<Pool> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| CliError::Database(format!("{url}: not a Postgres URL: {e}")))?;
    if read_only {
        config.options("-c default_transaction_read_only=on");
    }
    config.connect_timeout(std::time::Duration::from_secs(10));
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(4)
        .build()
        .map_err(|e| CliError::Database(format!("{url}: {e}")))?;
    match pool.get().await {
        Ok(client) => drop(client),
        Err(e) => {
            return Err(CliError::Database(format!(
                "cannot connect to {}: {}",
                redact(url),
                describe_pool_error(&e)
            )))
        }
    }
    Ok(pool)
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

fn describe_pool_error(e: &stategraph_checkpoint_postgres::deadpool_postgres::PoolError) -> String {
    use std::error::Error as _;
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

fn sql(e: rusqlite::Error) -> CliError {
    CliError::Checkpoint(Error::Backend(Box::new(e)))
}

fn pg(e: tokio_postgres::Error) -> CliError {
    use std::error::Error as _;
    match e.as_db_error() {
        Some(db) => CliError::Database(db.message().to_owned()),
        None => CliError::Database(match e.source() {
            Some(s) => format!("{e}: {s}"),
            None => e.to_string(),
        }),
    }
}

fn pg_pool_err(e: stategraph_checkpoint_postgres::deadpool_postgres::PoolError) -> CliError {
    CliError::Database(describe_pool_error(&e))
}

/// The serializer every database of LangGraph's defaults uses.
#[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
pub fn default_serde() -> Arc<dyn Serializer> {
    Arc::new(JsonPlusSerializer::default())
}
