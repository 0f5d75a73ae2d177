//! The msgpack writer: smallest encodings, extension headers written in place.

use crate::error::{Error, Result};
use crate::ext::{Ext, Object};
use crate::value::Value;

/// Room reserved before an extension payload: the largest header (`c9`, 4 length bytes,
/// the type byte). The unused part is closed up once the payload length is known.
const EXT_HEADER_ROOM: usize = 6;

/// A container being written: what is left of it.
enum Frame<'v> {
    /// Array items still to write.
    Items(std::slice::Iter<'v, Value>),
    /// Map entries still to write, and the value of an entry whose key was just written.
    Entries(std::slice::Iter<'v, (Value, Value)>, Option<&'v Value>),
    /// An extension whose payload is being written: where its header room starts, and
    /// for objects the method string that ends the tuple.
    Ext {
        start: usize,
        code: i8,
        object: bool,
        method: Option<&'v str>,
    },
}

impl Frame<'_> {
    /// How many nesting levels the frame counts for (an object is the extension and the
    /// tuple inside it), as the decoder counts them.
    fn weight(&self) -> usize {
        match self {
            Frame::Ext { object: true, .. } => 2,
            _ => 1,
        }
    }
}

/// Writes values to a byte vector, iteratively (no recursion, whatever the nesting).
pub(super) struct Encoder<'a, 'v> {
    out: &'a mut Vec<u8>,
    max_depth: usize,
    depth: usize,
    /// The deepest level reached so far.
    peak: usize,
    stack: Vec<Frame<'v>>,
}

impl<'a, 'v> Encoder<'a, 'v> {
    /// An encoder appending to `out`, refusing nesting deeper than `max_depth`.
    pub(super) fn new(out: &'a mut Vec<u8>, max_depth: usize) -> Encoder<'a, 'v> {
        Encoder::nested(out, max_depth, 0)
    }

    /// An encoder for a value that sits `depth` levels down (e.g. an element of a list
    /// whose header is written elsewhere), with the same overall limit.
    pub(super) fn nested(out: &'a mut Vec<u8>, max_depth: usize, depth: usize) -> Encoder<'a, 'v> {
        Encoder {
            out,
            max_depth,
            depth,
            peak: depth,
            stack: Vec::new(),
        }
    }

    /// Writes `root` and everything inside it.
    pub(super) fn write(self, root: &'v Value) -> Result<()> {
        self.write_peak(root).map(drop)
    }

    /// Writes `root` and everything inside it; returns the deepest level reached.
    pub(super) fn write_peak(mut self, root: &'v Value) -> Result<usize> {
        let mut next = Some(root);
        loop {
            if let Some(value) = next.take() {
                next = self.value(value)?;
                continue;
            }
            // The current container's next child, or close it.
            let Some(frame) = self.stack.last_mut() else {
                return Ok(self.peak);
            };
            next = match frame {
                Frame::Items(items) => items.next(),
                Frame::Entries(entries, pending) => match pending.take() {
                    Some(v) => Some(v),
                    None => entries.next().map(|(k, v)| {
                        *pending = Some(v);
                        k
                    }),
                },
                Frame::Ext { .. } => None,
            };
            if next.is_none() {
                self.close()?;
            }
        }
    }

