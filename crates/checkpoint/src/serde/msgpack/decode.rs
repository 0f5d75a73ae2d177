//! The msgpack reader: iterative (no recursion, so no stack to exhaust), every length
//! checked against the remaining input, depth bounded.

use std::sync::Arc;

use super::decode_memo::{best_prefix, decoded_encoding};
use super::encode_once::CACHE_MIN_LEN;
use super::short_strings::{ShortStrings, SHORT_STRING};
use crate::error::{Error, Result};
use crate::ext::{Ext, Object, ObjectCode};
use crate::value::{EncodedChunk, EncodedItems, List, Map, Value};

/// The most elements preallocated for one array or map, whatever its length prefix says;
/// longer collections grow as their elements are actually read.
const PREALLOC_LIMIT: usize = 1024;

/// A container being read: what it has so far and what it still expects.
enum Frame {
    /// An array with `left` items still to read; a long one read with a memo tracks its
    /// element bytes.
    List {
        items: Vec<Value>,
        left: usize,
        track: Option<Box<Track>>,
    },
    /// A map with `left` entries still to read; `key` holds a key awaiting its value.
    Map {
        pairs: Vec<(Value, Value)>,
        key: Option<Value>,
        left: usize,
    },
    /// The payload of extension 6 or 7, ending at the saved limit.
    Wrapped { code: i8, outer_limit: usize },
    /// The data of an object payload; a method string may follow it.
    Object {
        code: ObjectCode,
        module: String,
        class: String,
        has_method: bool,
        outer_limit: usize,
    },
}

/// The element bytes of a long list being read with a memo (see [`super::decode_memo`]).
struct Track {
    /// Where its first element starts.
    start: usize,
    /// The remembered chunks reused whole, and their bytes.
    whole: Vec<Arc<EncodedChunk>>,
    whole_bytes: usize,
    /// The end of every element after those chunks (absolute offsets).
    ends: Vec<usize>,
    /// The depth of the reused elements below the list.
    reused_depth: usize,
    /// The list's own nesting level, and the decoder's peak before it was opened.
    level: usize,
    saved_peak: usize,
}

impl Frame {
    /// How many nesting levels the frame counts for (an object is the extension and the
    /// tuple inside it).
    fn weight(&self) -> usize {
        match self {
            Frame::Object { .. } => 2,
            _ => 1,
        }
    }
}

