//! How one checkpoint is spread over its `checkpoints` row and `checkpoint_blobs` rows.
//!
//! As LangGraph's saver does (docs/format.md#postgres), a primitive channel value (nil, boolean,
//! integer, float, string) is kept inline in the checkpoint's JSONB `channel_values`,
//! repeated in every checkpoint that has it; any other value is serialized and stored once
//! per `(thread, namespace, channel, version)` in `checkpoint_blobs`, and only when its
//! channel is in `new_versions` (an unchanged value is already there). A DeltaChannel
//! snapshot goes to a blob and leaves a JSON `true` in its place. A channel without a value
//! gets no row at all.
//!
//! Three kinds of primitive go to a blob here although Python inlines them. Two because
//! JSONB cannot hold them and Python's put fails on them: NaN or an infinity, and a string
//! with a NUL character. The third to save space: a string longer than
//! [`INLINE_STRING_MAX`] bytes. Python would copy it into every checkpoint row of the
//! thread (a 1 MiB document that never changes costs 1 MiB per step); as a blob it is
//! stored once per version, like any other value. Python's reader merges the blobs of a
//! checkpoint's `channel_versions` over its inline values, so it reads such blobs back like
//! any other.
//!
//! A long string whose channel did not change in this put has its blob already, written by
//! the put that changed it, unless that put stored it inline: Python's saver, or an older
//! version of this one. Such a string is *carried*: the put copies it, in SQL, from the
//! parent checkpoint's inline value into a blob of the same version, when there is no blob
//! yet (see [`crate::write`]). A long string whose version this put does not store under
//! the version of `channel_versions` stays inline, as Python stores it, since a reader
//! could not find its blob.
//!
//! Reading joins the blobs on the checkpoint's own `channel_versions`: the values are the
//! inline ones, overridden by every joined blob that is not the `empty` sentinel.

use indexmap::IndexMap;
use stategraph_checkpoint::ext::Ext;
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::{Serializer, TAG_EMPTY};
use stategraph_checkpoint::{ChannelVersions, Checkpoint, Map, Result, Value};

use crate::json;

/// The longest string, in bytes of UTF-8, that a put keeps inline in the checkpoint row;
/// a longer one is stored once per version in `checkpoint_blobs`, as msgpack, where
/// Python's saver would repeat it in every checkpoint row. Other primitives (nil,
/// booleans, numbers) are always far shorter than this.
pub const INLINE_STRING_MAX: usize = 1024;

/// One `checkpoint_blobs` row of a put, without its thread and namespace.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BlobRow {
    pub(crate) channel: String,
    pub(crate) version: String,
    pub(crate) tag: String,
    pub(crate) bytes: Vec<u8>,
}

/// A long string of an unchanged channel, to be copied from the parent's inline value
/// into a blob if it has none: its channel and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CarriedRow {
    pub(crate) channel: String,
    pub(crate) version: String,
}

/// A checkpoint ready to store: the JSON text of its row, its new blob rows and the long
/// strings it carries over from its parent.
#[derive(Clone, Debug)]
pub(crate) struct Split {
    pub(crate) checkpoint: String,
    pub(crate) blobs: Vec<BlobRow>,
    pub(crate) carried: Vec<CarriedRow>,
}

/// Where a long string goes: its blob row (new), its carried row (unchanged), or inline
/// when its stored version would not be the one readers look for.
enum LongString {
    New,
    Carried(String),
    Inline,
}

/// Where the long string of `channel` goes in this put.
fn long_string(
    checkpoint: &Checkpoint,
    new_versions: &ChannelVersions,
    channel: &str,
) -> LongString {
    let Some(current) = checkpoint.channel_versions.get(channel) else {
        return LongString::Inline;
    };
    match new_versions.get(channel) {
        None => LongString::Carried(current.as_text()),
        Some(new) if new.as_text() == current.as_text() => LongString::New,
        Some(_) => LongString::Inline,
    }
}

/// True for a string too long to repeat in every checkpoint row.
fn is_long_string(value: &Value) -> bool {
    matches!(value, Value::Str(s) if s.len() > INLINE_STRING_MAX)
}

