//! `get_delta_channel_history` on SQLite: the parent chain and the channels' writes in one
//! statement (docs/format.md#deltachannel).
//!
//! A recursive CTE walks from the target to its ancestors by `parent_checkpoint_id` (not
//! by id order: ids only grow within one process). The queue holds two kinds of rows: a
//! checkpoint (kind 0), which produces its parent and its writes to the requested
//! channels (kind 1). The CTE's `ORDER BY depth, kind, task_path, task_id, idx` makes the
//! queue a priority queue, so rows come out newest checkpoint first, each checkpoint
//! followed by its writes in `writes_sort_key` order. SQLite produces recursive rows as the
//! statement is stepped, so the reader stops stepping, and the walk ends, as soon as every
//! channel has found its seed: a load reads as many rows as the distance to the nearest
//! snapshot, whatever the thread's length.

use indexmap::IndexMap;
use std::sync::Arc;

use rusqlite::types::{Value as Sql, ValueRef};
use rusqlite::{params_from_iter, Connection, OptionalExtension};
use stategraph_checkpoint::delta::{empty_histories, Collector, DeltaChannelHistory};
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{Checkpoint, CheckpointConfig, Error, PendingWrite, Result, Value};

use crate::cache::{DecodedCache, RowId};
use crate::error::SqlResultExt;
use crate::query::some_id;
use crate::read::bytes;
use crate::sql;

