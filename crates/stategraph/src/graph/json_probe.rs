//! The JSON Schema of a type, as `#[derive(State)]` and the graph's builder ask for it, in
//! pydantic's spelling (see [`super::json_schema`]). Not a public API.

use std::marker::PhantomData;

use serde_json::Value as Json;

#[cfg(feature = "schemars")]
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

/// A field of a derived state: its Rust name and its channel (`None`: skipped).
pub type FieldChannel = (&'static str, Option<&'static str>);

/// Stands for the type `T` whose schema is asked for: what `#[derive(State)]` calls for
/// [`State::state_json_schema`](crate::State::state_json_schema), the schema of a type that
/// implements `JsonSchema` ([`ViaJsonSchema`]), `None` for one that does not
/// ([`ViaNothing`]); found by autoref, so the derive needs no attribute.
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
        rename_fields(root, fields);
        title_properties(root);
    }
    schema
}

#[cfg(feature = "schemars")]
/// Renames the properties (and `required` entries) of a derived state's fields to their
/// channels; drops skipped fields.
fn rename_fields(root: &mut serde_json::Map<String, Json>, fields: &[FieldChannel]) {
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
            match k.as_str().map(&rename) {
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

#[cfg(feature = "schemars")]
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

/// The properties of `a` and `b` whose JSON types cannot hold the same value (their
/// `type`s, `null` aside, have none in common; `integer` is a `number`): `(key, a's
/// types, b's types)`. A property without a plain `type` (a `$ref`, an `anyOf`) is not
/// compared.
pub(crate) fn type_conflicts(a: &Json, b: &Json) -> Vec<(String, String, String)> {
    let types = |p: &Json| -> Option<Vec<String>> {
        let list: Vec<String> = match p.get("type")? {
            Json::String(t) => vec![t.clone()],
            Json::Array(ts) => ts
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
            _ => return None,
        };
        let list: Vec<String> = list.into_iter().filter(|t| t != "null").collect();
        (!list.is_empty()).then_some(list)
    };
    let meets = |x: &[String], y: &[String]| {
        x.iter().any(|t| {
            y.iter().any(|u| {
                t == u || (t == "integer" && u == "number") || (t == "number" && u == "integer")
            })
        })
    };
    let (Some(pa), Some(pb)) = (
        a.get("properties").and_then(Json::as_object),
        b.get("properties").and_then(Json::as_object),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, sa) in pa {
        let Some(sb) = pb.get(key) else { continue };
        if let (Some(ta), Some(tb)) = (types(sa), types(sb)) {
            if !meets(&ta, &tb) {
                out.push((key.clone(), ta.join(" or "), tb.join(" or ")));
            }
        }
    }
    out
}

#[cfg(all(test, feature = "schemars"))]
mod tests {
    use super::field_title;

    #[test]
    fn types_that_share_no_value_conflict() {
        let a = serde_json::json!({"properties": {
            "n": {"type": "integer"}, "s": {"type": ["string", "null"]},
            "f": {"type": "number"}, "r": {"$ref": "#/x"}
        }});
        let b = serde_json::json!({"properties": {
            "n": {"type": "string"}, "s": {"type": "string"},
            "f": {"type": "integer"}, "r": {"type": "string"}
        }});
        assert_eq!(
            super::type_conflicts(&a, &b),
            [("n".to_owned(), "integer".to_owned(), "string".to_owned())]
        );
    }

    #[test]
    fn fields_are_titled_as_pydantic_titles_them() {
        assert_eq!(field_title("a"), "A");
        assert_eq!(field_title("max_tokens"), "Max Tokens");
        assert_eq!(field_title("x2y"), "X2Y");
        assert_eq!(field_title("_private"), "Private");
        assert_eq!(field_title("camelCase"), "Camelcase");
    }
}
