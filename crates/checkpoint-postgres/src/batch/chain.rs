//! The chained batch: one statement stores the part of a fenced batch that falls to one
//! `(thread, namespace)`, when the statement can decide up front that every op of it passes
//! the fence.
//!
//! A run in durability `async` hands [`crate::batch`] a chain: its input checkpoint, the
//! writes of the task that ran on it, the next checkpoint (a child of the first), its
//! task's writes, and so on. One fenced statement per op checks the head, the children and
//! the stored writes again at every op, and each statement pays Postgres' fixed cost
//! (bind, plan, executor start, its own index probes). One `CHAINED` statement per
//! `(thread, namespace)` does the work of all of them:
//!
//! ```text
//! BEGIN ISOLATION LEVEL READ COMMITTED
//! SELECT pg_advisory_xact_lock(…)   -- once per (thread, namespace), sorted
//! WITH head  AS (the greatest checkpoint id: one backward probe of the primary key)
//!      cps   AS (the puts' rows, from arrays), w AS (the write rows, from arrays)
//!      fence AS (one verdict for the whole group, below)
//!      blobs AS (INSERT every put's new blobs WHERE ok), carried AS (INSERT the carried
//!      long strings WHERE ok), saved AS (INSERT the checkpoints WHERE ok),
//!      written AS (INSERT the writes WHERE ok)
//!   SELECT ok, head, <the blobs inserted> FROM fence  -- once per (thread, namespace)
//! COMMIT                            -- same round trip when there is one (thread, namespace)
//! ```
//!
//! A group that carries no long string (the usual case) runs `CHAINED_UNCARRIED`, the
//! same statement without `carried`. An unused part of a plan still costs Postgres its
//! setup at every call (about a fifth of the statement, measured with `pgbench`), and,
//! more, it decides how the statement is planned: without it, Postgres' estimate of the
//! generic plan (ten rows per array) is below that of planning anew, so from the sixth
//! call on a connection the statement runs on its generic plan, where `CHAINED` is
//! planned at every call, which costs more than running it (a custom plan ~1.35 ms
//! against ~0.45 ms per statement, `pgbench` on the shared machine). The generic plan
//! probes each key by the primary key: the `LATERAL … LIMIT 1` forms keep the probes
//! parameterized whatever the plan.
//!
//! # When the verdict is "yes"
//!
//! The group passes when its puts form a chain of new checkpoints and its writes meet no
//! other run's rows:
//!
//! * the first put's parent is the head (unless that put starts a branch and is not
//!   fenced), its id is greater than the head, and every later put's parent is the put
//!   before it (checked here, before any SQL) with a greater id (checked by the statement,
//!   in the column's collation). Then each put of the chain, stored in order, would find its
//!   parent at the head: the fence lets all of them through, and every id is new;
//! * no fenced write is against a checkpoint that a stored checkpoint with a greater id
//!   continues from (one range probe per distinct checkpoint), nor against one that an
//!   earlier put of the batch continues from (checked here);
//! * no fenced normal write (index ≥ 0) meets a stored write of the same task and index
//!   with other content, and none meets an earlier write of the batch with other content
//!   (checked here: such a batch goes the general way).
//!
//! Then one call per op, in order, would store every op (not conversely: a retried
//! checkpoint passes the fence but not this verdict, and goes the general way), and the
//! rows are those of one call per op: the same checkpoint rows (all new), the same blob rows (a
//! repeated key keeps its first value, dropped here as `ON CONFLICT DO NOTHING` would drop
//! it), the same carried strings (read from the parent's stored row, or, for a parent of
//! the batch, from the document the batch stores; the first carrier of a key wins), and the
//! same write rows (a repeated reserved index keeps the first task path and the last value,
//! as successive upserts would). A batch where a carried string and a new blob share a key
//! depends on their order; it goes the general way.
//!
//! # When it is "no"
//!
//! The statement stores nothing, so committing it is harmless. The batch is then stored
//! the general way ([`crate::batch::general`]: one statement per op in one transaction, and one call
//! per op when a fence refuses), which decides op by op exactly as before: a retry of a
//! stored checkpoint, a lost race, a write behind the head.

