//! Tasks calling tasks (the functional API's `call`, LangGraph's `CONFIG_KEY_CALL`): what a
//! running task hands its run loop to start another task in the same step, and how the
//! answer comes back.
//!
//! A call is a push task with path `(__pregel_push, caller's path, n, true)`, `n` counting
//! the caller's calls (across its attempts, as Python's `call_counter`), and an id hashed
//! from the caller's namespace and that path, so a rerun of the caller finds the same
//! task and its stored result. The loop (`run_loop/calls.rs`) prepares the task, answers
//! at once from a stored or cached result, or runs it beside the step's other tasks and
//! answers once its writes are recorded (so the caller never sees a result that was not
//! saved first).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use stategraph_checkpoint::Value;
use tokio::sync::{mpsc, oneshot};

use super::cache::CachePolicy;
use super::context::NodeContext;
use super::node_error::NodeError;
use super::retry::RetryPolicy;
use super::task::TaskPath;

/// A called task's body: its argument in, its return value out.
pub type CallFn =
    Arc<dyn Fn(Value, NodeContext) -> BoxFuture<'static, Result<Value, NodeError>> + Send + Sync>;

/// One call of a task: what to run, with what, and how.
#[derive(Clone)]
pub struct Call {
    /// The task's name (its node name in ids, paths and streams).
    pub name: String,
    /// Its body.
    pub func: CallFn,
    /// Its argument.
    pub input: Value,
    /// Its retry policy.
    pub retry: Option<RetryPolicy>,
    /// Its cache policy (used when the graph has a cache).
    pub cache: Option<CachePolicy>,
    /// Its per-attempt timeout.
    pub timeout: Option<Duration>,
}

/// A call on its way to the run loop.
pub(crate) struct CallRequest {
    /// The calling task's namespace (`node:task_id`), the called task's parent namespace.
    pub caller_ns: String,
    /// The called task's path.
    pub path: TaskPath,
    /// What to run.
    pub call: Call,
    /// Where the result goes.
    pub reply: oneshot::Sender<CallReply>,
}

/// The answer to a call: the called task's id and its result.
pub(crate) struct CallReply {
    /// The id of the task the call became.
    pub task_id: String,
    /// Its return value, or how it failed (an interrupt among them).
    pub result: Result<Value, NodeError>,
}

/// What a task needs to call tasks: the loop's inbox and its own call counter.
pub(crate) struct CallScope {
    /// The run loop's inbox for the step.
    pub inbox: mpsc::UnboundedSender<CallRequest>,
    /// The calling task's path.
    pub path: TaskPath,
    /// Calls made so far (shared by the task's attempts).
    pub counter: AtomicUsize,
}

impl CallScope {
    /// A scope for the task at `path`, sending to `inbox`.
    pub(crate) fn new(inbox: mpsc::UnboundedSender<CallRequest>, path: TaskPath) -> Arc<Self> {
        Arc::new(CallScope {
            inbox,
            path,
            counter: AtomicUsize::new(0),
        })
    }

    /// Sends `call` to the loop; the receiver gets its result.
    pub(crate) fn send(&self, caller_ns: &str, call: Call) -> oneshot::Receiver<CallReply> {
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let (reply, rx) = oneshot::channel();
        let request = CallRequest {
            caller_ns: caller_ns.to_owned(),
            path: TaskPath::call(&self.path, n),
            call,
            reply,
        };
        // A closed inbox (the step is over) drops the request, and the receiver reports it.
        let _ = self.inbox.send(request);
        rx
    }
}
