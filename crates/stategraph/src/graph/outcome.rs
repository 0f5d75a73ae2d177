//! [`Outcome`]: what `invoke` returns, a finished run or a paused one.

use std::ops::Deref;

use stategraph_checkpoint::Value;

use crate::error::{Error, Result};
use crate::types::Interrupt;

/// The end of a run: the state, and what stopped it when it did not finish.
///
/// A run ends either finished (nothing left to run) or paused: on interrupts raised by
/// nodes ([`NodeContext::interrupt`](crate::NodeContext::interrupt), listed in
/// [`Outcome::interrupts`], as Python's `__interrupt__` key of the result), or before or
/// after a node named in `interrupt_before` / `interrupt_after` (no interrupt value; the
/// nodes still to run are in [`Outcome::next`]). [`Outcome::is_interrupted`] tells the two
/// apart; [`Outcome::done`] turns a pause into [`Error::Interrupted`].
///
/// It dereferences to the state, so `outcome.field` reads a field of the state.
///
/// ```
/// # async fn demo() -> stategraph::Result<()> {
/// use stategraph::{channels::LastValue, DynState, RunConfig, StateGraph, END, START};
/// let mut g = StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)]);
/// g.add_node("inc", |_s: DynState| async move { stategraph::update([("n", 1)]) });
/// g.add_edge(START, "inc").add_edge("inc", END);
/// let out = g.compile()?.invoke(stategraph::update([("n", 0)]), &RunConfig::default()).await?;
/// assert!(!out.is_interrupted());
/// let state: DynState = out.done()?;
/// # let _ = state;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a run may have paused on an interrupt: check `is_interrupted()` or call `done()`"]
pub struct Outcome<S> {
    /// The state at the end of the run.
    pub state: S,
    /// The interrupts raised by nodes that wait for an answer (empty when the run
    /// finished or stopped at `interrupt_before` / `interrupt_after`).
    pub interrupts: Vec<Interrupt>,
    /// The raw output channel values (what LangGraph's `invoke` returns as a dict,
    /// without `__interrupt__`).
    pub values: indexmap::IndexMap<String, Value>,
    /// The nodes that run when the thread is resumed (empty when the run finished), as
    /// `get_state().next` lists them.
    pub next: Vec<String>,
}

impl<S> Outcome<S> {
    /// True when the run paused (on an interrupt, or before or after a node it was told
    /// to stop at) instead of finishing.
    pub fn is_interrupted(&self) -> bool {
        !self.interrupts.is_empty() || !self.next.is_empty()
    }

    /// The state, whether the run finished or paused.
    pub fn into_state(self) -> S {
        self.state
    }

    /// The state of a finished run; [`Error::Interrupted`] (with the interrupts and the
    /// nodes still to run) when the run paused.
    pub fn done(self) -> Result<S> {
        if self.is_interrupted() {
            return Err(Error::Interrupted {
                interrupts: self.interrupts,
                next: self.next,
            });
        }
        Ok(self.state)
    }
}

impl<S> Deref for Outcome<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.state
    }
}