use deadpool_postgres::Client;
use indexmap::IndexMap;
use stategraph_checkpoint::Result;
use tokio_postgres::types::ToSql;

use crate::error::col;
use crate::error::pg;
use crate::layout::BlobRow;
use crate::op::{Prepared, PutRow, WritesRow};
use crate::sql;
use crate::write;

/// The statement of one group, given the part that carries long strings (or none).
/// Parameters: `$1` thread, `$2` namespace, `$3` the first put's parent, `$4` whether the
/// first put is fenced; the puts (`$5` ids, `$6` parents, `$7` documents, `$8` metadata,
/// as JSON text); the new blobs (`$9` channels, `$10` versions, `$11` types, `$12` bytes);
/// the writes (`$13` checkpoint ids, `$14` task ids, `$15` task paths, `$16` indexes,
/// `$17` channels, `$18` types, `$19` bytes, `$20` whether fenced); the carried strings,
/// in [`CHAINED`] only (`$21` channels, `$22` versions, `$23` the carrying put's parent,
/// `$24` the parent's position among the puts, 1-based, or 0 for a stored parent).
/// Returns the verdict, the head it saw and the blobs it inserted as [`crate::sql::PUT`]
/// does.
macro_rules! chained_sql {
    ($($carried:tt)*) => {
        concat!(
    "WITH head AS ( \
    SELECT (SELECT checkpoint_id FROM checkpoints \
            WHERE thread_id = $1::text AND checkpoint_ns = $2::text \
            ORDER BY checkpoint_id DESC LIMIT 1) AS id \
), cps AS ( \
    SELECT * FROM unnest($5::text[], $6::text[], $7::text[], $8::text[]) \
    WITH ORDINALITY AS c(id, parent, doc, metadata, n) \
), w AS ( \
    SELECT * FROM unnest($13::text[], $14::text[], $15::text[], $16::int4[], $17::text[], \
                         $18::text[], $19::bytea[], $20::bool[]) \
    AS w(cid, task, path, idx, channel, type, blob, fenced) \
), fence AS ( \
    SELECT head.id AS head, \
           (NOT EXISTS (SELECT 1 FROM cps) \
            OR ((NOT $4::bool OR head.id IS NOT DISTINCT FROM $3::text) \
                AND NOT EXISTS ( \
                    SELECT 1 FROM cps \
                    WHERE cps.id <= CASE WHEN cps.n = 1 THEN head.id ELSE cps.parent END))) \
           AND NOT EXISTS ( \
               SELECT 1 FROM (SELECT DISTINCT cid FROM w WHERE w.fenced) AS d \
               CROSS JOIN LATERAL ( \
                   SELECT 1 FROM checkpoints c \
                   WHERE c.thread_id = $1::text AND c.checkpoint_ns = $2::text \
                     AND c.checkpoint_id > d.cid AND c.parent_checkpoint_id = d.cid \
                   LIMIT 1) AS moved) \
           AND NOT EXISTS ( \
               SELECT 1 FROM w CROSS JOIN LATERAL ( \
                   SELECT 1 FROM checkpoint_writes e \
                   WHERE e.thread_id = $1::text AND e.checkpoint_ns = $2::text \
                     AND e.checkpoint_id = w.cid AND e.task_id = w.task AND e.idx = w.idx \
                     AND (e.channel IS DISTINCT FROM w.channel OR e.type IS DISTINCT FROM w.type \
                          OR e.blob IS DISTINCT FROM w.blob) \
                   LIMIT 1) AS clash \
               WHERE w.fenced AND w.idx >= 0) AS ok \
    FROM head \
), blobs AS ( \
    INSERT INTO checkpoint_blobs AS bl (thread_id, checkpoint_ns, channel, version, type, blob) \
    SELECT $1::text, $2::text, b.channel, b.version, b.type, b.blob \
    FROM unnest($9::text[], $10::text[], $11::text[], $12::bytea[]) AS b(channel, version, type, blob), fence \
    WHERE fence.ok \
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING \
    RETURNING bl.channel, bl.version, ",
    crate::cache::ident_sql!("bl"),
    " AS ident ",
    $($carried)*
    "), saved AS ( \
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
    SELECT $1::text, $2::text, c.id, c.parent, c.doc::jsonb, c.metadata::jsonb FROM cps c, fence \
    WHERE fence.ok \
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) \
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata \
), written AS ( \
    INSERT INTO checkpoint_writes \
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
    SELECT $1::text, $2::text, w.cid, w.task, w.path, w.idx, w.channel, w.type, w.blob \
    FROM w, fence WHERE fence.ok \
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) \
    DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob \
    WHERE EXCLUDED.idx < 0 \
) \
SELECT ok, head, ",
    crate::sql::written_blobs_sql!(),
    " FROM fence"
        )
    };
}

