//! The extended operations that remove part of a thread: `delete_for_runs` and `prune`.
//!
//! Both remove checkpoints together with their writes, and then every blob of the
//! namespace that no remaining checkpoint references (through its `channel_versions`),
//! so that nothing unreachable stays in memory. A remaining checkpoint whose parent was
//! removed gets no parent, so no tuple points at a checkpoint that is gone (Python's
//! `PostgresSaver.prune` unlinks its kept checkpoints the same way). Each operation first
//! decodes what it needs and only then changes the store, so a decode error leaves the
//! store untouched.
//!
//! `prune(KeepLatest)` here is not Python's: its `InMemorySaver` and `SqliteSaver` have
//! no `prune`, and its `PostgresSaver.prune` (langgraph-checkpoint-postgres 3.2.0, which
//! our Postgres saver follows) differs in four ways. Here each namespace is thinned on its
//! own, so a subgraph call's namespace keeps its latest checkpoint even once the root
//! checkpoint the call started from is removed (Python deletes such a namespace whole); a
//! thread with DeltaChannels keeps the ancestors they are rebuilt from (Python refuses the
//! thread); a checkpoint of format 3 or older does not keep the parent its sends are read
//! from (Python does); and writes whose checkpoint is not stored go too (Python deletes
//! only the writes of the checkpoints it deletes). Our SQLite saver thins as this one does.

use std::collections::HashSet;

use crate::checkpoint::Checkpoint;
use crate::error::Result;
use crate::saver::PruneStrategy;
use crate::serde::Serializer;
use crate::value::Value;
use crate::version::ChannelVersion;

use super::read::load;
use super::store::{Namespace, Store};

/// What to remove from one namespace.
struct Plan {
    thread: String,
    ns: String,
    /// Checkpoint ids to remove.
    remove: HashSet<String>,
    /// When set, also remove writes of checkpoints that are not stored (orphans).
    drop_orphan_writes: bool,
    /// The `(channel, version)` pairs the remaining checkpoints reference.
    referenced: HashSet<(String, ChannelVersion)>,
}

/// Deletes every checkpoint, in any thread and namespace, whose metadata `run_id` is one
/// of `run_ids`, with its writes and the blobs no other checkpoint references.
pub(super) fn delete_for_runs(
    store: &mut Store,
    serde: &dyn Serializer,
    run_ids: &[String],
) -> Result<()> {
    if run_ids.is_empty() {
        return Ok(());
    }
    let mut plans = Vec::new();
    for (thread, data) in &store.threads {
        for (ns, namespace) in &data.namespaces {
            let mut remove = HashSet::new();
            for (id, entry) in &namespace.checkpoints {
                let metadata = load(serde, &entry.metadata)?;
                let run = metadata.get("run_id").and_then(run_id_text);
                if run.is_some_and(|r| run_ids.contains(&r)) {
                    remove.insert(id.clone());
                }
            }
            if remove.is_empty() {
                continue;
            }
            let referenced = referenced_blobs(namespace, serde, &remove)?;
            plans.push(Plan {
                thread: thread.clone(),
                ns: ns.clone(),
                remove,
                drop_orphan_writes: false,
                referenced,
            });
        }
    }
    apply(store, plans);
    Ok(())
}

/// Thins the listed threads: `KeepLatest` keeps, per namespace, the newest checkpoint
/// with its writes and the blobs it references, and the ancestors (with their writes) its
/// DeltaChannels are rebuilt from; `Delete` removes the threads.
pub(super) fn prune(
    store: &mut Store,
    serde: &dyn Serializer,
    thread_ids: &[String],
    strategy: PruneStrategy,
) -> Result<()> {
    if strategy == PruneStrategy::Delete {
        for thread in thread_ids {
            store.delete_thread(thread);
        }
        return Ok(());
    }
    let mut plans = Vec::new();
    for thread in thread_ids {
        let Some(data) = store.threads.get(thread.as_str()) else {
            continue;
        };
        for (ns, namespace) in &data.namespaces {
            let latest = namespace.checkpoints.keys().next_back();
            // A DeltaChannel's value at the latest checkpoint lives on its ancestors.
            let chain = match latest {
                Some(id) => super::delta::chain_needed(namespace, serde, id)?,
                None => Vec::new(),
            };
            let remove: HashSet<String> = namespace
                .checkpoints
                .keys()
                .filter(|id| Some(*id) != latest && !chain.contains(id))
                .cloned()
                .collect();
            let referenced = referenced_blobs(namespace, serde, &remove)?;
            plans.push(Plan {
                thread: thread.clone(),
                ns: ns.clone(),
                remove,
                drop_orphan_writes: true,
                referenced,
            });
        }
    }
    apply(store, plans);
    Ok(())
}

/// A run id as text: a string, or the string form of a UUID object.
fn run_id_text(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.to_string()),
        Value::Ext(e) => {
            let o = e.as_object()?;
            (o.module == "uuid" && o.class == "UUID")
                .then(|| o.data.as_str().map(str::to_owned))
                .flatten()
        }
        _ => None,
    }
}

/// The `(channel, version)` pairs referenced by the checkpoints not in `remove`.
fn referenced_blobs(
    namespace: &Namespace,
    serde: &dyn Serializer,
    remove: &HashSet<String>,
) -> Result<HashSet<(String, ChannelVersion)>> {
    let mut referenced = HashSet::new();
    for (id, entry) in &namespace.checkpoints {
        if remove.contains(id) {
            continue;
        }
        let checkpoint = Checkpoint::from_value(load(serde, &entry.checkpoint)?)?;
        referenced.extend(checkpoint.channel_versions);
    }
    Ok(referenced)
}

/// Carries out the plans: checkpoints, their writes, unreferenced blobs, dangling parents.
fn apply(store: &mut Store, plans: Vec<Plan>) {
    for plan in plans {
        let Some(namespace) = store
            .threads
            .get_mut(plan.thread.as_str())
            .and_then(|t| t.namespaces.get_mut(plan.ns.as_str()))
        else {
            continue;
        };
        namespace
            .checkpoints
            .retain(|id, _| !plan.remove.contains(id));
        let kept = &namespace.checkpoints;
        namespace.writes.retain(|id, _| {
            !plan.remove.contains(id) && (!plan.drop_orphan_writes || kept.contains_key(id))
        });
        namespace
            .blobs
            .retain(|key, _| plan.referenced.contains(key));
        for entry in namespace.checkpoints.values_mut() {
            if entry
                .parent
                .as_ref()
                .is_some_and(|p| plan.remove.contains(p))
            {
                entry.parent = None;
            }
        }
        if namespace.checkpoints.is_empty() && namespace.writes.is_empty() {
            if let Some(thread) = store.threads.get_mut(plan.thread.as_str()) {
                thread.namespaces.shift_remove(plan.ns.as_str());
                if thread.namespaces.is_empty() {
                    store.threads.shift_remove(plan.thread.as_str());
                }
            }
        }
    }
}
