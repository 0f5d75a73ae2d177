//! Reading a thread's state outside a run: `get_state` and `get_state_history`
//! (docs/runtime.md#state-api); `update_state.rs` changes it, `read_state.rs` builds the
//! snapshots.

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use stategraph_checkpoint::{CheckpointSaver, ListOptions};

use super::compiled::CompiledGraph;
use super::read_state::{snapshot, state_of};
use crate::config::{AsRunConfig, RunConfig};
use crate::error::{Error, Result};
use crate::pregel::graph::PregelGraph;
use crate::pregel::snapshot::StateSnapshot;
use crate::state::State;

impl<S: State> CompiledGraph<S> {
    /// The checkpointer, or [`Error::NoCheckpointer`].
    pub(super) fn saver(&self) -> Result<&Arc<dyn CheckpointSaver>> {
        self.options
            .checkpointer
            .as_ref()
            .ok_or(Error::NoCheckpointer)
    }

    /// The state of a thread: at its latest checkpoint ("live": values include the output
    /// of tasks that already finished, `next` only what still has to run), or at the
    /// checkpoint `config.checkpoint_id` names (a record of that step). A config with a
    /// subgraph's `checkpoint_ns` reads that subgraph's state.
    ///
    /// `config` is a [`RunConfig`] or anything that converts to one
    /// (`&RunConfig`, a snapshot's `config`, what `update_state` returns).
    ///
    /// If a run of the thread was cancelled with saves still being stored (its
    /// durability-`async` queue, a save under way), waits for them first, so the state
    /// read is never older than what that run handed to the saver (docs/runtime.md#cancelling-a-run). It does not wait for a
    /// run that is still going.
    pub async fn get_state(&self, config: impl AsRunConfig) -> Result<StateSnapshot> {
        self.get_state_with(config, false).await
    }

    /// [`CompiledGraph::get_state`], with the full state of subgraph tasks when
    /// `subgraphs` is set.
    pub async fn get_state_with(
        &self,
        config: impl AsRunConfig,
        subgraphs: bool,
    ) -> Result<StateSnapshot> {
        let config = &self.resolve(config);
        let saver = self.saver()?.clone();
        let graph = graph_for_ns(&self.graph, &config.checkpoint_ns)?;
        let cfg = config.checkpoint_config(&config.checkpoint_ns);
        let live = config.checkpoint_id.is_none();
        let thread = thread_of(config)?;
        crate::pregel::in_flight::settled(&saver, thread).await;
        state_of(graph, saver, cfg, live, subgraphs).await
    }

    /// The thread's checkpoints (of the root, or of the namespace the config names) as
    /// snapshots, newest first. Collects [`CompiledGraph::get_state_history_stream`]; waits
    /// for a cancelled run's saves as [`CompiledGraph::get_state`] does.
    pub async fn get_state_history(
        &self,
        config: impl AsRunConfig,
        options: &ListOptions,
    ) -> Result<Vec<StateSnapshot>> {
        self.get_state_history_stream(config, options.clone())
            .try_collect()
            .await
    }

    /// [`CompiledGraph::get_state_history`] as a stream: each snapshot is built when the
    /// consumer pulls it, from the saver's [`CheckpointSaver::list_stream`], so walking a
    /// history of any length holds one page of checkpoints, not the history. A missing
    /// checkpointer or an unknown namespace is the stream's only item, an error. Before
    /// the first page it waits for a cancelled run's saves as [`CompiledGraph::get_state`]
    /// does.
    ///
    /// ```no_run
    /// # async fn demo(graph: stategraph::CompiledGraph<stategraph::DynState>) -> stategraph::Result<()> {
    /// use futures::TryStreamExt;
    /// let config = stategraph::RunConfig::thread("t");
    /// let mut history = graph.get_state_history_stream(&config, Default::default());
    /// while let Some(snapshot) = history.try_next().await? {
    ///     println!("{:?}", snapshot.config);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn get_state_history_stream(
        &self,
        config: impl AsRunConfig,
        options: ListOptions,
    ) -> BoxStream<'_, Result<StateSnapshot>> {
        let config = &self.resolve(config);
        let setup = self
            .saver()
            .and_then(|saver| Ok((saver, graph_for_ns(&self.graph, &config.checkpoint_ns)?)));
        let (saver, graph) = match setup {
            Ok(found) => found,
            Err(e) => return stream::once(async move { Err(e) }).boxed(),
        };
        let cfg = config.checkpoint_config(&config.checkpoint_ns);
        let thread = config.thread_id.clone();
        let settled = async move {
            if let Some(thread) = thread {
                crate::pregel::in_flight::settled(saver, &thread).await;
            }
        };
        stream::once(settled)
            .flat_map(move |()| saver.list_stream(Some(cfg.clone()), options.clone()))
            .map_err(Error::from)
            .and_then(move |t| {
                let graph = graph.clone();
                async move { snapshot(&graph, saver, t, false, false).await }
            })
            .boxed()
    }
}

/// The graph that owns a namespace: the root for `""`, else the subgraph reached by the
/// node names of its levels (task ids and numeric levels dropped).
fn graph_for_ns(root: &Arc<PregelGraph>, ns: &str) -> Result<Arc<PregelGraph>> {
    let mut graph = root.clone();
    if ns.is_empty() {
        return Ok(graph);
    }
    for level in ns.split('|') {
        if level.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let name = level.split(':').next().unwrap_or(level);
        let sub = graph
            .nodes
            .get(name)
            .and_then(|n| n.subgraph.clone())
            .ok_or_else(|| Error::InvalidGraph(format!("no subgraph for namespace {ns:?}")))?;
        graph = sub;
    }
    Ok(graph)
}

/// The thread id of a config that addresses a thread's state; a config without one is
/// [`Error::InvalidConfig`].
pub(super) fn thread_of(config: &RunConfig) -> Result<&str> {
    config.thread_id.as_deref().ok_or_else(|| {
        Error::InvalidConfig(
            "reading or changing a thread's state needs a thread_id in the config".into(),
        )
    })
}