/// True for a DeltaChannel snapshot, which is stored as a blob behind an inline `true`.
fn is_delta_snapshot(value: &Value) -> bool {
    matches!(value, Value::Ext(e) if matches!(**e, Ext::DeltaSnapshot(_)))
}

/// Splits a checkpoint into its JSONB document and the blob rows of its new versions.
pub(crate) fn split(
    checkpoint: &Checkpoint,
    new_versions: &ChannelVersions,
    serde: &dyn Serializer,
) -> Result<Split> {
    let mut inline = Map::with_capacity(checkpoint.channel_values.len());
    let mut blob_values: IndexMap<&str, &Value> = IndexMap::new();
    let mut carried = Vec::new();
    for (channel, value) in &checkpoint.channel_values {
        if is_delta_snapshot(value) {
            blob_values.insert(channel, value);
            inline.insert(channel.as_str(), true);
        } else if !json::is_inline(value) {
            blob_values.insert(channel, value);
        } else if is_long_string(value) {
            match long_string(checkpoint, new_versions, channel) {
                LongString::New => {
                    blob_values.insert(channel, value);
                }
                LongString::Carried(version) => carried.push(CarriedRow {
                    channel: channel.clone(),
                    version,
                }),
                LongString::Inline => {
                    inline.insert(channel.as_str(), value.clone());
                }
            }
        } else {
            inline.insert(channel.as_str(), value.clone());
        }
    }
    let text = json::checkpoint_text(checkpoint, inline)?;
    let mut blobs = Vec::new();
    for (channel, version) in new_versions {
        if let Some(value) = blob_values.get(channel.as_str()) {
            let typed = serde.dumps_typed(value)?;
            blobs.push(BlobRow {
                channel: channel.clone(),
                version: version.as_text(),
                tag: typed.tag.into_owned(),
                bytes: typed.bytes,
            });
        }
    }
    Ok(Split {
        checkpoint: text,
        blobs,
        carried,
    })
}

/// One joined blob as read: channel, type tag and bytes (a NULL blob reads as empty).
pub(crate) type JoinedBlob = (String, String, Option<Vec<u8>>);

/// Decodes the blobs joined on a checkpoint's versions into its channel values, skipping
/// the `empty` sentinel.
pub(crate) fn decode_blobs(
    blobs: impl IntoIterator<Item = JoinedBlob>,
    serde: &dyn Serializer,
    memo: &DecodeMemo,
) -> Result<Vec<(String, Value)>> {
    blobs
        .into_iter()
        .filter(|(_, tag, _)| tag != TAG_EMPTY)
        .map(|(channel, tag, bytes)| {
            let bytes = bytes.as_deref().unwrap_or_default();
            Ok((channel, serde.loads_typed_with_memo(&tag, bytes, memo)?))
        })
        .collect()
}

