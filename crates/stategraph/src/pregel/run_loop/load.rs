//! Starting a run: reading the thread from the saver (or starting an empty one) into a new
//! [`Loop`], which then applies the run's input (docs/runtime.md#loading-and-input).

use std::collections::BTreeSet;
use std::sync::Arc;

use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointTuple, Value,
};

use super::{DeltaRun, Loop, LoopParams, RunInput};
use crate::error::{Error, Result};
use crate::pregel::conflict::StoredByRun;
use crate::pregel::delta;
use crate::pregel::head::Head;
use crate::pregel::lease::{self, ThreadLease};
use crate::pregel::writer::{Writer, WriterStart};

/// The checkpoint a run starts from, as loaded (or made empty), with what the writer
/// needs of it.
struct Loaded {
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    /// Its pending writes, `(task_id, channel, value)`.
    pending_writes: Vec<(String, String, Value)>,
    /// Its config (no `checkpoint_id` for a new thread).
    config: CheckpointConfig,
    /// Its parent's config.
    prev: Option<CheckpointConfig>,
}

impl Loop {
    /// Loads the thread (or starts an empty one) and applies the input
    /// (docs/runtime.md#loading-and-input).
    pub(crate) async fn start(p: LoopParams, input: RunInput) -> Result<Loop> {
        let mut base = p.config.checkpoint_config(&p.ns);
        base.configurable.shift_remove("checkpoint_ns");
        let addressed = p.config.checkpoint_id.is_some();
        let (saved, lease) = read_thread(&p, &input, &base).await?;
        let superseded = match (&saved, &p.saver, addressed) {
            (Some(t), Some(saver), true) => {
                superseded(saver.as_ref(), &base, &t.checkpoint.id).await?
            }
            _ => false,
        };
        // An addressed checkpoint is the head only once the run puts its child.
        let loaded_head = match (&saved, p.keep_head && !addressed) {
            (Some(t), true) => Some(Head::loaded(t)),
            _ => None,
        };
        let Loaded {
            mut checkpoint,
            metadata,
            pending_writes,
            config,
            prev,
        } = loaded(saved, base, &p);
        let channels =
            delta::load_channels(&p.graph, &mut checkpoint, p.saver.as_deref(), &config).await?;
        let step = metadata.step.unwrap_or(-2) + 1;
        let stop = step + p.config.recursion_limit as i64 + 1;
        let saved_updated: Option<BTreeSet<String>> = checkpoint
            .updated_channels
            .as_ref()
            .filter(|u| !u.is_empty())
            .map(|u| u.iter().cloned().collect());
        let writer = Writer::new(WriterStart {
            saver: p.saver.clone(),
            durability: p.config.durability,
            pending_writes,
            previous_versions: checkpoint.channel_versions.clone(),
            config,
            prev_config: prev,
            branching: addressed,
            lease,
            keep_head: p.keep_head,
            loaded_head,
        });
        let mut lp = Loop {
            p,
            checkpoint,
            metadata,
            channels,
            step,
            stop,
            updated_channels: None,
            writer,
            tasks: Vec::new(),
            resume_map: None,
            is_replaying: false,
            resuming: false,
            delta: DeltaRun::default(),
            stored: StoredByRun::default(),
            interrupted_output: None,
        };
        lp.delta.enabled = delta::has_delta_channels(&lp.p.graph);
        let first = lp.first(input, addressed, superseded, saved_updated).await;
        match first {
            Ok(updated) => lp.updated_channels = updated,
            Err(e) => return Err(lp.with_fate(e).await),
        }
        Ok(lp)
    }
}

/// Reads the checkpoint the run starts from (`None`: a new thread, or one the run assumes
/// new or holds the head of), taking the thread's lease first at the root; returns it with
/// the run's lease.
async fn read_thread(
    p: &LoopParams,
    input: &RunInput,
    base: &CheckpointConfig,
) -> Result<(Option<CheckpointTuple>, Option<Arc<ThreadLease>>)> {
    let assumed_new = assumes_new_thread(p, input)?;
    let held = held_head(p, input)?;
    let mut lease = p.lease.clone();
    let Some(saver) = &p.saver else {
        return Ok((None, lease));
    };
    let Some(thread_id) = &p.config.thread_id else {
        return Err(Error::InvalidConfig(
            "a graph with a checkpointer needs a thread_id in the run config \
             (RunConfig::thread(..))"
                .into(),
        ));
    };
    // One run of the thread at a time in this process; a dropped run's saves are all
    // stored before the lease passes on.
    if lease.is_none() && p.resuming.is_none() {
        lease = Some(Arc::new(lease::acquire(saver, thread_id).await));
    }
    let saved = match held {
        _ if assumed_new => None,
        Some(head) => Some(head.tuple().clone()),
        None => saver.get_tuple(base).await?,
    };
    if let (None, Some(checkpoint_id)) = (&saved, &p.config.checkpoint_id) {
        return Err(Error::CheckpointNotFound {
            thread_id: thread_id.clone(),
            checkpoint_id: checkpoint_id.clone(),
        });
    }
    Ok((saved, lease))
}

