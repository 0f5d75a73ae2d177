//! Sizes inside an encoded checkpoint without decoding its values: a msgpack scanner that
//! finds where each object ends, so `stats` can measure each channel value of a SQLite
//! checkpoint row as stored (and read a 1 GB database without building its values).
//!
//! The scanner is iterative (a count of objects still to skip, never recursion), checks
//! every length against the input, and returns `None` for anything malformed.

use stategraph_checkpoint::serde::msgpack;
use stategraph_checkpoint::{ChannelVersion, Value};

/// What `stats` needs of one checkpoint row: each channel's encoded value size, whether
/// it is a list, and its version (as text, to count distinct versions).
#[derive(Debug, Default, PartialEq)]
pub struct CheckpointSizes {
    /// `(channel, encoded bytes, is a list)` in stored order.
    pub values: Vec<(String, u64, bool)>,
    /// `(channel, version)` as stored.
    pub versions: Vec<(String, String)>,
}

/// Where the object starting at `i` ends, or `None` if `b` is not valid msgpack there.
pub fn skip(b: &[u8], mut i: usize) -> Option<usize> {
    let mut remaining: u64 = 1;
    while remaining > 0 {
        remaining -= 1;
        let tag = *b.get(i)?;
        i += 1;
        // (bytes of length header, payload bytes, child objects)
        let (header, payload, children): (usize, usize, u64) = match tag {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0, 0),
            0x80..=0x8f => (0, 0, 2 * u64::from(tag & 0x0f)),
            0x90..=0x9f => (0, 0, u64::from(tag & 0x0f)),
            0xa0..=0xbf => (0, usize::from(tag & 0x1f), 0),
            0xc4 | 0xd9 => (1, be(b, i, 1)?, 0),
            0xc5 | 0xda => (2, be(b, i, 2)?, 0),
            0xc6 | 0xdb => (4, be(b, i, 4)?, 0),
            0xc7 => (1, be(b, i, 1)?.checked_add(1)?, 0),
            0xc8 => (2, be(b, i, 2)?.checked_add(1)?, 0),
            0xc9 => (4, be(b, i, 4)?.checked_add(1)?, 0),
            0xca => (0, 4, 0),
            0xcb => (0, 8, 0),
            0xcc | 0xd0 => (0, 1, 0),
            0xcd | 0xd1 => (0, 2, 0),
            0xce | 0xd2 => (0, 4, 0),
            0xcf | 0xd3 => (0, 8, 0),
            0xd4 => (0, 2, 0),
            0xd5 => (0, 3, 0),
            0xd6 => (0, 5, 0),
            0xd7 => (0, 9, 0),
            0xd8 => (0, 17, 0),
            0xdc => (2, 0, be(b, i, 2)? as u64),
            0xdd => (4, 0, be(b, i, 4)? as u64),
            0xde => (2, 0, 2 * be(b, i, 2)? as u64),
            0xdf => (4, 0, 2 * be(b, i, 4)? as u64),
            0xc1 => return None,
        };
        i = i.checked_add(header)?;
        i = i.checked_add(payload)?;
        if i > b.len() {
            return None;
        }
        remaining = remaining.checked_add(children)?;
        // Every child takes at least one byte: more children than bytes left is malformed.
        if remaining > (b.len() - i) as u64 {
            return None;
        }
    }
    Some(i)
}

/// The big-endian unsigned integer of `n` bytes at `i`.
fn be(b: &[u8], i: usize, n: usize) -> Option<usize> {
    let bytes = b.get(i..i.checked_add(n)?)?;
    Some(
        bytes
            .iter()
            .fold(0usize, |acc, &x| (acc << 8) | usize::from(x)),
    )
}

/// The map header at `i`: `(entries, first entry)`.
fn map_header(b: &[u8], i: usize) -> Option<(usize, usize)> {
    match *b.get(i)? {
        t @ 0x80..=0x8f => Some((usize::from(t & 0x0f), i + 1)),
        0xde => Some((be(b, i + 1, 2)?, i + 3)),
        0xdf => Some((be(b, i + 1, 4)?, i + 5)),
        _ => None,
    }
}

