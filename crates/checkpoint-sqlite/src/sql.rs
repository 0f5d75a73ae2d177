//! Every statement the SQLite saver runs, each a named constant, as LangGraph's savers keep
//! theirs: the files that run SQL (`write.rs`, `fence.rs`, `read.rs`, `raw.rs`, `delta.rs`,
//! `maintenance.rs`, `dump.rs`, `schema.rs`, `pool.rs`, `read_only.rs`) take them from
//! here. The `list` query's WHERE clause is built from a fixed set of parts by `query.rs`
//! (keys and values bound as parameters); the shared columns are a macro so statements can
//! be `concat!`ed from them.

/// The columns every checkpoint read selects, in this order (a macro for `concat!`).
macro_rules! checkpoint_columns {
    () => {
        "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
    };
}

/// The newest checkpoint id of the namespace of the row `c`, thread `?1` (a macro for
/// `concat!`, used inside statements).
macro_rules! latest_of_ns {
    () => {
        "(SELECT MAX(l.checkpoint_id) FROM checkpoints AS l \
         WHERE l.thread_id = ?1 AND l.checkpoint_ns = c.checkpoint_ns)"
    };
}

/// The checkpoint `?3` of `(?1, ?2)` (the columns of `checkpoint_columns!`).
pub(crate) const GET_BY_ID: &str = concat!(
    "SELECT ",
    checkpoint_columns!(),
    " FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3"
);

/// The greatest id of `(?1, ?2)`, which reads one entry at the end of a primary-key range
/// whatever the thread's length (the columns of `checkpoint_columns!`).
pub(crate) const GET_LATEST: &str = concat!(
    "SELECT ",
    checkpoint_columns!(),
    " FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 ORDER BY checkpoint_id DESC LIMIT 1"
);

/// The start of the `list` query, before its WHERE clause (the columns of `checkpoint_columns!`).
pub(crate) const LIST: &str = concat!("SELECT ", checkpoint_columns!(), " FROM checkpoints");

/// The pending writes of one checkpoint, in `(task_path, task_id, idx)` order.
pub(crate) const PENDING_WRITES: &str = "SELECT task_id, channel, type, value FROM writes \
     WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3 \
     ORDER BY task_path, task_id, idx";

/// The columns and values of a write row, after `INSERT OR REPLACE` / `INSERT OR IGNORE`.
macro_rules! write_row {
    () => {
        "INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
         task_path, idx, channel, type, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
    };
}

/// A write at a reserved (negative) index: replaces the stored row.
pub(crate) const REPLACE_WRITE: &str = concat!("INSERT OR REPLACE ", write_row!());

/// A write at a normal index: keeps the stored row.
pub(crate) const IGNORE_WRITE: &str = concat!("INSERT OR IGNORE ", write_row!());

/// Deletes a thread's checkpoints (every namespace).
pub(crate) const DELETE_THREAD_CHECKPOINTS: &str = "DELETE FROM checkpoints WHERE thread_id = ?1";

/// Deletes a thread's writes (every namespace).
pub(crate) const DELETE_THREAD_WRITES: &str = "DELETE FROM writes WHERE thread_id = ?1";

/// `prune`: unlinks each kept (latest) checkpoint of thread `?1` from a parent about to go.
pub(crate) const PRUNE_UNLINK_KEPT: &str = concat!(
    "UPDATE checkpoints AS c SET parent_checkpoint_id = NULL \
     WHERE c.thread_id = ?1 AND c.checkpoint_id = ",
    latest_of_ns!(),
    " AND EXISTS (SELECT 1 FROM checkpoints AS p WHERE p.thread_id = ?1 \
     AND p.checkpoint_ns = c.checkpoint_ns \
     AND p.checkpoint_id = c.parent_checkpoint_id \
     AND p.checkpoint_id <> c.checkpoint_id)"
);

/// `prune`: deletes every checkpoint of thread `?1` older than its namespace's latest.
pub(crate) const PRUNE_OLDER: &str = concat!(
    "DELETE FROM checkpoints AS c \
     WHERE c.thread_id = ?1 AND c.checkpoint_id < ",
    latest_of_ns!()
);

