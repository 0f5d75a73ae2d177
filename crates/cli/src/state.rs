//! A checkpoint's state as the graph would show it: the tuple read through the saver, its
//! DeltaChannel values rebuilt from their history
//! ([`stategraph_checkpoint::rebuild_delta_values`]), and how each was obtained. Every
//! command that shows state values (`show`, `diff`, `dump`, `history --json`) reads
//! through here.

use indexmap::IndexMap;
use stategraph_checkpoint::{rebuild_delta_values, CheckpointConfig, CheckpointTuple, DeltaValue};

use crate::db::Db;
use crate::error::CliError;
use crate::render::{cut, text};
use crate::Result;

/// A checkpoint with its DeltaChannel values rebuilt.
#[derive(Debug)]
pub struct State {
    /// The tuple; `channel_values` holds the rebuilt values and snapshots unwrapped.
    pub tuple: CheckpointTuple,
    /// How each DeltaChannel value was obtained.
    pub delta: IndexMap<String, DeltaValue>,
}

impl State {
    /// The DeltaChannels left without a value, with the reason.
    pub fn unknown(&self) -> impl Iterator<Item = (&str, &str)> {
        self.delta.iter().filter_map(|(name, d)| match d {
            DeltaValue::Unknown { reason, .. } => Some((name.as_str(), reason.as_str())),
            _ => None,
        })
    }

    /// Prints a warning on stderr for each DeltaChannel whose value cannot be rebuilt.
    pub fn warn_unknown(&self) {
        for (name, reason) in self.unknown() {
            eprintln!(
                "warning: checkpoint {}: DeltaChannel {name:?} not rebuilt: {reason}; its \
                 reducer is the graph's own (shown: its stored value and the writes after it)",
                self.tuple.checkpoint.id
            );
        }
    }
}

/// Rebuilds the DeltaChannel values of `tuple`, read from `db`.
pub async fn rebuild(db: &Db, mut tuple: CheckpointTuple) -> Result<State> {
    let delta = rebuild_delta_values(db.saver.as_ref(), &mut tuple).await?;
    Ok(State { tuple, delta })
}

/// Reads checkpoint `id` (the latest if `None`) of `(thread, ns)` and rebuilds its
/// DeltaChannel values; a missing thread or checkpoint is [`crate::CliError::NotFound`].
pub async fn load(db: &Db, thread: &str, ns: &str, id: Option<&str>) -> Result<State> {
    let tuple = load_tuple(db, thread, ns, id).await?;
    rebuild(db, tuple).await
}

/// A readable note on a DeltaChannel value for people, `None` for other channels:
/// `rebuilt: message reducer over a stored value + 3 writes`, or, for one that is not
/// rebuilt, the reason with its stored value and writes (each cut to `max` characters).
pub fn note(delta: Option<&DeltaValue>, max: usize) -> Option<String> {
    Some(match delta? {
        DeltaValue::Stored => "DeltaChannel snapshot stored here".to_owned(),
        DeltaValue::Rebuilt {
            fold,
            seeded,
            writes,
        } => format!(
            "DeltaChannel rebuilt: {} over {} + {writes} write{}",
            match fold {
                stategraph_checkpoint::Fold::Messages => "message reducer",
                stategraph_checkpoint::Fold::Concat => "list concatenation",
            },
            if *seeded { "a stored value" } else { "[]" },
            if *writes == 1 { "" } else { "s" }
        ),
        DeltaValue::Unknown {
            seed,
            writes,
            reason,
        } => {
            let mut s = format!(
                "DeltaChannel NOT rebuilt ({reason}: its reducer is the graph's own); stored \
                 value: {}; {} write{} since",
                seed.as_ref()
                    .map_or("none".to_owned(), |v| cut(&text(v), max)),
                writes.len(),
                if writes.len() == 1 { "" } else { "s" }
            );
            for w in writes {
                s.push_str(&format!("\n  + {}", cut(&text(w), max)));
            }
            s
        }
    })
}

/// Reads the checkpoint `id` (the latest if `None`) of `(thread, ns)`, or says which is
/// missing.
async fn load_tuple(db: &Db, thread: &str, ns: &str, id: Option<&str>) -> Result<CheckpointTuple> {
    let mut config = CheckpointConfig::thread(thread).with_ns(ns);
    if let Some(id) = id {
        config = config.with_checkpoint_id(id);
    }
    db.saver.get_tuple(&config).await?.ok_or_else(|| {
        CliError::NotFound(match id {
            Some(id) => format!("no checkpoint {id} in thread {thread:?} (namespace {ns:?})"),
            None => format!("no checkpoints for thread {thread:?} (namespace {ns:?})"),
        })
    })
}
