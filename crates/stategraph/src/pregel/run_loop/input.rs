//! Applying a run's input (docs/runtime.md#loading-and-input): new values start a step
//! from `__start__`, a client command writes its update, gotos and resume value, and a run
//! without input resumes the thread where it stopped (time travel and forks included).

use std::collections::BTreeSet;

use stategraph_checkpoint::{ChannelVersion, CheckpointSource, Value, NULL_TASK_ID};

use super::{Loop, RunInput};
use crate::error::{Error, Result};
use crate::pregel::algo::{prepare_task_ids, TaskWrites};
use crate::pregel::delta;
use crate::pregel::status::read_task_statuses;
use crate::pregel::targets::check_targets;
use crate::pregel::task::{TaskPath, TASKS};
use crate::types::{Command, Goto, Resume, PARENT};

/// What a run's input means on the loaded thread.
#[derive(Clone, Copy)]
struct InputKind {
    /// The thread has a checkpoint with channel versions.
    has_state: bool,
    /// A subgraph's run (its parent says whether it resumes).
    nested: bool,
    /// The run resumes the thread (rather than starting it anew).
    is_resuming: bool,
    /// A root run given no input, on a thread with state.
    continues: bool,
    /// A resume from an addressed checkpoint that forks the thread.
    forks: bool,
}

impl Loop {
    /// Applies the input (docs/runtime.md#loading-and-input); returns the channels updated
    /// so far (`None` when unknown). While it runs, `self.updated_channels` is unknown, as
    /// in LangGraph.
    pub(super) async fn first(
        &mut self,
        input: RunInput,
        addressed: bool,
        superseded: bool,
        mut updated_channels: Option<BTreeSet<String>>,
    ) -> Result<Option<BTreeSet<String>>> {
        let kind = self.input_kind(&input, addressed, superseded);
        if self.delta.enabled {
            self.note_loaded_delta_writes(kind.is_resuming);
        }
        // Writes of a forking command go to the fork, not to the checkpoint it forks.
        let mut carried: Vec<(String, String, Value)> = Vec::new();
        if let RunInput::Command(cmd) = &input {
            self.command_writes(cmd, kind, &mut carried).await?;
        }
        self.apply_null_writes(&carried, &mut updated_channels)?;
        if kind.continues && !self.has_tasks_left()? {
            return Err(self.nothing_to_resume("its run finished: nothing is left to run"));
        }
        if kind.is_resuming {
            self.see_versions_at_resume();
            if kind.forks {
                self.writer.retain_pending(|w| w.1 != "__interrupt__");
                self.save_next_checkpoint(CheckpointSource::Fork).await?;
            }
            self.emit_values();
            return Ok(updated_channels);
        }
        match input {
            RunInput::Values(v) => self.start_input(v, updated_channels).await,
            // On a thread without state LangGraph also runs START with the Command itself
            // as input (so its update is applied twice and its goto joins START's edges).
            RunInput::Command(cmd) => self.start_input(cmd.to_value(), updated_channels).await,
            RunInput::Resume if !kind.nested => Err(self.no_input_error(kind.has_state)),
            RunInput::Resume => Ok(updated_channels),
        }
    }

