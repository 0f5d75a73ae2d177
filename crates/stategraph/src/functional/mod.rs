//! LangGraph's functional API: an [`Entrypoint`] is an async function run as a graph
//! (Python's `@entrypoint`), which calls [`Task`]s (Python's `@task`); each call is a
//! task of the step, its result checkpointed as Python checkpoints it, so a thread
//! written by Python is continued here and the other way round.
//!
//! ```
//! # async fn demo() -> stategraph::Result<()> {
//! use std::sync::Arc;
//! use stategraph::functional::{task, Entrypoint};
//! use stategraph::{checkpoint::MemorySaver, NodeContext, RunConfig};
//!
//! let add_one = task("add_one", |x: i64| async move { Ok(x + 1) });
//! let app = Entrypoint::new("add_all", move |nums: Vec<i64>, ctx: NodeContext| {
//!     let add_one = add_one.clone();
//!     async move {
//!         let calls: Vec<_> = nums.into_iter().map(|n| ctx.call(&add_one, n)).collect();
//!         futures::future::try_join_all(calls).await // the calls run concurrently
//!     }
//! })
//! .checkpointer(Arc::new(MemorySaver::new()))
//! .compile()?;
//! let out = app.invoke(vec![1, 2, 3], &RunConfig::thread("t")).await?;
//! assert_eq!(out.done()?, vec![2, 3, 4]);
//! # Ok(()) }
//! ```
//!
//! **Why functions and builders, not attribute macros.** Python's decorators read a
//! function's name and signature at run time; in Rust an attribute macro would have to
//! generate a type per function and hide the context argument, and closures (which
//! capture the tasks they call, as above) could not carry one. `task(name, f)` and
//! `Entrypoint::new(name, f)` are plain values: the name is explicit (it is part of every
//! task id, so it is what makes a thread portable between languages), the argument and
//! return types are the closure's, and the context is the [`NodeContext`](crate::NodeContext) every node
//! gets, with [`call`](crate::NodeContext::call) and [`previous`](crate::NodeContext::previous) added.
//!
//! What is stored, as in Python: the entrypoint is a graph of one node reading
//! `__start__` and writing its return value to `__end__` and its saved value
//! ([`Final::save`], else the return value) to `__previous__`. A call is a push task
//! whose id hashes the caller's namespace, the step, the task's name, the caller's path
//! and the call's index; its result is its `__return__` write (its failure `__error__`,
//! its interrupt `__interrupt__`) on the checkpoint the step started from. A call whose
//! result is stored (or cached) is answered from it and not run again.
//!
//! Differences from Python: a task takes one argument (a tuple or a struct for several;
//! the `tasks` stream shows it as Python's `((arg,), {})`); `call` is only taken in an
//! entrypoint's run and its tasks (not in a `StateGraph` node); calls are polled together
//! on the run's task rather than each on a thread; `get_state().values` holds the return
//! value under `__end__` (Python shows the value itself; streams show it as Python does).

mod call;
mod channels;
mod compiled;
mod convert;
mod entrypoint;
mod task;

pub use call::CallFuture;
pub use channels::{END, PREVIOUS, START};
pub use compiled::{CompiledEntrypoint, EntrypointInput, EntrypointOutcome};
pub use entrypoint::{Entrypoint, EntrypointFn, EntrypointReturn, Final};
pub use task::{task, Task, TaskFn};
