//! [`CompiledEntrypoint`]: an entrypoint's graph, run and read as graphs are (`invoke`,
//! `stream`, `get_state`, `get_state_history`), with its input and return value typed.

use std::marker::PhantomData;
use std::sync::Arc;

use futures::stream::BoxStream;
use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::{CheckpointSaver, ListOptions, Value};

use super::channels::END;
use super::convert::{decode, encode};
use crate::config::AsRunConfig;
use crate::error::{Error, Result};
use crate::graph::{CompileOptions, CompiledGraph, IntoInput, NoInput};
use crate::pregel::graph::PregelGraph;
use crate::pregel::run_loop::RunInput;
use crate::pregel::snapshot::StateSnapshot;
use crate::pregel::sources::Sources;
use crate::pregel::stream::{StreamEvent, StreamMode};
use crate::state::{DynState, IntoUpdate};
use crate::types::{Command, Interrupt};

/// What an entrypoint's run may be given: its input `I`, a [`Command`] (a resume), or
/// [`NoInput`] (continue the thread).
pub trait EntrypointInput<I> {
    /// The run's input.
    fn into_run_input(self) -> Result<RunInput>;
}

impl<I: Serialize> EntrypointInput<I> for I {
    fn into_run_input(self) -> Result<RunInput> {
        encode(&self)
            .map(RunInput::Values)
            .map_err(|e| Error::State(format!("the entrypoint's input cannot be stored: {e}")))
    }
}

impl<I, U: IntoUpdate> EntrypointInput<I> for Command<U> {
    fn into_run_input(self) -> Result<RunInput> {
        self.into_input()
    }
}

impl<I> EntrypointInput<I> for NoInput {
    fn into_run_input(self) -> Result<RunInput> {
        Ok(RunInput::Resume)
    }
}

/// The end of an entrypoint's run: its return value, or the interrupts that paused it.
#[derive(Clone, Debug)]
#[must_use = "a run may have paused on an interrupt: check `is_interrupted()` or call `done()`"]
pub struct EntrypointOutcome<O> {
    /// The thread's return value (`__end__`): this run's when it finished; while paused,
    /// the previous run's, if any (as Python's `invoke` shows it).
    pub value: Option<O>,
    /// The interrupts waiting for an answer (empty when the run finished).
    pub interrupts: Vec<Interrupt>,
}

impl<O> EntrypointOutcome<O> {
    /// True when the run paused on interrupts.
    pub fn is_interrupted(&self) -> bool {
        !self.interrupts.is_empty()
    }

    /// The return value of a finished run; [`Error::Interrupted`] when it paused.
    pub fn done(self) -> Result<O> {
        if self.is_interrupted() {
            return Err(Error::Interrupted {
                interrupts: self.interrupts,
                next: Vec::new(),
            });
        }
        self.value
            .ok_or_else(|| Error::State("the entrypoint finished without a return value".into()))
    }
}

/// An entrypoint's graph ([`super::Entrypoint::compile`]). Cheap to clone.
pub struct CompiledEntrypoint<I, O> {
    graph: CompiledGraph<DynState>,
    _types: PhantomData<fn(I) -> O>,
}

impl<I, O> Clone for CompiledEntrypoint<I, O> {
    fn clone(&self) -> Self {
        CompiledEntrypoint {
            graph: self.graph.clone(),
            _types: PhantomData,
        }
    }
}

impl<I, O> CompiledEntrypoint<I, O> {
    pub(crate) fn new(graph: PregelGraph, options: CompileOptions) -> Self {
        CompiledEntrypoint {
            graph: CompiledGraph::new(Arc::new(graph), options, Default::default()),
            _types: PhantomData,
        }
    }

    /// Uses these id and clock sources (to reproduce a trace exactly).
    pub fn with_sources(mut self, sources: Sources) -> Self {
        self.graph = self.graph.with_sources(sources);
        self
    }

    /// The graph underneath, an untyped [`CompiledGraph`]: `update_state`, `batch`,
    /// typed streams, drawing.
    pub fn graph(&self) -> &CompiledGraph<DynState> {
        &self.graph
    }

    /// The checkpointer, if any.
    pub fn checkpointer(&self) -> Option<&Arc<dyn CheckpointSaver>> {
        self.graph.checkpointer()
    }

    /// Runs the entrypoint on `input` (or resumes it with a [`Command`], or continues it
    /// with [`NoInput`]) until it returns or pauses. A resume with nothing waiting is
    /// [`Error::NothingToResume`]; a return value `O` cannot hold is [`Error::State`].
    pub async fn invoke(
        &self,
        input: impl EntrypointInput<I>,
        config: impl AsRunConfig,
    ) -> Result<EntrypointOutcome<O>>
    where
        O: DeserializeOwned,
    {
        let out = self.graph.invoke(input.into_run_input()?, config).await?;
        let value = out.values.get(END).map(returned::<O>).transpose()?;
        Ok(EntrypointOutcome {
            value,
            interrupts: out.interrupts,
        })
    }

    /// Runs the entrypoint, yielding events of `modes` as Python streams them for an
    /// entrypoint (`updates`: `{task: value}` per finished task; `values`: the return
    /// value). A failure of the run is the stream's last item.
    pub fn stream(
        &self,
        input: impl EntrypointInput<I>,
        config: impl AsRunConfig,
        modes: &[StreamMode],
    ) -> BoxStream<'static, Result<StreamEvent>> {
        match input.into_run_input() {
            Ok(input) => self.graph.stream(input, config, modes),
            Err(e) => Box::pin(futures::stream::once(async move { Err(e) })),
        }
    }

    /// The thread's state as a graph's: `values` holds `__end__` (the return value) once
    /// there is one, `next` the entrypoint while it is paused, and `tasks` its task.
    pub async fn get_state(&self, config: impl AsRunConfig) -> Result<StateSnapshot> {
        self.graph.get_state(config).await
    }

    /// The thread's checkpoints, newest first, as [`CompiledEntrypoint::get_state`]
    /// shows each.
    pub async fn get_state_history(
        &self,
        config: impl AsRunConfig,
        options: &ListOptions,
    ) -> Result<Vec<StateSnapshot>> {
        self.graph.get_state_history(config, options).await
    }
}

/// A stored return value as `O`.
fn returned<O: DeserializeOwned>(value: &Value) -> Result<O> {
    decode(value).map_err(|e| {
        Error::State(format!(
            "the entrypoint returned {value}, which is not a {}: {e}",
            std::any::type_name::<O>()
        ))
    })
}
