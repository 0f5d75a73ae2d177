//! The statements that store checkpoints and task writes, each a named constant (and the
//! SQL fragments they share as macros): the unfenced put and writes, and the fence's lock,
//! transaction and fenced put and writes ([`crate::fence`] says what the fence decides).
//! The files that run them take them from here: [`crate::write`] (one call),
//! [`crate::batch`] (the general way of a batch) and [`crate::batch::chain`] (the chained way,
//! whose one statement per `(thread, namespace)` is built from the same fragments).
//!
//! And the reads that bring a checkpoint's blobs and writes along: the listing's
//! [`SELECT`] ([`crate::read`]) and `get_tuple`'s variant through the decoded-blob cache
//! ([`GET_BY_ID`], [`GET_LATEST`]: [`crate::cache`] decodes their rows).
//!
//! And the rest of the saver's statements, so that no file but this one holds SQL text:
//! `get_delta_channel_history`'s walk ([`HISTORY`], run by `delta.rs`), the upkeep of
//! `maintenance.rs` (`delete_thread`, `delete_for_runs`, `copy_thread`, `prune`), the
//! migration records of `schema.rs` (LangGraph's migrations themselves stay in
//! [`crate::schema::MIGRATIONS`], public), the session setting of `pool.rs`
//! ([`PREFER_LZ4`]), and what the `stategraph` command reads (`INSPECT_*`, `inspect.rs`).
//! The chained batch's statement is built in `batch/chain.rs` from the fragments here.

/// The msgpack blob of a carried long string: a `str8`/`str16`/`str32` header, as the
/// encoder writes it, for `s.n` bytes, then the UTF-8 bytes `s.t`.
macro_rules! carried_blob_sql {
    () => {
        "CASE WHEN s.n < 32 THEN set_byte('\\x00'::bytea, 0, 160 + s.n) \
              WHEN s.n < 256 THEN set_byte('\\xd900'::bytea, 1, s.n) \
              WHEN s.n < 65536 THEN '\\xda'::bytea || substring(int4send(s.n) FROM 3) \
              ELSE '\\xdb'::bytea || int4send(s.n) END || s.t"
    };
}
pub(crate) use carried_blob_sql;

/// The `INSERT` that carries long strings: for each `($11 channel, $12 version)`, the
/// parent `$4`'s inline string of that channel at that version becomes a msgpack blob (a
/// `str8`/`str16`/`str32` header, as the encoder writes it, then the UTF-8 bytes), unless
/// the blob exists. `$join` and `$cond` let the fenced put add its check.
macro_rules! carry_sql {
    ($join:literal, $cond:literal) => {
        concat!(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
            SELECT $1::text, $2::text, k.channel, k.version, 'msgpack', ",
            carried_blob_sql!(),
            " FROM unnest($11::text[], $12::text[]) AS k(channel, version)",
            $join,
            " CROSS JOIN LATERAL ( \
                SELECT v.t, octet_length(v.t) AS n FROM ( \
                    SELECT convert_to(p.checkpoint -> 'channel_values' ->> k.channel, 'UTF8') AS t \
                    FROM checkpoints p \
                    WHERE p.thread_id = $1::text AND p.checkpoint_ns = $2::text \
                      AND p.checkpoint_id = $4::text \
                      AND p.checkpoint -> 'channel_versions' ->> k.channel = k.version \
                      AND jsonb_typeof(p.checkpoint -> 'channel_values' -> k.channel) = 'string' \
                ) AS v \
            ) AS s \
            WHERE NOT EXISTS ( \
                SELECT 1 FROM checkpoint_blobs e \
                WHERE e.thread_id = $1::text AND e.checkpoint_ns = $2::text \
                  AND e.channel = k.channel AND e.version = k.version)",
            $cond,
            " ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING"
        )
    };
}

/// The columns a put returns about the blobs it inserted: arrays of channel, version and
/// row identity (NULL when it inserted none).
macro_rules! written_blobs_sql {
    () => {
        "(SELECT array_agg(channel) FROM blobs), (SELECT array_agg(version) FROM blobs), \
         (SELECT array_agg(ident) FROM blobs)"
    };
}
pub(crate) use written_blobs_sql;

