//! The JSON Schemas of a graph's state, input, output and context (Python's
//! `get_input_jsonschema()`, `get_output_jsonschema()`, `get_context_jsonschema()`; what the
//! Agent Server's `/assistants/{id}/schemas` serves).
//!
//! A `#[derive(State)]` type that also derives `schemars::JsonSchema` (feature `schemars`,
//! on by default) has a schema: [`State::state_json_schema`] gives it, keyed by channel names
//! (a `#[state(rename)]` field under its channel's name, a `#[state(skip)]` field left
//! out). A context type gives its schema to [`StateGraph::context_schema`]. The compiled
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

use super::builder::StateGraph;
use super::compiled::CompiledGraph;
use super::io_schema::IoGraph;
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
    /// The context's ([`StateGraph::context_schema`]).
    pub context: Option<Json>,
}

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
    /// ([`StateGraph::context_schema`]); `None` without one, as Python.
    pub fn context_json_schema(&self) -> Option<Json> {
        self.schemas.context.clone()
    }
}

#[cfg(feature = "schemars")]
impl<S: State> StateGraph<S> {
    /// Declares the type of the run's context (Python's `context_schema=`), for its JSON
    /// Schema ([`CompiledGraph::context_json_schema`]).
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
    pub fn context_schema<C: schemars::JsonSchema>(mut self) -> Self {
        self.io.context_json = Some(probe::schema_of::<C>(&[]));
        self
    }
}

#[cfg(feature = "schemars")]
impl<S: State, I: State, O: State> IoGraph<S, I, O> {
    /// [`StateGraph::context_schema`] on a graph with input/output schemas.
    pub fn context_schema<C: schemars::JsonSchema>(mut self) -> Self {
        self.graph.io.context_json = Some(probe::schema_of::<C>(&[]));
        self
    }
}

/// `max_tokens` -> `Max Tokens`: pydantic's default title of a field (Python's
/// `str.title()`, then `_` as a space).
pub(crate) fn field_title(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut after_letter = false;
    for c in name.chars() {
        if c.is_alphabetic() {
            if after_letter {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            after_letter = true;
        } else {
            out.push(if c == '_' { ' ' } else { c });
            after_letter = false;
        }
    }
    out.trim().to_owned()
}

/// What `#[derive(State)]` calls for [`State::state_json_schema`]: the schema of a type that
/// implements `JsonSchema`, `None` for one that does not (found by autoref, so the
/// derive needs no attribute).
#[doc(hidden)]
pub mod probe {
    use std::marker::PhantomData;

    use serde_json::Value as Json;

    /// A field of a derived state: its Rust name and its channel (`None`: skipped).
    pub type FieldChannel = (&'static str, Option<&'static str>);

    /// Stands for the type `T` whose schema is asked for.
    pub struct SchemaProbe<T>(PhantomData<fn() -> T>);

    impl<T> SchemaProbe<T> {
        /// The probe of `T`.
        pub fn new() -> Self {
            SchemaProbe(PhantomData)
        }
    }

    impl<T> Default for SchemaProbe<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    /// The schema of a type that implements `JsonSchema`.
    pub trait ViaJsonSchema {
        /// The schema, properties keyed by `fields`' channels.
        fn probe(&self, fields: &[FieldChannel]) -> Option<Json>;
    }

    #[cfg(feature = "schemars")]
    impl<T: schemars::JsonSchema> ViaJsonSchema for SchemaProbe<T> {
        fn probe(&self, fields: &[FieldChannel]) -> Option<Json> {
            Some(schema_of::<T>(fields))
        }
    }

    /// The fallback: no schema.
    pub trait ViaNothing {
        /// `None`.
        fn probe(&self, fields: &[FieldChannel]) -> Option<Json>;
    }

    impl<T> ViaNothing for &SchemaProbe<T> {
        fn probe(&self, _fields: &[FieldChannel]) -> Option<Json> {
            None
        }
    }

    /// `T`'s schema in pydantic's spelling (see the module docs), its properties renamed
    /// to their channels and skipped fields left out.
    #[cfg(feature = "schemars")]
    pub fn schema_of<T: schemars::JsonSchema>(fields: &[FieldChannel]) -> Json {
        let generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|s| {
                s.meta_schema = None;
                s.inline_subschemas = true;
            })
            .into_generator();
        let mut schema = generator.into_root_schema_for::<T>().to_value();
        crate::prebuilt::tool_schema::drop_number_formats(&mut schema);
        if let Json::Object(root) = &mut schema {
            super::rename_fields(root, fields);
            super::title_properties(root);
        }
        schema
    }
}

/// Renames the properties (and `required` entries) of a derived state's fields to their
/// channels; drops skipped fields.
fn rename_fields(root: &mut serde_json::Map<String, Json>, fields: &[probe::FieldChannel]) {
    let rename = |name: &str| -> Option<Option<&'static str>> {
        fields.iter().find(|(f, _)| *f == name).map(|(_, c)| *c)
    };
    if let Some(Json::Object(props)) = root.get_mut("properties") {
        let old = std::mem::take(props);
        for (k, v) in old {
            match rename(&k) {
                Some(None) => {}
                Some(Some(ch)) => {
                    props.insert(ch.to_owned(), v);
                }
                None => {
                    props.insert(k, v);
                }
            }
        }
    }
    if let Some(Json::Array(req)) = root.get_mut("required") {
        let old = std::mem::take(req);
        for k in old {
            match k.as_str().map(|s| rename(s)) {
                Some(Some(None)) => {}
                Some(Some(Some(ch))) => req.push(Json::from(ch)),
                _ => req.push(k),
            }
        }
        if req.is_empty() {
            root.remove("required");
        }
    }
}

/// Titles each property as pydantic does (`"title": "Max Tokens"`).
fn title_properties(root: &mut serde_json::Map<String, Json>) {
    if let Some(Json::Object(props)) = root.get_mut("properties") {
        for (k, v) in props.iter_mut() {
            if let Json::Object(p) = v {
                p.entry("title")
                    .or_insert_with(|| Json::from(field_title(k)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::field_title;

    #[test]
    fn fields_are_titled_as_pydantic_titles_them() {
        assert_eq!(field_title("a"), "A");
        assert_eq!(field_title("max_tokens"), "Max Tokens");
        assert_eq!(field_title("x2y"), "X2Y");
        assert_eq!(field_title("_private"), "Private");
        assert_eq!(field_title("camelCase"), "Camelcase");
    }
}