/// `prune` keeping a DeltaChannel chain: [`PRUNE_OLDER`] but for the listed
/// `namespace\0id` keys (`{list}`: `?2, ?3, …`, one per key).
pub(crate) fn prune_older_except(list: &str) -> String {
    format!("{PRUNE_OLDER} AND (c.checkpoint_ns || char(0) || c.checkpoint_id) NOT IN ({list})")
}

/// The head (greatest id) of `(?1, ?2)`.
pub(crate) const HEAD: &str = "SELECT max(checkpoint_id) FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2";

/// The parent of checkpoint `?3` of `(?1, ?2)`, if it is stored.
pub(crate) const STORED_PARENT: &str = "SELECT parent_checkpoint_id FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";

/// Whether a later checkpoint of `(?1, ?2)` has checkpoint `?3` as its parent.
pub(crate) const HAS_CHILD: &str = "SELECT EXISTS (SELECT 1 FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id > ?3 \
               AND parent_checkpoint_id = ?3)";

/// The stored write `(?4, ?5)` of checkpoint `?3` of `(?1, ?2)`.
pub(crate) const STORED_WRITE: &str =
    "SELECT channel, type, value FROM writes WHERE thread_id = ?1 AND checkpoint_ns = ?2 \
             AND checkpoint_id = ?3 AND task_id = ?4 AND idx = ?5";

/// A put: `INSERT OR REPLACE`, as LangGraph's `put` (re-putting an id replaces the row).
pub(crate) const PUT: &str =
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

/// `delete_for_runs`: the checkpoints whose metadata's `run_id` is one of the JSON list `?1` (rechecked in Rust).
pub(crate) const RUN_CANDIDATES: &str =
    "SELECT thread_id, checkpoint_ns, checkpoint_id, metadata FROM checkpoints \
                 WHERE EXISTS (SELECT 1 FROM json_each(CAST(metadata AS TEXT)) \
                 WHERE key = 'run_id' AND type = 'text' \
                 AND atom IN (SELECT value FROM json_each(?1)))";

/// Unlinks the children of checkpoint `?3` of `(?1, ?2)`.
pub(crate) const ORPHAN_CHILDREN: &str = "UPDATE checkpoints SET parent_checkpoint_id = NULL \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND parent_checkpoint_id = ?3";

/// Deletes the writes of checkpoint `?3` of `(?1, ?2)`.
pub(crate) const DELETE_CHECKPOINT_WRITES: &str =
    "DELETE FROM writes WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";

/// Deletes checkpoint `?3` of `(?1, ?2)`.
pub(crate) const DELETE_CHECKPOINT: &str = "DELETE FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";

/// `copy_thread`: copies the checkpoints of thread `?1` to thread `?2`.
pub(crate) const COPY_CHECKPOINTS: &str =
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
         parent_checkpoint_id, type, checkpoint, metadata) \
         SELECT ?2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, \
         metadata FROM checkpoints WHERE thread_id = ?1";

/// `copy_thread`: copies the writes of thread `?1` to thread `?2`.
pub(crate) const COPY_WRITES: &str =
    "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
         task_path, idx, channel, type, value) \
         SELECT ?2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, \
         value FROM writes WHERE thread_id = ?1";

/// Unlinks the checkpoints of thread `?1` whose parent is no longer stored.
pub(crate) const UNLINK_MISSING_PARENTS: &str =
    "UPDATE checkpoints AS c SET parent_checkpoint_id = NULL WHERE c.thread_id = ?1 \
         AND c.parent_checkpoint_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM checkpoints AS p \
         WHERE p.thread_id = ?1 AND p.checkpoint_ns = c.checkpoint_ns \
         AND p.checkpoint_id = c.parent_checkpoint_id)";

/// `dump`: every checkpoint of thread `?`, oldest first.
pub(crate) const DUMP_CHECKPOINTS: &str =
    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
             FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id";

