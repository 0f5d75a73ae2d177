//! The run config: which thread, namespace and checkpoint an operation addresses.

use indexmap::IndexMap;

use crate::value::Value;

/// The parts of LangGraph's `RunnableConfig` that checkpointing reads and writes:
/// `configurable.thread_id`, `checkpoint_ns`, `checkpoint_id`, any further configurable
/// keys, and `config.metadata`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CheckpointConfig {
    /// The thread (always a string, as LangGraph stringifies it).
    pub thread_id: String,
    /// The namespace: `Some("")` is the root; `None` means "not given", which `list`
    /// reads as "every namespace" and `get_tuple` as the root.
    pub checkpoint_ns: Option<String>,
    /// A checkpoint id: the addressed checkpoint for reads, the parent for `put`.
    pub checkpoint_id: Option<String>,
    /// Further `configurable` keys (`run_id`, `checkpoint_map`, user keys), in order.
    pub configurable: IndexMap<String, Value>,
    /// `config["metadata"]`: keys that `put` copies into checkpoint metadata.
    pub metadata: IndexMap<String, Value>,
}

impl CheckpointConfig {
    /// A config for the root namespace of a thread, with no checkpoint id.
    pub fn thread(thread_id: impl Into<String>) -> CheckpointConfig {
        CheckpointConfig {
            thread_id: thread_id.into(),
            checkpoint_ns: Some(String::new()),
            ..Default::default()
        }
    }

    /// Sets the namespace (builder style).
    pub fn with_ns(mut self, ns: impl Into<String>) -> Self {
        self.checkpoint_ns = Some(ns.into());
        self
    }

    /// Sets the checkpoint id (builder style).
    pub fn with_checkpoint_id(mut self, id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(id.into());
        self
    }

    /// Adds a configurable key (builder style).
    pub fn with_configurable(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.configurable.insert(key.into(), value.into());
        self
    }

    /// The namespace, `""` when not given.
    pub fn ns(&self) -> &str {
        self.checkpoint_ns.as_deref().unwrap_or("")
    }

    /// The config that addresses one stored checkpoint: thread, namespace and id only.
    pub fn for_checkpoint(
        thread_id: impl Into<String>,
        ns: impl Into<String>,
        checkpoint_id: impl Into<String>,
    ) -> CheckpointConfig {
        CheckpointConfig {
            thread_id: thread_id.into(),
            checkpoint_ns: Some(ns.into()),
            checkpoint_id: Some(checkpoint_id.into()),
            ..Default::default()
        }
    }
}