/// The part of [`CHAINED`] that carries long strings: for each carried `(channel,
/// version)` without a blob, the first carrier whose parent (stored, or earlier in the
/// batch) has the string inline at that version copies it into a msgpack blob.
macro_rules! carried_sql {
    () => {
        concat!(
            "), carried AS ( \
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
    SELECT DISTINCT ON (k.channel, k.version) $1::text, $2::text, k.channel, k.version, 'msgpack', ",
    crate::sql::carried_blob_sql!(),
    " FROM unnest($21::text[], $22::text[], $23::text[], $24::int8[]) \
         WITH ORDINALITY AS k(channel, version, parent, src, ord) \
    CROSS JOIN fence \
    LEFT JOIN LATERAL ( \
        SELECT 1 AS found FROM checkpoint_blobs e \
        WHERE e.thread_id = $1::text AND e.checkpoint_ns = $2::text \
          AND e.channel = k.channel AND e.version = k.version \
        LIMIT 1) AS stored ON true \
    CROSS JOIN LATERAL ( \
        SELECT v.t, octet_length(v.t) AS n FROM ( \
            SELECT convert_to(p.doc -> 'channel_values' ->> k.channel, 'UTF8') AS t FROM ( \
                SELECT st.checkpoint AS doc FROM checkpoints st \
                WHERE k.src = 0 AND st.thread_id = $1::text AND st.checkpoint_ns = $2::text \
                  AND st.checkpoint_id = k.parent \
                UNION ALL \
                SELECT c.doc::jsonb FROM cps c WHERE c.n = k.src \
            ) AS p \
            WHERE p.doc -> 'channel_versions' ->> k.channel = k.version \
              AND jsonb_typeof(p.doc -> 'channel_values' -> k.channel) = 'string' \
        ) AS v \
    ) AS s \
    WHERE fence.ok AND stored.found IS NULL \
    ORDER BY k.channel, k.version, k.ord \
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING "
        )
    };
}

/// The statement of a group that carries long strings.
pub(crate) const CHAINED: &str = chained_sql!(carried_sql!(),);

/// The statement of a group that carries none (the usual case): the same without that
/// part, which costs Postgres its share of the plan at every call.
pub(crate) const CHAINED_UNCARRIED: &str = chained_sql!();

/// The ops of one `(thread, namespace)` of a batch, as the arrays of [`CHAINED`].
#[derive(Default)]
pub(crate) struct Group<'a> {
    thread: &'a str,
    ns: &'a str,
    first_parent: Option<&'a str>,
    first_fenced: bool,
    ids: Vec<&'a str>,
    parents: Vec<Option<&'a str>>,
    docs: Vec<&'a str>,
    metadata: Vec<&'a str>,
    blob_channels: Vec<&'a str>,
    blob_versions: Vec<&'a str>,
    blob_tags: Vec<&'a str>,
    blob_bytes: Vec<&'a [u8]>,
    carried_channels: Vec<&'a str>,
    carried_versions: Vec<&'a str>,
    carried_parents: Vec<Option<&'a str>>,
    carried_src: Vec<i64>,
    write_checkpoints: Vec<&'a str>,
    write_tasks: Vec<&'a str>,
    write_paths: Vec<&'a str>,
    write_idxs: Vec<i32>,
    write_channels: Vec<&'a str>,
    write_tags: Vec<&'a str>,
    write_blobs: Vec<&'a [u8]>,
    write_fenced: Vec<bool>,
    /// Position of each `(checkpoint, task, index)` among the write rows.
    write_keys: IndexMap<(&'a str, &'a str, i32), usize>,
    /// Each blob key: whether it is a new blob (`false`) or carried (`true`).
    blob_keys: IndexMap<(&'a str, &'a str), bool>,
}

