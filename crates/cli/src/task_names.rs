//! The name of the task behind a stored write, for people (`history` lists a checkpoint's
//! writes by task).
//!
//! A write row holds the task's id (a hash, meaningless to read) and its task path
//! (LangGraph's `task_path_str`), which names the task:
//!
//! * `~__pregel_pull, NODE`: the pull task of node `NODE` (`__start__` is the task that
//!   applies a run's input);
//! * `~__pregel_push, 0000000003[, …]`: the push task of the checkpoint's fourth pending
//!   `Send` (channel `__pregel_tasks`), named by the Send's target node;
//! * the all-zero task id ([`NULL_TASK_ID`], empty path): what the client wrote with its
//!   input (`Command(resume=…)`, `Command(update=…)`), named `input`.
//!
//! Any other path (a functional-API call, a saver that stores no path) falls back to the
//! task id's first eight characters, `task c5e27a3e…`.

use stategraph_checkpoint::{Checkpoint, Value};

/// The task id of writes made by the client rather than a task (LangGraph's `NULL_TASK_ID`).
pub const NULL_TASK_ID: &str = "00000000-0000-0000-0000-000000000000";

/// The channel pending `Send`s are stored in.
const TASKS: &str = "__pregel_tasks";

/// The target nodes of the checkpoint's pending `Send`s, in order (`None` for an entry that
/// is not a `Send`): what a push task's index points into.
pub fn send_targets(cp: &Checkpoint) -> Vec<Option<String>> {
    cp.channel_values
        .get(TASKS)
        .and_then(Value::as_list)
        .map(|sends| {
            sends
                .iter()
                .map(|s| s.as_send().map(|(node, _)| node.to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// The name of the task `task_id` with path `task_path` (see the module); `sends` is
/// [`send_targets`] of the checkpoint the writes are stored against.
pub fn task_name(task_id: &str, task_path: &str, sends: &[Option<String>]) -> String {
    if task_id == NULL_TASK_ID {
        return "input".to_owned();
    }
    let parts: Vec<&str> = task_path
        .strip_prefix('~')
        .map(|p| p.split(", ").collect())
        .unwrap_or_default();
    match parts.as_slice() {
        ["__pregel_pull", node @ ..] if !node.is_empty() => return node.join(", "),
        ["__pregel_push", index] | ["__pregel_push", index, _] => {
            let target = index
                .parse::<usize>()
                .ok()
                .and_then(|i| sends.get(i).cloned().flatten());
            if let Some(node) = target {
                return node;
            }
        }
        _ => {}
    }
    format!("task {}…", task_id.chars().take(8).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_are_named_by_their_path() {
        let sends = [None, Some("worker".to_owned())];
        let id = "c5e27a3e-0000-0000-0000-000000000001";
        assert_eq!(
            task_name(id, "~__pregel_pull, get_address", &sends),
            "get_address"
        );
        assert_eq!(task_name(NULL_TASK_ID, "", &sends), "input");
        assert_eq!(
            task_name(id, "~__pregel_push, 0000000001, 0000000000", &sends),
            "worker"
        );
        assert_eq!(
            task_name(id, "~__pregel_push, 0000000000", &sends),
            "task c5e27a3e…"
        );
        assert_eq!(task_name(id, "", &sends), "task c5e27a3e…");
    }
}
