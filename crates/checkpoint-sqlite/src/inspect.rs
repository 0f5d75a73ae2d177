//! What the `stategraph` command reads below the [`CheckpointSaver`] API, as typed
//! functions on a connection (opened with [`crate::read_only::connect`] to leave the file as
//! it is): per-namespace counts and sizes, a thread's checkpoint rows one at a time, stored
//! writes with their index and task path, and every encoded value with the damage a scan
//! meets. The statements are in `sql.rs` beside the saver's own.
//!
//! [`CheckpointSaver`]: stategraph_checkpoint::CheckpointSaver

use rusqlite::Connection;
use stategraph_checkpoint::inspect::{NsRow, RawValue, RawWrite};

use crate::error::backend;
use crate::sql;

/// Every (thread, namespace) with its checkpoint count, latest id and row bytes, by
/// thread and namespace.
pub fn namespaces(conn: &Connection) -> rusqlite::Result<Vec<NsRow>> {
    let mut stmt = conn.prepare(sql::INSPECT_NAMESPACES)?;
    let rows = stmt.query_map([], |r| {
        Ok(NsRow {
            thread_id: r.get(0)?,
            ns: r.get(1)?,
            checkpoints: r.get(2)?,
            latest: r.get(3)?,
            bytes: r.get(4)?,
        })
    })?;
    rows.collect()
}

/// Calls `f` on every checkpoint row of `(thread, ns)`, oldest first, one row at a time:
/// `(id, parent id, type, checkpoint bytes, row bytes)`; SQLite's errors reach the caller
/// as [`stategraph_checkpoint::Error::Backend`], `f`'s as they are.
pub fn for_each_checkpoint<E: From<stategraph_checkpoint::Error>>(
    conn: &Connection,
    thread: &str,
    ns: &str,
    mut f: impl FnMut(String, Option<String>, String, &[u8], u64) -> Result<(), E>,
) -> Result<(), E> {
    let db = |e: rusqlite::Error| E::from(backend(e));
    let mut stmt = conn.prepare(sql::INSPECT_CHECKPOINTS).map_err(db)?;
    let mut rows = stmt.query([thread, ns]).map_err(db)?;
    while let Some(r) = rows.next().map_err(db)? {
        let bytes = r
            .get_ref(3)
            .map_err(db)?
            .as_blob_or_null()
            .map_err(|e| db(e.into()))?;
        let bytes = bytes.unwrap_or_default();
        let meta: i64 = r.get(4).map_err(db)?;
        f(
            r.get(0).map_err(db)?,
            r.get(1).map_err(db)?,
            r.get(2).map_err(db)?,
            bytes,
            bytes.len() as u64 + u64::try_from(meta).unwrap_or(0),
        )?;
    }
    Ok(())
}

/// How many checkpoints `(thread, ns)` has.
pub fn count_checkpoints(conn: &Connection, thread: &str, ns: &str) -> rusqlite::Result<u64> {
    let n: i64 = conn.query_row(sql::INSPECT_COUNT, [thread, ns], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Bytes of writes per thread.
pub fn write_bytes(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut stmt = conn.prepare(sql::INSPECT_WRITE_BYTES)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// Bytes of each checkpoint row of `thread` (checkpoint and metadata columns), by
/// namespace and id.
pub fn checkpoint_bytes(
    conn: &Connection,
    thread: &str,
) -> rusqlite::Result<Vec<(String, String, i64)>> {
    let mut stmt = conn.prepare(sql::INSPECT_CHECKPOINT_BYTES)?;
    let rows = stmt.query_map([thread], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    rows.collect()
}

/// The stored writes of one checkpoint, with their task path and index, in the savers'
/// order (task path, task id, index).
pub fn raw_writes(
    conn: &Connection,
    thread: &str,
    ns: &str,
    id: &str,
) -> rusqlite::Result<Vec<RawWrite>> {
    let mut stmt = conn.prepare_cached(sql::INSPECT_WRITES)?;
    let rows = stmt.query_map([thread, ns, id], |r| {
        Ok(RawWrite {
            task_id: r.get(0)?,
            task_path: r.get(1)?,
            idx: r.get(2)?,
            channel: r.get(3)?,
            tag: r.get(4)?,
            bytes: r.get(5)?,
        })
    })?;
    rows.collect()
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

/// Calls `f` on every encoded value of both tables, one row at a time (memory stays
/// bounded whatever the file's size); `total` is called first with the row count.
///
/// A file whose pages are damaged does not stop the pass: each table that cannot be read
/// to its end, and each problem SQLite's `PRAGMA quick_check` finds (indexes, free pages),
/// is returned as a [`Damage`], and the rows read before it are still checked. Errors
/// other than damage are returned.
pub fn raw_values(
    conn: &Connection,
    total: impl FnOnce(u64),
    mut f: impl FnMut(RawValue),
) -> rusqlite::Result<Vec<Damage>> {
    let mut damage = Vec::new();
    let n: i64 = conn
        .query_row(sql::INSPECT_VALUE_COUNT, [], |r| r.get(0))
        .or_else(|e| corrupt(e).map(|_| 0))?;
    total(u64::try_from(n).unwrap_or(0));
    let checkpoints = scan_checkpoints(conn, &mut f);
    if let Some(d) = damaged("checkpoints", checkpoints)? {
        damage.push(d);
    }
    let writes = scan_writes(conn, &mut f);
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

/// Every checkpoint row's two values.
fn scan_checkpoints(conn: &Connection, f: &mut impl FnMut(RawValue)) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql::INSPECT_ALL_CHECKPOINTS)?;
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

/// Every write row's value.
fn scan_writes(conn: &Connection, f: &mut impl FnMut(RawValue)) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql::INSPECT_ALL_WRITES)?;
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

/// Whether a SQLite error says the file is damaged (rather than, say, busy).
fn is_corrupt(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// `Ok(e)` for a damaged file's error (to be reported), `Err` for any other.
fn corrupt(e: rusqlite::Error) -> rusqlite::Result<rusqlite::Error> {
    if is_corrupt(&e) {
        Ok(e)
    } else {
        Err(e)
    }
}

/// The damage a scan of `table` met, if any; other errors are returned.
fn damaged(table: &str, scan: rusqlite::Result<()>) -> rusqlite::Result<Option<Damage>> {
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
fn quick_check(conn: &Connection) -> rusqlite::Result<Vec<Damage>> {
    let rows: Vec<String> = match conn.prepare(sql::QUICK_CHECK).and_then(|mut stmt| {
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
        conn.query_row(sql::TREE_BY_PAGE, [page], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
    };
    let by_name = |name: &str| -> rusqlite::Result<(String, String, String)> {
        conn.query_row(sql::TREE_BY_NAME, [name], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
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
