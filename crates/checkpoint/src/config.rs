//! The run config: which thread, namespace and checkpoint an operation addresses.

use indexmap::IndexMap;

use crate::error::{Error, Result};
use crate::value::Value;

/// The longest thread id, namespace, checkpoint id or task id, in UTF-8 bytes, that a
/// saver accepts.
///
/// Every saver refuses longer ones with [`Error::InvalidConfig`] (see [`validate_key`]),
/// so that a thread that works on one saver works on all of them. The bound comes from
/// Postgres: a btree index entry holds at most about 2 700 bytes (a third of a page), and
/// the primary keys of LangGraph's tables put the thread id, the namespace, the checkpoint
/// id and a task id in one entry; four keys of 1 KiB could not all be that long, but a
/// thread id and a namespace of 1 KiB each with two uuids still fit. A nested namespace
/// grows by about 40 bytes per level, so 1 KiB leaves room for some twenty levels.
pub const MAX_KEY_BYTES: usize = 1024;

/// Checks one key that a saver stores or looks up (`what` names it in the error: `"thread
/// id"`, `"checkpoint namespace"`, ...): at most [`MAX_KEY_BYTES`] bytes of UTF-8 and no NUL
/// character (Postgres text cannot hold one). Otherwise [`Error::InvalidConfig`].
///
/// The same on every stategraph saver: each calls it (through [`validate_config`]) at its
/// entry points, before touching storage.
pub fn validate_key(what: &str, value: &str) -> Result<()> {
    if value.len() > MAX_KEY_BYTES {
        return Err(Error::InvalidConfig(format!(
            "{what} is {} bytes long; the limit is {MAX_KEY_BYTES} bytes",
            value.len()
        )));
    }
    if let Some(at) = value.find('\0') {
        return Err(Error::InvalidConfig(format!(
            "{what} has a NUL character at byte {at}, which savers cannot store"
        )));
    }
    Ok(())
}

/// Checks the thread id, namespace and checkpoint id of `config` with [`validate_key`].
pub fn validate_config(config: &CheckpointConfig) -> Result<()> {
    validate_key("thread id", &config.thread_id)?;
    if let Some(ns) = &config.checkpoint_ns {
        validate_key("checkpoint namespace", ns)?;
    }
    if let Some(id) = &config.checkpoint_id {
        validate_key("checkpoint id", id)?;
    }
    Ok(())
}

/// Checks every thread id of a maintenance call (`delete_thread`, `copy_thread`,
/// `prune`) with [`validate_key`].
pub fn validate_thread_ids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Result<()> {
    ids.into_iter()
        .try_for_each(|id| validate_key("thread id", id))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_over_the_limit_or_with_a_nul_are_refused() {
        let at_limit = "a".repeat(MAX_KEY_BYTES);
        assert!(validate_key("thread id", &at_limit).is_ok());
        assert!(validate_key("thread id", "").is_ok());
        let over = format!("{at_limit}b");
        let err = validate_key("thread id", &over).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig(m) if m.contains("1025 bytes")),
            "{err}"
        );
        let err = validate_key("checkpoint namespace", "a\0b").unwrap_err();
        assert!(
            matches!(&err, Error::InvalidConfig(m) if m.contains("NUL character at byte 1")),
            "{err}"
        );
        // The limit is in bytes: 513 two-byte characters are over it.
        assert!(validate_key("thread id", &"é".repeat(513)).is_err());
        let config = CheckpointConfig::thread("t").with_checkpoint_id("c\0");
        assert!(validate_config(&config).is_err());
        assert!(validate_thread_ids(["ok", "no\0"]).is_err());
    }
}