/// The unfenced put: blobs (`$7`–`$10` as arrays of channel, version, type, blob), the
/// carried long strings (`$11`, `$12`: channels and versions, see [`carry_sql!`]), then
/// the checkpoint row `($1 thread, $2 ns, $3 id, $4 parent, $5 checkpoint, $6 metadata)`.
/// Returns the channels, versions and row identities of the blobs it inserted
/// ([`crate::cache`]).
pub(crate) const PUT: &str = concat!(
    "WITH blobs AS ( \
    INSERT INTO checkpoint_blobs AS bl (thread_id, checkpoint_ns, channel, version, type, blob) \
    SELECT $1::text, $2::text, b.channel, b.version, b.type, b.blob \
    FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[]) AS b(channel, version, type, blob) \
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING \
    RETURNING bl.channel, bl.version, ",
    crate::cache::ident_sql!("bl"),
    " AS ident \
), carried AS (",
    carry_sql!("", ""),
    ") \
INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
VALUES ($1::text, $2::text, $3::text, $4::text, $5::text::jsonb, $6::text::jsonb) \
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) \
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata \
RETURNING ",
    written_blobs_sql!()
);

/// The writes of one task: `($1 thread, $2 ns, $3 checkpoint, $4 task, $5 task path)` and
/// arrays of index, channel, type and blob.
pub(crate) const PUT_WRITES: &str = "INSERT INTO checkpoint_writes \
(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
SELECT $1::text, $2::text, $3::text, $4::text, $5::text, w.idx, w.channel, w.type, w.blob \
FROM unnest($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS w(idx, channel, type, blob) \
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) \
DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob \
WHERE EXCLUDED.idx < 0";

/// Takes the per-`(thread, namespace)` lock for the rest of the transaction.
pub(crate) const LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtext($1::text), hashtext($2::text))";

/// Starts the fenced transaction.
pub(crate) const BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";

/// Ends it; after an error Postgres turns this into a rollback.
pub(crate) const COMMIT: &str = "COMMIT";

/// The fenced put. Parameters as [`PUT`]; returns whether the fence let the
/// put through, the head it saw, and the blobs it inserted as [`PUT`] does.
pub(crate) const FENCED_PUT: &str = concat!(
    "WITH head AS ( \
    SELECT (SELECT checkpoint_id FROM checkpoints \
            WHERE thread_id = $1::text AND checkpoint_ns = $2::text \
            ORDER BY checkpoint_id DESC LIMIT 1) AS id \
), fence AS ( \
    SELECT head.id AS head, \
           (head.id IS NOT DISTINCT FROM $4::text OR EXISTS ( \
               SELECT 1 FROM checkpoints \
               WHERE thread_id = $1::text AND checkpoint_ns = $2::text \
                 AND checkpoint_id = $3::text \
                 AND parent_checkpoint_id IS NOT DISTINCT FROM $4::text)) AS ok \
    FROM head \
), blobs AS ( \
    INSERT INTO checkpoint_blobs AS bl (thread_id, checkpoint_ns, channel, version, type, blob) \
    SELECT $1::text, $2::text, b.channel, b.version, b.type, b.blob \
    FROM unnest($7::text[], $8::text[], $9::text[], $10::bytea[]) AS b(channel, version, type, blob), fence \
    WHERE fence.ok \
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING \
    RETURNING bl.channel, bl.version, ",
    crate::cache::ident_sql!("bl"),
    " AS ident \
), carried AS (",
    carry_sql!(" CROSS JOIN fence", " AND fence.ok"),
    "), saved AS ( \
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text::jsonb, $6::text::jsonb FROM fence \
    WHERE fence.ok \
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) \
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata \
) \
SELECT ok, head, ",
    written_blobs_sql!(),
    " FROM fence"
);

