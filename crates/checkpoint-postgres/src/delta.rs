//! `get_delta_channel_history` on Postgres: the parent chain, the seeds and the writes in
//! one statement (docs/format.md#deltachannel).
//!
//! A recursive CTE walks from the target to its ancestors by `parent_checkpoint_id`,
//! carrying `rem`, the channels still looking for their seed when it reaches a row (all of
//! them at the target and at its parent: the target's own values are read directly). A
//! channel has its seed at a row when the row's `channel_values` holds it inline or a
//! non-`empty` blob exists for its version (a `_DeltaSnapshot` is a blob behind an inline
//! `true`, so the blob wins). The walk stops below the row where `rem` becomes empty, so
//! it reads as many rows as the distance to the farthest seed. The outer query returns
//! each channel's seed (kind 0) and its writes on the chain (kind 1), oldest first.
//!
//! Every lookup is a `LATERAL` or scalar subquery on a full primary key, fenced with
//! `LIMIT`/`OFFSET 0` so that the planner cannot flatten it into a join: the chain stays
//! the outer loop whatever the statistics say (a fresh table has none, and with plain
//! joins the plan scanned the whole thread at every step).

use deadpool_postgres::Client;
use indexmap::IndexMap;
use stategraph_checkpoint::delta::{empty_histories, DeltaChannelHistory};
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{CheckpointConfig, Error, PendingWrite, Result};

use crate::error::pg;
use crate::filter::some_id;
use crate::json;
use crate::read::col;

/// `$1` thread, `$2` namespace, `$3` the channels, `$4` the target id (NULL: the latest).
const HISTORY: &str = "WITH RECURSIVE chain AS ( \
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, 0 AS depth, \
           $3::text[] AS rem, ARRAY[c.checkpoint_id] AS path \
      FROM checkpoints c \
     WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = \
           COALESCE($4::text, (SELECT max(checkpoint_id) FROM checkpoints \
                               WHERE thread_id = $1 AND checkpoint_ns = $2)) \
    UNION ALL \
    SELECT p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint, chain.depth + 1, \
           next.rem, chain.path || p.checkpoint_id \
      FROM chain \
     CROSS JOIN LATERAL ( \
        SELECT CASE WHEN chain.depth = 0 THEN chain.rem ELSE ARRAY( \
            SELECT k FROM unnest(chain.rem) AS k \
             WHERE NOT (chain.checkpoint -> 'channel_values' ? k) \
               AND ( \
                   SELECT b.type FROM checkpoint_blobs b \
                    WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = k \
                      AND b.version = chain.checkpoint -> 'channel_versions' ->> k \
                      AND b.type <> 'empty' LIMIT 1) IS NULL) END AS rem \
     ) next \
     CROSS JOIN LATERAL ( \
        SELECT pc.checkpoint_id, pc.parent_checkpoint_id, pc.checkpoint FROM checkpoints pc \
         WHERE pc.thread_id = $1 AND pc.checkpoint_ns = $2 \
           AND pc.checkpoint_id = chain.parent_checkpoint_id LIMIT 1 \
     ) p \
     WHERE cardinality(next.rem) > 0 AND NOT p.checkpoint_id = ANY(chain.path) \
) \
SELECT 0 AS kind, chain.depth, s.k, b.type, b.blob, \
       (chain.checkpoint -> 'channel_values' -> s.k)::text, \
       NULL::text, NULL::text, NULL::integer \
  FROM chain CROSS JOIN LATERAL unnest(chain.rem) AS s(k) \
  LEFT JOIN LATERAL ( \
        SELECT bl.channel, bl.type, bl.blob FROM checkpoint_blobs bl \
         WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2 AND bl.channel = s.k \
           AND bl.version = chain.checkpoint -> 'channel_versions' ->> s.k \
           AND bl.type <> 'empty' LIMIT 1 \
  ) b ON true \
 WHERE chain.depth > 0 \
   AND (b.channel IS NOT NULL OR chain.checkpoint -> 'channel_values' ? s.k) \
UNION ALL \
SELECT 1, chain.depth, w.channel, w.type, w.blob, NULL, w.task_id, w.task_path, w.idx \
  FROM chain CROSS JOIN LATERAL ( \
        SELECT cw.channel, cw.type, cw.blob, cw.task_id, cw.task_path, cw.idx \
          FROM checkpoint_writes cw \
         WHERE cw.thread_id = $1 AND cw.checkpoint_ns = $2 \
           AND cw.checkpoint_id = chain.checkpoint_id AND cw.channel = ANY(chain.rem) \
         OFFSET 0 \
  ) w \
 WHERE chain.depth > 0 \
 ORDER BY 1, 2 DESC, 8, 7, 9";

/// The histories of `channels` at the checkpoint `config` addresses (its latest when it
/// names none). Every requested channel gets an entry.
pub(crate) async fn history(
    client: &Client,
    serde: &dyn Serializer,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    let mut out = empty_histories(channels);
    if channels.is_empty() {
        return Ok(out);
    }
    let stmt = client.prepare_cached(HISTORY).await.map_err(pg)?;
    let ns = config.ns();
    let id = some_id(config.checkpoint_id.as_ref());
    let channel_list = channels.to_vec();
    let rows = client
        .query(&stmt, &[&config.thread_id, &ns, &channel_list, &id])
        .await
        .map_err(pg)?;
    for row in &rows {
        let kind: i32 = col(row, 0)?;
        let channel: String = col(row, 2)?;
        let tag: Option<String> = col(row, 3)?;
        let blob: Option<Vec<u8>> = col(row, 4)?;
        let Some(entry) = out.get_mut(&channel) else {
            continue;
        };
        if kind == 0 {
            let inline: Option<String> = col(row, 5)?;
            entry.seed = Some(match (tag, inline) {
                (Some(tag), _) => serde.loads_typed(&tag, blob.as_deref().unwrap_or_default())?,
                (None, Some(text)) => json::parse(&text)?,
                (None, None) => {
                    return Err(Error::InvalidData(format!(
                        "delta seed of {channel:?} has neither blob nor inline value"
                    )))
                }
            });
        } else {
            let tag = tag.ok_or_else(|| Error::InvalidData("write row has no type".into()))?;
            entry.writes.push(PendingWrite {
                task_id: col(row, 6)?,
                channel,
                value: serde.loads_typed(&tag, blob.as_deref().unwrap_or_default())?,
            });
        }
    }
    Ok(out)
}
