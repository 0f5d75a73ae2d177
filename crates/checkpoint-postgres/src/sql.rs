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