/// The fenced writes of one task. Parameters as [`PUT_WRITES`]; returns
/// whether the fence let them through, the child of the checkpoint that another run
/// stored (if any) and the first index whose stored write differs (if any).
///
/// A child is looked for among the greater ids only (a child is minted after its parent,
/// which `get_tuple`'s "latest is the greatest id" relies on too), so that the check is
/// one range probe of the primary key however long the thread.
pub(crate) const FENCED_WRITES: &str = "WITH w AS ( \
    SELECT * FROM unnest($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS w(idx, channel, type, blob) \
), moved AS ( \
    SELECT min(checkpoint_id) AS child FROM checkpoints \
    WHERE thread_id = $1::text AND checkpoint_ns = $2::text \
      AND checkpoint_id > $3::text AND parent_checkpoint_id = $3::text \
), clash AS ( \
    SELECT min(e.idx) AS idx FROM checkpoint_writes e JOIN w ON e.idx = w.idx \
    WHERE e.thread_id = $1::text AND e.checkpoint_ns = $2::text AND e.checkpoint_id = $3::text \
      AND e.task_id = $4::text AND e.idx >= 0 \
      AND (e.channel IS DISTINCT FROM w.channel OR e.type IS DISTINCT FROM w.type \
           OR e.blob IS DISTINCT FROM w.blob) \
), fence AS ( \
    SELECT moved.child, clash.idx, moved.child IS NULL AND clash.idx IS NULL AS ok \
    FROM moved, clash \
), saved AS ( \
    INSERT INTO checkpoint_writes \
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text, w.idx, w.channel, w.type, w.blob \
    FROM w, fence WHERE fence.ok \
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) \
    DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob \
    WHERE EXCLUDED.idx < 0 \
) \
SELECT ok, child, idx FROM fence";

/// The writes of checkpoint `c`, as arrays (a `CROSS JOIN LATERAL` of [`SELECT`] and
/// [`GET_BY_ID`] / [`GET_LATEST`]).
macro_rules! writes_lateral {
    () => {
        "CROSS JOIN LATERAL ( \
    SELECT array_agg(cw.task_id) AS task_ids, array_agg(cw.channel) AS channels, \
           array_agg(cw.type) AS types, array_agg(cw.blob) AS blobs, \
           array_agg(cw.task_path) AS task_paths, array_agg(cw.idx) AS idxs \
    FROM checkpoint_writes cw \
    WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns \
      AND cw.checkpoint_id = c.checkpoint_id \
) w"
    };
}

/// The columns of a checkpoint row, then of its blobs (`b.channels, b.types, b.blobs`),
/// then of its writes; the blob lateral and a WHERE clause follow.
macro_rules! select_columns {
    () => {
        "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, \
c.parent_checkpoint_id, c.checkpoint::text, c.metadata::text, \
b.channels, b.types, b.blobs, \
w.task_ids, w.channels, w.types, w.blobs, w.task_paths, w.idxs"
    };
}

/// Every checkpoint column, its joined blobs and its writes; a WHERE clause follows.
pub(crate) const SELECT: &str = concat!(
    select_columns!(),
    " FROM checkpoints c \
CROSS JOIN LATERAL ( \
    SELECT array_agg(bl.channel) AS channels, array_agg(bl.type) AS types, \
           array_agg(bl.blob) AS blobs \
    FROM jsonb_each_text(c.checkpoint -> 'channel_versions') AS cv \
    JOIN checkpoint_blobs bl \
      ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns \
     AND bl.channel = cv.key AND bl.version = cv.value \
) b ",
    writes_lateral!()
);

/// The `__pregel_tasks` writes of a parent checkpoint, in write order (format ≤ 3 only).
pub(crate) const PENDING_SENDS: &str = "SELECT array_agg(type ORDER BY task_path, task_id, idx), \
array_agg(blob ORDER BY task_path, task_id, idx) FROM checkpoint_writes \
WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3 \
AND channel = '__pregel_tasks'";

/// The checkpoint, its blobs (held ones without bytes) and its writes; a WHERE clause on
/// `$4`… follows.
macro_rules! get_select {
    () => {
        concat!(
            select_columns!(),
            ", b.versions, b.idents, b.held FROM checkpoints c \
CROSS JOIN LATERAL ( \
    SELECT array_agg(bl.channel) AS channels, array_agg(bl.type) AS types, \
           array_agg(CASE WHEN h.ident IS NULL THEN bl.blob END) AS blobs, \
           array_agg(bl.version) AS versions, array_agg(",
            crate::cache::ident_sql!("bl"),
            ") AS idents, \
           array_agg(h.ident IS NOT NULL) AS held \
    FROM jsonb_each_text(c.checkpoint -> 'channel_versions') AS cv \
    JOIN checkpoint_blobs bl \
      ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns \
     AND bl.channel = cv.key AND bl.version = cv.value \
    LEFT JOIN unnest($1::text[], $2::text[], $3::text[]) AS h(channel, version, ident) \
      ON h.channel = bl.channel AND h.version = bl.version AND h.ident = ",
            crate::cache::ident_sql!("bl"),
            " ) b ",
            writes_lateral!()
        )
    };
}

