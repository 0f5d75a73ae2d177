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
use crate::sql;

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
    let stmt = client.prepare_cached(sql::HISTORY).await.map_err(pg)?;
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

/// The histories in the rows of [`sql::HISTORY`], the held seeds used and the decoded seeds
/// worth caching.
type Decoded = (
    IndexMap<String, DeltaChannelHistory>,
    Vec<(String, String)>,
    Vec<Fill>,
);

/// Decodes the rows of [`sql::HISTORY`] (blocking work).
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
