//! A JSON text reader with Python's grammar, exact numbers and a hook on every object.
//!
//! Two readers share it: the legacy `json` tag ([`crate::serde::json_legacy`]), where
//! Python runs `json.loads(bytes, object_hook=...)`, and the Postgres saver, which reads
//! JSONB columns as Postgres prints them. It accepts what Python's `json.loads` accepts,
//! with these refusals (never acceptances Python lacks):
//!
//! * integers beyond the 64-bit range, which a [`Value`] cannot hold, are refused unless
//!   [`JsonOptions::big_ints_as_floats`] (then a float, as JSONB `numeric` reads back);
//! * lone surrogate escapes (`"\ud800"`), which a Rust string cannot hold;
//! * nesting deeper than [`JsonOptions::max_depth`];
//! * text that is not UTF-8 (Python also reads UTF-16 and UTF-32 bytes).
//!
//! As in Python: numbers follow JSON's grammar (`01`, `+1`, `1.` are refused) and those
//! with a fraction or an exponent are floats (correctly rounded, however many digits);
//! `NaN`, `Infinity` and `-Infinity` are floats; raw control characters inside strings are
//! refused; a UTF-8 byte-order mark is skipped; a key given twice keeps its first position
//! and its last value. Reading is linear in the size of the text: duplicate keys are found
//! with a hash index on wide objects, never by rescanning.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::value::{Map, Value};

/// What the reader accepts beyond Python's grammar, and its depth limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonOptions {
    /// Read integers outside `i64`/`u64` as floats instead of refusing them.
    pub big_ints_as_floats: bool,
    /// How deep arrays and objects may nest.
    pub max_depth: usize,
}

impl Default for JsonOptions {
    /// Big integers refused, 512 levels.
    fn default() -> Self {
        JsonOptions {
            big_ints_as_floats: false,
            max_depth: 512,
        }
    }
}

/// One step of a path inside a value, for errors that name where they happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A map entry, by key.
    Key(String),
    /// A list item, by position.
    Index(usize),
}

/// Formats a path as `$`, `$.key`, `$["odd key"]`, `$.list[3]`.
pub fn path_text(steps: &[PathStep]) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            PathStep::Key(k)
                if !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !k.starts_with(|c: char| c.is_ascii_digit()) =>
            {
                out.push('.');
                out.push_str(k);
            }
            PathStep::Key(k) => {
                let quoted = serde_json::to_string(k).unwrap_or_default();
                let _ = write!(out, "[{quoted}]");
            }
            PathStep::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Why a hook refused an object: the reason, and the path from the refused object to
/// the root (innermost step first; reversed when reported).
#[derive(Debug)]
pub struct Refusal {
    /// What was refused and why.
    pub reason: String,
    steps: Vec<PathStep>,
}

impl Refusal {
    /// A refusal of the object the hook was given.
    pub fn new(reason: impl Into<String>) -> Refusal {
        Refusal {
            reason: reason.into(),
            steps: Vec::new(),
        }
    }
}

/// Reads JSON text into a value, objects as maps with string keys in text order.
pub fn parse(text: &[u8], options: &JsonOptions) -> Result<Value> {
    parse_with(text, options, &mut |map| Ok(Value::Map(map)))
}

/// Reads JSON text, handing every object (after its members, bottom-up, as Python's
/// `object_hook`) to `hook`, whose result takes the object's place. A hook's
/// [`Refusal`] becomes [`Error::Refused`] with the path of the refused object.
pub fn parse_with(
    text: &[u8],
    options: &JsonOptions,
    hook: &mut dyn FnMut(Map) -> Result<Value, Refusal>,
) -> Result<Value> {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let mut parser = Parser {
        text,
        at: 0,
        options,
        hook,
    };
    let value = match parser.value(0) {
        Ok(v) => v,
        Err(Fail::Syntax(e)) => return Err(e),
        Err(Fail::Refused(mut r)) => {
            r.steps.reverse();
            return Err(Error::Refused {
                path: path_text(&r.steps),
                reason: r.reason,
            });
        }
    };
    parser.skip_ws();
    if parser.at != parser.text.len() {
        return Err(parser.error("trailing characters"));
    }
    Ok(value)
}

enum Fail {
    Syntax(Error),
    Refused(Refusal),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Syntax(e)
    }
}

/// Adds a path step to a refusal passing outwards.
fn at(step: impl FnOnce() -> PathStep) -> impl FnOnce(Fail) -> Fail {
    move |fail| match fail {
        Fail::Refused(mut r) => {
            r.steps.push(step());
            Fail::Refused(r)
        }
        other => other,
    }
}

