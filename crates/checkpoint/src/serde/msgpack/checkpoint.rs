//! A checkpoint written straight to msgpack, without building a `Value` tree first: the
//! same bytes as `encode(&checkpoint.to_value(..))`, at a fraction of the allocations
//! (savers write one checkpoint per super-step, so this is the engine's hot path).

use super::encode::{write_array_header, write_int, write_map_header, write_str};
use super::encode_once::encode_root;
use super::limits::DecodeLimits;
use crate::checkpoint::Checkpoint;
use crate::error::Result;
use crate::value::Value;
use crate::version::{ChannelVersion, ChannelVersions};

#[inline]
fn write_version(out: &mut Vec<u8>, v: &ChannelVersion) -> Result<()> {
    match v {
        ChannelVersion::Int(n) => {
            write_int(out, *n);
            Ok(())
        }
        ChannelVersion::Str(s) => write_str(out, s),
    }
}

fn write_versions(out: &mut Vec<u8>, versions: &ChannelVersions) -> Result<()> {
    write_map_header(out, versions.len())?;
    for (k, v) in versions {
        write_str(out, k)?;
        write_version(out, v)?;
    }
    Ok(())
}

/// Appends the msgpack encoding of `checkpoint` (with or without `channel_values`) to
/// `out`, key for key as [`Checkpoint::to_value`] orders them.
pub fn encode_checkpoint_into(
    checkpoint: &Checkpoint,
    with_values: bool,
    out: &mut Vec<u8>,
) -> Result<()> {
    let entries = 6
        + usize::from(with_values)
        + usize::from(checkpoint.pending_sends.is_some())
        + checkpoint.extra.len();
    write_map_header(out, entries)?;
    write_str(out, "v")?;
    write_int(out, checkpoint.v);
    write_str(out, "ts")?;
    write_str(out, &checkpoint.ts)?;
    write_str(out, "id")?;
    write_str(out, &checkpoint.id)?;
    if with_values {
        write_str(out, "channel_values")?;
        write_map_header(out, checkpoint.channel_values.len())?;
        for (k, v) in &checkpoint.channel_values {
            write_str(out, k)?;
            encode_into(v, out)?;
        }
    }
    write_str(out, "channel_versions")?;
    write_versions(out, &checkpoint.channel_versions)?;
    write_str(out, "versions_seen")?;
    write_map_header(out, checkpoint.versions_seen.len())?;
    for (node, versions) in &checkpoint.versions_seen {
        write_str(out, node)?;
        write_versions(out, versions)?;
    }
    if let Some(sends) = &checkpoint.pending_sends {
        write_str(out, "pending_sends")?;
        write_array_header(out, sends.len())?;
        for s in sends {
            encode_into(s, out)?;
        }
    }
    write_str(out, "updated_channels")?;
    match &checkpoint.updated_channels {
        None => out.push(0xc0),
        Some(list) => {
            write_array_header(out, list.len())?;
            for c in list {
                write_str(out, c)?;
            }
        }
    }
    for (k, v) in &checkpoint.extra {
        write_str(out, k)?;
        encode_into(v, out)?;
    }
    Ok(())
}

/// An upper bound of the encoded size of a versions map: each string costs at most its
/// length plus a 5-byte header, an integer at most 9 bytes.
fn versions_size(versions: &ChannelVersions) -> usize {
    5 + versions
        .iter()
        .map(|(k, v)| {
            k.len()
                + 5
                + match v {
                    ChannelVersion::Int(_) => 9,
                    ChannelVersion::Str(s) => s.len() + 5,
                }
        })
        .sum::<usize>()
}

/// The capacity to start the encoding of `checkpoint` with: exact bounds for the
/// versions (most of a checkpoint's bytes on a wide graph), a guess for the values. One
/// allocation instead of a buffer doubled five times on the way to ~14 KB.
fn size_hint(checkpoint: &Checkpoint, with_values: bool) -> usize {
    let seen: usize = checkpoint
        .versions_seen
        .iter()
        .map(|(k, v)| k.len() + 5 + versions_size(v))
        .sum();
    let values = if with_values {
        checkpoint.channel_values.len() * 64
    } else {
        0
    };
    256 + versions_size(&checkpoint.channel_versions) + seen + values
}

/// The msgpack encoding of `checkpoint` (with or without `channel_values`).
pub fn encode_checkpoint(checkpoint: &Checkpoint, with_values: bool) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(size_hint(checkpoint, with_values));
    encode_checkpoint_into(checkpoint, with_values, &mut out)?;
    Ok(out)
}

/// [`super::encode_into`], called here without going up to the facade.
fn encode_into(value: &Value, out: &mut Vec<u8>) -> Result<()> {
    encode_root(value, out, DecodeLimits::DEFAULT_MAX_DEPTH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{list, map, Value};

    fn sample() -> Checkpoint {
        let mut cp = Checkpoint::empty(
            "1efc7d35-7fd4-6e20-bfff-1de970d3da1f",
            "2025-01-01T00:00:00.002001+00:00",
        );
        cp.channel_values
            .insert("a".into(), map! { "x" => list![1, -40, 300, "s"] });
        cp.channel_values.insert("b".into(), Value::from(-70000));
        cp.channel_versions.insert(
            "a".into(),
            ChannelVersion::from("00000000000000000000000000000001.0.5"),
        );
        cp.channel_versions
            .insert("b".into(), ChannelVersion::Int(-3));
        let mut seen = ChannelVersions::default();
        seen.insert("a".into(), ChannelVersion::Int(1));
        cp.versions_seen.insert("n".into(), seen);
        cp.versions_seen
            .insert("__input__".into(), ChannelVersions::default());
        cp.updated_channels = Some(vec!["a".into(), "b".into()]);
        cp
    }

    #[test]
    fn direct_encoding_equals_the_value_tree_encoding() {
        let mut cp = sample();
        for with_values in [false, true] {
            assert_eq!(
                encode_checkpoint(&cp, with_values).unwrap(),
                super::super::encode(&cp.to_value(with_values)).unwrap()
            );
        }
        cp.updated_channels = None;
        cp.pending_sends = Some(vec![Value::from("s")]);
        cp.extra.insert("extra".into(), map! { "k" => 1 });
        for with_values in [false, true] {
            assert_eq!(
                encode_checkpoint(&cp, with_values).unwrap(),
                super::super::encode(&cp.to_value(with_values)).unwrap()
            );
        }
    }
}