    /// Writes a scalar, or the header of a container and pushes its frame; returns the
    /// first child to write when there is one right away.
    fn value(&mut self, value: &'v Value) -> Result<Option<&'v Value>> {
        match value {
            Value::Nil => self.out.push(0xc0),
            Value::Bool(b) => self.out.push(if *b { 0xc3 } else { 0xc2 }),
            Value::Int(i) => match u64::try_from(*i) {
                Ok(u) => self.uint(u),
                Err(_) => self.negative(*i),
            },
            Value::UInt(u) => self.uint(*u),
            Value::Float(x) => {
                self.out.push(0xcb);
                self.out.extend_from_slice(&x.to_bits().to_be_bytes());
            }
            Value::Str(s) => self.str(s)?,
            Value::Bytes(b) => self.bin(b)?,
            Value::List(items) => {
                self.enter(1)?;
                self.array_header(items.len())?;
                self.push(Frame::Items(items.iter()));
            }
            Value::Map(map) => {
                self.enter(1)?;
                self.map_header(map.len())?;
                self.push(Frame::Entries(map.as_slice().iter(), None));
            }
            Value::Ext(ext) => return self.open_ext(ext).map(Some),
        }
        Ok(None)
    }

    /// Reserves header room for an extension, writes an object's tuple header, module and
    /// class, pushes the frame, and returns the value to write as the payload.
    fn open_ext(&mut self, ext: &'v Ext) -> Result<&'v Value> {
        let start = self.out.len();
        let (frame, payload) = match ext {
            Ext::Object(object) => {
                self.enter(2)?;
                self.out.extend_from_slice(&[0; EXT_HEADER_ROOM]);
                self.object_head(object)?;
                let frame = Frame::Ext {
                    start,
                    code: ext.code(),
                    object: true,
                    method: object.method.as_deref(),
                };
                (frame, &object.data)
            }
            Ext::NumpyArray(v) | Ext::DeltaSnapshot(v) => {
                self.enter(1)?;
                self.out.extend_from_slice(&[0; EXT_HEADER_ROOM]);
                let frame = Frame::Ext {
                    start,
                    code: ext.code(),
                    object: false,
                    method: None,
                };
                (frame, v)
            }
        };
        self.push(frame);
        Ok(payload)
    }

    /// Writes the start of an object payload: the tuple header, module and class.
    fn object_head(&mut self, object: &Object) -> Result<()> {
        self.out
            .push(if object.method.is_some() { 0x94 } else { 0x93 });
        self.str(&object.module)?;
        self.str(&object.class)
    }

    /// Pops the innermost frame; an extension gets its method and its header.
    fn close(&mut self) -> Result<()> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        self.depth -= frame.weight();
        if let Frame::Ext {
            start,
            code,
            method,
            ..
        } = frame
        {
            if let Some(method) = method {
                self.str(method)?;
            }
            self.ext_header(start, code)?;
        }
        Ok(())
    }

    /// Writes the minimal header of the extension whose room starts at `start`, just
    /// before its payload, and closes the gap.
    fn ext_header(&mut self, start: usize, code: i8) -> Result<()> {
        let body = start + EXT_HEADER_ROOM;
        let len = self.out.len() - body;
        let mut header = [0u8; EXT_HEADER_ROOM];
        let h = ext_header(len, code, &mut header)?;
        self.out[body - h..body].copy_from_slice(&header[..h]);
        if h < EXT_HEADER_ROOM {
            self.out.copy_within(body - h.., start);
            self.out.truncate(self.out.len() - (EXT_HEADER_ROOM - h));
        }
        Ok(())
    }

    /// Pushes a frame (its depth already checked by [`Encoder::enter`]).
    fn push(&mut self, frame: Frame<'v>) {
        self.depth += frame.weight();
        self.peak = self.peak.max(self.depth);
        self.stack.push(frame);
    }

    /// Checks that `weight` more levels stay within the depth limit.
    fn enter(&self, weight: usize) -> Result<()> {
        if self.depth + weight > self.max_depth {
            return Err(Error::Encode(format!(
                "value nested deeper than {} levels",
                self.max_depth
            )));
        }
        Ok(())
    }

    fn uint(&mut self, u: u64) {
        write_uint(self.out, u);
    }

    /// Writes a negative integer (`i < 0`).
    fn negative(&mut self, i: i64) {
        write_negative(self.out, i);
    }

    fn str(&mut self, s: &str) -> Result<()> {
        write_str(self.out, s)
    }

    fn bin(&mut self, b: &[u8]) -> Result<()> {
        write_sized(self.out, b.len(), [0xc4, 0xc5, 0xc6], "bytes")?;
        self.out.extend_from_slice(b);
        Ok(())
    }

    fn array_header(&mut self, n: usize) -> Result<()> {
        write_array_header(self.out, n)
    }

    fn map_header(&mut self, n: usize) -> Result<()> {
        write_map_header(self.out, n)
    }
}

/// Writes a non-negative integer in its smallest form.
pub(super) fn write_uint(out: &mut Vec<u8>, u: u64) {
    if u < 0x80 {
        out.push(u as u8);
    } else if u <= 0xff {
        out.extend_from_slice(&[0xcc, u as u8]);
    } else if u <= 0xffff {
        out.push(0xcd);
        out.extend_from_slice(&(u as u16).to_be_bytes());
    } else if u <= 0xffff_ffff {
        out.push(0xce);
        out.extend_from_slice(&(u as u32).to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&u.to_be_bytes());
    }
}

/// Writes a negative integer (`i < 0`) in its smallest form.
pub(super) fn write_negative(out: &mut Vec<u8>, i: i64) {
    if i >= -32 {
        out.push(i as u8);
    } else if i >= i64::from(i8::MIN) {
        out.extend_from_slice(&[0xd0, i as u8]);
    } else if i >= i64::from(i16::MIN) {
        out.push(0xd1);
        out.extend_from_slice(&(i as i16).to_be_bytes());
    } else if i >= i64::from(i32::MIN) {
        out.push(0xd2);
        out.extend_from_slice(&(i as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

/// Writes any integer in its smallest form.
pub(super) fn write_int(out: &mut Vec<u8>, i: i64) {
    if i >= 0 {
        write_uint(out, i as u64);
    } else {
        write_negative(out, i);
    }
}

/// Writes a string. Inlined: a checkpoint writes hundreds of short strings (channel and
/// node names, versions), and the call itself cost as much as the header.
#[inline]
pub(super) fn write_str(out: &mut Vec<u8>, s: &str) -> Result<()> {
    write_str_header(out, s.len())?;
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

/// Writes the header of a string of `n` bytes.
#[inline]
pub(super) fn write_str_header(out: &mut Vec<u8>, n: usize) -> Result<()> {
    if n < 32 {
        out.push(0xa0 | n as u8);
        Ok(())
    } else {
        write_sized(out, n, [0xd9, 0xda, 0xdb], "string")
    }
}

/// Writes an array header.
pub(super) fn write_array_header(out: &mut Vec<u8>, n: usize) -> Result<()> {
    if n < 16 {
        out.push(0x90 | n as u8);
        Ok(())
    } else {
        write_sized16(out, n, [0xdc, 0xdd], "array")
    }
}

/// Writes a map header.
pub(super) fn write_map_header(out: &mut Vec<u8>, n: usize) -> Result<()> {
    if n < 16 {
        out.push(0x80 | n as u8);
        Ok(())
    } else {
        write_sized16(out, n, [0xde, 0xdf], "map")
    }
}

/// Writes a length with an 8, 16 or 32-bit marker.
fn write_sized(out: &mut Vec<u8>, n: usize, markers: [u8; 3], what: &str) -> Result<()> {
    if n <= 0xff {
        out.extend_from_slice(&[markers[0], n as u8]);
        Ok(())
    } else {
        write_sized16(out, n, [markers[1], markers[2]], what)
    }
}

/// Writes a length with a 16 or 32-bit marker.
fn write_sized16(out: &mut Vec<u8>, n: usize, markers: [u8; 2], what: &str) -> Result<()> {
    if n <= 0xffff {
        out.push(markers[0]);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        let n = u32::try_from(n).map_err(|_| too_long(what, n))?;
        out.push(markers[1]);
        out.extend_from_slice(&n.to_be_bytes());
    }
    Ok(())
}

/// Fills `header` with the smallest extension header for a payload of `len` bytes and
/// returns its length.
fn ext_header(len: usize, code: i8, header: &mut [u8; EXT_HEADER_ROOM]) -> Result<usize> {
    let code = code as u8;
    let fixext = match len {
        1 => Some(0xd4),
        2 => Some(0xd5),
        4 => Some(0xd6),
        8 => Some(0xd7),
        16 => Some(0xd8),
        _ => None,
    };
    let h = if let Some(marker) = fixext {
        header[..2].copy_from_slice(&[marker, code]);
        2
    } else if len <= 0xff {
        header[..3].copy_from_slice(&[0xc7, len as u8, code]);
        3
    } else if len <= 0xffff {
        header[0] = 0xc8;
        header[1..3].copy_from_slice(&(len as u16).to_be_bytes());
        header[3] = code;
        4
    } else {
        let n = u32::try_from(len).map_err(|_| too_long("extension payload", len))?;
        header[0] = 0xc9;
        header[1..5].copy_from_slice(&n.to_be_bytes());
        header[5] = code;
        6
    };
    Ok(h)
}

fn too_long(what: &str, n: usize) -> Error {
    Error::Encode(format!(
        "{what} of length {n} exceeds msgpack's 32-bit limit"
    ))
}
