//! Comparing a run's MemorySaver storage with a Python fixture of `tests/tool_node_v2/`,
//! byte for byte once the random uuid4 ids of messages are replaced by `<uuid4>` on both
//! sides.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value as J;
use stategraph::checkpoint::serde::msgpack;
use stategraph::checkpoint::{Ext, Map, MemorySaver, Value};

use crate::support::golden::{actual, expected, same};

/// A fixture of `tests/tool_node_v2/`.
pub(crate) fn fixture(name: &str) -> J {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tool_node_v2")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// The placeholder for an id `add_messages` minted (or, in a stored write, would have).
const MINTED: &str = "<uuid4>";

fn is_uuid4(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok_and(|u| u.get_version_num() == 4)
}

/// `v` with every message's minted id replaced by [`MINTED`].
fn scrub(v: &Value) -> Value {
    match v {
        Value::List(items) => Value::list(items.iter().map(scrub).collect::<Vec<_>>()),
        Value::Map(m) => Value::Map(Map::from_pairs(
            m.iter().map(|(k, x)| (k.clone(), scrub(x))).collect(),
        )),
        Value::Ext(e) => match &**e {
            Ext::Object(o) => {
                let mut o = o.clone();
                o.data = scrub(&o.data);
                if o.module.starts_with("langchain_core.messages") {
                    if let Value::Map(m) = &mut o.data {
                        let minted = match m.get("id") {
                            Some(Value::Nil) => true,
                            Some(Value::Str(s)) => is_uuid4(s),
                            _ => false,
                        };
                        if minted {
                            m.insert("id", MINTED);
                        }
                    }
                }
                Value::Ext(Arc::new(Ext::Object(o)))
            }
            Ext::DeltaSnapshot(x) => Value::Ext(Arc::new(Ext::DeltaSnapshot(scrub(x)))),
            Ext::NumpyArray(_) => v.clone(),
        },
        other => other.clone(),
    }
}

/// A rendered entry with the msgpack values it holds scrubbed. The bytes are decoded and
/// encoded again; that the encoding gives back the very bytes is checked first, so a
/// difference that is not an id still shows.
fn scrub_entry(entry: &str) -> String {
    let mut out = String::new();
    let mut rest = entry;
    while let Some(at) = rest.find("(msgpack, ") {
        let start = at + "(msgpack, ".len();
        let end = start + rest[start..].find(')').expect("a closing parenthesis");
        let bytes = hex::decode(&rest[start..end]).expect("hex");
        let value = msgpack::decode(&bytes).expect("msgpack");
        assert_eq!(
            msgpack::encode(&value).unwrap(),
            bytes,
            "re-encoding keeps the bytes of {entry}"
        );
        let scrubbed = msgpack::encode(&scrub(&value)).unwrap();
        out.push_str(&rest[..start]);
        out.push_str(&hex::encode(scrubbed));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn scrub_all(map: BTreeMap<String, String>) -> BTreeMap<String, String> {
    map.into_iter().map(|(k, v)| (k, scrub_entry(&v))).collect()
}

/// Asserts `saver` holds the fixture's storage, writes and blobs (ids minted by
/// `add_messages` aside).
pub(crate) fn assert_stored_as_python(trace: &J, saver: &MemorySaver) {
    let (es, ew, eb) = expected(&trace["inmemory"]);
    let (gs, gw, gb) = actual(saver);
    let mut diffs = same("storage", &scrub_all(es.clone()), &scrub_all(gs));
    diffs.extend(same("writes", &scrub_all(ew), &scrub_all(gw)));
    diffs.extend(same("blobs", &scrub_all(eb), &scrub_all(gb)));
    assert!(
        diffs.is_empty(),
        "{} differences from Python:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    assert!(!es.is_empty(), "the fixture stores something");
}
