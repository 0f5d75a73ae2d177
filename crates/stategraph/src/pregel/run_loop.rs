//! The run loop: loads a checkpoint, applies input, runs super-steps and decides which
//! checkpoints and writes to save (docs/runtime.md#the-loop). The rules live in `algo`; the saving
//! itself
//! (durability modes, the background queue, what a cancelled run leaves) in `writer`.

use std::collections::BTreeSet;
use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, CheckpointTuple, Map, Value, NULL_TASK_ID,
};

use super::algo::{
    apply_writes, create_checkpoint, prepare_next_tasks, should_interrupt, TaskWrites,
};
use super::conflict::{self, StoredByRun};
use super::events;
use super::graph::PregelGraph;
use super::head::Head;
use super::lease::{self, ThreadLease};
use super::runner::{run_tasks, StepOutcome};
use super::sources::Sources;
use super::status::read_task_statuses;
use super::stream::{StreamMode, StreamSink};
use super::task::{Task, TaskPath};
use super::writer::{Writer, WriterStart};
use crate::channels::Channels;
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::types::{Command, Goto, Interrupt, Resume};

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
    /// Applies task writes to the live channels and the checkpoint's versions.
    fn apply(&mut self, tasks: &[TaskWrites<'_>]) -> Result<BTreeSet<String>> {
        let saver = self.p.saver.clone();
        let next = move |current: Option<&ChannelVersion>| match &saver {
            Some(s) => s.get_next_version(current),
            None => stategraph_checkpoint::version_gen::next_int_version(current),
        };
        apply_writes(
            &mut self.checkpoint,
            &mut self.channels,
            tasks,
            &next,
            &self.p.graph.trigger_to_nodes,
        )
    }

    /// Loads the thread (or starts an empty one) and applies the input
    /// (docs/runtime.md#loading-and-input).
    pub(crate) async fn start(p: LoopParams, input: RunInput) -> Result<Loop> {
        let mut base = p.config.checkpoint_config(&p.ns);
        base.configurable.shift_remove("checkpoint_ns");
        let addressed = p.config.checkpoint_id.is_some();
        let assumed_new = assumes_new_thread(&p, &input)?;
        let held = held_head(&p, &input)?;
        let mut lease = p.lease.clone();
        let saved = match &p.saver {
            Some(saver) => {
                let Some(thread_id) = &p.config.thread_id else {
                    return Err(Error::InvalidConfig(
                        "a graph with a checkpointer needs a thread_id in the run config \
                         (RunConfig::thread(..))"
                            .into(),
                    ));
                };
                // One run of the thread at a time in this process; a dropped run's saves
                // are all stored before the lease passes on.
                if lease.is_none() && p.resuming.is_none() {
                    lease = Some(Arc::new(lease::acquire(saver, thread_id).await));
                }
                let saved = match held {
                    _ if assumed_new => None,
                    Some(head) => Some(head.tuple().clone()),
                    None => saver.get_tuple(&base).await?,
                };
                if let (None, Some(checkpoint_id)) = (&saved, &p.config.checkpoint_id) {
                    return Err(Error::CheckpointNotFound {
                        thread_id: thread_id.clone(),
                        checkpoint_id: checkpoint_id.clone(),
                    });
                }
                saved
            }
            None => None,
        };
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
        let (mut checkpoint, metadata, pending_writes, checkpoint_config, prev) = match saved {
            Some(t) => {
                let mut cfg = base.clone();
                cfg.checkpoint_id = Some(t.checkpoint.id.clone());
                (
                    t.checkpoint,
                    t.metadata,
                    t.pending_writes
                        .into_iter()
                        .map(|w| (w.task_id, w.channel, w.value))
                        .collect(),
                    cfg,
                    t.parent_config,
                )
            }
            None => {
                let id = p.sources.ids().uuid6(-2);
                let ts = p.sources.ts();
                let md = CheckpointMetadata {
                    step: Some(-2),
                    ..Default::default()
                };
                let mut cfg = base.clone();
                cfg.checkpoint_id = None;
                (Checkpoint::empty(id, ts), md, Vec::new(), cfg, None)
            }
        };
        let channels = super::delta::load_channels(
            &p.graph,
            &mut checkpoint,
            p.saver.as_deref(),
            &checkpoint_config,
        )
        .await?;
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
            config: checkpoint_config,
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
        };
        lp.delta.enabled = super::delta::has_delta_channels(&lp.p.graph);
        let first = lp.first(input, addressed, superseded, saved_updated).await;
        match first {
            Ok(updated) => lp.updated_channels = updated,
            Err(e) => return Err(lp.with_fate(e).await),
        }
        Ok(lp)
    }

    /// Applies the input (docs/runtime.md#loading-and-input); returns the channels updated so far
    /// (`None` when
    /// unknown). While it runs, `self.updated_channels` is unknown, as in LangGraph.
    async fn first(
        &mut self,
        input: RunInput,
        addressed: bool,
        superseded: bool,
        mut updated_channels: Option<BTreeSet<String>>,
    ) -> Result<Option<BTreeSet<String>>> {
        let has_state = !self.checkpoint.channel_versions.is_empty();
        let is_command = matches!(input, RunInput::Command(_));
        let nested = self.p.resuming.is_some();
        let is_resuming = has_state
            && match (&input, self.p.resuming) {
                (_, Some(flag)) => flag,
                (RunInput::Resume | RunInput::Command(_), None) => true,
                (RunInput::Values(_), None) => self
                    .p
                    .config
                    .metadata
                    .get("run_id")
                    .is_some_and(|r| self.metadata.extra.get("run_id") == Some(r)),
            };
        self.resuming = is_resuming;
        let continues = !nested && has_state && matches!(input, RunInput::Resume);
        let resumes_with_value = matches!(&input, RunInput::Command(c) if c.resume.is_some());
        let is_time_traveling = addressed && !resumes_with_value;
        self.is_replaying = is_time_traveling || superseded;
        if is_time_traveling {
            self.writer.retain_pending(|w| w.1 != "__resume__");
        }
        let forks = is_resuming
            && is_time_traveling
            && (!matches!(
                self.metadata.source,
                Some(CheckpointSource::Update) | Some(CheckpointSource::Fork)
            ) || superseded);
        let mut carried: Vec<(String, String, Value)> = Vec::new();
        if self.delta.enabled {
            // A branch from a checkpoint with writes to a delta channel snapshots it: the
            // writes belong to the child that consumed them, which this branch is not.
            let graph = &self.p.graph;
            if is_resuming && !self.is_replaying {
                self.delta.loaded = self
                    .writer
                    .pending_writes()
                    .iter()
                    .filter(|w| w.0 != NULL_TASK_ID && super::delta::is_delta(graph, &w.1))
                    .map(|w| (w.0.clone(), w.1.clone()))
                    .collect();
            } else {
                self.delta.forced = super::delta::delta_channels_in(
                    graph,
                    self.writer.pending_writes().iter().map(|w| w.1.as_str()),
                );
            }
        }

        if let RunInput::Command(cmd) = &input {
            if cmd.graph.as_deref() == Some(crate::types::PARENT) {
                return Err(Error::InvalidUpdate("There is no parent graph".into()));
            }
            let mut resume_is_map = false;
            if let Some(resume) = &cmd.resume {
                if self.p.saver.is_none() {
                    return Err(Error::NoCheckpointer);
                }
                if !nested {
                    self.check_something_to_resume(has_state, !cmd.goto.is_empty())?;
                }
                match resume {
                    Resume::ById(map) => {
                        resume_is_map = true;
                        self.resume_map = Some(map.clone());
                    }
                    Resume::Value(_) => {
                        if self.pending_interrupt_ids().len() > 1 {
                            return Err(Error::InvalidUpdate(
                                "When there are multiple pending interrupts, you must specify the interrupt id when resuming.".into(),
                            ));
                        }
                    }
                }
            }
            let writes = map_command(cmd)?;
            if !self.p.lenient_writes {
                super::targets::check_targets(&self.p.graph, "input", &writes)?;
            }
            if writes.is_empty() && !resume_is_map {
                return Err(Error::EmptyInput("Received empty Command input".into()));
            }
            if !writes.is_empty() {
                if forks {
                    carried.extend(
                        writes
                            .into_iter()
                            .map(|(c, v)| (NULL_TASK_ID.to_owned(), c, v)),
                    );
                } else {
                    self.put_writes(NULL_TASK_ID, writes).await?;
                    if !nested && self.p.saver.is_some() {
                        let on = self.checkpoint.id.clone();
                        self.stored.note_command_writes(&on);
                    }
                }
            }
        }

        if self.delta.enabled {
            let carried_delta = super::delta::delta_channels_in(
                &self.p.graph,
                carried.iter().map(|w| w.1.as_str()),
            );
            self.delta.forced.extend(carried_delta);
        }
        let null_writes: Vec<(String, Value)> = self
            .writer
            .pending_writes()
            .iter()
            .chain(carried.iter())
            .filter(|w| w.0 == NULL_TASK_ID)
            .map(|w| (w.1.clone(), w.2.clone()))
            .collect();
        if !null_writes.is_empty() {
            let path = TaskPath::default();
            let task = TaskWrites {
                path: &path,
                name: "__input__",
                triggers: &[],
                writes: &null_writes,
            };
            let updated = self.apply(&[task])?;
            if let Some(u) = &mut updated_channels {
                u.extend(updated);
            }
        }

        if continues && !self.has_tasks_left()? {
            return Err(self.nothing_to_resume("its run finished: nothing is left to run"));
        }
        if is_resuming {
            let versions: Vec<(String, ChannelVersion)> = self
                .channels
                .keys()
                .filter_map(|k| {
                    self.checkpoint
                        .channel_versions
                        .get(k)
                        .map(|v| (k.clone(), v.clone()))
                })
                .collect();
            let seen = self
                .checkpoint
                .versions_seen
                .entry("__interrupt__".to_owned())
                .or_default();
            for (k, v) in versions {
                seen.insert(k, v);
            }
            if forks {
                self.writer.retain_pending(|w| w.1 != "__interrupt__");
                self.put_checkpoint(CheckpointSource::Fork).await?;
            }
            self.emit_values();
        } else if let Some(v) = match input {
            RunInput::Values(v) => Some(v),
            // On a thread without state LangGraph also runs START with the Command itself
            // as input (so its update is applied twice and its goto joins START's edges).
            RunInput::Command(cmd) => Some(cmd.to_value()),
            RunInput::Resume => None,
        } {
            let discard = super::algo::prepare_task_ids(
                &self.checkpoint,
                &self.p.graph,
                &self.channels,
                self.step,
                &self.p.ns,
                updated_channels.as_ref(),
            )?;
            let input_writes = vec![("__start__".to_owned(), v)];
            let path = TaskPath::default();
            let mut all: Vec<TaskWrites<'_>> = discard.iter().map(TaskWrites::from).collect();
            all.push(TaskWrites {
                path: &path,
                name: "__input__",
                triggers: &[],
                writes: &input_writes,
            });
            let updated = self.apply(&all)?;
            drop(all);
            self.updated_channels = Some(updated);
            self.put_checkpoint(CheckpointSource::Input).await?;
            return Ok(self.updated_channels.take());
        } else if !is_command && !nested {
            return Err(self.no_input_error(has_state));
        }
        Ok(updated_channels)
    }

    /// [`Error::NothingToResume`] for a resume value when the thread has no checkpoint,
    /// or neither an interrupt waiting for an answer nor a task left to run. (With tasks
    /// left, e.g. after `update_state` on a paused thread, the value answers the
    /// interrupts they raise when rerun, as in Python.)
    fn check_something_to_resume(&self, has_state: bool, goes_somewhere: bool) -> Result<()> {
        if !has_state {
            return Err(self.nothing_to_resume("the thread has no checkpoint"));
        }
        if goes_somewhere || !self.pending_interrupt_ids().is_empty() || self.has_tasks_left()? {
            return Ok(());
        }
        Err(self
            .nothing_to_resume("no interrupt is waiting for an answer and nothing is left to run"))
    }

    /// Whether the loaded checkpoint has tasks to run.
    fn has_tasks_left(&self) -> Result<bool> {
        let tasks = super::algo::prepare_task_ids(
            &self.checkpoint,
            &self.p.graph,
            &self.channels,
            self.step,
            &self.p.ns,
            None,
        )?;
        Ok(!tasks.is_empty())
    }

    /// [`Error::EmptyInput`] (Python's `EmptyInputError`) for a run given no input: on a
    /// thread without a checkpoint (often a mistyped thread id) the message says so and
    /// names the thread.
    fn no_input_error(&self, has_state: bool) -> Error {
        match &self.p.config.thread_id {
            Some(thread) if !has_state => Error::EmptyInput(format!(
                "thread {thread:?} has no checkpoint (a mistyped thread id?): give an input \
                 to start it"
            )),
            _ => Error::EmptyInput("Received no input for __start__".into()),
        }
    }

    fn nothing_to_resume(&self, reason: &str) -> Error {
        Error::NothingToResume {
            thread_id: self.p.config.thread_id.clone().unwrap_or_default(),
            reason: reason.into(),
        }
    }

    fn pending_interrupt_ids(&self) -> Vec<String> {
        let statuses = read_task_statuses(
            self.writer
                .pending_writes()
                .iter()
                .map(|(t, c, v)| (t.as_str(), c.as_str(), v)),
        );
        statuses
            .values()
            .filter(|s| !s.finished())
            .flat_map(|s| s.interrupts.iter().map(|i| i.id.clone()))
            .collect()
    }

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

    /// `err`, a fence's refusal of a root run's save turned into [`Error::Conflict`] with
    /// the fate of the run's input (read once the run's saves have ended).
    async fn with_fate(&mut self, err: Error) -> Error {
        match (&self.p.saver, &self.p.config.thread_id, self.p.resuming) {
            (Some(saver), Some(thread_id), None) => {
                // Owned, so that the future does not borrow the loop (which is not `Sync`).
                let (saver, thread_id) = (saver.clone(), thread_id.clone());
                let stored = std::mem::take(&mut self.stored);
                conflict::with_fate(err, saver.as_ref(), &thread_id, &stored).await
            }
            _ => err,
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
            for i in 0..self.tasks.len() {
                if !self.tasks[i].writes.is_empty() {
                    let t = self.tasks[i].clone();
                    self.output_writes(&t, &t.writes, true);
                }
            }
            let outcome = self.run_step().await?;
            if !outcome.interrupts.is_empty() {
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

    /// Waits for background saves (durability `async`), or saves the final checkpoint and
    /// the pending writes (durability `exit`).
    async fn exit(&mut self, persist: bool) -> Result<()> {
        if self.delta.enabled
            && persist
            && self.p.config.durability == crate::config::Durability::Exit
        {
            // Durability `exit` stores no intermediate checkpoint, so the writes of this
            // run are not stored where a replay would find them: every delta channel the
            // run wrote stores a snapshot in the final checkpoint.
            let previous = self.writer.previous_versions().clone();
            let graph = self.p.graph.clone();
            let saver = self.p.saver.clone();
            if let Some((checkpoint, metadata)) = self.writer.latest_mut() {
                let checkpoint = Arc::make_mut(checkpoint);
                let written: BTreeSet<String> =
                    super::algo::new_versions(&previous, &checkpoint.channel_versions)
                        .into_keys()
                        .filter(|c| super::delta::is_delta(&graph, c))
                        .collect();
                let counters = super::delta::read_counters(metadata);
                delta_snapshots(
                    DeltaParts {
                        checkpoint,
                        metadata,
                        channels: &self.channels,
                        forced: &mut self.delta.forced,
                        previous: &previous,
                        saver: saver.as_deref(),
                        trigger_to_nodes: &graph.trigger_to_nodes,
                    },
                    counters,
                    true,
                    &written,
                );
            }
        }
        let tasks = &self.tasks;
        let path_of = |task_id: &str| {
            tasks
                .iter()
                .find(|t| t.id == task_id)
                .map(|t| t.path.to_path_string())
                .unwrap_or_default()
        };
        self.writer
            .finish(persist, &self.checkpoint.id, path_of)
            .await
    }

    fn finish(&mut self, interrupts: Vec<Interrupt>) -> RunOutcome {
        let values = self.read_output();
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

    fn read_output(&self) -> IndexMap<String, Value> {
        super::algo::read_channels(&self.channels, &self.p.graph.output_channels)
    }

    fn prepare_tasks_and_emit(&mut self) -> Result<()> {
        self.tasks = prepare_next_tasks(
            &self.checkpoint,
            &self.p.graph,
            &self.channels,
            self.step,
            &self.p.ns,
            self.updated_channels.as_ref(),
        )?;
        if self.p.saver.is_some() {
            if let Some(sink) = self.p.sink.clone() {
                if sink.wants(StreamMode::Checkpoints) || sink.wants(StreamMode::Debug) {
                    let mut cfg = self.writer.config().clone();
                    cfg.checkpoint_id = Some(self.checkpoint.id.clone());
                    let payload = events::checkpoint_payload(
                        &cfg,
                        self.writer.prev_config(),
                        self.read_output(),
                        &self.metadata,
                        &self.tasks,
                        self.writer.pending_writes(),
                        &self.p.graph.output_channels,
                    );
                    self.emit_with_debug(
                        &sink,
                        StreamMode::Checkpoints,
                        payload,
                        self.step - 1,
                        "checkpoint",
                    );
                }
            }
        }
        Ok(())
    }

    fn emit_with_debug(
        &self,
        sink: &StreamSink,
        mode: StreamMode,
        payload: Value,
        step: i64,
        kind: &str,
    ) {
        if sink.wants(StreamMode::Debug) {
            let mut m = Map::with_capacity(4);
            m.insert("step", step);
            m.insert("timestamp", self.p.sources.debug_ts());
            m.insert("type", kind);
            m.insert("payload", payload.clone());
            sink.emit(mode, payload);
            sink.emit(StreamMode::Debug, Value::Map(m));
        } else {
            sink.emit(mode, payload);
        }
    }

    fn emit_task_starts(&self) {
        let Some(sink) = &self.p.sink else {
            return;
        };
        if !(sink.wants(StreamMode::Tasks) || sink.wants(StreamMode::Debug)) {
            return;
        }
        for t in &self.tasks {
            if self.is_hidden(&t.name) {
                continue;
            }
            let payload = events::task_start_payload(t);
            self.emit_with_debug(sink, StreamMode::Tasks, payload, self.step, "task");
        }
    }

    fn is_hidden(&self, name: &str) -> bool {
        self.p.graph.nodes.get(name).is_some_and(|n| n.hidden)
    }

    /// Streams `updates` and `tasks` events for one task's committed writes.
    fn output_writes(&self, task: &Task, writes: &[(String, Value)], cached: bool) {
        let Some(sink) = &self.p.sink else {
            return;
        };
        if self.is_hidden(&task.name) || writes.is_empty() {
            return;
        }
        let first = writes[0].0.as_str();
        if first == "__interrupt__" {
            if sink.wants(StreamMode::Updates) {
                sink.emit(StreamMode::Updates, events::interrupt_update(writes));
            }
        } else if first != "__error__" {
            if !cached {
                super::stream_messages::emit_node_messages(
                    sink,
                    &self.p.config,
                    task,
                    self.step,
                    writes,
                );
            }
            if let Some(u) = sink
                .wants(StreamMode::Updates)
                .then(|| {
                    events::updates_payload(task, writes, &self.p.graph.output_channels, cached)
                })
                .flatten()
            {
                sink.emit(StreamMode::Updates, u);
            }
        }
        if !cached && (sink.wants(StreamMode::Tasks) || sink.wants(StreamMode::Debug)) {
            let payload = events::task_result_payload(task, writes, &self.p.graph.output_channels);
            self.emit_with_debug(sink, StreamMode::Tasks, payload, self.step, "task_result");
        }
    }

    fn emit_values(&self) {
        if let Some(sink) = &self.p.sink {
            if sink.wants(StreamMode::Values) {
                sink.emit(
                    StreamMode::Values,
                    events::values_payload(self.read_output()),
                );
            }
        }
    }

    fn emit_interrupt_values(&self, interrupts: &[Interrupt]) {
        if let Some(sink) = &self.p.sink {
            if sink.wants(StreamMode::Values) {
                let mut values = self.read_output();
                values.insert(
                    "__interrupt__".into(),
                    Value::List(interrupts.iter().map(Interrupt::to_value).collect()),
                );
                sink.emit(StreamMode::Values, events::values_payload(values));
            }
        }
    }

    /// Gives finished tasks back the output they recorded before a failure or interrupt.
    fn reapply_finished_writes(&mut self) {
        let statuses = read_task_statuses(
            self.writer
                .pending_writes()
                .iter()
                .map(|(t, c, v)| (t.as_str(), c.as_str(), v)),
        );
        for t in &mut self.tasks {
            if let Some(s) = statuses.get(&t.id) {
                t.writes.extend(s.output.iter().cloned());
                if self.delta.enabled {
                    self.delta.reapplied.insert(t.id.clone());
                }
            }
        }
    }

    /// Runs the step's tasks that have no writes yet, committing each as it finishes.
    async fn run_step(&mut self) -> Result<StepOutcome> {
        let to_run: Vec<usize> = (0..self.tasks.len())
            .filter(|i| self.tasks[*i].writes.is_empty())
            .collect();
        let channels = Arc::new(std::mem::take(&mut self.channels));
        let outcome = run_tasks(self, &to_run, channels.clone()).await;
        self.channels = Arc::try_unwrap(channels).unwrap_or_else(|a| (*a).clone());
        outcome
    }

    /// Records the writes of a task: in memory for this step, and in the saver.
    pub(crate) async fn put_writes(
        &mut self,
        task_id: &str,
        writes: Vec<(String, Value)>,
    ) -> Result<()> {
        if writes.is_empty() {
            return Ok(());
        }
        let task = self.tasks.iter().position(|t| t.id == task_id);
        let path = task
            .map(|i| self.tasks[i].path.to_path_string())
            .unwrap_or_default();
        let writes = self
            .writer
            .put_writes(&self.checkpoint.id, task_id, path, writes)
            .await?;
        if let (Some(i), Some(_)) = (task, &self.p.sink) {
            let t = self.tasks[i].clone();
            self.output_writes(&t, &writes, false);
        }
        Ok(())
    }

    /// Records the writes a task got from the cache: saved like any writes, streamed as
    /// cached updates.
    pub(crate) async fn put_writes_cached(
        &mut self,
        task_id: &str,
        writes: Vec<(String, Value)>,
    ) -> Result<()> {
        let sink = self.p.sink.take();
        let result = self.put_writes(task_id, writes.clone()).await;
        self.p.sink = sink;
        if let Some(t) = self.tasks.iter().find(|t| t.id == task_id).cloned() {
            self.output_writes(&t, &writes, true);
        }
        result
    }

    /// Applies the step's writes and saves the next checkpoint
    /// (docs/runtime.md#saving-a-checkpoint).
    async fn after_tick(&mut self) -> Result<()> {
        let tasks = std::mem::take(&mut self.tasks);
        if self.delta.enabled {
            let graph = &self.p.graph;
            let over = super::delta::overwritten(
                graph,
                tasks
                    .iter()
                    .flat_map(|t| t.writes.iter().map(|(c, v)| (c.as_str(), v))),
            );
            self.delta.forced.extend(over);
            let loaded = std::mem::take(&mut self.delta.loaded);
            let reapplied = std::mem::take(&mut self.delta.reapplied);
            self.delta.forced.extend(
                loaded
                    .into_iter()
                    .filter(|(t, _)| !reapplied.contains(t))
                    .map(|(_, c)| c),
            );
        }
        let writes: Vec<TaskWrites<'_>> = tasks.iter().map(TaskWrites::from).collect();
        let res = self.apply(&writes);
        drop(writes);
        self.tasks = tasks;
        let updated = res?;
        let outputs_changed = updated
            .iter()
            .any(|c| self.p.graph.output_channels.contains(c));
        self.updated_channels = Some(updated);
        if outputs_changed {
            self.emit_values();
        }
        self.writer.clear_pending();
        self.is_replaying = false;
        self.put_checkpoint(CheckpointSource::Loop).await?;
        self.resuming = false;
        Ok(())
    }

    /// Creates the next checkpoint from the live channels and saves it.
    async fn put_checkpoint(&mut self, source: CheckpointSource) -> Result<()> {
        let counters = self.delta.enabled.then(|| {
            let previous = super::delta::read_counters(&self.metadata);
            super::delta::advance_counters(&self.p.graph, &previous, self.updated_channels.as_ref())
        });
        let parents = self.checkpoint_map();
        self.metadata = CheckpointMetadata {
            source: Some(source),
            step: Some(self.step),
            parents: Some(parents),
            extra: IndexMap::new(),
        };
        let ts = self.p.sources.ts();
        let id = self.p.sources.ids().uuid6(self.step);
        let previous = std::mem::replace(&mut self.checkpoint, Checkpoint::empty("", ""));
        let mut next = create_checkpoint(
            previous,
            &self.channels,
            id,
            ts,
            self.updated_channels.as_ref(),
        );
        if let Some(counters) = counters {
            let stores = self.p.saver.is_some()
                && self.p.config.durability != crate::config::Durability::Exit;
            let previous = self.writer.previous_versions().clone();
            delta_snapshots(
                DeltaParts {
                    checkpoint: &mut next,
                    metadata: &mut self.metadata,
                    channels: &self.channels,
                    forced: &mut self.delta.forced,
                    previous: &previous,
                    saver: self.p.saver.as_deref(),
                    trigger_to_nodes: &self.p.graph.trigger_to_nodes,
                },
                counters,
                stores,
                &BTreeSet::new(),
            );
        }
        if self.p.resuming.is_none() && self.p.saver.is_some() {
            self.stored.note(
                &next.id,
                self.metadata.source == Some(CheckpointSource::Input),
            );
        }
        let next = Arc::new(next);
        let saved = self
            .writer
            .put_checkpoint(next.clone(), &self.metadata)
            .await;
        self.checkpoint = without_values(next);
        saved?;
        self.step += 1;
        Ok(())
    }

    /// What this step's tasks pass on to subgraphs.
    pub(crate) fn run_scope(&self) -> super::context::RunScope {
        let mut map = self.checkpoint_map();
        map.insert(self.p.ns.clone(), self.checkpoint.id.clone());
        super::context::RunScope {
            lease: self.writer.lease().cloned(),
            saver: self.p.saver.clone(),
            store: self.p.store.clone(),
            sources: self.p.sources.clone(),
            config: self.p.config.clone(),
            checkpoint_map: map,
            resuming: self.resuming,
        }
    }

    /// The ancestors' checkpoint ids (`checkpoint_map` of the config).
    fn checkpoint_map(&self) -> IndexMap<String, String> {
        match self.p.config.configurable.get("checkpoint_map") {
            Some(Value::Map(m)) => m
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.as_str()?.to_owned())))
                .collect(),
            _ => IndexMap::new(),
        }
    }

    /// Accessors for the task runner.
    pub(crate) fn params(&self) -> &LoopParams {
        &self.p
    }

    pub(crate) fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    pub(crate) fn tasks_mut(&mut self) -> &mut Vec<Task> {
        &mut self.tasks
    }

    /// The checkpoint the current step's tasks were planned from.
    pub(crate) fn checkpoint_id(&self) -> &str {
        &self.checkpoint.id
    }

    pub(crate) fn step(&self) -> i64 {
        self.step
    }

    pub(crate) fn pending_writes(&self) -> &[(String, String, Value)] {
        self.writer.pending_writes()
    }

    pub(crate) fn resume_map(&self) -> Option<&[(String, Value)]> {
        self.resume_map.as_deref()
    }
}