impl<'a> Group<'a> {
    /// Adds a put; `None` when it does not continue the chain or its blobs depend on
    /// their order.
    fn put(&mut self, put: &'a PutRow) -> Option<()> {
        let (fenced, id, parent) = (put.fenced, put.id.as_str(), put.parent.as_deref());
        match self.ids.last() {
            None => {
                self.first_parent = parent;
                self.first_fenced = fenced;
            }
            Some(last) if parent == Some(*last) => {}
            Some(_) => return None,
        }
        let blobs = put
            .channels
            .iter()
            .zip(&put.versions)
            .zip(&put.tags)
            .zip(&put.bytes);
        for (((channel, version), tag), bytes) in blobs {
            match self.blob_keys.get(&(channel.as_str(), version.as_str())) {
                // A repeated new blob: the first one stays.
                Some(false) => continue,
                Some(true) => return None,
                None => {}
            }
            self.blob_keys.insert((channel, version), false);
            self.blob_channels.push(channel);
            self.blob_versions.push(version);
            self.blob_tags.push(tag);
            self.blob_bytes.push(bytes);
        }
        for (channel, version) in put.carried.iter().zip(&put.carried_versions) {
            if self.blob_keys.insert((channel, version), true) == Some(false) {
                return None;
            }
            self.carried_channels.push(channel);
            self.carried_versions.push(version);
            self.carried_parents.push(parent);
            // The parent is the previous put of the group, if any (see `None` above).
            self.carried_src.push(self.ids.len() as i64);
        }
        self.ids.push(id);
        self.parents.push(parent);
        self.docs.push(&put.checkpoint);
        self.metadata.push(&put.metadata);
        Some(())
    }

    /// Adds a task's writes; `None` when an earlier put of the batch moved past their
    /// checkpoint, or an earlier write of the batch is another value at a normal index.
    fn writes(&mut self, writes: &'a WritesRow) -> Option<()> {
        let (fenced, checkpoint) = (writes.fenced, writes.checkpoint_id.as_str());
        let (task, path) = (writes.task_id.as_str(), writes.task_path.as_str());
        if fenced && self.parents.contains(&Some(checkpoint)) {
            return None;
        }
        let rows = writes
            .idxs
            .iter()
            .zip(&writes.channels)
            .zip(&writes.tags)
            .zip(&writes.blobs);
        for (((&idx, channel), tag), blob) in rows {
            let Some(&at) = self.write_keys.get(&(checkpoint, task, idx)) else {
                self.write_keys
                    .insert((checkpoint, task, idx), self.write_idxs.len());
                self.write_checkpoints.push(checkpoint);
                self.write_tasks.push(task);
                self.write_paths.push(path);
                self.write_idxs.push(idx);
                self.write_channels.push(channel);
                self.write_tags.push(tag);
                self.write_blobs.push(blob);
                self.write_fenced.push(fenced);
                continue;
            };
            let same = self.write_channels[at] == channel.as_str()
                && self.write_tags[at] == tag.as_str()
                && self.write_blobs[at] == blob.as_slice();
            if idx >= 0 && !same {
                return None;
            }
            if idx < 0 {
                // Replaced, last wins; the row keeps its first task path.
                self.write_channels[at] = channel;
                self.write_tags[at] = tag;
                self.write_blobs[at] = blob;
            }
            self.write_fenced[at] |= fenced;
        }
        Some(())
    }

    /// Whether it carries long strings: its statement is [`CHAINED`], else
    /// [`CHAINED_UNCARRIED`].
    fn carries(&self) -> bool {
        !self.carried_channels.is_empty()
    }

    /// The parameters of [`CHAINED`]; the first 20 are those of [`CHAINED_UNCARRIED`].
    fn params(&self) -> [&(dyn ToSql + Sync); 24] {
        [
            &self.thread,
            &self.ns,
            &self.first_parent,
            &self.first_fenced,
            &self.ids,
            &self.parents,
            &self.docs,
            &self.metadata,
            &self.blob_channels,
            &self.blob_versions,
            &self.blob_tags,
            &self.blob_bytes,
            &self.write_checkpoints,
            &self.write_tasks,
            &self.write_paths,
            &self.write_idxs,
            &self.write_channels,
            &self.write_tags,
            &self.write_blobs,
            &self.write_fenced,
            &self.carried_channels,
            &self.carried_versions,
            &self.carried_parents,
            &self.carried_src,
        ]
    }

