//! Pieces both wire formats share: JSON to stored values, tool-call arguments read as
//! LangChain reads them, streamed tool calls assembled, LangChain's `ls_*` metadata.

use crate::messages::{Message, ToolCall};
use crate::{Map, Value};

use super::options::Options;
use super::partial_json::parse_partial;

/// A JSON tree as a stored value (maps keep their order).
pub(crate) fn value(json: &serde_json::Value) -> Value {
    serde_json::from_value(json.clone()).unwrap_or(Value::Nil)
}

/// Reads the arguments of a tool call as LangChain's `parse_tool_call` does: empty text
/// is `{}`, else JSON (any JSON value); `Err` is the error text of the invalid call.
pub(crate) fn parse_args(name: &str, raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Map(Map::new()));
    }
    serde_json::from_str::<serde_json::Value>(raw)
        .map(|v| value(&v))
        .map_err(|e| {
            format!(
                "Function {name} arguments:\n\n{raw}\n\nare not valid JSON. Received JSONDecodeError {e}\n\
                 For troubleshooting, visit: https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
            )
        })
}

/// A stored `invalid_tool_call`, in the key order LangChain's `make_invalid_tool_call`
/// leaves.
pub(crate) fn invalid_tool_call(id: Option<&str>, name: &str, args: &str, error: &str) -> Value {
    let mut m = Map::new();
    m.insert("type", "invalid_tool_call");
    m.insert("id", id.map_or(Value::Nil, Value::from));
    m.insert("name", name);
    m.insert("args", args);
    m.insert("error", error);
    Value::Map(m)
}

/// Sorts calls into valid `tool_calls` and `invalid_tool_calls`.
pub(crate) fn split_calls(
    calls: Vec<(Option<String>, String, String)>,
) -> (Vec<ToolCall>, Vec<Value>) {
    let mut valid = Vec::new();
    let mut invalid = Vec::new();
    for (id, name, raw) in calls {
        match parse_args(&name, &raw) {
            Ok(args) => valid.push(ToolCall { name, args, id }),
            Err(error) => invalid.push(invalid_tool_call(id.as_deref(), &name, &raw, &error)),
        }
    }
    (valid, invalid)
}

/// One tool call being streamed: its fragments joined by their `index`.
#[derive(Debug, Default, Clone)]
pub(crate) struct CallParts {
    pub(crate) index: i64,
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    pub(crate) args: String,
}

/// The tool calls of a streamed answer, in the order their first fragment came.
#[derive(Debug, Default)]
pub(crate) struct StreamedCalls(Vec<CallParts>);

