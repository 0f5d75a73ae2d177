//! `get_delta_channel_history` on Postgres: the parent chain, the seeds and the writes in
//! one statement (docs/format.md#deltachannel).
//!
//! A recursive CTE walks from the target to its ancestors by `parent_checkpoint_id`,
//! carrying per row `look`, the channels still looking for their seed when it reaches the
//! row (all of them at the target and at its parent: the target's own values are read
//! directly), and `found`, those of them whose seed the row holds. A channel has its seed
//! at a row when the row's `channel_values` holds it inline or a non-`empty` blob exists
//! for its version (a `_DeltaSnapshot` is a blob behind an inline `true`, so the blob
//! wins). The walk stops below the row where every channel has been found, so it reads as
//! many rows as the distance to the farthest seed. The outer query returns each channel's
//! seed (kind 0, read only at the row that holds it) and its writes on the chain (kind 1),
//! oldest first. Each row's channels are checked for a seed once, in the walk.
//!
//! Every lookup is a `LATERAL` or scalar subquery on a full primary key, fenced with
//! `LIMIT`/`OFFSET 0` so that the planner cannot flatten it into a join: the chain stays
//! the outer loop whatever the statistics say (a fresh table has none, and with plain
//! joins the plan scanned the whole thread at every step; a range scan of the writes
//! joined with the chain did the same).

use std::sync::Arc;

use deadpool_postgres::Client;
use indexmap::IndexMap;
use stategraph_checkpoint::delta::{empty_histories, DeltaChannelHistory};
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{CheckpointConfig, Error, PendingWrite, Result};
use tokio_postgres::Row;

use crate::cache::{BlobCache, Fill, Held, MIN_CACHED_BYTES};
use crate::error::col;
use crate::error::pg;
use crate::json;
use crate::query::some_id;
use crate::read::off_runtime;

/// `$1` thread, `$2` namespace, `$3` the channels, `$4` the target id (NULL: the latest),
/// `$5`–`$7` the channels, versions and identities of the blobs the cache holds (a seed
/// blob held comes back without its bytes). Columns: kind, depth, channel, type, blob,
/// inline value, task id, task path, index, then a seed blob's version, identity and
/// whether it was held.
const HISTORY: &str = concat!(
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

/// The histories of `channels` at the checkpoint `config` addresses (its latest when it
/// names none). Every requested channel gets an entry. Seed blobs the cache holds are
/// not moved; the others are decoded through `memo` and kept in the cache.
pub(crate) async fn history(
    client: &Client,
    serde: &Arc<dyn Serializer>,
    (cache, memo): (&BlobCache, &Arc<DecodeMemo>),
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    if channels.is_empty() {
        return Ok(empty_histories(channels));
    }
    let stmt = client.prepare_cached(HISTORY).await.map_err(pg)?;
    let (thread, ns) = (config.thread_id.as_str(), config.ns());
    let id = some_id(config.checkpoint_id.as_ref());
    let channel_list = channels.to_vec();
    let held = cache.held(thread, ns);
    let (c, v, i) = (&held.channels, &held.versions, &held.idents);
    let rows = client
        .query(&stmt, &[&thread, &ns, &channel_list, &id, c, v, i])
        .await
        .map_err(pg)?;
    let (serde, memo) = (Arc::clone(serde), Arc::clone(memo));
    let fill = !cache.is_off();
    let wanted = channel_list;
    let (out, hits, fills) =
        off_runtime(move || decode_rows(&rows, serde.as_ref(), &memo, &held, fill, &wanted))
            .await?;
    let hits: Vec<(&str, &str)> = hits.iter().map(|(c, v)| (c.as_str(), v.as_str())).collect();
    cache.record(thread, ns, &hits, fills);
    Ok(out)
}

/// The histories in the rows of [`HISTORY`], the held seeds used and the decoded seeds
/// worth caching.
type Decoded = (
    IndexMap<String, DeltaChannelHistory>,
    Vec<(String, String)>,
    Vec<Fill>,
);

/// Decodes the rows of [`HISTORY`] (blocking work).
fn decode_rows(
    rows: &[Row],
    serde: &dyn Serializer,
    memo: &DecodeMemo,
    held: &Held,
    fill: bool,
    channels: &[String],
) -> Result<Decoded> {
    let mut out = empty_histories(channels);
    let (mut hits, mut fills) = (Vec::new(), Vec::new());
    for row in rows {
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
                (Some(tag), _) => {
                    let version: String = col(row, 9)?;
                    let ident: String = col(row, 10)?;
                    if col::<bool>(row, 11)? {
                        let value = match held.get(&channel, &version, &ident) {
                            Some((held_tag, value)) if held_tag == tag => value.clone(),
                            _ => {
                                return Err(Error::InvalidData(format!(
                                    "delta seed of {channel:?}: the server left out a blob \
                                     the read did not hold"
                                )))
                            }
                        };
                        hits.push((channel.clone(), version));
                        value
                    } else {
                        let bytes = blob.unwrap_or_default();
                        let value = serde.loads_typed_with_memo(&tag, &bytes, memo)?;
                        if fill && bytes.len() >= MIN_CACHED_BYTES {
                            fills.push(Fill {
                                channel: channel.clone(),
                                version,
                                ident,
                                tag,
                                value: value.clone(),
                                bytes: bytes.len(),
                            });
                        }
                        value
                    }
                }
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
    Ok((out, hits, fills))
}
