//! A reader of JSON as Postgres prints JSONB, with exact numbers.

use stategraph_checkpoint::{Error, Map, Result, Value};

use super::MAX_DEPTH;

/// Reads JSON text (as Postgres prints a JSONB value) into a value: objects become maps
/// with string keys in the printed order; a number with a fraction or an exponent becomes
/// a float (correctly rounded, however many digits Postgres prints), any other number an
/// integer (beyond the 64-bit range, a float).
///
/// The parser is this crate's own: `serde_json` (without its `float_roundtrip` feature,
/// which would change every crate of the workspace) rounds long decimals inexactly and
/// refuses some, and JSONB prints every float positionally, up to 300-odd digits.
pub(crate) fn parse(text: &str) -> Result<Value> {
    let mut parser = Parser {
        text: text.as_bytes(),
        at: 0,
    };
    let value = parser.value(0)?;
    parser.skip_ws();
    if parser.at != parser.text.len() {
        return Err(parser.error("trailing characters"));
    }
    Ok(value)
}

/// A recursive-descent reader of one JSON document.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> Error {
        Error::Decode(format!("JSONB value: {what} at byte {}", self.at))
    }

    fn skip_ws(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        if self.text.get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, byte: u8) -> Result<()> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {:?}", byte as char)))
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value> {
        if self.text[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("unknown literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.skip_ws();
        match self.text.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut map = Map::new();
                if self.eat(b'}') {
                    return Ok(Value::Map(map));
                }
                loop {
                    self.skip_ws();
                    let key = self.string()?;
                    self.expect(b':')?;
                    map.insert(key, self.value(depth + 1)?);
                    if self.eat(b'}') {
                        return Ok(Value::Map(map));
                    }
                    self.expect(b',')?;
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Value::List(items.into()));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Ok(Value::List(items.into()));
                    }
                    self.expect(b',')?;
                }
            }
            Some(b'"') => Ok(Value::Str((self.string()?).into())),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Nil),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    fn number(&mut self) -> Result<Value> {
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
        {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.text[start..self.at])
            .map_err(|_| self.error("bad number"))?;
        let float = || {
            text.parse::<f64>()
                .map(Value::Float)
                .map_err(|_| self.error("bad number"))
        };
        if text.contains(['.', 'e', 'E']) {
            return float();
        }
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        match text.parse::<u64>() {
            Ok(u) => Ok(Value::from_u64(u)),
            Err(_) => float(),
        }
    }

    /// A string at the current position (after whitespace), escapes resolved.
    fn string(&mut self) -> Result<String> {
        if self.text.get(self.at) != Some(&b'"') {
            return Err(self.error("expected a string"));
        }
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.text.get(self.at) else {
                return Err(self.error("unterminated string"));
            };
            self.at += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.text.get(self.at) else {
                        return Err(self.error("unterminated escape"));
                    };
                    self.at += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.error("unknown escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("invalid UTF-8"))
    }

    /// The character of a `\uXXXX` escape (a surrogate pair takes two).
    fn unicode_escape(&mut self) -> Result<char> {
        let high = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&high) {
            if !self.text[self.at..].starts_with(b"\\u") {
                return Err(self.error("lone surrogate"));
            }
            self.at += 2;
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(self.error("bad surrogate pair"));
            }
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| self.error("bad unicode escape"))
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("bad unicode escape"))?;
        self.at += 4;
        Ok(digits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stategraph_checkpoint::list;

    #[test]
    fn postgres_output_parses_with_escapes_and_big_numbers() {
        let text = r#"{"a": [1, -2, 18446744073709551615, 1e400, 2.50],
            "s\u00e9": "q\"\\\/\b\f\n\r\t\ud83d\ude00", "n": null, "t": true, "f": false}"#;
        let v = parse(text).unwrap();
        assert_eq!(
            v.get("a"),
            Some(&list![1, -2, u64::MAX, f64::INFINITY, 2.5])
        );
        assert_eq!(
            v.get("s\u{e9}"),
            Some(&Value::from("q\"\\/\u{8}\u{c}\n\r\t\u{1f600}"))
        );
        for bad in [
            "",
            "{",
            "[1,]",
            "\"\\ud800\"",
            "nul",
            "1 2",
            "{\"a\" 1}",
            "\"\\x\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(MAX_DEPTH + 2);
        assert!(parse(&deep).is_err());
    }
}