/// `dump`: every write of thread `?`, in checkpoint and task order.
pub(crate) const DUMP_WRITES: &str =
    "SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path \
             FROM writes WHERE thread_id = ? \
             ORDER BY checkpoint_ns, checkpoint_id, task_path, task_id, idx";

/// The latest checkpoint of each namespace of thread `?1`.
pub(crate) const LATEST_PER_NS: &str =
    "SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, \
             c.checkpoint, c.metadata FROM checkpoints AS c WHERE c.thread_id = ?1 \
             AND c.checkpoint_id = (SELECT MAX(l.checkpoint_id) FROM checkpoints AS l \
             WHERE l.thread_id = ?1 AND l.checkpoint_ns = c.checkpoint_ns)";

/// The parent, type and checkpoint of checkpoint `?3` of `(?1, ?2)`.
pub(crate) const PARENT_OF: &str =
    "SELECT parent_checkpoint_id, type, checkpoint FROM checkpoints \
             WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3";

/// How many of the saver's two tables the database holds.
pub(crate) const COUNT_SAVER_TABLES: &str =
    "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
             AND name IN ('checkpoints', 'writes')";

/// Reads the schema (SQLite reads the header lazily: a file that is no database fails here).
pub(crate) const COUNT_SCHEMA: &str = "SELECT count(*) FROM sqlite_master";

/// A reader connection refuses writes.
pub(crate) const QUERY_ONLY: &str = "PRAGMA query_only = ON";

/// Whether table `?1` has a column `?2`.
pub(crate) const HAS_COLUMN: &str = "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2";

/// Switches the file to WAL mode (answers the mode in force).
pub(crate) const JOURNAL_WAL: &str = "PRAGMA journal_mode=WAL";

/// The writer's commits reach the disk before they return (the default).
pub(crate) const SYNCHRONOUS_FULL: &str = "PRAGMA synchronous = FULL";

/// The walk; `{channels}` becomes one placeholder per channel (from `?4` on).
pub(crate) const HISTORY: &str =
    "WITH RECURSIVE chain(depth, kind, checkpoint_id, parent_checkpoint_id, \
     type, data, task_id, channel, task_path, idx) AS ( \
       SELECT 0, 0, checkpoint_id, parent_checkpoint_id, NULL, NULL, NULL, NULL, NULL, NULL \
         FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = \
         COALESCE(?3, (SELECT max(checkpoint_id) FROM checkpoints \
                       WHERE thread_id = ?1 AND checkpoint_ns = ?2)) \
       UNION ALL \
       SELECT chain.depth + 1, 0, c.checkpoint_id, c.parent_checkpoint_id, c.type, \
              c.checkpoint, NULL, NULL, NULL, NULL \
         FROM chain CROSS JOIN checkpoints c \
           ON c.thread_id = ?1 AND c.checkpoint_ns = ?2 \
          AND c.checkpoint_id = chain.parent_checkpoint_id \
        WHERE chain.kind = 0 \
       UNION ALL \
       SELECT chain.depth, 1, chain.checkpoint_id, NULL, w.type, w.value, w.task_id, \
              w.channel, w.task_path, w.idx \
         FROM chain CROSS JOIN writes w \
           ON w.thread_id = ?1 AND w.checkpoint_ns = ?2 AND w.checkpoint_id = chain.checkpoint_id \
        WHERE chain.kind = 0 AND chain.depth > 0 AND w.channel IN ({channels}) \
       ORDER BY 1, 2, 9, 7, 10 \
     ) \
     SELECT depth, kind, checkpoint_id, type, data, task_id, channel FROM chain WHERE depth > 0";

/// The two tables of LangGraph's SQLite saver.
pub(crate) const CREATE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB,
    metadata BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
";

/// The migration of databases created before `task_path` existed.
pub(crate) const ADD_TASK_PATH: &str =
    "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''";

/// Reads the connection's change counter (it also starts the read transaction's snapshot).
pub(crate) const DATA_VERSION: &str = "PRAGMA data_version";

/// The writer's commits may lose the last ones on power loss, never corrupt the file.
pub(crate) const SYNCHRONOUS_NORMAL: &str = "PRAGMA synchronous = NORMAL";