/// Reads one value from a byte slice.
pub(super) struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Where the innermost extension payload (or the input) ends.
    limit: usize,
    max_depth: usize,
    depth: usize,
    stack: Vec<Frame>,
    /// Elements that may still be preallocated: the input length, shared by all
    /// collections, so that nested length prefixes cannot multiply allocation.
    prealloc_budget: usize,
    /// Short strings read so far, shared by their repeats (made on the first one).
    short: Option<Box<ShortStrings<'a>>>,
    /// The remembered lists of a memo, when decoding with one.
    seen: Option<Vec<Arc<EncodedItems>>>,
    /// The long lists this decode read (with a memo), for the memo.
    made: Vec<Arc<EncodedItems>>,
    /// The deepest level reached (within the innermost tracked list).
    peak: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder over `buf`, refusing nesting deeper than `max_depth`.
    pub(super) fn new(buf: &'a [u8], max_depth: usize) -> Decoder<'a> {
        Decoder {
            buf,
            pos: 0,
            limit: buf.len(),
            max_depth,
            depth: 0,
            stack: Vec::new(),
            prealloc_budget: buf.len(),
            short: None,
            seen: None,
            made: Vec::new(),
            peak: 0,
        }
    }

    /// Reuses the elements of these remembered lists and tracks the long lists read (see
    /// [`super::decode_memo`]).
    pub(super) fn with_memo(mut self, seen: Vec<Arc<EncodedItems>>) -> Decoder<'a> {
        self.seen = Some(seen);
        self
    }

    /// Reads one value that must end exactly at the end of the input.
    pub(super) fn whole(self) -> Result<Value> {
        self.whole_and_lists().map(|(value, _)| value)
    }

    /// [`Decoder::whole`], also handing back the long lists read (with a memo).
    pub(super) fn whole_and_lists(mut self) -> Result<(Value, Vec<Arc<EncodedItems>>)> {
        let value = self.value()?;
        if self.pos != self.buf.len() {
            return Err(self.error(format!(
                "{} trailing bytes after the value",
                self.buf.len() - self.pos
            )));
        }
        Ok((value, std::mem::take(&mut self.made)))
    }

    /// Reads one complete value.
    fn value(&mut self) -> Result<Value> {
        loop {
            let Some(mut value) = self.start()? else {
                continue;
            };
            // Hand the finished value to its container; finish containers it completes.
            loop {
                let last = match self.stack.last_mut() {
                    None => return Ok(value),
                    Some(Frame::List { items, left, track }) => {
                        items.push(value);
                        if let Some(t) = track {
                            t.ends.push(self.pos);
                        }
                        *left -= 1;
                        if *left > 0 {
                            break;
                        }
                        None
                    }
                    Some(Frame::Map { pairs, key, left }) => match key.take() {
                        None => {
                            *key = Some(value);
                            break;
                        }
                        Some(k) => {
                            pairs.push((k, value));
                            *left -= 1;
                            if *left > 0 {
                                break;
                            }
                            None
                        }
                    },
                    Some(Frame::Wrapped { .. } | Frame::Object { .. }) => Some(value),
                };
                value = self.finish(last)?;
            }
        }
    }

    /// Pops the innermost frame, complete now (extensions: with `last`, their payload
    /// value), and returns the finished value.
    fn finish(&mut self, last: Option<Value>) -> Result<Value> {
        let last = last.unwrap_or_default();
        let Some(frame) = self.stack.pop() else {
            return Ok(last);
        };
        self.depth -= frame.weight();
        Ok(match frame {
            Frame::List {
                items,
                track: Some(t),
                ..
            } => self.tracked_list(items, *t),
            Frame::List { items, .. } => Value::List(items.into()),
            Frame::Map { pairs, .. } => Value::Map(Map::from_pairs(pairs)),
            Frame::Wrapped { code, outer_limit } => {
                self.end_payload(outer_limit)?;
                let ext = if code == 6 {
                    Ext::NumpyArray(last)
                } else {
                    Ext::DeltaSnapshot(last)
                };
                Value::ext(ext)
            }
            Frame::Object {
                code,
                module,
                class,
                has_method,
                outer_limit,
            } => {
                let method = if has_method {
                    Some(self.name("method")?)
                } else {
                    None
                };
                self.end_payload(outer_limit)?;
                Value::Ext(std::sync::Arc::new(Ext::Object(Object {
                    code,
                    module,
                    class,
                    data: last,
                    method,
                })))
            }
        })
    }

    /// Reads a scalar or an empty container (`Some`), or opens a container (`None`).
    fn start(&mut self) -> Result<Option<Value>> {
        let marker = self.u8()?;
        let value = match marker {
            0x00..=0x7f => Value::Int(i64::from(marker)),
            0x80..=0x8f => return self.open_map(usize::from(marker & 0x0f)),
            0x90..=0x9f => return self.open_list(usize::from(marker & 0x0f)),
            0xa0..=0xbf => self.str(usize::from(marker & 0x1f))?,
            0xc0 => Value::Nil,
            0xc1 => return Err(self.error("reserved marker 0xc1".into())),
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4 => {
                let n = self.len8()?;
                self.bin(n)?
            }
            0xc5 => {
                let n = self.len16()?;
                self.bin(n)?
            }
            0xc6 => {
                let n = self.len32()?;
                self.bin(n)?
            }
            0xc7 => {
                let n = self.len8()?;
                return self.open_ext(n);
            }
            0xc8 => {
                let n = self.len16()?;
                return self.open_ext(n);
            }
            0xc9 => {
                let n = self.len32()?;
                return self.open_ext(n);
            }
            0xca => Value::Float(f64::from(f32::from_be_bytes(self.bytes()?))),
            0xcb => Value::Float(f64::from_be_bytes(self.bytes()?)),
            0xcc => Value::Int(i64::from(self.u8()?)),
            0xcd => Value::Int(i64::from(u16::from_be_bytes(self.bytes()?))),
            0xce => Value::Int(i64::from(u32::from_be_bytes(self.bytes()?))),
            0xcf => Value::from_u64(u64::from_be_bytes(self.bytes()?)),
            0xd0 => Value::Int(i64::from(i8::from_be_bytes(self.bytes()?))),
            0xd1 => Value::Int(i64::from(i16::from_be_bytes(self.bytes()?))),
            0xd2 => Value::Int(i64::from(i32::from_be_bytes(self.bytes()?))),
            0xd3 => Value::Int(i64::from_be_bytes(self.bytes()?)),
            0xd4 => return self.open_ext(1),
            0xd5 => return self.open_ext(2),
            0xd6 => return self.open_ext(4),
            0xd7 => return self.open_ext(8),
            0xd8 => return self.open_ext(16),
            0xd9 => {
                let n = self.len8()?;
                self.str(n)?
            }
            0xda => {
                let n = self.len16()?;
                self.str(n)?
            }
            0xdb => {
                let n = self.len32()?;
                self.str(n)?
            }
            0xdc => {
                let n = self.len16()?;
                return self.open_list(n);
            }
            0xdd => {
                let n = self.len32()?;
                return self.open_list(n);
            }
            0xde => {
                let n = self.len16()?;
                return self.open_map(n);
            }
            0xdf => {
                let n = self.len32()?;
                return self.open_map(n);
            }
            0xe0..=0xff => Value::Int(i64::from(marker as i8)),
        };
        Ok(Some(value))
    }

    /// Checks that `weight` more levels stay within the depth limit.
    fn enter(&self, weight: usize) -> Result<()> {
        if self.depth + weight > self.max_depth {
            return Err(self.error(format!("nesting deeper than {} levels", self.max_depth)));
        }
        Ok(())
    }

    /// Pushes a frame (its depth already checked by [`Decoder::enter`]).
    fn push(&mut self, frame: Frame) {
        self.depth += frame.weight();
        self.peak = self.peak.max(self.depth);
        self.stack.push(frame);
    }

    fn open_list(&mut self, n: usize) -> Result<Option<Value>> {
        self.enter(1)?;
        if n == 0 {
            // An empty container is a level too (as the encoder counts it).
            self.peak = self.peak.max(self.depth + 1);
            return Ok(Some(Value::List(Vec::new().into())));
        }
        // Every item takes at least one byte.
        self.need(n)?;
        let mut items = Vec::with_capacity(self.prealloc(n));
        let track = match &self.seen {
            Some(seen) if n >= CACHE_MIN_LEN => {
                let level = self.depth + 1;
                let mut t = Track {
                    start: self.pos,
                    whole: Vec::new(),
                    whole_bytes: 0,
                    ends: Vec::new(),
                    reused_depth: 0,
                    level,
                    saved_peak: self.peak,
                };
                let input = &self.buf[self.pos..self.limit];
                let reuse = best_prefix(seen, input, n)
                    .filter(|r| r.count > 0 && level + r.enc.depth <= self.max_depth);
                if let Some(r) = reuse {
                    items.extend_from_slice(&r.enc.items[..r.count]);
                    t.whole = r.enc.chunks[..r.whole_chunks].to_vec();
                    t.whole_bytes = t.whole.iter().map(|c| c.bytes.len()).sum();
                    let whole_count: usize = t.whole.iter().map(|c| c.ends.len()).sum();
                    if r.count > whole_count {
                        let chunk = &r.enc.chunks[r.whole_chunks];
                        let base = t.start + t.whole_bytes;
                        t.ends
                            .extend(chunk.ends[..r.count - whole_count].iter().map(|e| base + e));
                    }
                    t.reused_depth = r.enc.depth;
                    self.pos += r.bytes;
                }
                Some(Box::new(t))
            }
            _ => None,
        };
        let left = n - items.len();
        let tracked = track.is_some();
        self.push(Frame::List { items, left, track });
        if tracked {
            self.peak = self.depth;
        }
        if left == 0 {
            return self.finish(None).map(Some);
        }
        Ok(None)
    }

    /// A long list read with a memo: the list, keeping its elements' encoding, which the
    /// memo will remember.
    fn tracked_list(&mut self, items: Vec<Value>, t: Track) -> Value {
        let base = t.start + t.whole_bytes;
        let tail = EncodedChunk {
            bytes: self.buf[base..self.pos].to_vec(),
            ends: t.ends.iter().map(|e| e - base).collect(),
        };
        let depth = t.reused_depth.max(self.peak - t.level);
        self.peak = self.peak.max(t.saved_peak);
        let list = List::from(items.clone());
        let enc = list.set_encoding(Arc::new(decoded_encoding(items, t.whole, tail, depth)));
        self.made.push(enc);
        Value::List(list)
    }

    fn open_map(&mut self, n: usize) -> Result<Option<Value>> {
        self.enter(1)?;
        if n == 0 {
            self.peak = self.peak.max(self.depth + 1);
            return Ok(Some(Value::Map(Map::new())));
        }
        // Every entry takes at least two bytes.
        self.need(n.saturating_mul(2))?;
        let pairs = Vec::with_capacity(self.prealloc(n));
        self.push(Frame::Map {
            pairs,
            key: None,
            left: n,
        });
        Ok(None)
    }

    /// How many of `n` announced elements to preallocate, taken from the budget.
    fn prealloc(&mut self, n: usize) -> usize {
        let cap = n.min(PREALLOC_LIMIT).min(self.prealloc_budget);
        self.prealloc_budget -= cap;
        cap
    }

    /// Opens an extension whose payload is `n` bytes long (the type byte comes first).
    fn open_ext(&mut self, n: usize) -> Result<Option<Value>> {
        let code = i8::from_be_bytes(self.bytes()?);
        let object_code = ObjectCode::from_code(code);
        if object_code.is_none() && code != 6 && code != 7 {
            return Err(Error::UnknownExtension(code));
        }
        self.need(n)?;
        let outer_limit = self.limit;
        self.limit = self.pos + n;
        let Some(code) = object_code else {
            self.enter(1)?;
            self.push(Frame::Wrapped { code, outer_limit });
            return Ok(None);
        };
        // The tuple header, module and class are read here; the data is the frame's child.
        self.enter(2)?;
        let items = match self.u8()? {
            m @ 0x90..=0x9f => usize::from(m & 0x0f),
            0xdc => self.len16()?,
            0xdd => self.len32()?,
            m => {
                return Err(self.error(format!(
                    "extension {} payload is not an array (marker {m:#04x})",
                    code as i8
                )))
            }
        };
        if items != 3 && items != 4 {
            return Err(self.error(format!(
                "extension {} payload has {items} items, expected 3 or 4",
                code as i8
            )));
        }
        let module = self.name("module")?;
        let class = self.name("class")?;
        self.push(Frame::Object {
            code,
            module,
            class,
            has_method: items == 4,
            outer_limit,
        });
        Ok(None)
    }

    /// Checks that an extension payload was read exactly, and restores the outer limit.
    fn end_payload(&mut self, outer_limit: usize) -> Result<()> {
        if self.pos != self.limit {
            return Err(self.error(format!(
                "{} trailing bytes in an extension payload",
                self.limit - self.pos
            )));
        }
        self.limit = outer_limit;
        Ok(())
    }

    fn bin(&mut self, n: usize) -> Result<Value> {
        Ok(Value::Bytes(self.take(n)?.into()))
    }

    fn str(&mut self, n: usize) -> Result<Value> {
        let text = self.text(n)?;
        if n > SHORT_STRING || self.stack.is_empty() {
            return Ok(Value::Str(text.into()));
        }
        let short = self
            .short
            .get_or_insert_with(|| Box::new(ShortStrings::new()));
        Ok(Value::Str(short.get(text)))
    }

    /// Reads `n` bytes of UTF-8.
    fn text(&mut self, n: usize) -> Result<&'a str> {
        let at = self.pos;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes)
            .map_err(|e| Error::Decode(format!("invalid UTF-8 in string at offset {at}: {e}")))
    }

    /// Reads a string field of an object payload.
    fn name(&mut self, what: &str) -> Result<String> {
        let n = match self.u8()? {
            m @ 0xa0..=0xbf => usize::from(m & 0x1f),
            0xd9 => self.len8()?,
            0xda => self.len16()?,
            0xdb => self.len32()?,
            m => {
                return Err(self.error(format!(
                    "extension {what} is not a string (marker {m:#04x})"
                )))
            }
        };
        Ok(self.text(n)?.to_owned())
    }

    /// Fails unless at least `n` bytes remain before the current limit.
    fn need(&self, n: usize) -> Result<()> {
        let left = self.limit - self.pos;
        if n > left {
            return Err(self.error(format!("truncated: {n} bytes needed, {left} left")));
        }
        Ok(())
    }

    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        self.need(n)?;
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    /// The next `N` bytes as an array.
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }

    fn len8(&mut self) -> Result<usize> {
        Ok(usize::from(self.u8()?))
    }

    fn len16(&mut self) -> Result<usize> {
        Ok(usize::from(u16::from_be_bytes(self.bytes()?)))
    }

    fn len32(&mut self) -> Result<usize> {
        let n = u32::from_be_bytes(self.bytes()?);
        usize::try_from(n).map_err(|_| self.error(format!("length {n} does not fit in memory")))
    }

    fn error(&self, msg: String) -> Error {
        Error::Decode(format!("{msg} (offset {})", self.pos))
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
