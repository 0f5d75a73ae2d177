//! The value of a run's typed context ([`RunContext`]) and the merging of run tags: what
//! [`crate::config`] holds, apart from the runtime that reads them
//! ([`crate::pregel::runtime_context`]).

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

/// The typed context of a run (Python's `context=` of `invoke`, read as
/// `runtime.context`): a value of any `Send + Sync + 'static` type, shared by reference.
#[derive(Clone)]
pub struct RunContext {
    value: Arc<dyn Any + Send + Sync>,
    type_name: &'static str,
}

impl RunContext {
    /// A context holding `value`.
    pub fn new<C: Send + Sync + 'static>(value: C) -> RunContext {
        RunContext::from_arc(Arc::new(value))
    }

    /// A context holding the shared `value` (no copy).
    pub fn from_arc<C: Send + Sync + 'static>(value: Arc<C>) -> RunContext {
        RunContext {
            value,
            type_name: std::any::type_name::<C>(),
        }
    }

    /// The value, when it is a `C`.
    pub fn get<C: Send + Sync + 'static>(&self) -> Option<&C> {
        self.value.downcast_ref::<C>()
    }

    /// The full name of the value's type (`std::any::type_name`).
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    pub(crate) fn type_id(&self) -> TypeId {
        (*self.value).type_id()
    }
}

impl fmt::Debug for RunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RunContext<{}>", self.type_name)
    }
}

/// `tags` of a config over `defaults`' (what `with_config` merges): both, deduplicated
/// and sorted when both have some, as LangChain's `merge_configs`; else the one given.
pub(crate) fn merge_tags(defaults: &[String], tags: Vec<String>) -> Vec<String> {
    if defaults.is_empty() {
        return tags;
    }
    if tags.is_empty() {
        return defaults.to_vec();
    }
    let all: std::collections::BTreeSet<String> = defaults.iter().cloned().chain(tags).collect();
    all.into_iter().collect()
}

/// Run tags as Python's stream handlers show them (`seq:step:*` dropped), `None` when
/// none are left.
pub(crate) fn user_tags(tags: &[String]) -> Option<Vec<&str>> {
    let tags: Vec<&str> = tags
        .iter()
        .map(String::as_str)
        .filter(|t| !t.starts_with("seq:step"))
        .collect();
    (!tags.is_empty()).then_some(tags)
}

/// Adds run tags to stream metadata, last, as Python's `StreamMessagesHandler` does for a
/// chat model's chunks (and `map_debug_tasks` for a task's start).
pub(crate) fn add_tags(meta: &mut stategraph_checkpoint::Map, tags: &[String]) {
    if let Some(tags) = user_tags(tags) {
        let list = tags.into_iter().map(stategraph_checkpoint::Value::from);
        meta.insert("tags", stategraph_checkpoint::Value::List(list.collect()));
    }
}
