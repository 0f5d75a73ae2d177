//! Decode once: long lists decoded recently are remembered with their element bytes, and a
//! later decode whose list starts with the same element bytes reuses the decoded elements.
//!
//! A chat thread stores its whole message list in every checkpoint; successive
//! checkpoints' lists share all but their last few messages. With a [`DecodeMemo`], a
//! decoded long list ([`CACHE_MIN_LEN`](super::CACHE_MIN_LEN) elements or more) keeps the
//! encoding of its elements (as an encoded list does, "Encode once"), and the memo keeps
//! the last few such lists. Decoding another list compares its element bytes with each
//! remembered list's: the longest run of leading elements whose bytes are equal is taken
//! as handles to the remembered elements (a comparison of bytes, no allocation), and only
//! the elements after it are decoded.
//!
//! This is exact: msgpack is self-delimiting, so equal bytes at an element boundary are an
//! equal element, and decoding is a function of the bytes. The one context an element's
//! decoding depends on is its nesting depth (the depth limit); a remembered list is reused
//! only where its deepest element stays within the limit. A decoded list that keeps its
//! encoding is also encoded again for free (the next checkpoint holding it or a version
//! derived from it re-encodes only its new elements).

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::value::{EncodedChunk, EncodedItems};

/// How many decoded lists a memo remembers.
const MEMO_LISTS: usize = 4;

/// Lists whose element bytes are longer than this are not remembered (64 MiB).
const MEMO_MAX_BYTES: usize = 64 << 20;

/// Recently decoded long lists, shared by the decodes that pass it (e.g. one saver's
/// reads). Holds at most a few lists; any thread may use it.
#[derive(Debug, Default)]
pub struct DecodeMemo {
    lists: Mutex<VecDeque<Arc<EncodedItems>>>,
}

impl DecodeMemo {
    /// An empty memo.
    pub fn new() -> DecodeMemo {
        DecodeMemo::default()
    }

    /// The remembered lists, newest first.
    pub(super) fn snapshot(&self) -> Vec<Arc<EncodedItems>> {
        self.lists.lock().iter().cloned().collect()
    }

    /// Remembers decoded lists (the newest last), forgetting the oldest beyond the bound.
    pub(super) fn remember(&self, made: Vec<Arc<EncodedItems>>) {
        if made.is_empty() {
            return;
        }
        let mut lists = self.lists.lock();
        for enc in made {
            if enc.len > MEMO_MAX_BYTES {
                continue;
            }
            lists.retain(|old| !Arc::ptr_eq(old, &enc));
            lists.push_front(enc);
        }
        lists.truncate(MEMO_LISTS);
    }

    /// Forgets every list.
    pub fn clear(&self) {
        self.lists.lock().clear();
    }
}

/// The leading elements of a remembered list that `input` starts with.
pub(super) struct Reuse {
    /// The remembered list.
    pub(super) enc: Arc<EncodedItems>,
    /// How many of its elements.
    pub(super) count: usize,
    /// Their bytes.
    pub(super) bytes: usize,
    /// How many of its chunks are reused whole.
    pub(super) whole_chunks: usize,
}

/// The remembered list sharing the most leading elements (at most `max`) with `input`.
pub(super) fn best_prefix(seen: &[Arc<EncodedItems>], input: &[u8], max: usize) -> Option<Reuse> {
    let mut best: Option<Reuse> = None;
    for enc in seen {
        let r = prefix(enc, input, max);
        if r.count > best.as_ref().map_or(0, |b| b.count) {
            best = Some(r);
        }
    }
    best
}

/// How many leading elements of `enc` (at most `max`) `input` starts with.
fn prefix(enc: &Arc<EncodedItems>, input: &[u8], max: usize) -> Reuse {
    let (mut count, mut bytes, mut whole_chunks) = (0, 0, 0);
    for chunk in &enc.chunks {
        let rest = &input[bytes..];
        let n = chunk.bytes.len();
        if count + chunk.ends.len() <= max && rest.len() >= n && rest[..n] == chunk.bytes[..] {
            count += chunk.ends.len();
            bytes += n;
            whole_chunks += 1;
            continue;
        }
        // The first difference, then the elements that end before it.
        let same = common_prefix(rest, &chunk.bytes);
        let k = chunk
            .ends
            .partition_point(|&end| end <= same)
            .min(max - count);
        if k > 0 {
            count += k;
            bytes += chunk.ends[k - 1];
        }
        break;
    }
    Reuse {
        enc: Arc::clone(enc),
        count,
        bytes,
        whole_chunks,
    }
}

