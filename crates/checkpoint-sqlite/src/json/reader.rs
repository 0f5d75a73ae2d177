//! Reading metadata JSON as Python's `json.loads` does.

use indexmap::IndexMap;
use stategraph_checkpoint::{Error, Map, Result, Value};

/// How deeply arrays and objects may nest when reading (Python stops near 1000 with a
/// `RecursionError`).
const MAX_DEPTH: usize = 512;

/// `json.loads(bytes)` for UTF-8 text (an optional byte order mark is skipped).
pub fn from_json(bytes: &[u8]) -> Result<Value> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::Decode(format!("metadata is not UTF-8: {e}")))?;
    let mut reader = Reader { text, pos: 0 };
    reader.skip_ws();
    let value = reader.value(0)?;
    reader.skip_ws();
    if reader.pos != text.len() {
        return Err(reader.error("extra data after the JSON value"));
    }
    Ok(value)
}

/// A cursor over JSON text.
struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> Error {
        Error::Decode(format!("metadata JSON: {what} at byte {}", self.pos))
    }

    fn rest(&self) -> &str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Consumes `word` if the text continues with it.
    fn eat(&mut self, word: &str) -> bool {
        let found = self.rest().starts_with(word);
        if found {
            self.pos += word.len();
        }
        found
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::Str((self.string()?).into())),
            _ if self.eat("null") => Ok(Value::Nil),
            _ if self.eat("true") => Ok(Value::Bool(true)),
            _ if self.eat("false") => Ok(Value::Bool(false)),
            _ if self.eat("NaN") => Ok(Value::Float(f64::NAN)),
            _ if self.eat("Infinity") => Ok(Value::Float(f64::INFINITY)),
            _ if self.eat("-Infinity") => Ok(Value::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value> {
        self.pos += 1;
        let mut entries: IndexMap<String, Value> = IndexMap::new();
        self.skip_ws();
        if self.eat("}") {
            return Ok(Value::Map(Map::new()));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key = self.string()?;
            self.skip_ws();
            if !self.eat(":") {
                return Err(self.error("expected ':'"));
            }
            self.skip_ws();
            let value = self.value(depth + 1)?;
            entries.insert(key, value);
            self.skip_ws();
            if self.eat("}") {
                break;
            }
            if !self.eat(",") {
                return Err(self.error("expected ',' or '}'"));
            }
        }
        let pairs = entries
            .into_iter()
            .map(|(k, v)| (Value::Str(k.into()), v))
            .collect();
        Ok(Value::Map(Map::from_pairs(pairs)))
    }

    fn array(&mut self, depth: usize) -> Result<Value> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat("]") {
            return Ok(Value::List(items.into()));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            if self.eat("]") {
                break;
            }
            if !self.eat(",") {
                return Err(self.error("expected ',' or ']'"));
            }
        }
        Ok(Value::List(items.into()))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`: an integer without fraction or
    /// exponent, else a float.
    fn number(&mut self) -> Result<Value> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let digits = |mut i: usize| {
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let mut i = start;
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        match bytes.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i),
            _ => return Err(self.error("expected a digit")),
        }
        let mut is_float = false;
        if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i = digits(i + 1);
            is_float = true;
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(bytes.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if bytes.get(j).is_some_and(u8::is_ascii_digit) {
                i = digits(j);
                is_float = true;
            }
        }
        self.pos = i;
        let text = self.text.get(start..i).unwrap_or("");
        if is_float {
            return text
                .parse::<f64>()
                .map(Value::Float)
                .map_err(|_| self.error("bad number"));
        }
        if let Ok(n) = text.parse::<i64>() {
            return Ok(Value::Int(n));
        }
        text.parse::<u64>()
            .map(Value::from_u64)
            .map_err(|_| self.error("integer outside the 64-bit range"))
    }

    /// A string, with escapes resolved; a lone surrogate escape becomes U+FFFD.
    fn string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = self.rest();
            let Some(stop) = rest.find(['"', '\\']) else {
                return Err(self.error("unterminated string"));
            };
            let chunk = &rest[..stop];
            if chunk.chars().any(|c| u32::from(c) < 0x20) {
                return Err(self.error("control character in string"));
            }
            out.push_str(chunk);
            self.pos += stop;
            if self.eat("\"") {
                return Ok(out);
            }
            self.pos += 1;
            let escape = self.peek();
            self.pos += 1;
            match escape {
                Some(b'"') => out.push('"'),
                Some(b'\\') => out.push('\\'),
                Some(b'/') => out.push('/'),
                Some(b'b') => out.push('\u{8}'),
                Some(b'f') => out.push('\u{c}'),
                Some(b'n') => out.push('\n'),
                Some(b'r') => out.push('\r'),
                Some(b't') => out.push('\t'),
                Some(b'u') => out.push(self.unicode_escape()?),
                _ => return Err(self.error("bad escape")),
            }
        }
    }

    /// The character of a `\uXXXX` escape (the `\u` already read), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char> {
        let high = self.hex4()?;
        if (0xd800..0xdc00).contains(&high) && self.rest().starts_with("\\u") {
            let save = self.pos;
            self.pos += 2;
            let low = self.hex4()?;
            if (0xdc00..0xe000).contains(&low) {
                let c = 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00);
                return Ok(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            self.pos = save;
        }
        Ok(char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("bad \\u escape"))?;
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.error("bad \\u escape"))
    }
}