    /// The thread and namespace.
    pub(crate) fn key(&self) -> (&'a str, &'a str) {
        (self.thread, self.ns)
    }

    /// The new blob rows the statement sends (a repeated key once), for the blob cache.
    pub(crate) fn blob_rows(&self) -> Vec<BlobRow> {
        (0..self.blob_channels.len())
            .map(|i| BlobRow {
                channel: self.blob_channels[i].to_owned(),
                version: self.blob_versions[i].to_owned(),
                tag: self.blob_tags[i].to_owned(),
                bytes: self.blob_bytes[i].to_vec(),
            })
            .collect()
    }
}

/// The groups of a fenced batch, by `(thread, namespace)` in order of first appearance;
/// `None` when some group cannot be decided by one statement (see the module docs).
pub(crate) fn plan(prepared: &[Prepared]) -> Option<Vec<Group<'_>>> {
    let mut groups: IndexMap<(&str, &str), Group<'_>> = IndexMap::new();
    for p in prepared {
        let (thread, ns) = p.key();
        let group = groups.entry((thread, ns)).or_insert_with(|| Group {
            thread,
            ns,
            ..Group::default()
        });
        match p {
            Prepared::Put(put) => group.put(put)?,
            Prepared::Writes(writes) => group.writes(writes)?,
        }
    }
    Some(groups.into_values().collect())
}

/// The blobs one group's statement inserted: `(channel, version, row identity)`.
pub(crate) type Written = Vec<(String, String, String)>;

