//! The run loop: loads a checkpoint, applies input, runs super-steps and decides which
//! checkpoints and writes to save (docs/runtime.md#the-loop). The rules live in `algo`; the
//! saving itself (durability modes, the background queue, what a cancelled run leaves) in
//! `writer`.
//!
//! This file holds the state of a run (`Loop`) and its step loop; each child holds the
//! `impl Loop` block of one job, and names only this file, never a sibling:
//!
//! - `load`: reading the thread (or starting an empty one) into a new `Loop`;
//! - `input`: applying the run's input (new values, a command, a resume);
//! - `tasks`: preparing a step's tasks, running them concurrently, committing each as it
//!   finishes (one task's attempts run in `runner.rs`);
//! - `save`: applying writes, recording a task's writes, creating and saving checkpoints;
//! - `emit`: the stream events of a step.

use std::collections::BTreeSet;
use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointTuple, Value,
};

use super::algo::should_interrupt;
use super::conflict::StoredByRun;
use super::graph::PregelGraph;
use super::lease::ThreadLease;
use super::sources::Sources;
use super::stream::StreamSink;
use super::task::Task;
use super::writer::Writer;
use crate::channels::Channels;
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::types::{Command, Interrupt};

mod emit;
mod input;
pub(crate) mod load;
mod save;
mod tasks;

/// The input of a run.
#[derive(Clone, Debug)]
pub enum RunInput {
    /// New input: the value written to `__start__` (a map of state keys).
    Values(Value),
    /// A client command (update, goto, resume).
    Command(Command),
    /// No input: resume the thread from where it stopped.
    Resume,
}

/// How a run ended.
#[derive(Debug)]
pub struct RunOutcome {
    /// The output channels' values at the end.
    pub values: IndexMap<String, Value>,
    /// The interrupts that stopped the run, if it was interrupted.
    pub interrupts: Vec<Interrupt>,
    /// The config of the last checkpoint saved, when there is a saver.
    pub checkpoint_config: Option<CheckpointConfig>,
    /// The nodes left to run when the run paused (empty when it finished).
    pub next: Vec<String>,
    /// With [`LoopParams::keep_head`]: the thread's head as the saver now holds it (the
    /// newest checkpoint of the run's namespace with its writes), what `get_tuple` would
    /// return; `None` without a saver.
    pub head: Option<CheckpointTuple>,
}

/// Everything a run needs besides its input.
pub struct LoopParams {
    /// The compiled graph.
    pub graph: Arc<PregelGraph>,
    /// The saver, if any.
    pub saver: Option<Arc<dyn CheckpointSaver>>,
    /// Id, timestamp and debug clocks.
    pub sources: Sources,
    /// The run config.
    pub config: RunConfig,
    /// Nodes to stop before.
    pub interrupt_before: Vec<String>,
    /// Nodes to stop after.
    pub interrupt_after: Vec<String>,
    /// Where events go.
    pub sink: Option<StreamSink>,
    /// This graph's checkpoint namespace (`""` at the root).
    pub ns: String,
    /// For a subgraph: whether its parent is resuming (`None` at the root).
    pub resuming: Option<bool>,
    /// For a subgraph: the parent's pending client resume value.
    pub null_resume: Option<Arc<parking_lot::Mutex<Option<Value>>>>,
    /// Where nodes with a cache policy keep their writes.
    pub cache: Option<Arc<dyn super::cache::NodeCache>>,
    /// The long-term store nodes reach through their context.
    pub store: Option<Arc<dyn stategraph_store::BaseStore>>,
    /// For a subgraph: the root run's lease on the thread (`None` at the root, which
    /// takes the lease itself).
    pub lease: Option<Arc<ThreadLease>>,
    /// Drop writes to unknown nodes or channels (LangGraph's behaviour) instead of
    /// failing the run.
    pub lenient_writes: bool,
    /// Mirror the head the run leaves in the saver, returned as [`RunOutcome::head`].
    pub keep_head: bool,
}

/// The state of one run.
pub(crate) struct Loop {
    p: LoopParams,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    channels: Channels,
    step: i64,
    stop: i64,
    updated_channels: Option<BTreeSet<String>>,
    /// Saves what the loop decides to save; owns the pending writes.
    writer: Writer,
    tasks: Vec<Task>,
    resume_map: Option<Vec<(String, Value)>>,
    is_replaying: bool,
    /// Propagated to subgraphs during the first step after a resume.
    resuming: bool,
    /// DeltaChannel bookkeeping (docs/format.md#deltachannel).
    delta: DeltaRun,
    /// The root checkpoints this run handed to the saver (for a `Conflict`'s fate).
    stored: StoredByRun,
    /// The output of a run that stopped on an interrupt, with the writes of the step's
    /// finished tasks applied (see `emit::Loop::output_with_pending_writes`).
    interrupted_output: Option<IndexMap<String, Value>>,
}

