//! A streamed run that also hands back the thread's final state: [`RunStream`], from
//! [`CompiledGraph::stream_run`].
//!
//! A caller that streams a run and then wants the thread's state (a server recording the
//! run's output, its interrupts and the thread's values) would read the saver again with
//! `get_state`, although the run held that state a moment before. With `stream_run` the
//! run mirrors the head it leaves in the saver (the newest checkpoint and the writes
//! stored against it, exactly as it hands them over; see `pregel/head.rs`) and, once it
//! ended normally, builds the snapshot from it with the code `get_state` uses: the same
//! snapshot, without the read. (A graph with `DeltaChannel`s still reads their history,
//! as `get_state` does.)

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::stream::{BoxStream, Stream, StreamExt};
use stategraph_checkpoint::CheckpointTuple;

use super::compiled::{CompiledGraph, IntoInput};
use super::typed_stream::StreamOptions;
use crate::config::{AsRunConfig, RunConfig};
use crate::error::{Error, Result};
use crate::pregel::run_loop::RunInput;
use crate::pregel::snapshot::StateSnapshot;
use crate::pregel::stream::{StreamEvent, StreamSink};
use crate::state::State;
use crate::thread_head::ThreadHead;

/// The events of a run (a [`Stream`] of `Result<StreamEvent>`, as
/// [`CompiledGraph::stream_with`] yields them) and, once it has ended, the thread's final
/// state ([`RunStream::final_state`]). Dropping it cancels the run.
pub struct RunStream {
    events: BoxStream<'static, Result<StreamEvent>>,
    state: Arc<OnceLock<StateSnapshot>>,
    head: Arc<OnceLock<ThreadHead>>,
}

impl RunStream {
    /// After the stream has returned `None`: what `get_state` on the run's thread returns
    /// now (values, next, tasks with their interrupts, config, metadata, created_at,
    /// parent_config), when the run ended normally (it finished or paused at an interrupt)
    /// on a graph with a checkpointer. `None` before the end, after a failed run (its
    /// error is the stream's last item), and without a checkpointer.
    pub fn final_state(&self) -> Option<&StateSnapshot> {
        self.state.get()
    }

    /// After the stream has returned `None`: the head the run left in the saver (the
    /// root namespace's newest checkpoint and the writes stored against it), to start the
    /// thread's next run from with [`RunConfig::start_from`]. `None` when
    /// [`RunStream::final_state`] is, and after a run at a `checkpoint_id` that stored
    /// nothing (the addressed checkpoint need not be the head).
    pub fn final_head(&self) -> Option<&ThreadHead> {
        self.head.get()
    }

    /// [`RunStream::final_state`], taken out of the stream (no copy once the run's task
    /// is done).
    pub fn into_final_state(self) -> Option<StateSnapshot> {
        match Arc::try_unwrap(self.state) {
            Ok(state) => state.into_inner(),
            Err(shared) => shared.get().cloned(),
        }
    }
}

impl Stream for RunStream {
    type Item = Result<StreamEvent>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.poll_next_unpin(cx)
    }
}

impl std::fmt::Debug for RunStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStream")
            .field("final_state", &self.state.get().is_some())
            .finish_non_exhaustive()
    }
}

impl<S: State> CompiledGraph<S> {
    /// [`CompiledGraph::stream_with`], and the thread's state at the end without reading
    /// it back: [`RunStream::final_state`] once the stream has ended.
    ///
    /// ```
    /// # use stategraph::{DynState, RunConfig, StateGraph, START, END, StreamMode, channels::LastValue};
    /// # use stategraph::checkpoint::MemorySaver;
    /// # use futures::StreamExt;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut g = StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)]);
    /// g.add_node("inc", |_s: DynState| async move { stategraph::update([("n", 1)]) });
    /// g.add_edge(START, "inc").add_edge("inc", END);
    /// let opts = stategraph::CompileOptions::new().checkpointer(std::sync::Arc::new(MemorySaver::new()));
    /// let app = g.compile_with(opts).unwrap();
    /// let mut run = app.stream_run(stategraph::update([("n", 0)]), &RunConfig::thread("t"), [StreamMode::Updates]);
    /// while let Some(event) = run.next().await {
    ///     event.unwrap();
    /// }
    /// assert_eq!(run.final_state().unwrap().values["n"], 1.into());
    /// # });
    /// ```
    pub fn stream_run(
        &self,
        input: impl IntoInput,
        config: impl AsRunConfig,
        options: impl Into<StreamOptions>,
    ) -> RunStream {
        let config = self.resolve(config);
        match input.into_input() {
            Ok(input) => self.spawn_run(input, config, options.into(), true),
            Err(e) => RunStream {
                events: futures::stream::once(async move { Err(e) }).boxed(),
                state: Arc::default(),
                head: Arc::default(),
            },
        }
    }