/// The run's working copy of a checkpoint handed to the writer: its versions, without the
/// values (the live channels hold those). No copy when the writer is done with it.
fn without_values(checkpoint: Arc<Checkpoint>) -> Checkpoint {
    match Arc::try_unwrap(checkpoint) {
        Ok(mut c) => {
            c.channel_values = IndexMap::new();
            c
        }
        Err(c) => Checkpoint {
            v: c.v,
            ts: c.ts.clone(),
            id: c.id.clone(),
            channel_values: IndexMap::new(),
            channel_versions: c.channel_versions.clone(),
            versions_seen: c.versions_seen.clone(),
            updated_channels: c.updated_channels.clone(),
            pending_sends: c.pending_sends.clone(),
            extra: c.extra.clone(),
        },
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

/// The writes of a client command (docs/runtime.md#loading-and-input): Sends, gotos, resume, then
/// the update.
fn map_command(cmd: &Command) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for g in &cmd.goto {
        match g {
            Goto::Send(s) => out.push((super::task::TASKS.to_owned(), s.to_value())),
            Goto::Node(n) if n == "__end__" => {}
            Goto::Node(n) => out.push((format!("branch:to:{n}"), Value::from("__start__"))),
        }
    }
    if let Some(Resume::Value(v)) = &cmd.resume {
        out.push(("__resume__".to_owned(), v.clone()));
    }
    if let Some(update) = &cmd.update {
        out.extend(update.iter().cloned());
    }
    Ok(out)
}

/// What [`delta_snapshots`] works on: the new checkpoint and its metadata, and the run's
/// state it reads.
struct DeltaParts<'a> {
    checkpoint: &'a mut Checkpoint,
    metadata: &'a mut CheckpointMetadata,
    channels: &'a Channels,
    forced: &'a mut BTreeSet<String>,
    /// The channel versions of the last checkpoint handed to the saver.
    previous: &'a stategraph_checkpoint::ChannelVersions,
    saver: Option<&'a dyn CheckpointSaver>,
    trigger_to_nodes: &'a IndexMap<String, Vec<String>>,
}

