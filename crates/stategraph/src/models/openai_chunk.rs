//! One streamed `chat.completion.chunk` of the OpenAI wire: what it says (its view), read
//! either straight into borrowed types (the fast path) or from its JSON tree (the
//! reference, for chunks of an unusual shape). Below `openai_stream.rs`, which reads the stream.
//!
//! A `chat.completion.chunk` read straight into types: the fields the stream uses, their
//! text borrowed from the event where it has no escapes. Any field of another type than
//! these fails the read (the caller then reads the JSON tree, whose reading is the
//! reference), so both reads agree.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value as Json;

use super::wire::{int, str_at};

/// What one streamed chunk says, read from either its typed form or its JSON tree.
pub(super) struct ChunkView<'a> {
    pub(super) usage: Option<&'a Json>,
    pub(super) choice: Option<ChoiceView<'a>>,
    pub(super) model: Option<&'a str>,
    pub(super) system_fingerprint: Option<&'a str>,
    pub(super) service_tier: Option<&'a str>,
}

/// The first choice of a chunk: its text, tool-call fragments (id, name, arguments,
/// index) and finish reason.
pub(super) struct ChoiceView<'a> {
    pub(super) text: &'a str,
    pub(super) calls: Vec<(Option<&'a str>, Option<&'a str>, &'a str, i64)>,
    pub(super) finish_reason: Option<&'a str>,
}

impl<'a> ChunkView<'a> {
    /// Reads a chunk's JSON tree: strings that are not strings are absent, as are
    /// objects that are not objects.
    pub(super) fn of_json(chunk: &'a Json) -> ChunkView<'a> {
        let choice = chunk.get("choices").and_then(|c| c.get(0)).map(|choice| {
            let delta = choice.get("delta").unwrap_or(&Json::Null);
            let calls = delta
                .get("tool_calls")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(n, call)| {
                    let f = call.get("function").unwrap_or(&Json::Null);
                    (
                        str_at(call, "id"),
                        str_at(f, "name"),
                        str_at(f, "arguments").unwrap_or(""),
                        int(call, "index").unwrap_or(n as i64),
                    )
                })
                .collect();
            ChoiceView {
                text: str_at(delta, "content").unwrap_or(""),
                calls,
                finish_reason: str_at(choice, "finish_reason"),
            }
        });
        ChunkView {
            usage: chunk.get("usage").filter(|u| !u.is_null()),
            choice,
            model: str_at(chunk, "model"),
            system_fingerprint: str_at(chunk, "system_fingerprint"),
            service_tier: str_at(chunk, "service_tier"),
        }
    }
}

/// A JSON string, borrowed where it can be.
pub(super) struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// The text of an optional string.
fn text<'s>(t: &'s Option<Text<'_>>) -> Option<&'s str> {
    t.as_ref().map(|t| t.0.as_ref())
}

/// A chunk (or an `error` in its place).
#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<Json>,
    #[serde(default)]
    pub(super) error: Option<Json>,
    #[serde(borrow, default)]
    model: Option<Text<'a>>,
    #[serde(borrow, default)]
    system_fingerprint: Option<Text<'a>>,
    #[serde(borrow, default)]
    service_tier: Option<Text<'a>>,
}

/// One choice of a chunk.
#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Text<'a>>,
}

/// What a choice adds.
#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Text<'a>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<CallDelta<'a>>>,
}

/// A fragment of a tool call.
#[derive(Deserialize)]
struct CallDelta<'a> {
    #[serde(default)]
    index: Option<i64>,
    #[serde(borrow, default)]
    id: Option<Text<'a>>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

/// The function part of a fragment.
#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Option<Text<'a>>,
    #[serde(borrow, default)]
    arguments: Option<Text<'a>>,
}

impl Chunk<'_> {
    /// What the chunk says.
    pub(super) fn view(&self) -> ChunkView<'_> {
        let choice = self.choices.as_ref().and_then(|c| c.first()).map(|c| {
            let delta = c.delta.as_ref();
            let calls = delta
                .and_then(|d| d.tool_calls.as_ref())
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(n, call)| {
                    let f = call.function.as_ref();
                    (
                        text(&call.id),
                        f.and_then(|f| text(&f.name)),
                        f.and_then(|f| text(&f.arguments)).unwrap_or(""),
                        call.index.unwrap_or(n as i64),
                    )
                })
                .collect();
            ChoiceView {
                text: delta.and_then(|d| text(&d.content)).unwrap_or(""),
                calls,
                finish_reason: text(&c.finish_reason),
            }
        });
        ChunkView {
            usage: self.usage.as_ref().filter(|u| !u.is_null()),
            choice,
            model: text(&self.model),
            system_fingerprint: text(&self.system_fingerprint),
            service_tier: text(&self.service_tier),
        }
    }
}