    /// Runs the graph on a task of its own, streaming its events; with `keep_head`, builds
    /// the final state when the run ends normally.
    pub(super) fn spawn_run(
        &self,
        input: RunInput,
        config: RunConfig,
        options: StreamOptions,
        keep_head: bool,
    ) -> RunStream {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let sink = StreamSink::new(tx, &options.modes).with_subgraphs(options.subgraphs);
        let this = self.clone();
        let state: Arc<OnceLock<StateSnapshot>> = Arc::default();
        let slot = state.clone();
        let head: Arc<OnceLock<ThreadHead>> = Arc::default();
        let head_slot = head.clone();
        // Dropped with the run's future: tells the cancel below that the run's writer has
        // taken its own holds (it does so as it is dropped).
        let (alive, gone) = tokio::sync::oneshot::channel::<()>();
        let watched = match (self.checkpointer(), &config.thread_id) {
            (Some(saver), Some(thread)) => Some((saver.clone(), thread.clone(), gone)),
            _ => None,
        };
        // Boxed: the run's future is large, and tokio moves a spawned future by value
        // several times (and its task cell holds it whole); a box moves as a pointer.
        // The run's spans go under the caller's span (the spawned task has none of its own).
        let caller = tracing::Span::current();
        let handle = tokio::spawn(tracing::Instrument::instrument(
            Box::pin(async move {
                let _alive = alive;
                let outcome = this.run_with(input, &config, Some(sink), keep_head).await?;
                if let (Some(tuple), Some(saver)) = (outcome.head, this.checkpointer()) {
                    let tuple = Arc::new(tuple);
                    let copy = CheckpointTuple::clone(&tuple);
                    match super::read_state::head_snapshot(&this.graph, saver, copy).await {
                        Ok(snapshot) => {
                            let _ = slot.set(snapshot);
                            let _ = head_slot.set(ThreadHead::new(tuple));
                        }
                        // The caller reads the state instead (and meets the failure there).
                        Err(e) => tracing::debug!(error = %e, "no final state for the run"),
                    }
                }
                Ok::<_, Error>(())
            }),
            caller,
        ));
        let cancel = AbortOnDrop {
            task: handle.abort_handle(),
            watched,
        };
        let events =
            futures::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|e| (Ok(e), rx)) },
            );
        let tail = futures::stream::once(async move {
            let _cancel = cancel;
            match handle.await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(Err(e)),
                Err(e) => Some(Err(Error::Node {
                    node: String::new(),
                    message: format!("run task failed: {e}"),
                })),
            }
        })
        .filter_map(|x| async move { x });
        RunStream {
            events: events.chain(tail).boxed(),
            state,
            head,
        }
    }
}

/// Cancels a streamed run when its stream is dropped before the run ended.
///
/// The run's task is dropped later, on the runtime, and only then does its writer take
/// the holds that make reads wait for its saves (`pregel/in_flight.rs`). So the cancel
/// holds the thread itself from the moment the stream is dropped until the task's future
/// is gone: a read after dropping the stream waits as it does after dropping an `invoke`.
struct AbortOnDrop {
    task: tokio::task::AbortHandle,
    /// The saver, the thread, and the signal that the run's future was dropped.
    watched: Option<(
        Arc<dyn stategraph_checkpoint::CheckpointSaver>,
        String,
        tokio::sync::oneshot::Receiver<()>,
    )>,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        let runtime = tokio::runtime::Handle::try_current();
        if let (Some((saver, thread, gone)), false, Ok(rt)) =
            (self.watched.take(), self.task.is_finished(), runtime)
        {
            let hold = crate::pregel::in_flight::hold(&saver, &thread);
            rt.spawn(async move {
                let _ = gone.await;
                drop(hold);
            });
        }
        self.task.abort();
    }
}
