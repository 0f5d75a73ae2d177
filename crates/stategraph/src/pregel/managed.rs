//! LangGraph's managed values: `RemainingSteps` and `IsLastStep`, computed from the
//! task's step and the run's step budget, never channels, never stored.
//!
//! A run that starts at checkpoint step `s` may run up to step `stop = s + 1 +
//! recursion_limit` (its input step is `s + 1`); a task of step `step` then has
//! `stop - step` steps left, and is on the last one when `step == stop - 1` (Python's
//! `RemainingStepsManager` / `IsLastStepManager`, read from the task's scratchpad). A
//! subgraph counts its own steps from its own checkpoints, with the run's recursion limit.

use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use super::context::NodeContext;

/// A managed value a state field can hold (`#[state(managed = remaining_steps)]` or
/// `#[state(managed = is_last_step)]` in `#[derive(State)]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Managed {
    /// Python's `RemainingSteps`: the steps this run may still take, this one included
    /// (an integer).
    RemainingSteps,
    /// Python's `IsLastStep`: whether this step is the run's last before the recursion
    /// limit (a boolean).
    IsLastStep,
}

impl Managed {
    /// Its value for a task of `ctx`.
    pub fn value(self, ctx: &NodeContext) -> Value {
        match self {
            Managed::RemainingSteps => Value::Int(ctx.remaining_steps()),
            Managed::IsLastStep => Value::Bool(ctx.is_last_step()),
        }
    }
}

impl NodeContext {
    /// The steps this run may still take, this one included (Python's `RemainingSteps`
    /// managed value): `recursion_limit - 1` in the first step after a run's input, 1 in
    /// the last step it can run. A subgraph counts its own steps.
    pub fn remaining_steps(&self) -> i64 {
        self.inner.stop - self.inner.step
    }

    /// Whether this is the last step the run may take before it fails with
    /// [`crate::Error::RecursionLimit`] (Python's `IsLastStep` managed value).
    pub fn is_last_step(&self) -> bool {
        self.inner.step == self.inner.stop - 1
    }
}

/// Adds the managed values `managed` of the task of `ctx` to `values` (what a
/// conditional edge reading the state sees, in push tasks too, as in LangGraph).
pub(crate) fn fill(
    values: &mut IndexMap<String, Value>,
    managed: &[(String, Managed)],
    ctx: &NodeContext,
) {
    for (key, m) in managed {
        values.insert(key.clone(), m.value(ctx));
    }
}

/// Adds the managed values to a task's input map, for a pull task only: a push task's
/// input is its `Send`'s payload, which LangGraph gives as it is.
pub(crate) fn fill_input(input: Value, managed: &[(String, Managed)], ctx: &NodeContext) -> Value {
    if managed.is_empty() || ctx.inner.push {
        return input;
    }
    let Value::Map(map) = input else {
        return input;
    };
    let mut map = map;
    for (key, m) in managed {
        map.insert(key.as_str(), m.value(ctx));
    }
    Value::Map(map)
}