/// The addressed checkpoint (`$6`).
pub(crate) const GET_BY_ID: &str = concat!(
    get_select!(),
    " WHERE c.thread_id = $4 AND c.checkpoint_ns = $5 AND c.checkpoint_id = $6"
);

/// The latest checkpoint.
pub(crate) const GET_LATEST: &str = concat!(
    get_select!(),
    " WHERE c.thread_id = $4 AND c.checkpoint_ns = $5 ORDER BY c.checkpoint_id DESC LIMIT 1"
);

/// The statement of a `get_tuple` with or without a checkpoint id.
pub(crate) fn get_sql(by_id: bool) -> &'static str {
    if by_id {
        GET_BY_ID
    } else {
        GET_LATEST
    }
}

/// `inspect`: how many of LangGraph's three checkpoint tables the current schema holds.
pub(crate) const INSPECT_TABLES: &str =
    "SELECT count(*) FROM information_schema.tables WHERE table_schema = \
     current_schema() AND table_name IN ('checkpoints', 'checkpoint_blobs', \
     'checkpoint_writes')";

/// `inspect`: every (thread, namespace) with its checkpoint count, latest id and the bytes
/// of its checkpoint rows.
pub(crate) const INSPECT_NAMESPACES: &str =
    "SELECT thread_id, checkpoint_ns, count(*), max(checkpoint_id), \
     coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)::int8 \
     FROM checkpoints GROUP BY thread_id, checkpoint_ns \
     ORDER BY thread_id, checkpoint_ns";

/// `inspect`: how many checkpoints `($1, $2)` has.
pub(crate) const INSPECT_COUNT: &str =
    "SELECT count(*) FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2";

/// `inspect`: the bytes of blobs and writes per thread.
pub(crate) const INSPECT_OTHER_BYTES: &str = "SELECT thread_id, sum(n)::int8 FROM ( \
     SELECT thread_id, coalesce(octet_length(blob), 0) AS n FROM checkpoint_blobs \
     UNION ALL SELECT thread_id, octet_length(blob) FROM checkpoint_writes) t \
     GROUP BY thread_id";

/// `inspect`: the bytes of each checkpoint row of thread `$1`.
pub(crate) const INSPECT_CHECKPOINT_BYTES: &str = "SELECT checkpoint_ns, checkpoint_id, \
     (pg_column_size(checkpoint) + pg_column_size(metadata))::int8 \
     FROM checkpoints WHERE thread_id = $1";

/// `inspect`: the stored writes of checkpoint `$3` of `($1, $2)`, in the savers' order.
pub(crate) const INSPECT_WRITES: &str =
    "SELECT task_id, task_path, idx::int8, channel, coalesce(type, ''), blob \
     FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 \
     AND checkpoint_id = $3 ORDER BY task_path, task_id, idx";

/// `inspect`: the number of encoded values (a checkpoint row holds two).
pub(crate) const INSPECT_VALUE_COUNT: &str = "SELECT (SELECT count(*) FROM checkpoints) * 2 + \
     (SELECT count(*) FROM checkpoint_blobs) + (SELECT count(*) FROM checkpoint_writes)";

/// `inspect`: every checkpoint row's values (location, tag, checkpoint, metadata).
pub(crate) const INSPECT_ALL_CHECKPOINTS: &str =
    "SELECT 'checkpoints[thread=' || to_json(thread_id)::text || ', ns=' || \
     to_json(checkpoint_ns)::text || ', id=' || checkpoint_id || ']', \
     'json', convert_to(checkpoint::text, 'UTF8'), \
     convert_to(metadata::text, 'UTF8') FROM checkpoints";