/// The histories of `channels` at the checkpoint `config` addresses (its latest when it
/// names none). Every requested channel gets an entry. The chain's checkpoints come from
/// `cache` when it holds their bytes (and are kept there when decoded): successive loads of
/// one thread walk mostly the same chain.
pub(crate) fn history(
    conn: &Connection,
    serde: &dyn Serializer,
    cache: &DecodedCache,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    let mut out = empty_histories(channels);
    if channels.is_empty() {
        return Ok(out);
    }
    let placeholders: Vec<String> = (0..channels.len()).map(|i| format!("?{}", i + 4)).collect();
    let sql = sql::HISTORY.replace("{channels}", &placeholders.join(", "));
    let mut params: Vec<Sql> = vec![
        Sql::Text(config.thread_id.clone()),
        Sql::Text(config.ns().to_owned()),
        match some_id(config.checkpoint_id.as_ref()) {
            Some(id) => Sql::Text(id.to_owned()),
            None => Sql::Null,
        },
    ];
    params.extend(channels.iter().map(|c| Sql::Text(c.clone())));
    let mut stmt = conn.prepare_cached(&sql).backend()?;
    let mut rows = stmt.query(params_from_iter(params)).backend()?;
    let mut collector = Collector::new(channels);
    // The checkpoint being read: its id, its stored values, its writes so far.
    let mut current: Option<(String, IndexMap<String, Value>, Vec<PendingWrite>)> = None;
    let mut visited = std::collections::HashSet::new();
    while let Some(row) = rows.next().backend()? {
        let kind: i64 = row.get(1).backend()?;
        let checkpoint_id: String = row.get(2).backend()?;
        let tag: Option<String> = row.get(3).backend()?;
        if kind == 0 {
            if let Some((_, mut values, writes)) = current.take() {
                collector.visit(writes, |c| values.swap_remove(c));
                if collector.done() {
                    break;
                }
            }
            // A re-put id can make the chain loop; stop at the first repeat.
            if !visited.insert(checkpoint_id.clone()) {
                break;
            }
            let tag = tag.ok_or_else(|| Error::InvalidData("checkpoint row has no type".into()))?;
            let data = match row.get_ref(4).backend()? {
                ValueRef::Blob(b) | ValueRef::Text(b) => b,
                _ => &[],
            };
            let id = RowId {
                thread_id: config.thread_id.clone(),
                checkpoint_ns: config.ns().to_owned(),
                checkpoint_id: checkpoint_id.clone(),
            };
            let checkpoint = match cache.get(&id, &tag, data) {
                Some(hit) => hit,
                None => {
                    let decoded = Checkpoint::from_value(cache.decode(serde, &tag, data)?)?;
                    let decoded = Arc::new(decoded);
                    cache.insert(id, &tag, data, &decoded);
                    decoded
                }
            };
            let values = checkpoint
                .channel_values
                .iter()
                .filter(|(k, _)| collector.active().contains(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            current = Some((checkpoint_id, values, Vec::new()));
        } else if let Some((_, _, writes)) = current.as_mut() {
            let tag = tag.ok_or_else(|| Error::InvalidData("write row has no type".into()))?;
            let data = bytes(row.get_ref(4).backend()?).unwrap_or_default();
            writes.push(PendingWrite {
                task_id: row.get(5).backend()?,
                channel: row.get(6).backend()?,
                value: serde.loads_typed(&tag, &data)?,
            });
        }
    }
    if let Some((_, mut values, writes)) = current.take() {
        collector.visit(writes, |c| values.swap_remove(c));
    }
    collector.finish(&mut out);
    Ok(out)
}

/// The ancestors that `prune` must keep for the DeltaChannels of each namespace's latest
/// checkpoint of `thread` (docs/format.md#deltachannel): for each channel its metadata counts
/// updates for
/// (`counters_since_delta_snapshot`) that has a version and no stored value there, the
/// parent chain up to the checkpoint that stores its value. `(namespace, id)` pairs; empty
/// for a thread without DeltaChannels.
pub(crate) fn chain_needed(
    conn: &Connection,
    serde: &dyn Serializer,
    thread: &str,
) -> Result<Vec<(String, String)>> {
    let mut latest = conn.prepare(sql::LATEST_PER_NS).backend()?;
    let heads = latest
        .query_map([thread], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                bytes(r.get_ref(4)?).unwrap_or_default(),
                bytes(r.get_ref(5)?),
            ))
        })
        .backend()?
        .collect::<rusqlite::Result<Vec<_>>>()
        .backend()?;
    let mut parent_of = conn.prepare(sql::PARENT_OF).backend()?;
    let mut out = Vec::new();
    for (ns, parent, tag, checkpoint, metadata) in heads {
        let Some(metadata) = metadata else { continue };
        let metadata = stategraph_checkpoint::CheckpointMetadata::from_value(
            crate::json::from_json(&metadata)?,
        )?;
        let Some(Value::Map(counters)) = metadata.extra.get("counters_since_delta_snapshot") else {
            continue;
        };
        let decode = |tag: Option<String>, data: &[u8]| -> Result<Checkpoint> {
            let tag = tag.ok_or_else(|| Error::InvalidData("checkpoint row has no type".into()))?;
            Checkpoint::from_value(serde.loads_typed(&tag, data)?)
        };
        let head = decode(tag, &checkpoint)?;
        let mut active: Vec<String> = counters
            .keys()
            .filter_map(|k| k.as_str())
            .filter(|k| {
                head.channel_versions.contains_key(*k) && !head.channel_values.contains_key(*k)
            })
            .map(str::to_owned)
            .collect();
        let mut cursor = parent;
        while let Some(id) = cursor.filter(|p| !p.is_empty()) {
            if active.is_empty() || out.contains(&(ns.clone(), id.clone())) {
                break;
            }
            let row = parent_of
                .query_row(rusqlite::params![thread, ns, id], |r| {
                    Ok((
                        r.get::<_, Option<String>>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        bytes(r.get_ref(2)?).unwrap_or_default(),
                    ))
                })
                .optional()
                .backend()?;
            let Some((next, tag, data)) = row else { break };
            let cp = decode(tag, &data)?;
            active.retain(|c| !cp.channel_values.contains_key(c));
            out.push((ns.clone(), id));
            cursor = next;
        }
    }
    Ok(out)
}
