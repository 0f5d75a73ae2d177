//! Encode once: long lists reuse the encoding of their elements (see the module docs).
//!
//! A list's element bytes are kept as a few shared chunks. A new version reuses, by
//! handle, every chunk of its predecessor whose elements are all unchanged, copies the
//! unchanged part of the chunk where the first change is, and encodes the elements after
//! it into a new tail chunk. Tail chunks are merged with their predecessor while that one
//! is not larger (the "logarithmic method"): a list holds O(log n) chunks and each
//! element's bytes are copied O(log n) times over the list's whole life.

use std::sync::Arc;

use super::encode::{write_array_header, write_str_header, Encoder};
use crate::error::Result;
use crate::serde::SharedBytes;
use crate::value::{EncodedChunk, EncodedItems, List, Value};

/// Lists shorter than this are encoded directly: caching them would cost more than it
/// saves.
pub const CACHE_MIN_LEN: usize = 16;

/// Strings at least this long are stored as a header and the shared payload.
const SHARED_STR_MIN_LEN: usize = 4096;

/// Appends `tail` (the bytes of a list's last elements) to the list's `chunks`, merged into
/// its predecessors while they are not larger, so that a list grown one element at a time
/// keeps O(log n) chunks; returns the total length of the chunks.
pub(super) fn push_tail(chunks: &mut Vec<Arc<EncodedChunk>>, mut tail: EncodedChunk) -> usize {
    while let Some(last) = chunks.last() {
        if last.bytes.len() > tail.bytes.len() || tail.ends.is_empty() {
            break;
        }
        let shift = last.bytes.len();
        let mut merged = EncodedChunk {
            bytes: Vec::with_capacity(shift + tail.bytes.len()),
            ends: Vec::with_capacity(last.ends.len() + tail.ends.len()),
        };
        merged.bytes.extend_from_slice(&last.bytes);
        merged.bytes.extend_from_slice(&tail.bytes);
        merged.ends.extend_from_slice(&last.ends);
        merged.ends.extend(tail.ends.iter().map(|e| e + shift));
        chunks.pop();
        tail = merged;
    }
    if !tail.ends.is_empty() {
        chunks.push(Arc::new(tail));
    }
    chunks.iter().map(|c| c.bytes.len()).sum()
}

/// Appends the encoding of `value`, written as a whole value (not inside another one): a
/// long list uses and fills its encoding cache, anything else is encoded directly.
pub(super) fn encode_root(value: &Value, out: &mut Vec<u8>, max_depth: usize) -> Result<()> {
    if let Value::List(list) = value {
        if list.len() >= CACHE_MIN_LEN && max_depth >= 1 {
            let items = items_encoding(list, max_depth)?;
            // One allocation of the final size (no doubling and copying on the way).
            out.reserve(5 + items.len);
            write_array_header(out, list.len())?;
            for chunk in &items.chunks {
                out.extend_from_slice(&chunk.bytes);
            }
            return Ok(());
        }
    }
    Encoder::new(out, max_depth).write(value)
}

/// The encoding of a whole value as shared pieces (a long list) or one piece.
pub(super) fn encode_shared(value: &Value, max_depth: usize) -> Result<SharedBytes> {
    if let Value::List(list) = value {
        if list.len() >= CACHE_MIN_LEN && max_depth >= 1 {
            let items = items_encoding(list, max_depth)?;
            let mut head = Vec::with_capacity(5);
            write_array_header(&mut head, list.len())?;
            return Ok(SharedBytes::pieces(head, items));
        }
    }
    if let Value::Str(s) = value {
        if s.len() >= SHARED_STR_MIN_LEN {
            let mut head = Vec::with_capacity(5);
            write_str_header(&mut head, s.len())?;
            return Ok(SharedBytes::text(head, s.clone()));
        }
    }
    let mut out = Vec::with_capacity(128);
    Encoder::new(&mut out, max_depth).write(value)?;
    Ok(out.into())
}

/// The encoding of a list's elements: cached, or built from the unchanged prefix of the
/// version it derives from plus the elements after it.
fn items_encoding(list: &List, max_depth: usize) -> Result<Arc<EncodedItems>> {
    if let Some(enc) = list.cached_encoding() {
        return Ok(enc.clone());
    }
    let mut chunks: Vec<Arc<EncodedChunk>> = Vec::new();
    let mut tail = EncodedChunk::default();
    let mut reused = 0;
    let mut depth = 0;
    if let Some(base) = list.base_encoding() {
        let same = base
            .items
            .iter()
            .zip(list.iter())
            .take_while(|(old, new)| Value::same(old, new))
            .count();
        for chunk in &base.chunks {
            let n = chunk.ends.len();
            if reused + n <= same {
                chunks.push(chunk.clone());
                reused += n;
            } else {
                let keep = same - reused;
                if keep > 0 {
                    let end = chunk.ends[keep - 1];
                    tail.bytes.extend_from_slice(&chunk.bytes[..end]);
                    tail.ends.extend_from_slice(&chunk.ends[..keep]);
                    reused += keep;
                }
                break;
            }
        }
        if reused > 0 {
            depth = base.depth;
        }
    }
    for item in &list[reused..] {
        // The list is one level; its elements start below it.
        let peak = Encoder::nested(&mut tail.bytes, max_depth, 1).write_peak(item)?;
        depth = depth.max(peak - 1);
        tail.ends.push(tail.bytes.len());
    }
    let len = push_tail(&mut chunks, tail);
    let enc = EncodedItems {
        items: list.to_vec(),
        chunks,
        len,
        depth,
    };
    Ok(list.set_encoding(Arc::new(enc)))
}
