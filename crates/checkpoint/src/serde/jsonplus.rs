//! [`JsonPlusSerializer`]: LangGraph's default serializer, the `(tag, bytes)` pairs it writes.

use crate::error::{Error, Result};
use crate::serde::{
    json_legacy, msgpack, Serializer, Typed, TAG_BYTEARRAY, TAG_BYTES, TAG_EMPTY, TAG_JSON,
    TAG_MSGPACK, TAG_NULL,
};
use crate::value::Value;

/// LangGraph's `JsonPlusSerializer`, byte for byte (docs/format.md#value-encoding).
///
/// Writes `("null", b"")` for [`Value::Nil`], `("bytes", raw)` for [`Value::Bytes`] and
/// `("msgpack", encoding)` for everything else. Reads `null`, `bytes`, `bytearray` (as
/// bytes), `msgpack` and the legacy `json` ([`json_legacy`]). Unlike Python it never
/// constructs or imports anything: extension objects stay data ([`crate::Ext`]), and it
/// has no pickle fallback.
///
/// The savers' `empty` sentinel ("no value at this version") is not a serialized value:
/// `loads_typed("empty", ..)` fails with [`Error::InvalidData`] so that a saver that
/// forgets to handle it does not silently turn a missing channel into `None`. (Python
/// raises its unknown-type error for it.) Other unknown tags, `pickle` included, give
/// [`Error::UnknownTag`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsonPlusSerializer;

impl JsonPlusSerializer {
    /// The serializer.
    pub fn new() -> JsonPlusSerializer {
        JsonPlusSerializer
    }
}

impl Serializer for JsonPlusSerializer {
    fn dumps_typed(&self, value: &Value) -> Result<Typed> {
        Ok(match value {
            Value::Nil => Typed::new(TAG_NULL, Vec::new()),
            Value::Bytes(b) => Typed::new(TAG_BYTES, b.to_vec()),
            other => Typed::new(TAG_MSGPACK, msgpack::encode(other)?),
        })
    }

    fn dumps_typed_shared(
        &self,
        value: &Value,
    ) -> Result<(std::borrow::Cow<'static, str>, crate::serde::SharedBytes)> {
        match value {
            Value::List(_) | Value::Str(_) => {
                Ok((TAG_MSGPACK.into(), msgpack::encode_shared(value)?))
            }
            other => {
                let typed = self.dumps_typed(other)?;
                Ok((typed.tag, typed.bytes.into()))
            }
        }
    }

    /// The msgpack model is [`Value`]'s: decoding what was encoded gives the value back.
    fn round_trips(&self) -> bool {
        true
    }

    fn dumps_checkpoint(&self, checkpoint: &crate::Checkpoint, with_values: bool) -> Result<Typed> {
        Ok(Typed::new(
            TAG_MSGPACK,
            msgpack::encode_checkpoint(checkpoint, with_values)?,
        ))
    }

    fn loads_typed(&self, tag: &str, bytes: &[u8]) -> Result<Value> {
        match tag {
            TAG_MSGPACK => msgpack::decode(bytes),
            TAG_NULL => Ok(Value::Nil),
            TAG_BYTES | TAG_BYTEARRAY => Ok(Value::Bytes(bytes.to_vec().into())),
            TAG_JSON => json_legacy::loads(bytes),
            TAG_EMPTY => Err(Error::InvalidData(
                "the \"empty\" sentinel has no value; savers must handle it before loads_typed"
                    .into(),
            )),
            other => Err(Error::UnknownTag(other.to_owned())),
        }
    }

    fn loads_typed_with_memo(
        &self,
        tag: &str,
        bytes: &[u8],
        memo: &msgpack::DecodeMemo,
    ) -> Result<Value> {
        match tag {
            TAG_MSGPACK => msgpack::decode_with_memo(bytes, &Default::default(), memo),
            _ => self.loads_typed(tag, bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_picks_the_tag_python_picks() {
        let s = JsonPlusSerializer;
        assert_eq!(
            s.dumps_typed(&Value::Nil).unwrap(),
            Typed::new("null", vec![])
        );
        let raw = Value::bytes(vec![1, 2]);
        assert_eq!(
            s.dumps_typed(&raw).unwrap(),
            Typed::new("bytes", vec![1, 2])
        );
        let hi = Value::from("hi");
        assert_eq!(
            s.dumps_typed(&hi).unwrap(),
            Typed::new("msgpack", vec![0xa2, b'h', b'i'])
        );
    }

    #[test]
    fn loads_reads_every_tag() {
        let s = JsonPlusSerializer;
        assert_eq!(s.loads_typed("null", b"").unwrap(), Value::Nil);
        assert_eq!(
            s.loads_typed("bytes", b"ab").unwrap(),
            Value::Bytes(b"ab".to_vec().into())
        );
        assert_eq!(
            s.loads_typed("bytearray", b"ab").unwrap(),
            Value::Bytes(b"ab".to_vec().into())
        );
        assert_eq!(s.loads_typed("msgpack", &[0x05]).unwrap(), Value::Int(5));
        assert_eq!(
            s.loads_typed("json", b"[1]").unwrap(),
            Value::list(vec![1.into()])
        );
        assert!(matches!(
            s.loads_typed("empty", b""),
            Err(Error::InvalidData(_))
        ));
        assert!(matches!(s.loads_typed("pickle", b""), Err(Error::UnknownTag(t)) if t == "pickle"));
        assert!(matches!(
            s.loads_typed("msgpack+aes", b""),
            Err(Error::UnknownTag(_))
        ));
    }
}
