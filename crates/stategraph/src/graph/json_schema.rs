//! The JSON Schemas of a graph's state, input, output and context (Python's
//! `get_input_jsonschema()`, `get_output_jsonschema()`, `get_context_jsonschema()`; what the
//! Agent Server's `/assistants/{id}/schemas` serves).
//!
//! A `#[derive(State)]` type that also derives `JsonSchema` (schemars 1, re-exported as
//! `stategraph::schemars`; feature `schemars`, on by default) has a schema:
//! [`State::state_json_schema`] gives it, keyed by channel names
//! (a `#[state(rename)]` field under its channel's name, a `#[state(skip)]` field left
//! out). A context type gives its schema to
//! [`StateGraph::context_schema`]. The compiled
//! graph keeps them: [`CompiledGraph::state_json_schema`] and the others.
//!
//! They are written as pydantic writes a `TypedDict` or dataclass's (measured with the
//! pinned pydantic 2, tests/schemas.rs): no `$schema`, each property titled as pydantic
//! titles a field (`max_tokens` is `"Max Tokens"`), no OpenAPI number `format`s, nested
//! types inlined. What differs is spelling, not meaning (as for tool schemas, see
//! `prebuilt/tool_schema.rs`): an `Option<T>` field is `"type": ["T", "null"]` where
//! pydantic writes an `anyOf`, unsigned integers carry `minimum: 0`, a doc comment is a
//! `description`. A field is `required` unless it has a serde default (a `TypedDict`'s
//! keys are all required; a dataclass field with a default is not).

use serde_json::Value as Json;

// The builder and state types are named by the docs in every build, by code only with
// the `schemars` feature.
#[cfg_attr(not(feature = "schemars"), allow(unused_imports))]
use super::builder::StateGraph;
use super::compiled::CompiledGraph;
#[cfg(feature = "schemars")]
use super::io_schema::IoGraph;
#[cfg_attr(not(feature = "schemars"), allow(unused_imports))]
use crate::state::State;

pub use super::io_spec::JsonSchemas;

impl<S> CompiledGraph<S> {
    /// The JSON Schemas of the state, input, output and context.
    pub fn json_schemas(&self) -> &JsonSchemas {
        &self.schemas
    }

    /// The state's JSON Schema (see the [module docs](self)).
    pub fn state_json_schema(&self) -> Option<Json> {
        self.schemas.state.clone()
    }

    /// The input's JSON Schema, Python's `get_input_jsonschema()`: the input schema's
    /// ([`StateGraph::input_schema`]), else the state's.
    pub fn input_json_schema(&self) -> Option<Json> {
        self.schemas.input.clone()
    }

    /// The output's JSON Schema, Python's `get_output_jsonschema()`: the output schema's
    /// ([`StateGraph::output_schema`]), else the state's.
    pub fn output_json_schema(&self) -> Option<Json> {
        self.schemas.output.clone()
    }

    /// The context's JSON Schema, Python's `get_context_jsonschema()`
    /// ([`StateGraph::context_schema`]); `None` without
    /// one, as Python.
    pub fn context_json_schema(&self) -> Option<Json> {
        self.schemas.context.clone()
    }
}

#[cfg(feature = "schemars")]
impl<S: State> StateGraph<S> {
    /// Declares the type of the run's context (Python's `context_schema=`), for its JSON
    /// Schema ([`CompiledGraph::context_json_schema`]) and as
    /// [`StateGraph::context_type`] does: a run given a context of another type fails
    /// before it starts.
    ///
    /// ```
    /// # use stategraph::{schemars::JsonSchema, State, StateGraph};
    /// #[derive(State)]
    /// struct S { n: i64 }
    /// #[derive(JsonSchema)]
    /// struct Ctx { user: String }
    /// let g = StateGraph::<S>::new().context_schema::<Ctx>();
    /// # let _ = g;
    /// ```
    pub fn context_schema<C: schemars::JsonSchema + Send + Sync + 'static>(mut self) -> Self {
        self.io.context_json = Some(super::json_probe::schema_of::<C>(&[]));
        self.context_type::<C>();
        self
    }
}

#[cfg(feature = "schemars")]
impl<S: State, I: State, O: State> IoGraph<S, I, O> {
    /// [`StateGraph::context_schema`] on a graph with
    /// input/output schemas.
    pub fn context_schema<C: schemars::JsonSchema + Send + Sync + 'static>(mut self) -> Self {
        self.graph.io.context_json = Some(super::json_probe::schema_of::<C>(&[]));
        self.graph.context_type::<C>();
        self
    }
}
