//! Tasks and their identity: the task a step prepares, task paths and their string form,
//! task ids and interrupt ids (docs/format.md#task-ids-and-task-paths,
//! docs/runtime.md#interrupts).

use std::fmt::Write as _;

use stategraph_checkpoint::Value;
use xxhash_rust::xxh3::xxh3_128;

/// `__pregel_pull`: the first element of a pull task's path.
pub const PULL: &str = "__pregel_pull";
/// `__pregel_push`: the first element of a push task's path, and its trigger.
pub const PUSH: &str = "__pregel_push";

/// The channel of pending `Send` packets (the push tasks of the next step).
pub const TASKS: &str = "__pregel_tasks";

/// A task prepared for a super-step.
#[derive(Clone, Debug)]
pub struct Task {
    /// The task id.
    pub id: String,
    /// The node it runs.
    pub name: String,
    /// Its path.
    pub path: TaskPath,
    /// Its triggers, sorted (`[__pregel_push]` for push tasks).
    pub triggers: Vec<String>,
    /// Its input: the map of readable channels, one channel's value, or a Send's arg.
    pub input: Value,
    /// Its checkpoint namespace, `node_ns:task_id`.
    pub ns: String,
    /// The writes it made (or that were restored for it).
    pub writes: Vec<(String, Value)>,
}

/// One element of a task path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathPart {
    /// A string (`__pregel_pull`, a node name).
    Str(String),
    /// An integer (a Send index, an update counter).
    Int(i64),
    /// A boolean (rendered as 0 or 1, as Python's `%010d` does).
    Bool(bool),
    /// A nested path: the path of the task that called a functional-API task (rendered as
    /// its own `~...` string).
    Path(TaskPath),
}

/// A task's path: `(__pregel_pull, node)`, `(__pregel_push, index, false)`, ...
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TaskPath(pub Vec<PathPart>);

impl TaskPath {
    /// The path of a pull task of `node`.
    pub fn pull(node: &str) -> TaskPath {
        TaskPath(vec![PathPart::Str(PULL.into()), PathPart::Str(node.into())])
    }

    /// The path of the push task for the `index`-th Send.
    pub fn push(index: usize) -> TaskPath {
        TaskPath(vec![
            PathPart::Str(PUSH.into()),
            PathPart::Int(index as i64),
            PathPart::Bool(false),
        ])
    }

    /// `task_path_str`: `~` + the parts joined by `, `, integers as `%010d`.
    pub fn to_path_string(&self) -> String {
        let mut s = String::with_capacity(32);
        s.push('~');
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            match p {
                PathPart::Str(x) => s.push_str(x),
                PathPart::Int(n) => {
                    let _ = write!(s, "{n:010}");
                }
                PathPart::Bool(b) => {
                    let _ = write!(s, "{:010}", i64::from(*b));
                }
                PathPart::Path(p) => s.push_str(&p.to_path_string()),
            }
        }
        s
    }

    /// The path of the `index`-th task called by the task at `parent` (the functional
    /// API): `(__pregel_push, parent, index, true)`.
    pub fn call(parent: &TaskPath, index: usize) -> TaskPath {
        TaskPath(vec![
            PathPart::Str(PUSH.into()),
            PathPart::Path(parent.clone()),
            PathPart::Int(index as i64),
            PathPart::Bool(true),
        ])
    }

    /// True for a task called by another task (the functional API), whose interrupts
    /// reach the caller through the call rather than the stream.
    pub fn is_call(&self) -> bool {
        self.is_push() && matches!(self.0.last(), Some(PathPart::Bool(true)))
    }

    /// True for push tasks.
    pub fn is_push(&self) -> bool {
        matches!(self.0.first(), Some(PathPart::Str(s)) if s == PUSH)
    }
}

/// The 16 bytes of a checkpoint id (its hex digits without dashes); zeros if malformed.
pub fn checkpoint_id_bytes(checkpoint_id: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    let mut digits = checkpoint_id
        .bytes()
        .filter(|b| *b != b'-')
        .filter_map(|b| (b as char).to_digit(16).map(|d| d as u8));
    for byte in &mut out {
        match (digits.next(), digits.next()) {
            (Some(hi), Some(lo)) => *byte = (hi << 4) | lo,
            _ => break,
        }
    }
    out
}

/// A task id: XXH3-128 over the checkpoint id bytes and the parts, concatenated, formatted
/// like a UUID (docs/format.md#task-ids-and-task-paths).
pub fn task_id(checkpoint_id: &[u8; 16], parts: &[&str]) -> String {
    let len = 16 + parts.iter().map(|p| p.len()).sum::<usize>();
    let mut buf = Vec::with_capacity(len);
    buf.extend_from_slice(checkpoint_id);
    for p in parts {
        buf.extend_from_slice(p.as_bytes());
    }
    uuid_like(xxh3_128(&buf))
}

/// The id of the `n`-th interrupt of the task whose namespace is `task_ns`
/// (docs/runtime.md#interrupts).
pub fn interrupt_id(task_ns: &str, n: usize) -> String {
    let h = if n == 0 {
        xxh3_128(task_ns.as_bytes())
    } else {
        xxh3_128(format!("{task_ns}|{n}").as_bytes())
    };
    format!("{h:032x}")
}

/// `h` as 32 lowercase hex digits grouped 8-4-4-4-12, written in one buffer.
fn uuid_like(h: u128) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for i in 0..32 {
        if matches!(i, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        let nibble = (h >> (124 - 4 * i)) & 0xf;
        out.push(char::from(HEX[nibble as usize]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_match_the_spec_example() {
        let cp = checkpoint_id_bytes("1f1ec616-f5b8-61ad-bfff-a9ed7329d99e");
        let id = task_id(&cp, &["__start__", "0", "__start__", PULL, "__start__"]);
        assert_eq!(id, "01479985-a398-6dbd-57c2-33f27ec031df");
        let cp = checkpoint_id_bytes("1f1ec616-f5bb-6221-8000-a9c82c9fd2a4");
        let id = task_id(
            &cp,
            &[
                "get_address",
                "1",
                "get_address",
                PULL,
                "branch:to:get_address",
            ],
        );
        assert_eq!(id, "9dfa87c8-81e8-78d0-4c9b-1e6b41df5d1a");
    }

    #[test]
    fn interrupt_ids_match_the_spec_example() {
        assert_eq!(
            interrupt_id("ask:e369ddc7-8565-7085-ad99-75b0761282ef", 0),
            "275a4fd2ca6ac020503c9392863f200f"
        );
    }

    #[test]
    fn task_paths_render_as_python_does() {
        assert_eq!(TaskPath::pull("a").to_path_string(), "~__pregel_pull, a");
        assert_eq!(
            TaskPath::push(0).to_path_string(),
            "~__pregel_push, 0000000000, 0000000000"
        );
        assert_eq!(TaskPath::default().to_path_string(), "~");
        assert_eq!(
            TaskPath::call(&TaskPath::pull("wf"), 1).to_path_string(),
            "~__pregel_push, ~__pregel_pull, wf, 0000000001, 0000000001"
        );
    }
}