/// The string at `i`: `(text, end)`.
fn string(b: &[u8], i: usize) -> Option<(&str, usize)> {
    let (len, start) = match *b.get(i)? {
        t @ 0xa0..=0xbf => (usize::from(t & 0x1f), i + 1),
        0xd9 => (be(b, i + 1, 1)?, i + 2),
        0xda => (be(b, i + 1, 2)?, i + 3),
        0xdb => (be(b, i + 1, 4)?, i + 5),
        _ => return None,
    };
    let end = start.checked_add(len)?;
    Some((std::str::from_utf8(b.get(start..end)?).ok()?, end))
}

/// Whether the object at `i` is an array.
fn is_array(b: &[u8], i: usize) -> bool {
    matches!(b.get(i), Some(0x90..=0x9f | 0xdc | 0xdd))
}

/// The channel value sizes and versions of a msgpack-encoded checkpoint, or `None` if
/// the bytes are not a checkpoint map.
pub fn checkpoint_sizes(b: &[u8]) -> Option<CheckpointSizes> {
    let mut out = CheckpointSizes::default();
    let (n, mut i) = map_header(b, 0)?;
    for _ in 0..n {
        let (key, after_key) = string(b, i)?;
        let end = skip(b, after_key)?;
        match key {
            "channel_values" => {
                let (m, mut j) = map_header(b, after_key)?;
                for _ in 0..m {
                    let (channel, v) = string(b, j)?;
                    let v_end = skip(b, v)?;
                    out.values
                        .push((channel.to_owned(), (v_end - v) as u64, is_array(b, v)));
                    j = v_end;
                }
            }
            "channel_versions" => {
                let versions = msgpack::decode(&b[after_key..end]).ok()?;
                for (k, v) in versions.as_map()?.iter() {
                    let version = ChannelVersion::from_value(v)
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_else(|| format!("{v:?}"));
                    out.versions.push((k.as_str()?.to_owned(), version));
                }
            }
            _ => {}
        }
        i = end;
    }
    Some(out)
}

/// The encoded size of a value (for tests of the scanner against the encoder).
pub fn encoded_len(value: &Value) -> Option<usize> {
    msgpack::encode(value).ok().map(|b| b.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stategraph_checkpoint::{Checkpoint, Map};

    #[test]
    fn skip_finds_the_end_of_every_kind_of_object() {
        let mut map = Map::new();
        map.insert("k", Value::from(vec![Value::Int(-3), Value::Float(1.5)]));
        map.insert(Value::Int(300), Value::from(vec![1u8; 70_000]));
        let values = [
            Value::Nil,
            Value::Bool(true),
            Value::Int(5),
            Value::Int(-100_000),
            Value::Int(i64::MAX),
            Value::from("x".repeat(40)),
            Value::from("y".repeat(70_000)),
            Value::from(vec![Value::Nil; 20]),
            Value::Map(map),
            Value::uuid(&uuid::Uuid::nil()),
            Value::datetime_iso("2024-01-02T03:04:05+00:00"),
        ];
        for v in values {
            let bytes = msgpack::encode(&v).expect("encode");
            assert_eq!(skip(&bytes, 0), Some(bytes.len()), "{v:?}");
            assert_eq!(skip(&bytes[..bytes.len() - 1], 0), None, "truncated {v:?}");
        }
        assert_eq!(skip(&[0xc1], 0), None);
        assert_eq!(skip(&[0xdd, 0xff, 0xff, 0xff, 0xff], 0), None);
    }

    #[test]
    fn checkpoint_sizes_measure_each_channel_as_encoded() {
        let mut cp = Checkpoint::empty("1", "2024-01-01T00:00:00+00:00");
        let list = Value::from(vec![Value::from("a"), Value::from("bb")]);
        cp.channel_values.insert("list".into(), list.clone());
        cp.channel_values.insert("n".into(), Value::Int(7));
        cp.channel_versions
            .insert("list".into(), ChannelVersion::Int(2));
        cp.channel_versions
            .insert("n".into(), ChannelVersion::Int(1));
        let bytes = msgpack::encode_checkpoint(&cp, true).expect("encode");
        let sizes = checkpoint_sizes(&bytes).expect("a checkpoint");
        assert_eq!(
            sizes.values,
            vec![
                (
                    "list".to_owned(),
                    encoded_len(&list).expect("len") as u64,
                    true
                ),
                ("n".to_owned(), 1, false)
            ]
        );
        assert_eq!(sizes.versions.len(), 2);
        assert_eq!(checkpoint_sizes(b"\x92\x01\x02"), None);
    }
}