impl StreamedCalls {
    /// Adds a fragment of call `index`.
    pub(crate) fn add(&mut self, index: i64, id: Option<&str>, name: Option<&str>, args: &str) {
        let pos = match self.0.iter().position(|c| c.index == index) {
            Some(p) => p,
            None => {
                self.0.push(CallParts {
                    index,
                    ..CallParts::default()
                });
                self.0.len() - 1
            }
        };
        let call = &mut self.0[pos];
        if let Some(id) = id.filter(|s| !s.is_empty()) {
            call.id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(name) = name {
            call.name.push_str(name);
        }
        call.args.push_str(args);
    }

    /// The calls, whole.
    pub(crate) fn finish(self) -> Vec<(Option<String>, String, String)> {
        self.0.into_iter().map(|c| (c.id, c.name, c.args)).collect()
    }
}

/// One `tool_call_chunk` of a streamed chunk, as LangChain stores it.
fn tool_call_chunk(id: Option<&str>, name: Option<&str>, args: &str, index: i64) -> Value {
    let mut m = Map::new();
    m.insert("name", name.map_or(Value::Nil, Value::from));
    m.insert("args", args);
    m.insert("id", id.map_or(Value::Nil, Value::from));
    m.insert("index", index);
    m.insert("type", "tool_call_chunk");
    Value::Map(m)
}

/// Puts the tool-call fragments of one streamed chunk on it, as LangChain's chunk holds
/// them (`AIMessageChunk.init_tool_calls`): `tool_call_chunks`, and each fragment also
/// read as a call if its arguments are empty (`{}`) or read as a JSON object cut short
/// (`parse_partial_json`; the name is `""` when the fragment has none), else as an
/// invalid call without an error.
pub(crate) fn set_call_chunks(
    out: &mut Message,
    parts: &[(Option<&str>, Option<&str>, &str, i64)],
) {
    let mut chunks = Vec::with_capacity(parts.len());
    for &(id, name, args, index) in parts {
        chunks.push(tool_call_chunk(id, name, args, index));
        let read = if args.is_empty() {
            Some(Value::Map(Map::new()))
        } else {
            match parse_partial(args) {
                Some(json @ serde_json::Value::Object(_)) => Some(value(&json)),
                _ => None,
            }
        };
        match read {
            Some(args) => out.tool_calls.push(ToolCall {
                name: name.unwrap_or("").to_owned(),
                args,
                id: id.map(str::to_owned),
            }),
            None => {
                let mut m = Map::new();
                m.insert("name", name.map_or(Value::Nil, Value::from));
                m.insert("args", args);
                m.insert("id", id.map_or(Value::Nil, Value::from));
                m.insert("error", Value::Nil);
                m.insert("type", "invalid_tool_call");
                out.invalid_tool_calls.push(Value::Map(m));
            }
        }
    }
    out.extra.insert("tool_call_chunks", Value::list(chunks));
}

/// LangChain's `ls_*` metadata of a model, sent with each streamed chunk.
pub(crate) fn ls_metadata(provider: &str, model: &str, options: &Options) -> Map {
    let mut m = Map::new();
    m.insert("ls_provider", provider);
    m.insert("ls_model_name", model);
    m.insert("ls_model_type", "chat");
    if let Some(t) = options.temperature {
        m.insert("ls_temperature", t);
    }
    if let Some(n) = options.max_tokens {
        m.insert("ls_max_tokens", n as i64);
    }
    if !options.stop.is_empty() {
        let stop: Vec<Value> = options.stop.iter().map(Value::from).collect();
        m.insert("ls_stop", Value::list(stop));
    }
    m
}

/// A `usage_metadata` map.
pub(crate) fn usage(
    input: i64,
    output: i64,
    total: i64,
    input_details: Map,
    output_details: Option<Map>,
) -> Value {
    let mut m = Map::new();
    m.insert("input_tokens", input);
    m.insert("output_tokens", output);
    m.insert("total_tokens", total);
    m.insert("input_token_details", input_details);
    if let Some(d) = output_details {
        m.insert("output_token_details", d);
    }
    Value::Map(m)
}

/// The integer at `key` of a JSON object.
pub(crate) fn int(json: &serde_json::Value, key: &str) -> Option<i64> {
    json.get(key).and_then(serde_json::Value::as_i64)
}

/// The string at `key` of a JSON object.
pub(crate) fn str_at<'a>(json: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    json.get(key).and_then(serde_json::Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_of_parallel_calls_join_by_index() {
        let mut calls = StreamedCalls::default();
        calls.add(0, Some("call_a"), Some("add"), "{\"a\":");
        calls.add(1, Some("call_b"), Some("mul"), "");
        calls.add(0, None, None, "1}");
        calls.add(1, None, None, "{bad");
        let (valid, invalid) = split_calls(calls.finish());
        assert_eq!(valid.len(), 1);
        assert_eq!(valid[0].name, "add");
        assert_eq!(valid[0].args.to_json(), serde_json::json!({"a": 1}));
        assert_eq!(invalid.len(), 1);
        let bad = invalid[0].to_json();
        assert_eq!(bad["id"], "call_b");
        assert_eq!(bad["args"], "{bad");
        assert!(bad["error"]
            .as_str()
            .unwrap_or("")
            .starts_with("Function mul arguments:"));
    }

    #[test]
    fn each_streamed_fragment_is_read_as_langchain_chunk_reads_it() {
        // What langchain-core 1.8.3's AIMessageChunk makes of each one-fragment chunk.
        let frags = [
            (Some("c1"), Some("shout"), "", 0),
            (None, None, "{\"", 0),
            (None, None, "word", 0),
            (None, None, "\": \"h", 0),
            (None, None, "i\"}", 0),
            (Some("c2"), Some("add"), "{\"a\": 1", 1),
        ];
        let want = [
            (Some(("shout", serde_json::json!({}))), None),
            (Some(("", serde_json::json!({}))), None),
            (None, Some("word")),
            (None, Some("\": \"h")),
            (None, Some("i\"}")),
            (Some(("add", serde_json::json!({"a": 1}))), None),
        ];
        for (frag, (call, invalid)) in frags.into_iter().zip(want) {
            let mut out = Message::ai("");
            set_call_chunks(&mut out, &[frag]);
            let got = out
                .tool_calls
                .first()
                .map(|c| (c.name.as_str(), c.args.to_json()));
            assert_eq!(got, call, "{frag:?}");
            assert_eq!(
                out.tool_calls.first().and_then(|c| c.id.as_deref()),
                call.and(frag.0)
            );
            let bad = out.invalid_tool_calls.first().map(Value::to_json);
            assert_eq!(
                bad.as_ref().map(|b| b["args"].clone()),
                invalid.map(serde_json::Value::from)
            );
            if let Some(bad) = bad {
                assert_eq!(bad["error"], serde_json::Value::Null);
                assert_eq!(bad["name"], serde_json::Value::Null);
            }
        }
    }

    #[test]
    fn empty_arguments_are_an_empty_map() {
        assert_eq!(
            parse_args("f", "").map(|v| v.to_json()),
            Ok(serde_json::json!({}))
        );
    }
}
