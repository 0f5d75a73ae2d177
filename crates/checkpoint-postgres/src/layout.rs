//! How one checkpoint is spread over its `checkpoints` row and `checkpoint_blobs` rows.
//!
//! As LangGraph's saver does (spec §12.2), a primitive channel value (nil, boolean,
//! integer, float, string) is kept inline in the checkpoint's JSONB `channel_values`,
//! repeated in every checkpoint that has it; any other value is serialized and stored once
//! per `(thread, namespace, channel, version)` in `checkpoint_blobs`, and only when its
//! channel is in `new_versions` (an unchanged value is already there). A DeltaChannel
//! snapshot goes to a blob and leaves a JSON `true` in its place. A channel without a value
//! gets no row at all.
//!
//! Two kinds of primitive go to a blob here although Python inlines them, because JSONB
//! cannot hold them and Python's put fails on them: NaN or an infinity, and a string with a
//! NUL character. Python reads such blobs back like any other.
//!
//! Reading joins the blobs on the checkpoint's own `channel_versions`: the values are the
//! inline ones, overridden by every joined blob that is not the `empty` sentinel.

use indexmap::IndexMap;
use stategraph_checkpoint::ext::Ext;
use stategraph_checkpoint::serde::{Serializer, TAG_EMPTY};
use stategraph_checkpoint::{ChannelVersions, Checkpoint, Error, Map, Result, Value};

use crate::json;

/// One `checkpoint_blobs` row of a put, without its thread and namespace.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BlobRow {
    pub(crate) channel: String,
    pub(crate) version: String,
    pub(crate) tag: String,
    pub(crate) bytes: Vec<u8>,
}

/// A checkpoint ready to store: the JSON text of its row and its new blob rows.
#[derive(Clone, Debug)]
pub(crate) struct Split {
    pub(crate) checkpoint: String,
    pub(crate) blobs: Vec<BlobRow>,
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
    for (channel, value) in &checkpoint.channel_values {
        if is_delta_snapshot(value) {
            blob_values.insert(channel, value);
            inline.insert(channel.as_str(), true);
        } else if json::is_inline(value) {
            inline.insert(channel.as_str(), value.clone());
        } else {
            blob_values.insert(channel, value);
        }
    }
    let Value::Map(mut doc) = checkpoint.to_value(false) else {
        return Err(Error::Encode("a checkpoint is not a map".into()));
    };
    doc.insert("channel_values", Value::Map(inline));
    let text = json::encode(&Value::Map(doc), "checkpoint")?;
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
    })
}

/// One joined blob as read: channel, type tag and bytes (a NULL blob reads as empty).
pub(crate) type JoinedBlob = (String, String, Option<Vec<u8>>);

/// Rebuilds a checkpoint from its JSONB document and the blobs joined on its versions.
pub(crate) fn rebuild(
    doc: Value,
    blobs: impl IntoIterator<Item = JoinedBlob>,
    serde: &dyn Serializer,
) -> Result<Checkpoint> {
    let mut checkpoint = Checkpoint::from_value(doc)?;
    for (channel, tag, bytes) in blobs {
        if tag == TAG_EMPTY {
            continue;
        }
        let value = serde.loads_typed(&tag, bytes.as_deref().unwrap_or_default())?;
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
        let back = rebuild(doc, joined, &serde).unwrap();
        let mut want = cp.channel_values.clone();
        want.shift_remove("nan");
        let got_nan = back.channel_values.get("nan").and_then(Value::as_f64);
        assert!(got_nan.is_some_and(f64::is_nan));
        let mut got = back.channel_values.clone();
        got.shift_remove("nan");
        assert_eq!(got, want);
        assert_eq!(back.channel_versions, cp.channel_versions);
    }
}
