//! Encode once: long lists reuse the encoding of their elements (see the module docs).

use std::sync::Arc;

use super::encode::{write_array_header, Encoder};
use crate::error::Result;
use crate::value::{EncodedItems, List, Value};

/// Lists shorter than this are encoded directly: caching them would cost more than it
/// saves.
pub const CACHE_MIN_LEN: usize = 16;

/// Appends the encoding of `value`, written as a whole value (not inside another one): a
/// long list uses and fills its encoding cache, anything else is encoded directly.
pub(super) fn encode_root(value: &Value, out: &mut Vec<u8>, max_depth: usize) -> Result<()> {
    if let Value::List(list) = value {
        if list.len() >= CACHE_MIN_LEN && max_depth >= 1 {
            let items = items_encoding(list, max_depth)?;
            write_array_header(out, list.len())?;
            out.extend_from_slice(&items.bytes);
            return Ok(());
        }
    }
    Encoder::new(out, max_depth).write(value)
}

/// The encoding of a list's elements: cached, or built from the unchanged prefix of the
/// version it derives from plus the elements after it.
fn items_encoding(list: &List, max_depth: usize) -> Result<Arc<EncodedItems>> {
    if let Some(enc) = list.cached_encoding() {
        return Ok(enc.clone());
    }
    let mut reused = 0;
    let mut bytes = Vec::new();
    let mut ends = Vec::with_capacity(list.len());
    let mut depth = 0;
    if let Some(base) = list.base_encoding() {
        reused = base
            .items
            .iter()
            .zip(list.iter())
            .take_while(|(old, new)| Value::same(old, new))
            .count();
        if reused > 0 {
            let end = base.ends[reused - 1];
            let guess = end + (list.len() - reused) * (end / reused + 1);
            bytes.reserve(guess);
            bytes.extend_from_slice(&base.bytes[..end]);
            ends.extend_from_slice(&base.ends[..reused]);
            depth = base.depth;
        }
    }
    for item in &list[reused..] {
        // The list is one level; its elements start below it.
        let peak = Encoder::nested(&mut bytes, max_depth, 1).write_peak(item)?;
        depth = depth.max(peak - 1);
        ends.push(bytes.len());
    }
    let enc = EncodedItems {
        items: list.to_vec(),
        bytes,
        ends,
        depth,
    };
    Ok(list.set_encoding(Arc::new(enc)))
}