/// Rebuilds a checkpoint from its JSONB document and its values read from blobs.
pub(crate) fn rebuild(
    doc: Value,
    values: impl IntoIterator<Item = (String, Value)>,
) -> Result<Checkpoint> {
    let mut checkpoint = Checkpoint::from_value(doc)?;
    for (channel, value) in values {
        checkpoint.channel_values.insert(channel, value);
    }
    Ok(checkpoint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stategraph_checkpoint::serde::JsonPlusSerializer;
    use stategraph_checkpoint::{list, map, ChannelVersion};

    fn checkpoint() -> Checkpoint {
        let mut cp = Checkpoint::empty("id-1", "ts");
        for (k, v) in [
            ("s", Value::from("x")),
            ("n", Value::Nil),
            ("f", Value::Float(2.5)),
            ("nan", Value::Float(f64::NAN)),
            ("l", list![1, 2]),
            ("m", map! { "a" => 1 }),
            ("old", list![3]),
            ("d", Value::from(Ext::DeltaSnapshot(list!["x"]))),
        ] {
            cp.channel_values.insert(k.to_owned(), v);
            cp.channel_versions
                .insert(k.to_owned(), ChannelVersion::from("2.0"));
        }
        cp
    }

    #[test]
    fn primitives_are_inlined_and_new_others_become_blobs() {
        let cp = checkpoint();
        let mut new_versions = cp.channel_versions.clone();
        new_versions.shift_remove("old");
        let serde = JsonPlusSerializer;
        let split = split(&cp, &new_versions, &serde).unwrap();
        let doc = json::parse(&split.checkpoint).unwrap();
        assert_eq!(
            doc.get("channel_values"),
            Some(&map! { "s" => "x", "n" => Value::Nil, "f" => 2.5, "d" => true })
        );
        let channels: Vec<&str> = split.blobs.iter().map(|b| b.channel.as_str()).collect();
        assert_eq!(channels, ["nan", "l", "m", "d"]);
        assert!(split.blobs.iter().all(|b| b.version == "2.0"));

        let joined = split
            .blobs
            .iter()
            .map(|b| (b.channel.clone(), b.tag.clone(), Some(b.bytes.clone())))
            .chain([("old".to_owned(), "msgpack".to_owned(), Some(vec![0x91, 3]))])
            .chain([("gone".to_owned(), TAG_EMPTY.to_owned(), None)]);
        let values = decode_blobs(joined, &serde, &DecodeMemo::new()).unwrap();
        let back = rebuild(doc, values).unwrap();
        let mut want = cp.channel_values.clone();
        want.shift_remove("nan");
        let got_nan = back.channel_values.get("nan").and_then(Value::as_f64);
        assert!(got_nan.is_some_and(f64::is_nan));
        let mut got = back.channel_values.clone();
        got.shift_remove("nan");
        assert_eq!(got, want);
        assert_eq!(back.channel_versions, cp.channel_versions);
        assert!(split.carried.is_empty());
    }

    #[test]
    fn long_strings_go_to_blobs_once_and_are_carried_while_unchanged() {
        let long = "é".repeat(INLINE_STRING_MAX / 2 + 1);
        let edge = "x".repeat(INLINE_STRING_MAX);
        let mut cp = Checkpoint::empty("id-2", "ts");
        for (k, v, version) in [
            ("new", long.as_str(), "3.0"),
            ("same", long.as_str(), "2.0"),
            ("moved", long.as_str(), "4.0"),
            ("edge", edge.as_str(), "3.0"),
            ("nul", "a\0b", "2.0"),
        ] {
            cp.channel_values.insert(k.to_owned(), Value::from(v));
            cp.channel_versions
                .insert(k.to_owned(), ChannelVersion::from(version));
        }
        cp.channel_values
            .insert("unversioned".to_owned(), Value::from(long.as_str()));
        let new_versions: ChannelVersions = [
            ("new".to_owned(), ChannelVersion::from("3.0")),
            ("edge".to_owned(), ChannelVersion::from("3.0")),
            // Stored under a version readers would not look for: kept inline.
            ("moved".to_owned(), ChannelVersion::from("9.0")),
        ]
        .into_iter()
        .collect();
        let serde = JsonPlusSerializer;
        let split = split(&cp, &new_versions, &serde).unwrap();
        let doc = json::parse(&split.checkpoint).unwrap();
        assert_eq!(
            doc.get("channel_values"),
            Some(&map! {
                "moved" => long.as_str(), "edge" => edge.as_str(),
                "unversioned" => long.as_str(),
            })
        );
        let blobs: Vec<(&str, &str)> = split
            .blobs
            .iter()
            .map(|b| (b.channel.as_str(), b.version.as_str()))
            .collect();
        assert_eq!(blobs, [("new", "3.0")]);
        let new_blob = &split.blobs[0];
        assert_eq!(new_blob.tag, "msgpack");
        assert_eq!(
            serde.loads_typed(&new_blob.tag, &new_blob.bytes).unwrap(),
            Value::from(long.as_str())
        );
        assert_eq!(
            split.carried,
            [CarriedRow {
                channel: "same".into(),
                version: "2.0".into()
            }]
        );
    }
}
