//! Tool argument schemas derived from Rust types (`Tool::typed`, feature `schemars`): the
//! schema a model receives, compared with what LangChain sends for the same arguments
//! written as a pydantic model (`tests/tool_schema/pydantic_schema.py`, run with the pinned
//! Python when there is one; required with `STATEGRAPH_INTEROP=1`).
#![cfg(feature = "schemars")]
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value as J};
use stategraph::prebuilt::{Tool, ToolNode};
use stategraph::{Message, ToolCall};

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    /// Street and number.
    street: String,
    city: String,
}

/// Temperature unit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    C,
    F,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Weather {
    /// The city to look up.
    city: String,
    /// How many days ahead.
    #[serde(default = "one")]
    days: u32,
    /// Temperature unit.
    #[serde(default)]
    unit: Option<Unit>,
    #[serde(default)]
    home: Option<Address>,
    #[serde(default)]
    tags: Vec<String>,
}

fn one() -> u32 {
    1
}

fn weather_tool() -> Tool {
    Tool::typed(
        "get_weather",
        "The weather in a city.",
        |w: Weather| async move {
            let unit = match w.unit {
                Some(Unit::F) => "F",
                Some(Unit::C) | None => "C",
            };
            Ok(format!("{} days of sun in {}, 21°{unit}", w.days, w.city))
        },
    )
}

#[test]
fn the_schema_is_an_object_schema_with_descriptions_and_nothing_to_resolve() {
    let schema = weather_tool().schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["title"], "get_weather");
    assert_eq!(schema["description"], "The weather in a city.");
    assert!(schema.get("$schema").is_none(), "{schema}");
    assert!(
        schema.get("$defs").is_none(),
        "nested types are inlined: {schema}"
    );
    assert!(!schema.to_string().contains("$ref"), "{schema}");
    assert!(!schema.to_string().contains("\"format\""), "{schema}");
    assert_eq!(schema["required"], json!(["city"]));
    let props = &schema["properties"];
    assert_eq!(
        props["city"],
        json!({"type": "string", "description": "The city to look up."})
    );
    assert_eq!(props["days"]["type"], "integer");
    assert_eq!(props["days"]["default"], 1);
    assert_eq!(props["days"]["description"], "How many days ahead.");
    assert_eq!(props["tags"]["items"], json!({"type": "string"}));
    // An optional nested struct: its object schema inlined, `null` allowed.
    let home = &props["home"];
    assert_eq!(home["type"], json!(["object", "null"]));
    assert_eq!(home["description"], "A postal address.");
    assert_eq!(
        home["properties"]["street"]["description"],
        "Street and number."
    );
    assert_eq!(home["required"], json!(["street", "city"]));
}

/// Same property names, required list, descriptions, defaults and enum values as
/// LangChain's `parameters` for the pydantic twin.
#[test]
fn the_schema_says_what_langchain_says_for_the_pydantic_twin() {
    let Some(python) = python() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tool_schema/pydantic_schema.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let function: J = serde_json::from_slice(&out.stdout).unwrap();
    let theirs = &function["parameters"];
    let ours = weather_tool().schema();
    assert_eq!(function["name"], ours["title"]);
    assert_eq!(function["description"], ours["description"]);
    assert_eq!(theirs["type"], "object");
    assert_eq!(theirs["required"], ours["required"]);
    let keys = |s: &J| {
        s["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(theirs), keys(&ours));
    for name in keys(theirs) {
        let (t, o) = (&theirs["properties"][&name], &ours["properties"][&name]);
        if let Some(d) = t.get("description") {
            assert_eq!(Some(d), o.get("description"), "{name}: {t} vs {o}");
        }
        if let Some(d) = t.get("default").filter(|d| !d.is_null()) {
            assert_eq!(Some(d), o.get("default"), "{name}: {t} vs {o}");
        }
        assert_eq!(types(t), types(o), "{name}: {t} vs {o}");
    }
    assert_eq!(
        enum_values(&theirs["properties"]["unit"]),
        enum_values(&ours["properties"]["unit"])
    );
    // The nested model: the same fields, required the same.
    let address = &theirs["properties"]["home"]["anyOf"][0];
    assert_eq!(keys(address), keys(&ours["properties"]["home"]));
    assert_eq!(address["required"], ours["properties"]["home"]["required"]);
}

/// The JSON types a property allows, sorted (`["string", "null"]` and an `anyOf` of the
/// two read the same).
fn types(s: &J) -> Vec<String> {
    let mut out = Vec::new();
    match &s["type"] {
        J::String(t) => out.push(t.clone()),
        J::Array(ts) => out.extend(ts.iter().filter_map(|t| t.as_str().map(str::to_owned))),
        _ => {}
    }
    for branch in s["anyOf"]
        .as_array()
        .into_iter()
        .chain(s["oneOf"].as_array())
        .flatten()
    {
        out.extend(types(branch));
    }
    if out.is_empty() && s.get("enum").is_some() {
        out.push("string".to_owned());
    }
    out.sort();
    out.dedup();
    out
}

fn enum_values(s: &J) -> Vec<J> {
    let mut out: Vec<J> = s["enum"].as_array().cloned().unwrap_or_default();
    for branch in s["anyOf"]
        .as_array()
        .into_iter()
        .chain(s["oneOf"].as_array())
        .flatten()
    {
        out.extend(enum_values(branch));
    }
    out.retain(|v| !v.is_null());
    out
}

#[tokio::test]
async fn typed_arguments_run_and_bad_ones_come_back_to_the_model() {
    let tool = weather_tool();
    let ok = tool
        .invoke(stategraph::map! {"city" => "Oslo", "unit" => "f"})
        .await
        .unwrap();
    assert_eq!(ok.as_str(), Some("1 days of sun in Oslo, 21°F"));
    let node = ToolNode::new(vec![tool]);
    let call = ToolCall::new("get_weather", stategraph::map! {"days" => 2}, "c1");
    let out = node
        .invoke(&[Message::ai("").with_tool_calls(vec![call])])
        .await
        .unwrap();
    assert_eq!(out[0].status, "error");
    assert!(
        out[0].text().contains("missing field `city`"),
        "{}",
        out[0].text()
    );
}

fn python() -> Option<PathBuf> {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v != "1"),
        "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
    );
    println!("note: skipping: no pinned Python (STATEGRAPH_PYTHON)");
    None
}