/// `inspect`: every blob (location, tag, bytes, no metadata).
pub(crate) const INSPECT_ALL_BLOBS: &str =
    "SELECT 'checkpoint_blobs[thread=' || to_json(thread_id)::text || ', ns=' || \
     to_json(checkpoint_ns)::text || ', channel=' || to_json(channel)::text || \
     ', version=' || version || ']', coalesce(type, ''), coalesce(blob, ''::bytea), \
     NULL::bytea FROM checkpoint_blobs";

/// `inspect`: every write (location, tag, bytes, no metadata).
pub(crate) const INSPECT_ALL_WRITES: &str =
    "SELECT 'checkpoint_writes[thread=' || to_json(thread_id)::text || ', ns=' || \
     to_json(checkpoint_ns)::text || ', id=' || checkpoint_id || ', task=' || task_id \
     || ', idx=' || idx || ', channel=' || to_json(channel)::text || ']', \
     coalesce(type, ''), blob, NULL::bytea FROM checkpoint_writes";

/// Deletes every row of one thread, in every namespace, in one statement.
pub(crate) const DELETE_THREAD: &str = "WITH a AS (DELETE FROM checkpoints WHERE thread_id = $1), \
b AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1) \
DELETE FROM checkpoint_writes WHERE thread_id = $1";

/// Deletes the checkpoints of the runs `$1` (a JSON string `run_id` in their metadata)
/// with their writes; returns each deleted checkpoint with the versions it referenced.
pub(crate) const DELETE_RUNS: &str = "WITH gone AS ( \
    DELETE FROM checkpoints \
    WHERE jsonb_typeof(metadata -> 'run_id') = 'string' AND metadata ->> 'run_id' = ANY($1) \
    RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions \
), writes AS ( \
    DELETE FROM checkpoint_writes w USING gone g \
    WHERE w.thread_id = g.thread_id AND w.checkpoint_ns = g.checkpoint_ns \
      AND w.checkpoint_id = g.checkpoint_id \
) \
SELECT g.thread_id, g.checkpoint_ns, g.checkpoint_id, v.key, v.value \
FROM gone g LEFT JOIN LATERAL jsonb_each_text(g.versions) AS v ON true";

/// Clears the parent of the checkpoints whose parent is one of the deleted ones.
pub(crate) const ORPHAN_PARENTS: &str = "UPDATE checkpoints c SET parent_checkpoint_id = NULL \
FROM unnest($1::text[], $2::text[], $3::text[]) AS d(thread_id, checkpoint_ns, checkpoint_id) \
WHERE c.thread_id = d.thread_id AND c.checkpoint_ns = d.checkpoint_ns \
  AND c.parent_checkpoint_id = d.checkpoint_id";

/// Deletes the freed blobs `(thread, ns, channel, version)` no stored checkpoint of their
/// namespace references any more.
pub(crate) const GARBAGE_BLOBS: &str = "DELETE FROM checkpoint_blobs b \
USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS f(thread_id, checkpoint_ns, channel, version) \
WHERE b.thread_id = f.thread_id AND b.checkpoint_ns = f.checkpoint_ns \
  AND b.channel = f.channel AND b.version = f.version \
  AND NOT EXISTS ( \
    SELECT 1 FROM checkpoints c \
    WHERE c.thread_id = f.thread_id AND c.checkpoint_ns = f.checkpoint_ns \
      AND c.checkpoint -> 'channel_versions' ->> f.channel = f.version)";

/// Copies every checkpoint, blob and write of thread `$1` to thread `$2`; a row already
/// in the target under the same key is replaced.
pub(crate) const COPY_THREAD: &str = "WITH cps AS ( \
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
    SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
    FROM checkpoints WHERE thread_id = $1 \
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET \
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type, \
        checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata \
), blobs AS ( \
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
    SELECT $2, checkpoint_ns, channel, version, type, blob \
    FROM checkpoint_blobs WHERE thread_id = $1 \
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET \
        type = EXCLUDED.type, blob = EXCLUDED.blob \
) \
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob \
FROM checkpoint_writes WHERE thread_id = $1 \
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET \
    task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, \
    blob = EXCLUDED.blob";

/// Deletes every row of the threads `$1`.
pub(crate) const DELETE_THREADS: &str =
    "WITH a AS (DELETE FROM checkpoints WHERE thread_id = ANY($1)), \
b AS (DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1)) \
DELETE FROM checkpoint_writes WHERE thread_id = ANY($1)";

