//! A tool's argument schema derived from its Rust argument type (`schemars`), in the shape
//! a model's function-calling `parameters` take.
//!
//! Why `schemars`: it is the crate the ecosystem derives JSON schemas with (rmcp, rig,
//! async-openai and the OpenAPI generators use it); it reads serde's attributes (`rename`,
//! `default`, `flatten`, tagged enums), so the schema says what `serde` will accept, and it
//! turns doc comments into `description`s, as pydantic turns `Field(description=...)`.
//! It costs six small crates (two proc macros) beside serde's: a default feature, which
//! `default-features = false` leaves out for a runtime that only runs graphs.
//!
//! What the model receives, compared with LangChain's `@tool(args_schema=Model)` (measured
//! with the pinned pydantic 2): LangChain sends `convert_to_openai_tool(tool)["parameters"]`:
//! an object schema without `$schema`, with nested models inlined and no property
//! `title`s. We derive the same: schemars' draft 2020-12 generator, no meta-schema, every
//! non-recursive subschema inlined (a recursive type keeps its `$defs`/`$ref`, which OpenAI
//! accepts too), and the root titled by the tool's name and described by its description,
//! as [`Tool::schema`](super::Tool::schema) is for tools built with `.arg`.
//! tests/tool_schema.rs compares it, field by field, with LangChain's for a pydantic twin. What
//! differs is spelling, not meaning: an `Option<T>` field is `"type": ["T", "null"]`
//! (pydantic: `anyOf` of the two; for a nested struct the object schema and `null` in
//! one), a nested struct's doc comment describes the field that holds it, and unsigned
//! integers carry `minimum: 0`. schemars' OpenAPI `format`s on numbers (`int32`,
//! `uint64`, `double`, ...) are dropped: they are not JSON Schema's format vocabulary and
//! pydantic writes none.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value as Json;

/// The JSON schema of `A` as a tool's `parameters`: an object schema titled `name`,
/// described by `description`, subschemas inlined, no `$schema`.
pub(super) fn schema_for<A: JsonSchema>(name: &str, description: &str) -> Json {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    drop_number_formats(&mut schema);
    if let Json::Object(root) = &mut schema {
        root.insert("title".to_owned(), Json::from(name));
        if !description.is_empty() {
            root.insert("description".to_owned(), Json::from(description));
        }
    }
    schema
}

/// Removes the OpenAPI number formats schemars writes on integer and number schemas.
pub(crate) fn drop_number_formats(schema: &mut Json) {
    match schema {
        Json::Object(map) => {
            let numeric = match map.get("type") {
                Some(Json::String(t)) => t == "integer" || t == "number",
                Some(Json::Array(ts)) => ts.iter().any(|t| t == "integer" || t == "number"),
                _ => false,
            };
            if numeric {
                map.remove("format");
            }
            for (key, sub) in map.iter_mut() {
                // `properties`, `$defs` and the like map names to schemas; `enum`,
                // `const` and `default` hold values, not schemas.
                if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    drop_number_formats(sub);
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(drop_number_formats),
        _ => {}
    }
}
