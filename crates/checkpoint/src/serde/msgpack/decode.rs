//! The msgpack reader: every length checked against the remaining input, depth bounded.

use crate::error::{Error, Result};
use crate::ext::{Ext, Object, ObjectCode};
use crate::value::{Map, Value};

/// The most elements preallocated for one array or map, whatever its length prefix says;
/// longer collections grow as their elements are actually read.
const PREALLOC_LIMIT: usize = 1024;

/// Reads values from a byte slice.
pub(super) struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    max_depth: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder over `buf`, refusing nesting deeper than `max_depth`.
    pub(super) fn new(buf: &'a [u8], max_depth: usize) -> Decoder<'a> {
        Decoder {
            buf,
            pos: 0,
            max_depth,
        }
    }

    /// Reads one value at `depth` that must end exactly at the end of the input.
    pub(super) fn whole(&mut self, depth: usize) -> Result<Value> {
        let value = self.value(depth)?;
        if self.pos != self.buf.len() {
            return Err(self.error(format!(
                "{} trailing bytes after the value",
                self.buf.len() - self.pos
            )));
        }
        Ok(value)
    }

    /// Reads one value that sits inside `depth` containers.
    fn value(&mut self, depth: usize) -> Result<Value> {
        let marker = self.u8()?;
        Ok(match marker {
            0x00..=0x7f => Value::Int(i64::from(marker)),
            0x80..=0x8f => self.map(usize::from(marker & 0x0f), depth)?,
            0x90..=0x9f => self.list(usize::from(marker & 0x0f), depth)?,
            0xa0..=0xbf => self.str(usize::from(marker & 0x1f))?,
            0xc0 => Value::Nil,
            0xc1 => return Err(self.error("reserved marker 0xc1".into())),
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4 => {
                let n = self.len8()?;
                Value::Bytes(self.take(n)?.to_vec())
            }
            0xc5 => {
                let n = self.len16()?;
                Value::Bytes(self.take(n)?.to_vec())
            }
            0xc6 => {
                let n = self.len32()?;
                Value::Bytes(self.take(n)?.to_vec())
            }
            0xc7 => {
                let n = self.len8()?;
                self.ext(n, depth)?
            }
            0xc8 => {
                let n = self.len16()?;
                self.ext(n, depth)?
            }
            0xc9 => {
                let n = self.len32()?;
                self.ext(n, depth)?
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
            0xd4 => self.ext(1, depth)?,
            0xd5 => self.ext(2, depth)?,
            0xd6 => self.ext(4, depth)?,
            0xd7 => self.ext(8, depth)?,
            0xd8 => self.ext(16, depth)?,
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
                self.list(n, depth)?
            }
            0xdd => {
                let n = self.len32()?;
                self.list(n, depth)?
            }
            0xde => {
                let n = self.len16()?;
                self.map(n, depth)?
            }
            0xdf => {
                let n = self.len32()?;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int(i64::from(marker as i8)),
        })
    }

    /// The depth of a container's children, or an error past the limit.
    fn enter(&self, depth: usize) -> Result<usize> {
        let inner = depth + 1;
        if inner > self.max_depth {
            return Err(self.error(format!("nesting deeper than {} levels", self.max_depth)));
        }
        Ok(inner)
    }

    fn list(&mut self, n: usize, depth: usize) -> Result<Value> {
        let inner = self.enter(depth)?;
        // Every element takes at least one byte.
        self.need(n)?;
        let mut items = Vec::with_capacity(n.min(PREALLOC_LIMIT));
        for _ in 0..n {
            items.push(self.value(inner)?);
        }
        Ok(Value::List(items))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value> {
        let inner = self.enter(depth)?;
        // Every entry takes at least two bytes.
        self.need(n.saturating_mul(2))?;
        let mut pairs = Vec::with_capacity(n.min(PREALLOC_LIMIT));
        for _ in 0..n {
            let k = self.value(inner)?;
            let v = self.value(inner)?;
            pairs.push((k, v));
        }
        Ok(Value::Map(Map::from_pairs(pairs)))
    }

    fn str(&mut self, n: usize) -> Result<Value> {
        Ok(Value::Str(self.text(n)?.to_owned()))
    }

    /// Reads `n` bytes of UTF-8.
    fn text(&mut self, n: usize) -> Result<&'a str> {
        let at = self.pos;
        let bytes = self.take(n)?;
        std::str::from_utf8(bytes)
            .map_err(|e| Error::Decode(format!("invalid UTF-8 in string at offset {at}: {e}")))
    }

    /// Reads an extension whose payload is `n` bytes long (the type byte comes first).
    fn ext(&mut self, n: usize, depth: usize) -> Result<Value> {
        let inner = self.enter(depth)?;
        let code = i8::from_be_bytes(self.bytes()?);
        let object_code = ObjectCode::from_code(code);
        if object_code.is_none() && code != 6 && code != 7 {
            return Err(Error::UnknownExtension(code));
        }
        let payload = self.take(n)?;
        let mut sub = Decoder::new(payload, self.max_depth);
        let ext = match object_code {
            None if code == 6 => Ext::NumpyArray(sub.whole(inner)?),
            None => Ext::DeltaSnapshot(sub.whole(inner)?),
            Some(code) => {
                let object = sub.object(code, inner)?;
                if sub.pos != payload.len() {
                    return Err(sub.error("trailing bytes in extension payload".into()));
                }
                Ext::Object(object)
            }
        };
        Ok(Value::Ext(Box::new(ext)))
    }

    /// Reads an object payload, the tuple `(module, class, data[, method])`.
    fn object(&mut self, code: ObjectCode, depth: usize) -> Result<Object> {
        let inner = self.enter(depth)?;
        let n = match self.u8()? {
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
        if n != 3 && n != 4 {
            return Err(self.error(format!(
                "extension {} payload has {n} items, expected 3 or 4",
                code as i8
            )));
        }
        let module = self.name("module")?;
        let class = self.name("class")?;
        let data = self.value(inner)?;
        let method = if n == 4 {
            Some(self.name("method")?)
        } else {
            None
        };
        Ok(Object {
            code,
            module,
            class,
            data,
            method,
        })
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

    /// Fails unless at least `n` bytes remain.
    fn need(&self, n: usize) -> Result<()> {
        if n > self.buf.len() - self.pos {
            return Err(self.error(format!(
                "truncated: {n} bytes needed, {} left",
                self.buf.len() - self.pos
            )));
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
