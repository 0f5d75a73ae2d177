//! [`CompileOptions`]: what a graph is compiled with (checkpointer, store, cache,
//! interrupts, strictness). Below the builder, the compiler and the compiled graph, which
//! all carry them.

use std::sync::Arc;

use stategraph_checkpoint::CheckpointSaver;

/// Options of [`StateGraph::compile_with`](crate::StateGraph::compile_with).
#[derive(Clone, Default)]
pub struct CompileOptions {
    /// Where checkpoints go; without one a run keeps nothing.
    pub checkpointer: Option<Arc<dyn CheckpointSaver>>,
    /// Stop before these nodes run (`"*"`: every node).
    pub interrupt_before: Vec<String>,
    /// Stop after these nodes ran (`"*"`: every node).
    pub interrupt_after: Vec<String>,
    /// Where cached node writes are kept (an in-memory cache by default).
    pub cache: Option<Arc<dyn crate::pregel::cache::NodeCache>>,
    /// The long-term store every node of every thread reaches through
    /// [`NodeContext::store`](crate::NodeContext::store) (subgraphs inherit it unless given their own).
    pub store: Option<Arc<dyn stategraph_store::BaseStore>>,
    /// Treat a node that no edge leads to as an error instead of a warning. (Routes taken
    /// only through `Command::goto` or an unmapped conditional edge are invisible here.)
    pub strict: bool,
    /// Drop writes to unknown nodes or channels (a `Command::goto` or conditional edge
    /// naming a node the graph does not have, a `Send` to one, a `Command` update or
    /// `update_state` value for an unknown key) instead of failing with
    /// [`Error::UnknownNode`](crate::Error::UnknownNode) / [`Error::UnknownChannel`](crate::Error::UnknownChannel): what Python LangGraph does
    /// (it logs a warning, or drops an unknown `update_state` key silently). Off by default.
    pub lenient_writes: bool,
}

impl CompileOptions {
    /// Default options.
    pub fn new() -> CompileOptions {
        CompileOptions::default()
    }

    /// Sets the checkpointer (builder style).
    pub fn checkpointer(mut self, saver: Arc<dyn CheckpointSaver>) -> Self {
        self.checkpointer = Some(saver);
        self
    }

    /// Sets the long-term store (builder style).
    pub fn store(mut self, store: Arc<dyn stategraph_store::BaseStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Sets the nodes to interrupt before (builder style).
    pub fn interrupt_before<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        nodes: I,
    ) -> Self {
        self.interrupt_before = nodes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the nodes to interrupt after (builder style).
    pub fn interrupt_after<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.interrupt_after = nodes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the node cache (builder style).
    pub fn cache(mut self, cache: Arc<dyn crate::pregel::cache::NodeCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Drops writes to unknown nodes or channels as LangGraph does, instead of failing
    /// (builder style; see [`CompileOptions::lenient_writes`](#structfield.lenient_writes)).
    pub fn lenient_writes(mut self, lenient: bool) -> Self {
        self.lenient_writes = lenient;
        self
    }

    /// Makes unreachable nodes an error (builder style).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
}