/// The threads of `$1` that use a DeltaChannel: update counters in their metadata, or an
/// inline `true` with a blob behind it (a snapshot; a plain `true` has no blob).
pub(crate) const DELTA_THREADS: &str = "SELECT thread_id FROM checkpoints \
WHERE thread_id = ANY($1) \
  AND (metadata ? 'counters_since_delta_snapshot' OR metadata ? 'delta_writes_versioned') \
UNION \
SELECT c.thread_id FROM checkpoints c \
CROSS JOIN LATERAL jsonb_each(c.checkpoint -> 'channel_values') AS v \
WHERE c.thread_id = ANY($1) AND v.value = 'true'::jsonb AND EXISTS ( \
    SELECT 1 FROM checkpoint_blobs b \
    WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
      AND b.channel = v.key AND b.version = c.checkpoint -> 'channel_versions' ->> v.key)";

/// Per namespace of thread `$1`: the latest checkpoint, the parent it reads its sends
/// from (format ≤ 3 only), the root checkpoint its call started from, whether that is saved.
pub(crate) const HEADS: &str = "SELECT h.checkpoint_ns, h.checkpoint_id, \
    CASE WHEN (c.checkpoint ->> 'v')::int < 4 AND EXISTS ( \
        SELECT 1 FROM checkpoint_writes w \
        WHERE w.thread_id = $1 AND w.checkpoint_ns = h.checkpoint_ns \
          AND w.checkpoint_id = c.parent_checkpoint_id AND w.channel = '__pregel_tasks' \
    ) THEN c.parent_checkpoint_id END, \
    c.metadata -> 'parents' ->> '', \
    EXISTS ( \
        SELECT 1 FROM checkpoints r \
        WHERE r.thread_id = $1 AND r.checkpoint_ns = '' \
          AND r.checkpoint_id = c.metadata -> 'parents' ->> '') \
FROM ( \
    SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, checkpoint_id FROM checkpoints \
    WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id DESC \
) AS h \
JOIN checkpoints c ON c.thread_id = $1 AND c.checkpoint_ns = h.checkpoint_ns \
  AND c.checkpoint_id = h.checkpoint_id";

/// Deletes the subgraph-call namespaces `$2` of thread `$1`.
pub(crate) const DELETE_NAMESPACES: &str = "WITH a AS ( \
    DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ANY($2)), \
b AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = ANY($2)) \
DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = ANY($2)";

/// Deletes the checkpoints of `($1, $2)` not in `$3` with their writes; returns the
/// `(channel, version)` pairs they referenced.
pub(crate) const DELETE_UNKEPT: &str = "WITH gone AS ( \
    DELETE FROM checkpoints \
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id <> ALL($3) \
    RETURNING checkpoint_id, checkpoint -> 'channel_versions' AS versions \
), writes AS ( \
    DELETE FROM checkpoint_writes \
    WHERE thread_id = $1 AND checkpoint_ns = $2 \
      AND checkpoint_id IN (SELECT checkpoint_id FROM gone) \
) \
SELECT DISTINCT v.key, v.value FROM gone CROSS JOIN LATERAL jsonb_each_text(gone.versions) AS v";

/// Clears the parent of kept checkpoints `$3` whose parent is not kept.
pub(crate) const PRUNE_ORPHAN_PARENTS: &str = "UPDATE checkpoints SET parent_checkpoint_id = NULL \
WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3) \
  AND parent_checkpoint_id <> ALL($3)";

/// Sets lz4 for the session when the server supports it; a no-op otherwise.
pub(crate) const PREFER_LZ4: &str = "SELECT set_config('default_toast_compression', 'lz4', false) \
FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)";