/// The checkpoint a run starts from: the saved one, or an empty one at step -2.
fn loaded(saved: Option<CheckpointTuple>, mut config: CheckpointConfig, p: &LoopParams) -> Loaded {
    match saved {
        Some(t) => {
            config.checkpoint_id = Some(t.checkpoint.id.clone());
            Loaded {
                checkpoint: t.checkpoint,
                metadata: t.metadata,
                pending_writes: t
                    .pending_writes
                    .into_iter()
                    .map(|w| (w.task_id, w.channel, w.value))
                    .collect(),
                config,
                prev: t.parent_config,
            }
        }
        None => {
            let id = p.sources.ids().uuid6(-2);
            let ts = p.sources.ts();
            let metadata = CheckpointMetadata {
                step: Some(-2),
                ..Default::default()
            };
            config.checkpoint_id = None;
            Loaded {
                checkpoint: Checkpoint::empty(id, ts),
                metadata,
                pending_writes: Vec::new(),
                config,
                prev: None,
            }
        }
    }
}

/// Whether the run starts on an empty thread without reading it
/// ([`RunConfig::assume_new_thread`]): a root run with new input on a fencing saver, so a
/// wrong assumption ends in the fence's `Conflict` at the first put. With a
/// `checkpoint_id` the option contradicts the config.
fn assumes_new_thread(p: &LoopParams, input: &RunInput) -> Result<bool> {
    if !p.config.assume_new_thread {
        return Ok(false);
    }
    if p.config.checkpoint_id.is_some() {
        return Err(Error::InvalidConfig(
            "assume_new_thread and a checkpoint_id contradict each other: a new thread has \
             no checkpoint to start from"
                .into(),
        ));
    }
    let root = p.resuming.is_none() && p.ns.is_empty();
    let fenced = p.saver.as_ref().is_some_and(|s| s.capabilities().fence);
    Ok(root && fenced && matches!(input, RunInput::Values(_)))
}

/// The head the run starts from instead of reading the thread
/// ([`RunConfig::start_from`]): where the option applies (a root run with new input on a
/// fencing saver, so a stale head ends in the fence's `Conflict` at the first put) and
/// the run does not continue the head's own run (a resume, which reads).
fn held_head<'a>(p: &'a LoopParams, input: &RunInput) -> Result<Option<&'a crate::ThreadHead>> {
    let Some(head) = &p.config.start_from else {
        return Ok(None);
    };
    let contradiction = if p.config.checkpoint_id.is_some() {
        Some("a checkpoint_id: the run starts from that checkpoint")
    } else if p.config.assume_new_thread {
        Some("assume_new_thread: a new thread has no head")
    } else if p.config.thread_id.as_deref() != Some(head.thread_id()) {
        Some("a config of another thread")
    } else {
        None
    };
    if let Some(what) = contradiction {
        return Err(Error::InvalidConfig(format!(
            "start_from (the head of thread {}) contradicts {what}",
            head.thread_id()
        )));
    }
    let root = p.resuming.is_none() && p.ns.is_empty();
    let fenced = p.saver.as_ref().is_some_and(|s| s.capabilities().fence);
    let run_id = p.config.metadata.get("run_id");
    let continues = run_id.is_some() && head.tuple().metadata.extra.get("run_id") == run_id;
    let applies = root && fenced && !continues && matches!(input, RunInput::Values(_));
    Ok(applies.then_some(head))
}

/// True when the thread has moved past `checkpoint_id`: the head of the config's
/// (thread, namespace) is another checkpoint (LangGraph's `checkpoint_superseded`).
pub(crate) async fn superseded(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
    checkpoint_id: &str,
) -> Result<bool> {
    let head = saver
        .get_tuple(&CheckpointConfig {
            checkpoint_id: None,
            ..config.clone()
        })
        .await?;
    Ok(head.is_some_and(|h| h.checkpoint.id != checkpoint_id))
}