/// A recursive-descent reader of one JSON document.
struct Parser<'a, 'h> {
    text: &'a [u8],
    at: usize,
    options: &'a JsonOptions,
    hook: &'h mut dyn FnMut(Map) -> Result<Value, Refusal>,
}

impl Parser<'_, '_> {
    fn error(&self, what: &str) -> Error {
        Error::Decode(format!("JSON: {what} at byte {}", self.at))
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

    fn value(&mut self, depth: usize) -> Result<Value, Fail> {
        if depth > self.options.max_depth {
            return Err(self.error("nested too deeply").into());
        }
        self.skip_ws();
        match self.text.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                self.object(depth)
            }
            Some(b'[') => {
                self.at += 1;
                self.array(depth)
            }
            Some(b'"') => Ok(Value::Str(self.string()?.into())),
            Some(b't') => Ok(self.literal("true", Value::Bool(true))?),
            Some(b'f') => Ok(self.literal("false", Value::Bool(false))?),
            Some(b'n') => Ok(self.literal("null", Value::Nil)?),
            Some(b'N') => Ok(self.literal("NaN", Value::Float(f64::NAN))?),
            Some(b'I') => Ok(self.literal("Infinity", Value::Float(f64::INFINITY))?),
            Some(b'-') if self.text[self.at..].starts_with(b"-Infinity") => {
                Ok(self.literal("-Infinity", Value::Float(f64::NEG_INFINITY))?)
            }
            Some(b'-' | b'0'..=b'9') => Ok(self.number()?),
            _ => Err(self.error("expected a value").into()),
        }
    }

    /// The members of an object (after its `{`), handed to the hook.
    #[inline(never)]
    fn object(&mut self, depth: usize) -> Result<Value, Fail> {
        let mut pairs: Vec<(String, Value)> = Vec::new();
        if !self.eat(b'}') {
            loop {
                self.skip_ws();
                let key = self.string()?;
                self.expect(b':')?;
                let value = match self.value(depth + 1) {
                    Ok(v) => v,
                    Err(fail) => return Err(at(|| PathStep::Key(key))(fail)),
                };
                pairs.push((key, value));
                if self.eat(b'}') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        (self.hook)(unique_keys(pairs)).map_err(Fail::Refused)
    }

    /// The items of an array (after its `[`).
    #[inline(never)]
    fn array(&mut self, depth: usize) -> Result<Value, Fail> {
        let mut items = Vec::new();
        if self.eat(b']') {
            return Ok(Value::List(items.into()));
        }
        loop {
            let i = items.len();
            items.push(self.value(depth + 1).map_err(at(|| PathStep::Index(i)))?);
            if self.eat(b']') {
                return Ok(Value::List(items.into()));
            }
            self.expect(b',')?;
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        self.at - start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, as Python's scanner reads it
    /// (what follows a number that the grammar does not take is "trailing" text).
    fn number(&mut self) -> Result<Value> {
        let start = self.at;
        if self.text.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.text.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("bad number")),
        }
        let mut float = false;
        if self.text.get(self.at) == Some(&b'.')
            && self.text.get(self.at + 1).is_some_and(u8::is_ascii_digit)
        {
            self.at += 1;
            self.digits();
            float = true;
        }
        if matches!(self.text.get(self.at), Some(b'e' | b'E')) {
            let mark = self.at;
            self.at += 1;
            if matches!(self.text.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                self.at = mark;
            } else {
                float = true;
            }
        }
        // The scanned bytes are ASCII digits and signs.
        let text = std::str::from_utf8(&self.text[start..self.at]).unwrap_or_default();
        let as_float = || {
            text.parse::<f64>()
                .map(Value::Float)
                .map_err(|_| self.error("bad number"))
        };
        if float {
            return as_float();
        }
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(u) = text.parse::<u64>() {
            return Ok(Value::from_u64(u));
        }
        if self.options.big_ints_as_floats {
            as_float()
        } else {
            Err(self.error("integer outside the 64-bit range"))
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
            // Copy the run of plain bytes at once.
            let run = self.text[self.at..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(self.text.len() - self.at);
            out.extend_from_slice(&self.text[self.at..self.at + run]);
            self.at += run;
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
                _ => return Err(self.error("control character in a string")),
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
        char::from_u32(code).ok_or_else(|| self.error("lone surrogate"))
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("bad unicode escape"))?;
        self.at += 4;
        Ok(digits)
    }
}

/// The entries of one object as a map: a repeated key keeps its first position and its
/// last value (as a Python dict built from the text). Linear: small objects are checked
/// pairwise, wide ones through a hash index.
fn unique_keys(pairs: Vec<(String, Value)>) -> Map {
    let mut map = Map::with_capacity(pairs.len());
    if pairs.len() <= 8 {
        let mut kept: Vec<(String, Value)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            match kept.iter_mut().find(|(q, _)| *q == k) {
                Some(slot) => slot.1 = v,
                None => kept.push((k, v)),
            }
        }
        for (k, v) in kept {
            map.push_unique(k, v);
        }
        return map;
    }
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(pairs.len());
    let mut last: Vec<Option<usize>> = vec![None; pairs.len()];
    let mut first: Vec<usize> = Vec::with_capacity(pairs.len());
    for (i, (k, _)) in pairs.iter().enumerate() {
        match index.get(k.as_str()) {
            Some(&f) => last[f] = Some(i),
            None => {
                index.insert(k.as_str(), i);
                first.push(i);
            }
        }
    }
    drop(index);
    if first.len() == pairs.len() {
        for (k, v) in pairs {
            map.push_unique(k, v);
        }
        return map;
    }
    let mut slots: Vec<Option<(String, Value)>> = pairs.into_iter().map(Some).collect();
    for f in first {
        let (key, value) = slots[f].take().unwrap_or_default();
        let value = match last[f] {
            Some(l) => slots[l].take().map(|(_, v)| v).unwrap_or_default(),
            None => value,
        };
        map.push_unique(key, value);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list;

    fn read(text: &str) -> Result<Value> {
        parse(text.as_bytes(), &JsonOptions::default())
    }

    #[test]
    fn python_grammar_with_escapes_and_exact_numbers() {
        let text = r#"{"a": [1, -2, 18446744073709551615, 1e400, 2.50, -0, 0.0, 1E2],
            "s\u00e9": "q\"\\\/\b\f\n\r\t\ud83d\ude00", "n": null, "t": true, "f": false}"#;
        let v = read(text).unwrap();
        assert_eq!(
            v.get("a"),
            Some(&list![1, -2, u64::MAX, f64::INFINITY, 2.5, 0, 0.0, 100.0])
        );
        assert_eq!(
            v.get("s\u{e9}"),
            Some(&Value::from("q\"\\/\u{8}\u{c}\n\r\t\u{1f600}"))
        );
        let nan = read("[NaN, Infinity, -Infinity]").unwrap();
        let l = nan.as_list().unwrap();
        assert!(l[0].as_f64().unwrap().is_nan());
        assert_eq!(l[1], Value::Float(f64::INFINITY));
        assert_eq!(read("\u{feff}[]").unwrap(), list![]);
        for bad in [
            "",
            "{",
            "[1,]",
            "\"\\ud800\"",
            "nul",
            "1 2",
            "{\"a\" 1}",
            "\"\\x\"",
            "01",
            "+1",
            "1.",
            ".5",
            "1e",
            "-",
            "\"a\u{1}b\"",
            "18446744073709551616",
            "\"\\u12g4\"",
        ] {
            assert!(read(bad).is_err(), "{bad:?}");
        }
        let big = parse(
            b"18446744073709551616",
            &JsonOptions {
                big_ints_as_floats: true,
                ..JsonOptions::default()
            },
        )
        .unwrap();
        assert_eq!(big, Value::Float(18446744073709551616.0));
        let deep = "[".repeat(514);
        assert!(read(&deep).is_err());
    }

    #[test]
    fn repeated_keys_keep_the_first_place_and_the_last_value() {
        let small = read(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        let pairs: Vec<_> = small.as_map().unwrap().iter().collect();
        assert_eq!(pairs.len(), 2);
        assert_eq!(small.get("a"), Some(&Value::Int(3)));
        assert_eq!(pairs[0].0, &Value::from("a"));
        let mut wide = String::from("{");
        for i in 0..20 {
            let _ = write!(wide, "\"k{}\": {i},", i % 10);
        }
        wide.push_str("\"z\": 0}");
        let wide = read(&wide).unwrap();
        let m = wide.as_map().unwrap();
        assert_eq!(m.len(), 11);
        assert_eq!(m.get("k3"), Some(&Value::Int(13)));
        assert_eq!(m.iter().next().unwrap().0, &Value::from("k0"));
    }

    #[test]
    fn a_refusing_hook_names_the_path() {
        let text = br#"{"a": [0, {"b": {"bad": 1}}], "c": 2}"#;
        let err = parse_with(text, &JsonOptions::default(), &mut |m| {
            if m.get("bad").is_some() {
                Err(Refusal::new("no"))
            } else {
                Ok(Value::Map(m))
            }
        })
        .unwrap_err();
        match err {
            Error::Refused { path, reason } => {
                assert_eq!(path, "$.a[1].b");
                assert_eq!(reason, "no");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            path_text(&[PathStep::Key("odd key".into()), PathStep::Index(2)]),
            "$[\"odd key\"][2]"
        );
    }
}