/// Deletes the writes of thread `?1` whose checkpoint is no longer stored.
pub(crate) const DELETE_ORPHAN_WRITES: &str =
    "DELETE FROM writes WHERE thread_id = ?1 AND NOT EXISTS (SELECT 1 FROM checkpoints \
     AS k WHERE k.thread_id = ?1 AND k.checkpoint_ns = writes.checkpoint_ns \
     AND k.checkpoint_id = writes.checkpoint_id)";

/// `inspect`: every (thread, namespace) with its checkpoint count, latest id and the bytes
/// of its checkpoint rows.
pub(crate) const INSPECT_NAMESPACES: &str =
    "SELECT thread_id, checkpoint_ns, count(*), max(checkpoint_id), \
     coalesce(sum(length(checkpoint) + length(metadata)), 0) \
     FROM checkpoints GROUP BY thread_id, checkpoint_ns \
     ORDER BY thread_id, checkpoint_ns";

/// `inspect`: the checkpoint rows of `(?1, ?2)`, oldest first, with their sizes.
pub(crate) const INSPECT_CHECKPOINTS: &str =
    "SELECT checkpoint_id, parent_checkpoint_id, coalesce(type, ''), \
     coalesce(checkpoint, x''), coalesce(length(metadata), 0) FROM checkpoints \
     WHERE thread_id = ?1 AND checkpoint_ns = ?2 ORDER BY checkpoint_id";

/// `inspect`: how many checkpoints `(?1, ?2)` has.
pub(crate) const INSPECT_COUNT: &str =
    "SELECT count(*) FROM checkpoints WHERE thread_id = ?1 AND checkpoint_ns = ?2";

/// `inspect`: the bytes of writes per thread.
pub(crate) const INSPECT_WRITE_BYTES: &str =
    "SELECT thread_id, coalesce(sum(length(value)), 0) FROM writes GROUP BY thread_id";

/// `inspect`: the bytes of each checkpoint row of thread `?1`.
pub(crate) const INSPECT_CHECKPOINT_BYTES: &str = "SELECT checkpoint_ns, checkpoint_id, \
     coalesce(length(checkpoint), 0) + coalesce(length(metadata), 0) \
     FROM checkpoints WHERE thread_id = ?1";

/// `inspect`: the stored writes of checkpoint `?3` of `(?1, ?2)`, in the savers' order.
pub(crate) const INSPECT_WRITES: &str =
    "SELECT task_id, task_path, idx, channel, coalesce(type, ''), \
     coalesce(value, x'') FROM writes WHERE thread_id = ?1 AND \
     checkpoint_ns = ?2 AND checkpoint_id = ?3 \
     ORDER BY task_path, task_id, idx";

/// `inspect`: the number of encoded values (a checkpoint row holds two).
pub(crate) const INSPECT_VALUE_COUNT: &str =
    "SELECT (SELECT count(*) FROM checkpoints) * 2 + (SELECT count(*) FROM writes)";

/// `inspect`: every checkpoint row's values.
pub(crate) const INSPECT_ALL_CHECKPOINTS: &str =
    "SELECT thread_id, checkpoint_ns, checkpoint_id, coalesce(type, ''), \
     coalesce(checkpoint, x''), coalesce(metadata, x'') FROM checkpoints";

/// `inspect`: every write row's value.
pub(crate) const INSPECT_ALL_WRITES: &str =
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
     coalesce(type, ''), coalesce(value, x'') FROM writes";

/// `inspect`: SQLite's own check of the file's pages and indexes (at most 20 messages).
pub(crate) const QUICK_CHECK: &str = "PRAGMA quick_check(20)";

/// `inspect`: the table or index whose b-tree starts at page `?1`.
pub(crate) const TREE_BY_PAGE: &str =
    "SELECT type, name, tbl_name FROM sqlite_master WHERE rootpage = ?1";

/// `inspect`: the table or index named `?1`.
pub(crate) const TREE_BY_NAME: &str =
    "SELECT type, name, tbl_name FROM sqlite_master WHERE name = ?1";