/// What a run tracks for its DeltaChannels.
#[derive(Default)]
struct DeltaRun {
    /// The graph has DeltaChannels (otherwise nothing below is used).
    enabled: bool,
    /// Delta channels that must store a snapshot at the next stored checkpoint.
    forced: BTreeSet<String>,
    /// A resume's loaded writes to delta channels, `(task_id, channel)`: those not given
    /// back to their task force a snapshot at the end of the first step.
    loaded: Vec<(String, String)>,
    /// The tasks that got their loaded writes back.
    reapplied: BTreeSet<String>,
}

impl Loop {
    /// Runs super-steps until the graph is done, interrupted or fails, then makes sure
    /// everything the durability mode promises is saved.
    pub(crate) async fn run(mut self) -> Result<RunOutcome> {
        let result = self.run_steps().await;
        // A subgraph in exit mode keeps its state only when it stopped early (an error or
        // an interrupt); a completed one leaves nothing behind.
        let stopped_early = match &result {
            Err(_) => true,
            Ok(interrupts) => !interrupts.is_empty(),
        };
        let persist = self.p.resuming.is_none() || stopped_early;
        // A failed save is the root cause of a later failure, so it is reported first.
        match (self.exit(persist).await, result) {
            (Err(e), _) | (Ok(()), Err(e)) => Err(self.with_fate(e).await),
            (Ok(()), Ok(interrupts)) => Ok(self.finish(interrupts)),
        }
    }

    /// The super-steps; `Ok` carries the interrupts that stopped the run (none when done).
    async fn run_steps(&mut self) -> Result<Vec<Interrupt>> {
        loop {
            if self.step > self.stop {
                self.prepare_tasks_and_emit()?;
                return Err(Error::RecursionLimit(self.p.config.recursion_limit));
            }
            self.prepare_tasks_and_emit()?;
            if self.tasks.is_empty() {
                return Ok(Vec::new());
            }
            if !self.is_replaying && !self.writer.pending_writes().is_empty() {
                self.reapply_finished_writes();
            }
            if !self.p.interrupt_before.is_empty() {
                let hidden = |n: &str| self.p.graph.nodes.get(n).is_some_and(|x| x.hidden);
                if !should_interrupt(
                    &self.checkpoint,
                    &self.p.interrupt_before,
                    &self.tasks,
                    &hidden,
                )
                .is_empty()
                {
                    return Ok(Vec::new());
                }
            }
            self.emit_task_starts();
            for t in self.tasks.iter().filter(|t| !t.writes.is_empty()) {
                self.output_writes(t, &t.writes, true);
            }
            let outcome = self.run_step().await?;
            if !outcome.interrupts.is_empty() {
                self.interrupted_output = self.output_with_pending_writes()?;
                self.emit_interrupt_values(&outcome.interrupts);
                return Ok(outcome.interrupts);
            }
            if let Some(err) = outcome.error {
                return Err(err);
            }
            self.after_tick().await?;
            if !self.p.interrupt_after.is_empty() {
                let hidden = |n: &str| self.p.graph.nodes.get(n).is_some_and(|x| x.hidden);
                if !should_interrupt(
                    &self.checkpoint,
                    &self.p.interrupt_after,
                    &self.tasks,
                    &hidden,
                )
                .is_empty()
                {
                    self.prepare_tasks_and_emit()?;
                    return Ok(Vec::new());
                }
            }
        }
    }

    /// How the run ended: its output values, interrupts, last config, next nodes, head.
    fn finish(&mut self, interrupts: Vec<Interrupt>) -> RunOutcome {
        let values = match self.interrupted_output.take() {
            Some(values) => values,
            None => self.read_output(),
        };
        let checkpoint_config = self.p.saver.as_ref().map(|_| self.writer.config().clone());
        let next = self
            .tasks
            .iter()
            .filter(|t| t.writes.is_empty())
            .map(|t| t.name.clone())
            .collect();
        let head = self.writer.take_head().map(|h| {
            let thread = self.p.config.thread_id.as_deref().unwrap_or_default();
            h.into_tuple(thread, &self.p.ns)
        });
        RunOutcome {
            values,
            interrupts,
            checkpoint_config,
            next,
            head,
        }
    }
}
