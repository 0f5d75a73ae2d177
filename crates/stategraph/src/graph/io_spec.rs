//! What a [`StateGraph`](super::StateGraph) records of its input/output schemas and of its
//! types' JSON Schemas (see [`super::io_schema`] and [`super::json_schema`]), and what
//! the compiled graph keeps of them.

use serde_json::Value as Json;

use crate::state::State;

/// The JSON Schemas of a compiled graph; `None` where the type has none (a
/// [`crate::DynState`], a state without `JsonSchema`, a graph without a context schema).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonSchemas {
    /// The state's.
    pub state: Option<Json>,
    /// The input's: the input schema's, else the state's.
    pub input: Option<Json>,
    /// The output's: the output schema's, else the state's.
    pub output: Option<Json>,
    /// The context's ([`StateGraph::context_schema`](super::StateGraph::context_schema)).
    pub context: Option<Json>,
}

/// One side (input or output) of a graph's schemas: its channel names and JSON Schema.
#[derive(Clone, Debug, Default)]
pub(crate) struct IoSide {
    pub(crate) keys: Vec<String>,
    pub(crate) json: Option<Json>,
}

/// What a [`StateGraph`](super::StateGraph) knows of its input/output schemas and context.
#[derive(Clone, Debug, Default)]
pub(crate) struct IoSpec {
    pub(crate) input: Option<IoSide>,
    pub(crate) output: Option<IoSide>,
    /// The channels the input/output schemas add (the state lacks them), in order.
    pub(crate) extra: Vec<String>,
    /// The context type's JSON Schema.
    pub(crate) context_json: Option<Json>,
}

impl IoSpec {
    /// The channels START writes: the input schema's, else the state's.
    pub(crate) fn input_keys(
        &self,
        state: &std::sync::Arc<Vec<String>>,
    ) -> std::sync::Arc<Vec<String>> {
        match &self.input {
            Some(side) => std::sync::Arc::new(side.keys.clone()),
            None => state.clone(),
        }
    }

    /// The channels a run returns: the output schema's, else the state's.
    pub(crate) fn output_keys(&self, state: &[String]) -> Vec<String> {
        match &self.output {
            Some(side) => side.keys.clone(),
            None => state.to_vec(),
        }
    }

    /// The channels a root run streams and a snapshot shows: the state's, then those
    /// the schemas add.
    pub(crate) fn stream_keys(&self, state: &[String]) -> Vec<String> {
        let mut keys = state.to_vec();
        keys.extend(self.extra.iter().filter(|k| !state.contains(k)).cloned());
        keys
    }

    /// The JSON Schemas of a graph over `S` with these schemas.
    pub(crate) fn json_schemas<S: State>(&self) -> JsonSchemas {
        let state = S::state_json_schema();
        let side = |s: &Option<IoSide>| match s {
            Some(side) => side.json.clone(),
            None => state.clone(),
        };
        JsonSchemas {
            input: side(&self.input),
            output: side(&self.output),
            context: self.context_json.clone(),
            state,
        }
    }
}