/// The length of the common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// The encoding of a decoded list: the remembered chunks it reused whole, then one chunk
/// of `tail` (its other elements' bytes, `ends` relative to it), merged with its
/// predecessors while they are not larger (as encoding does).
pub(super) fn decoded_encoding(
    items: Vec<crate::value::Value>,
    mut chunks: Vec<Arc<EncodedChunk>>,
    tail: EncodedChunk,
    depth: usize,
) -> EncodedItems {
    let len = super::encode_once::push_tail(&mut chunks, tail);
    EncodedItems {
        items,
        chunks,
        len,
        depth,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_finds_the_first_difference() {
        let a: Vec<u8> = (0..200u8).collect();
        let mut b = a.clone();
        assert_eq!(common_prefix(&a, &b), 200);
        b[130] = 0;
        assert_eq!(common_prefix(&a, &b), 130);
        assert_eq!(common_prefix(&a[..10], &b), 10);
        assert_eq!(common_prefix(&[], &b), 0);
    }
}

#[cfg(test)]
mod memo_tests {
    use super::DecodeMemo;
    use crate::serde::msgpack::{decode_with, decode_with_memo, encode, DecodeLimits};
    use crate::value::{Map, Value};

    fn message(i: usize) -> Value {
        let mut m = Map::new();
        m.insert(
            "role",
            if i.is_multiple_of(2) {
                "user"
            } else {
                "assistant"
            },
        );
        m.insert("content", format!("message number {i} with some text"));
        m.insert("n", i as i64);
        Value::Map(m)
    }

    fn chat(n: usize) -> Vec<Value> {
        (0..n).map(message).collect()
    }

    /// A checkpoint-like map holding the list under `messages`.
    fn state(messages: Vec<Value>) -> Value {
        let mut m = Map::new();
        m.insert("v", 4i64);
        m.insert("messages", Value::List(messages.into()));
        Value::Map(m)
    }

    /// Decodes `value`'s encoding with and without `memo`: the same value, and the
    /// decoded lists encode back to the same bytes.
    fn check(memo: &DecodeMemo, value: &Value, limits: &DecodeLimits) -> Value {
        let bytes = encode(value).expect("encode");
        let plain = decode_with(&bytes, limits).expect("plain decode");
        let memoized = decode_with_memo(&bytes, limits, memo).expect("memo decode");
        assert_eq!(plain, memoized);
        assert_eq!(&memoized, value);
        assert_eq!(encode(&memoized).expect("re-encode"), bytes);
        memoized
    }

    fn messages_of(v: &Value) -> &[Value] {
        v.as_map()
            .and_then(|m| m.get("messages"))
            .and_then(Value::as_list)
            .expect("messages")
    }

    #[test]
    fn a_growing_list_reuses_its_prefix_and_equals_a_fresh_decode() {
        let memo = DecodeMemo::new();
        let limits = DecodeLimits::default();
        let first = check(&memo, &state(chat(40)), &limits);
        let second = check(&memo, &state(chat(42)), &limits);
        // The leading elements are the remembered ones, not new copies.
        let (a, b) = (messages_of(&first), messages_of(&second));
        assert!(a.iter().zip(b).all(|(x, y)| Value::same(x, y)));
        // Shorter (an older checkpoint), changed in the middle, unrelated: still equal.
        check(&memo, &state(chat(20)), &limits);
        let mut edited = chat(42);
        edited[17] = message(1000);
        let third = check(&memo, &state(edited), &limits);
        let c = messages_of(&third);
        assert!(Value::same(&b[16], &c[16]) && !Value::same(&b[17], &c[17]));
        check(&memo, &state((100..150).map(message).collect()), &limits);
        // Many generations: chunks stay consistent.
        for n in (43..200).step_by(7) {
            check(&memo, &state(chat(n)), &limits);
        }
    }

    #[test]
    fn reuse_respects_the_depth_limit() {
        // Elements three levels deep; the list at the top, then nested three deeper.
        let deep = |i: usize| Value::List(vec![Value::List(vec![message(i)].into())].into());
        let items: Vec<Value> = (0..20).map(deep).collect();
        let memo = DecodeMemo::new();
        let limits = DecodeLimits { max_depth: 6 };
        check(&memo, &Value::List(items.clone().into()), &limits);
        let mut nested = Value::List(items.into());
        for _ in 0..3 {
            nested = Value::List(vec![nested].into());
        }
        let bytes = encode(&nested).expect("encode");
        assert!(decode_with(&bytes, &limits).is_err());
        assert!(decode_with_memo(&bytes, &limits, &memo).is_err());
        // The deepest element an empty map: still a level.
        let empty = |_: usize| Value::List(vec![Value::Map(Map::new())].into());
        let memo = DecodeMemo::new();
        let limits = DecodeLimits { max_depth: 3 };
        check(
            &memo,
            &Value::List((0..20).map(empty).collect::<Vec<_>>().into()),
            &limits,
        );
        let nested =
            Value::List(vec![Value::List((0..20).map(empty).collect::<Vec<_>>().into())].into());
        let bytes = encode(&nested).expect("encode");
        assert!(decode_with(&bytes, &limits).is_err());
        assert!(decode_with_memo(&bytes, &limits, &memo).is_err());
    }

    #[test]
    fn truncated_or_altered_input_fails_as_without_a_memo() {
        let memo = DecodeMemo::new();
        let limits = DecodeLimits::default();
        check(&memo, &state(chat(30)), &limits);
        let bytes = encode(&state(chat(31))).expect("encode");
        for cut in [bytes.len() - 1, bytes.len() / 2, 40] {
            let plain = decode_with(&bytes[..cut], &limits).is_err();
            let memoized = decode_with_memo(&bytes[..cut], &limits, &memo).is_err();
            assert!(plain && memoized, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0xc0);
        assert!(decode_with_memo(&longer, &limits, &memo).is_err());
    }
}
