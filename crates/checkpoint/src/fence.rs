//! The one-writer-per-thread rule, as pure decisions that every fenced saver applies
//! inside the transaction (or under the lock) of the operation it guards.
//!
//! Two processes may run one thread at once (a retried job, two workers picking up the
//! same resume). Each loads the head checkpoint `H`, runs a step, stores its tasks'
//! writes against `H` and puts a child of `H`. Without a fence both succeed: the thread
//! forks and one run's work is lost. A fenced saver refuses the second writer with
//! [`Error::Conflict`] instead, storing nothing of the refused call.
//!
//! # The rule
//!
//! **Checkpoints.** A `put` of checkpoint `C` whose parent is `P` (`config.checkpoint_id`,
//! or none) into `(thread, namespace)` is admitted when
//!
//! * `P` is the head (the greatest checkpoint id) of `(thread, namespace)`; with no parent,
//!   when the namespace has no checkpoint yet; or
//! * `C` is already stored there with the same parent (a retry: it replaces the stored
//!   row and moves nothing on); or
//! * the config [`starts_branch`] (a replay from an older checkpoint, `update_state` of a
//!   checkpoint that is not the head: deliberate forks the engine marks).
//!
//! **Task writes.** A `put_writes` against checkpoint `C` is refused when
//!
//! * (a) another checkpoint of `(thread, namespace)` already has `C` as its parent
//!   (another run moved past `C`) and the config does not [`starts_branch`]; or
//! * (b) a write at a normal index (`>= 0`) finds `(C, task_id, index)` already stored
//!   with a different channel or value: another run stored this task's result first.
//!   An identical repeat is silently idempotent, and a reserved (negative) index keeps
//!   "last wins".
//!
//! "Different value" compares the stored `(type, bytes)` first and, when the bytes
//! differ, the decoded values, so a serializer whose bytes vary from call to call (an
//! encrypting one) still treats a repeat of the same value as identical.
//!
//! Children have greater ids than their parents (ids are uuid6 from the time of
//! creation), so (a) only looks at checkpoints with ids greater than `C`.
//!
//! # What `Conflict` promises
//!
//! The refused call stored nothing. What the loser stored before its first refused call
//! is identical to the winner's (idempotent writes of the same task), on checkpoints
//! nobody descends from, or in the thread's history: a winner that loaded the thread after
//! the loser had stored checkpoints starts from the loser's newest one (the fence cannot
//! tell a run in flight elsewhere from one that crashed there, and a crashed run's
//! checkpoint must stay resumable). Which one it is does not change after the refusal: a
//! checkpoint is admitted only as a child of the head or as a branch, so a head that
//! descends from none of the loser's checkpoints has no later descendant that does. The
//! engine reads it from the history and reports it (`stategraph::InputFate`).

use crate::error::Error;
use crate::saver::starts_branch;
use crate::serde::{Serializer, Typed};
use crate::CheckpointConfig;

/// What a saver knows about the namespace when it decides on a `put`.
#[derive(Clone, Copy, Debug)]
pub struct PutState<'a> {
    /// The greatest checkpoint id of `(thread, namespace)`, `None` when it has none.
    pub head: Option<&'a str>,
    /// The stored parent of the checkpoint being put when that id is already stored
    /// (`Some(None)`: stored without a parent), `None` when it is not stored.
    pub existing_parent: Option<Option<&'a str>>,
}

/// Decides a fenced `put` of checkpoint `checkpoint_id` with `config`: `Ok` to store it,
/// else the [`Error::Conflict`] to return (storing nothing).
pub fn check_put(
    config: &CheckpointConfig,
    checkpoint_id: &str,
    state: PutState<'_>,
) -> Result<(), Error> {
    let parent = config.checkpoint_id.as_deref();
    if starts_branch(config)
        || state.head == parent
        || state.existing_parent.is_some_and(|stored| stored == parent)
    {
        return Ok(());
    }
    let parent_text = parent.map_or_else(|| "no parent".to_owned(), |p| format!("parent {p}"));
    let head = state.head.map_or_else(
        || "the namespace has no checkpoint".to_owned(),
        |h| format!("its latest checkpoint is {h}"),
    );
    Err(Error::Conflict(format!(
        "thread {:?}, namespace {:?}: the put of checkpoint {checkpoint_id} with {parent_text} \
         was refused because {head}; another writer moved the thread on",
        config.thread_id,
        config.ns()
    )))
}

/// Rule (a) of the write fence: `Ok` unless `has_child` (a stored checkpoint of the
/// namespace has the write's checkpoint as its parent) and the config does not
/// [`starts_branch`].
pub fn check_writes_target(config: &CheckpointConfig, has_child: bool) -> Result<(), Error> {
    if !has_child || starts_branch(config) {
        return Ok(());
    }
    Err(Error::Conflict(format!(
        "thread {:?}, namespace {:?}: writes against checkpoint {} were refused because \
         another writer already saved a checkpoint after it",
        config.thread_id,
        config.ns(),
        config.checkpoint_id.as_deref().unwrap_or("")
    )))
}

