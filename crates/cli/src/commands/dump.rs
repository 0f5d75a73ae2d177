//! `dump DB THREAD`: the thread's rows in LangGraph's `InMemorySaver` notation
//! (`storage`, `writes`, `blobs`), exactly as [`MemorySaver::dump`] prints them: the
//! thread is replayed into a `MemorySaver` through its own `put` / `put_writes`.
//!
//! A DeltaChannel stores its value only at snapshots, so the rows alone do not show it.
//! After the rows, `delta values:` lists, per checkpoint (oldest first), each DeltaChannel
//! value rebuilt from its history ([`crate::state`]), or why it cannot be.

use std::process::ExitCode;

use serde_json::{json, Value as Json};
use stategraph_checkpoint::{CheckpointConfig, DeltaValue, ListOptions, MemorySaver};

use crate::db::Db;
use crate::error::CliError;
use crate::render::{repr_full, to_json};
use crate::snapshot::delta_json;
use crate::{replay, state, Ctx, Result};

/// One DeltaChannel value that the rows do not store: `(namespace, checkpoint id,
/// channel, rebuilt value or none, how it was obtained)`.
type Rebuilt = (
    String,
    String,
    String,
    Option<stategraph_checkpoint::Value>,
    DeltaValue,
);

/// Runs the command.
pub async fn run(ctx: &mut Ctx, name: &str, thread: &str) -> Result<ExitCode> {
    let db = Db::open_read(name).await?;
    // Unfenced: the replay stores a whole thread, forks included, in id order.
    let memory = MemorySaver::new()
        .with_fencing(false)
        .with_serializer(db.serde.clone());
    let (checkpoints, _) = replay::thread(&db, &memory, thread, thread, None).await?;
    if checkpoints == 0 {
        return Err(CliError::NotFound(format!(
            "no checkpoints for thread {thread:?}"
        )));
    }
    let text = memory.dump();
    let rebuilt = delta_values(&db, thread).await?;
    if ctx.json {
        let items: Vec<Json> = rebuilt
            .iter()
            .map(|(ns, id, channel, value, d)| {
                let mut one = indexmap::IndexMap::new();
                one.insert(channel.clone(), d.clone());
                json!({
                    "checkpoint_ns": ns, "checkpoint_id": id, "channel": channel,
                    "value": value.as_ref().map(to_json),
                    "delta_channel": delta_json(&one)[channel.as_str()],
                })
            })
            .collect();
        ctx.print_json(&json!({ "thread_id": thread, "dump": text, "delta_values": items }))?;
    } else {
        ctx.print(&text)?;
        if !rebuilt.is_empty() {
            ctx.print(&delta_text(&rebuilt))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The DeltaChannel values of every checkpoint of the thread (every namespace, oldest
/// first) that its rows do not store.
async fn delta_values(db: &Db, thread: &str) -> Result<Vec<Rebuilt>> {
    let mut tuples = db
        .saver
        .list(
            Some(&CheckpointConfig::thread(thread)),
            &ListOptions::default(),
        )
        .await?;
    tuples.reverse();
    let mut out = Vec::new();
    for t in tuples {
        let st = state::rebuild(db, t).await?;
        st.warn_unknown();
        let (ns, id) = (
            st.tuple.config.ns().to_owned(),
            st.tuple.checkpoint.id.clone(),
        );
        for (channel, d) in st.delta {
            if d == DeltaValue::Stored {
                continue;
            }
            let value = st.tuple.checkpoint.channel_values.get(&channel).cloned();
            out.push((ns.clone(), id.clone(), channel, value, d));
        }
    }
    Ok(out)
}

/// The `delta values:` section: per checkpoint, each rebuilt value as Python's `repr`
/// (or the note saying why there is none), in the dump's notation.
fn delta_text(rebuilt: &[Rebuilt]) -> String {
    let mut out = String::from(
        "delta values (DeltaChannels, not stored at these checkpoints; rebuilt from their \
         history):\n",
    );
    let mut last: Option<(&str, &str)> = None;
    for (ns, id, channel, value, d) in rebuilt {
        if last != Some((ns.as_str(), id.as_str())) {
            out.push_str(&format!("  ({}, {}):\n", py_str(ns), py_str(id)));
            last = Some((ns.as_str(), id.as_str()));
        }
        let note = state::note(Some(d), 200).unwrap_or_default();
        match value {
            Some(v) => out.push_str(&format!(
                "    {}: {}  # {note}\n",
                py_str(channel),
                repr_full(v)
            )),
            None => out.push_str(&format!(
                "    {}: # {}\n",
                py_str(channel),
                note.replace('\n', "\n    #")
            )),
        }
    }
    out
}

/// A string as Python's `repr` writes it.
fn py_str(s: &str) -> String {
    stategraph_checkpoint::Value::from(s).repr().to_string()
}