/// `$1` thread, `$2` namespace, `$3` the channels, `$4` the target id (NULL: the latest),
/// `$5`–`$7` the channels, versions and identities of the blobs the cache holds (a seed
/// blob held comes back without its bytes). Columns: kind, depth, channel, type, blob,
/// inline value, task id, task path, index, then a seed blob's version, identity and
/// whether it was held.
pub(crate) const HISTORY: &str = concat!(
    "WITH RECURSIVE chain AS ( \
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, 0 AS depth, \
           $3::text[] AS look, '{}'::text[] AS found, ARRAY[c.checkpoint_id] AS path \
      FROM checkpoints c \
     WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = \
           COALESCE($4::text, (SELECT m.checkpoint_id FROM checkpoints m \
                               WHERE m.thread_id = $1 AND m.checkpoint_ns = $2 \
                               ORDER BY m.checkpoint_id DESC LIMIT 1)) \
    UNION ALL \
    SELECT p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, chain.depth + 1, \
           s.look, s.found, chain.path || p.checkpoint_id \
      FROM chain \
     CROSS JOIN LATERAL ( \
        SELECT pc.checkpoint_id, pc.parent_checkpoint_id, pc.checkpoint FROM checkpoints pc \
         WHERE pc.thread_id = $1 AND pc.checkpoint_ns = $2 \
           AND pc.checkpoint_id = chain.parent_checkpoint_id LIMIT 1 \
     ) p \
     CROSS JOIN LATERAL ( \
        SELECT array_agg(x.k) AS look, \
               coalesce(array_agg(x.k) FILTER (WHERE x.has), '{}'::text[]) AS found \
          FROM ( \
            SELECT k, (p.checkpoint -> 'channel_values' ? k) OR EXISTS ( \
                       SELECT 1 FROM checkpoint_blobs b \
                        WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = k \
                          AND b.version = p.checkpoint -> 'channel_versions' ->> k \
                          AND b.type <> 'empty') AS has \
              FROM unnest(chain.look) AS k WHERE NOT k = ANY(chain.found) \
          ) x \
     ) s \
     WHERE cardinality(chain.look) > cardinality(chain.found) \
       AND NOT p.checkpoint_id = ANY(chain.path) \
) \
SELECT 0 AS kind, chain.depth, s.k, b.type, \
       CASE WHEN b.held THEN NULL ELSE b.blob END, \
       (chain.checkpoint -> 'channel_values' -> s.k)::text, \
       NULL::text, NULL::text, NULL::integer, b.version, b.ident, b.held \
  FROM chain CROSS JOIN LATERAL unnest(chain.found) AS s(k) \
  LEFT JOIN LATERAL ( \
        SELECT bl.type, bl.blob, bl.version, i.ident, \
               EXISTS (SELECT 1 FROM unnest($5::text[], $6::text[], $7::text[]) AS h(c, v, i) \
                        WHERE h.c = bl.channel AND h.v = bl.version AND h.i = i.ident) AS held \
          FROM checkpoint_blobs bl CROSS JOIN LATERAL (SELECT ",
    crate::cache::ident_sql!("bl"),
    " AS ident) i \
         WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2 AND bl.channel = s.k \
           AND bl.version = chain.checkpoint -> 'channel_versions' ->> s.k \
           AND bl.type <> 'empty' LIMIT 1 \
  ) b ON true \
 WHERE chain.depth > 0 \
UNION ALL \
SELECT 1, chain.depth, w.channel, w.type, w.blob, NULL, w.task_id, w.task_path, w.idx, \
       NULL, NULL, NULL \
  FROM chain CROSS JOIN LATERAL ( \
        SELECT cw.channel, cw.type, cw.blob, cw.task_id, cw.task_path, cw.idx \
          FROM checkpoint_writes cw \
         WHERE cw.thread_id = $1 AND cw.checkpoint_ns = $2 \
           AND cw.checkpoint_id = chain.checkpoint_id AND cw.channel = ANY(chain.look) \
         OFFSET 0 \
  ) w \
 WHERE chain.depth > 0 \
 ORDER BY 1, 2 DESC, 8, 7, 9"
);

/// Records an applied migration (a second record of a version is ignored).
pub(crate) const RECORD_MIGRATION: &str =
    "INSERT INTO checkpoint_migrations (v) VALUES ($1) ON CONFLICT (v) DO NOTHING";

/// Whether the migration table exists.
pub(crate) const HAS_MIGRATIONS: &str = "SELECT to_regclass('checkpoint_migrations') IS NOT NULL";

/// The latest recorded migration.
pub(crate) const LATEST_MIGRATION: &str =
    "SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1";