/// One stored write at the `(checkpoint, task_id, index)` of a new one.
#[derive(Clone, Copy, Debug)]
pub struct StoredWrite<'a> {
    /// Its channel.
    pub channel: &'a str,
    /// Its type tag.
    pub tag: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// Rule (b) of the write fence, for one new write at a normal index whose key is already
/// stored: `Ok` when the stored write is the same (channel, and value by bytes or, failing
/// that, by decoded value), else the [`Error::Conflict`].
pub fn check_repeated_write(
    config: &CheckpointConfig,
    task_id: &str,
    idx: i64,
    new: (&str, &Typed),
    stored: StoredWrite<'_>,
    serde: &dyn Serializer,
) -> Result<(), Error> {
    let (channel, value) = (new.0, new.1);
    let same_value = || {
        (value.tag == stored.tag && value.bytes == stored.bytes)
            || matches!(
                (
                    serde.loads_typed(&value.tag, &value.bytes),
                    serde.loads_typed(stored.tag, stored.bytes),
                ),
                (Ok(a), Ok(b)) if a == b
            )
    };
    if idx < 0 || (channel == stored.channel && same_value()) {
        return Ok(());
    }
    Err(Error::Conflict(format!(
        "thread {:?}, namespace {:?}: the write {idx} of task {task_id} against checkpoint {} \
         was refused because another writer stored a different result for it",
        config.thread_id,
        config.ns(),
        config.checkpoint_id.as_deref().unwrap_or("")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serde::JsonPlusSerializer;
    use crate::value::Value;
    use crate::CONFIG_KEY_BRANCH;

    fn config(parent: Option<&str>) -> CheckpointConfig {
        let mut c = CheckpointConfig::thread("t");
        c.checkpoint_id = parent.map(str::to_owned);
        c
    }

    fn state<'a>(head: Option<&'a str>, existing: Option<Option<&'a str>>) -> PutState<'a> {
        PutState {
            head,
            existing_parent: existing,
        }
    }

    #[test]
    fn put_on_the_head_or_into_an_empty_namespace_is_admitted() {
        assert!(check_put(&config(Some("2")), "3", state(Some("2"), None)).is_ok());
        assert!(check_put(&config(None), "1", state(None, None)).is_ok());
    }

    #[test]
    fn put_behind_the_head_is_a_conflict_unless_a_retry_or_a_branch() {
        let stale = config(Some("1"));
        let err = check_put(&stale, "3", state(Some("2"), None)).unwrap_err();
        assert!(matches!(err, Error::Conflict(ref m) if m.contains("latest checkpoint is 2")));
        assert!(check_put(&config(None), "3", state(Some("2"), None)).is_err());
        assert!(check_put(&config(Some("9")), "1", state(None, None)).is_err());
        // The same checkpoint with the same parent again: a retry.
        assert!(check_put(&stale, "2", state(Some("2"), Some(Some("1")))).is_ok());
        // The same id with another parent is not a retry.
        assert!(check_put(&stale, "2", state(Some("2"), Some(None))).is_err());
        let branch = stale.with_configurable(CONFIG_KEY_BRANCH, true);
        assert!(check_put(&branch, "3", state(Some("2"), None)).is_ok());
    }

    #[test]
    fn writes_against_a_checkpoint_with_a_child_are_refused_unless_a_branch() {
        let c = config(Some("1"));
        assert!(check_writes_target(&c, false).is_ok());
        assert!(matches!(
            check_writes_target(&c, true),
            Err(Error::Conflict(_))
        ));
        let branch = c.with_configurable(CONFIG_KEY_BRANCH, true);
        assert!(check_writes_target(&branch, true).is_ok());
    }

    #[test]
    fn a_repeated_write_conflicts_only_when_it_differs_at_a_normal_index() {
        let serde = JsonPlusSerializer;
        let c = config(Some("1"));
        let one = serde.dumps_typed(&Value::Int(1)).unwrap();
        let two = serde.dumps_typed(&Value::Int(2)).unwrap();
        let stored = StoredWrite {
            channel: "a",
            tag: &one.tag,
            bytes: &one.bytes,
        };
        assert!(check_repeated_write(&c, "t", 0, ("a", &one), stored, &serde).is_ok());
        assert!(check_repeated_write(&c, "t", 0, ("a", &two), stored, &serde).is_err());
        assert!(check_repeated_write(&c, "t", 0, ("b", &one), stored, &serde).is_err());
        assert!(check_repeated_write(&c, "t", -1, ("a", &two), stored, &serde).is_ok());
        // The same value in other bytes (int8 instead of a positive fixint).
        let other_bytes = Typed::new("msgpack", vec![0xd0, 0x01]); // int8 1
        assert_ne!(other_bytes.bytes, one.bytes);
        assert!(check_repeated_write(&c, "t", 0, ("a", &other_bytes), stored, &serde).is_ok());
    }
}