    /// Reads what the input means on the loaded thread; marks the run resuming or
    /// replaying, and drops the resume values a time travel leaves behind.
    fn input_kind(&mut self, input: &RunInput, addressed: bool, superseded: bool) -> InputKind {
        let has_state = !self.checkpoint.channel_versions.is_empty();
        let nested = self.p.resuming.is_some();
        let is_resuming = has_state
            && match (input, self.p.resuming) {
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
        let resumes_with_value = matches!(input, RunInput::Command(c) if c.resume.is_some());
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
        InputKind {
            has_state,
            nested,
            is_resuming,
            continues,
            forks,
        }
    }

    /// The loaded writes to delta channels: on a resume, those a task must get back (or a
    /// snapshot is forced after the first step); on a branch, the channels to snapshot (the
    /// writes belong to the child that consumed them, which this branch is not).
    fn note_loaded_delta_writes(&mut self, is_resuming: bool) {
        let graph = &self.p.graph;
        if is_resuming && !self.is_replaying {
            self.delta.loaded = self
                .writer
                .pending_writes()
                .iter()
                .filter(|w| w.0 != NULL_TASK_ID && delta::is_delta(graph, &w.1))
                .map(|w| (w.0.clone(), w.1.clone()))
                .collect();
        } else {
            self.delta.forced = delta::delta_channels_in(
                graph,
                self.writer.pending_writes().iter().map(|w| w.1.as_str()),
            );
        }
    }

    /// Checks a client command against the thread and records its writes as the input's
    /// (`NULL_TASK_ID`) writes, or, when the run forks, carries them to the fork.
    async fn command_writes(
        &mut self,
        cmd: &Command,
        kind: InputKind,
        carried: &mut Vec<(String, String, Value)>,
    ) -> Result<()> {
        if cmd.graph.as_deref() == Some(PARENT) {
            return Err(Error::InvalidUpdate("There is no parent graph".into()));
        }
        let mut resume_is_map = false;
        if let Some(resume) = &cmd.resume {
            if self.p.saver.is_none() {
                return Err(Error::NoCheckpointer);
            }
            if !kind.nested {
                self.check_something_to_resume(kind.has_state, !cmd.goto.is_empty())?;
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
            check_targets(&self.p.graph, "input", &writes)?;
        }
        if writes.is_empty() && !resume_is_map {
            return Err(Error::EmptyInput("Received empty Command input".into()));
        }
        if writes.is_empty() {
            return Ok(());
        }
        if kind.forks {
            carried.extend(
                writes
                    .into_iter()
                    .map(|(c, v)| (NULL_TASK_ID.to_owned(), c, v)),
            );
        } else {
            self.record_task_writes(NULL_TASK_ID, writes).await?;
            if !kind.nested && self.p.saver.is_some() {
                let on = self.checkpoint.id.clone();
                self.stored.note_command_writes(&on);
            }
        }
        Ok(())
    }

    /// Applies the input's writes (pending and `carried`) to the channels, adding what they
    /// update to `updated_channels`.
    fn apply_null_writes(
        &mut self,
        carried: &[(String, String, Value)],
        updated_channels: &mut Option<BTreeSet<String>>,
    ) -> Result<()> {
        if self.delta.enabled {
            let carried_delta =
                delta::delta_channels_in(&self.p.graph, carried.iter().map(|w| w.1.as_str()));
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
        if null_writes.is_empty() {
            return Ok(());
        }
        let path = TaskPath::default();
        let task = TaskWrites {
            path: &path,
            name: "__input__",
            triggers: &[],
            writes: &null_writes,
        };
        let updated = self.apply(&[task])?;
        if let Some(u) = updated_channels {
            u.extend(updated);
        }
        Ok(())
    }

    /// On a resume, the `__interrupt__` entry of `versions_seen` takes every channel's
    /// current version (so an `interrupt_before` does not stop the resumed step again).
    fn see_versions_at_resume(&mut self) {
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
    }

    /// Starts the thread anew from `value` written to `__start__`: the tasks the loaded
    /// checkpoint would run are discarded (their triggers consumed), and the input
    /// checkpoint is saved.
    async fn start_input(
        &mut self,
        value: Value,
        updated_channels: Option<BTreeSet<String>>,
    ) -> Result<Option<BTreeSet<String>>> {
        let discard = prepare_task_ids(
            &self.checkpoint,
            &self.p.graph,
            &self.channels,
            self.step,
            &self.p.ns,
            updated_channels.as_ref(),
        )?;
        let input_writes = vec![("__start__".to_owned(), value)];
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
        self.save_next_checkpoint(CheckpointSource::Input).await?;
        Ok(self.updated_channels.take())
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
        let tasks = prepare_task_ids(
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

    /// [`Error::NothingToResume`] on this thread, for `reason`.
    fn nothing_to_resume(&self, reason: &str) -> Error {
        Error::NothingToResume {
            thread_id: self.p.config.thread_id.clone().unwrap_or_default(),
            reason: reason.into(),
        }
    }

    /// The ids of the interrupts still waiting for an answer (of unfinished tasks).
    fn pending_interrupt_ids(&self) -> Vec<String> {
        let statuses = read_task_statuses(
            self.writer
                .pending_writes()
                .iter()
                .map(|(t, c, v)| (t.as_str(), c.as_str(), v)),
        );
        // A set, as Python's: a called task's interrupt is also its caller's.
        let mut ids: Vec<String> = Vec::new();
        for id in statuses
            .values()
            .filter(|s| !s.finished())
            .flat_map(|s| s.interrupts.iter().map(|i| i.id.clone()))
        {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }
}

/// The writes of a client command (docs/runtime.md#loading-and-input): Sends, gotos, resume, then
/// the update.
fn map_command(cmd: &Command) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for g in &cmd.goto {
        match g {
            Goto::Send(s) => out.push((TASKS.to_owned(), s.to_value())),
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