/// Stores the groups in one transaction: the blobs each inserted, or `None` when a verdict
/// was "no" and nothing was stored.
pub(crate) async fn run(client: &Client, groups: &[Group<'_>]) -> Result<Option<Vec<Written>>> {
    let mut keys: Vec<(&str, &str)> = groups.iter().map(Group::key).collect();
    keys.sort_unstable();
    let lock = client.prepare_cached(sql::LOCK).await.map_err(pg)?;
    // Both are prepared once per connection, then found in its statement cache.
    let carried = client.prepare_cached(CHAINED).await.map_err(pg)?;
    let uncarried = client.prepare_cached(CHAINED_UNCARRIED).await.map_err(pg)?;
    let lock_params: Vec<[&(dyn ToSql + Sync); 2]> = keys
        .iter()
        .map(|(thread, ns)| [thread as &(dyn ToSql + Sync), ns as &(dyn ToSql + Sync)])
        .collect();
    let params: Vec<_> = groups.iter().map(Group::params).collect();
    let locks = futures::future::try_join_all(lock_params.iter().map(|p| client.execute(&lock, p)));
    let statements = futures::future::try_join_all(groups.iter().zip(&params).map(|(g, p)| {
        if g.carries() {
            client.query_one(&carried, p)
        } else {
            client.query_one(&uncarried, &p[..20])
        }
    }));
    // Each request is sent when first polled, in order, before any reply: one round trip.
    // With one group a "no" stored nothing, so the commit goes in the same round trip;
    // with several, a "yes" must not commit without the others.
    let rows = if groups.len() == 1 {
        let (_, _, rows, _) = futures::future::try_join4(
            client.batch_execute(sql::BEGIN),
            locks,
            statements,
            client.batch_execute(sql::COMMIT),
        )
        .await
        .map_err(pg)?;
        rows
    } else {
        let (_, _, rows) =
            futures::future::try_join3(client.batch_execute(sql::BEGIN), locks, statements)
                .await
                .map_err(pg)?;
        rows
    };
    // After a driver error the transaction may still be open: the saver closes the
    // connection after any driver error. After any other error it is rolled back here.
    let verdict = rows.iter().try_fold(true, |ok, row| -> Result<bool> {
        Ok(ok && col::<bool>(row, 0)?)
    });
    if groups.len() > 1 {
        let end = if matches!(verdict, Ok(true)) {
            sql::COMMIT
        } else {
            "ROLLBACK"
        };
        client.batch_execute(end).await.map_err(pg)?;
    }
    if !verdict? {
        return Ok(None);
    }
    rows.iter()
        .map(|row| write::written_blobs(row, 2))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(
        id: &str,
        parent: Option<&str>,
        blobs: &[(&str, &str)],
        carried: &[(&str, &str)],
    ) -> Prepared {
        let strings = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<_>>();
        Prepared::Put(PutRow {
            fenced: true,
            thread: "t".into(),
            ns: String::new(),
            id: id.into(),
            parent: parent.map(str::to_owned),
            checkpoint: "{}".into(),
            metadata: "{}".into(),
            channels: strings(blobs.iter().map(|b| b.0).collect()),
            versions: strings(blobs.iter().map(|b| b.1).collect()),
            tags: vec!["msgpack".into(); blobs.len()],
            bytes: blobs.iter().map(|b| b.1.as_bytes().to_vec()).collect(),
            carried: strings(carried.iter().map(|c| c.0).collect()),
            carried_versions: strings(carried.iter().map(|c| c.1).collect()),
        })
    }

    fn writes(checkpoint: &str, path: &str, rows: &[(i32, &str)]) -> Prepared {
        Prepared::Writes(WritesRow {
            fenced: true,
            thread: "t".into(),
            ns: String::new(),
            checkpoint_id: checkpoint.into(),
            task_id: "task".into(),
            task_path: path.into(),
            idxs: rows.iter().map(|r| r.0).collect(),
            channels: vec!["c".into(); rows.len()],
            tags: vec!["msgpack".into(); rows.len()],
            blobs: rows.iter().map(|r| r.1.as_bytes().to_vec()).collect(),
        })
    }

    #[test]
    fn a_run_chain_is_one_group_with_a_repeated_blob_once() {
        let ops = [
            put("1", None, &[("a", "1")], &[]),
            writes("1", "p", &[(0, "x")]),
            put("2", Some("1"), &[("a", "1"), ("b", "2")], &[("s", "1")]),
            put("3", Some("2"), &[], &[("s", "1")]),
        ];
        let groups = plan(&ops).expect("a chain");
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert_eq!(g.ids, ["1", "2", "3"]);
        assert_eq!((g.first_parent, g.first_fenced), (None, true));
        assert_eq!(g.blob_channels, ["a", "b"]);
        assert_eq!(g.blob_bytes, [b"1".as_slice(), b"2"]);
        assert_eq!(
            g.carried_src,
            [1, 2],
            "each carrier's parent is the put before it"
        );
        assert!(g.carries());
    }

    #[test]
    fn a_broken_chain_or_an_order_dependent_batch_goes_the_general_way() {
        // The second put does not continue from the first.
        assert!(plan(&[put("1", None, &[], &[]), put("2", None, &[], &[])]).is_none());
        // A write against a checkpoint an earlier put of the batch continues from.
        assert!(plan(&[put("2", Some("1"), &[], &[]), writes("1", "p", &[(0, "x")])]).is_none());
        // Another value of a task at a normal index.
        assert!(plan(&[writes("1", "p", &[(0, "x")]), writes("1", "p", &[(0, "y")])]).is_none());
        // A carried string and a new blob with one key.
        let ops = [
            put("1", None, &[], &[("s", "1")]),
            put("2", Some("1"), &[("s", "1")], &[]),
        ];
        assert!(plan(&ops).is_none());
    }

    #[test]
    fn repeated_writes_merge_as_successive_upserts_would() {
        let ops = [
            writes("1", "first", &[(0, "x"), (-1, "e1")]),
            writes("1", "second", &[(0, "x"), (-1, "e2")]),
        ];
        let groups = plan(&ops).expect("an identical repeat and a reserved index");
        let g = &groups[0];
        assert_eq!(g.write_idxs, [0, -1]);
        assert_eq!(
            g.write_paths,
            ["first", "first"],
            "a row keeps its first task path"
        );
        assert_eq!(
            g.write_blobs,
            [b"x".as_slice(), b"e2"],
            "the last reserved value wins"
        );
        assert!(!g.carries());
    }
}