/// Stores the due snapshots of delta channels (by `counters`, forced, or in `extra`) in the
/// new checkpoint when it will be stored (`stores`), and the counters in its metadata
/// (docs/format.md#deltachannel).
fn delta_snapshots(
    parts: DeltaParts<'_>,
    counters: super::delta::Counters,
    stores: bool,
    extra: &BTreeSet<String>,
) {
    let to_snapshot: BTreeSet<String> = if stores {
        let mut due = super::delta::due_by_counters(
            parts.channels,
            &counters,
            &parts.checkpoint.channel_versions,
        );
        due.extend(parts.forced.iter().cloned());
        due.extend(extra.iter().cloned());
        due
    } else {
        BTreeSet::new()
    };
    if !to_snapshot.is_empty() {
        let saver = parts.saver;
        let next = move |current: Option<&ChannelVersion>| match saver {
            Some(s) => s.get_next_version(current),
            None => stategraph_checkpoint::version_gen::next_int_version(current),
        };
        super::delta::apply_snapshots(
            parts.checkpoint,
            parts.channels,
            &to_snapshot,
            parts.previous,
            &next,
            parts.trigger_to_nodes,
        );
        parts.forced.retain(|c| !to_snapshot.contains(c));
    }
    super::delta::write_counters(parts.metadata, counters, &to_snapshot);
}
