//! Byte-for-byte conformance of the msgpack codec and `JsonPlusSerializer` with the golden
//! traces of real Python runs, with the examples of docs/format.md#value-encoding, and a round trip
//! over many values.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};
use stategraph_checkpoint::serde::msgpack::{decode, encode};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{map, Ext, Map, ObjectCode, Value};

// ---------------------------------------------------------------------------------------
// Golden files
// ---------------------------------------------------------------------------------------

/// One `(tag, hex)` field found in a golden file.
struct HexField {
    place: String,
    tag: String,
    hex: String,
    decoded: Option<Json>,
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn golden_files() -> Vec<(String, Json)> {
    let mut files: Vec<_> = std::fs::read_dir(golden_dir())
        .expect("golden directory")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read golden file");
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).expect("golden JSON"))
        })
        .collect()
}

/// Every field named `hex` or `*_hex`, with its sibling `type` and its rendering
/// (`decoded` for `hex`, `<prefix>_decoded` for `<prefix>_hex`) when present.
fn collect(place: &str, json: &Json, out: &mut Vec<HexField>) {
    match json {
        Json::Object(obj) => {
            for (key, value) in obj {
                let here = format!("{place}/{key}");
                let prefix = match key.as_str() {
                    "hex" => Some(""),
                    k => k.strip_suffix("_hex"),
                };
                match (prefix, value) {
                    (Some(prefix), Json::String(hex)) => {
                        let decoded_key = if prefix.is_empty() {
                            "decoded".to_owned()
                        } else {
                            format!("{prefix}_decoded")
                        };
                        let tag = obj.get("type").and_then(Json::as_str);
                        out.push(HexField {
                            place: here,
                            tag: tag
                                .unwrap_or_else(|| panic!("{place}: no type tag"))
                                .to_owned(),
                            hex: hex.clone(),
                            decoded: obj.get(&decoded_key).cloned(),
                        });
                    }
                    (Some(_), other) => panic!("{here}: hex field is not a string: {other}"),
                    (None, _) => collect(&here, value, out),
                }
            }
        }
        Json::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(&format!("{place}[{i}]"), item, out);
            }
        }
        _ => {}
    }
}

/// Renders a value as the golden generator's `J()` does.
fn render(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::UInt(u) => json!(u),
        Value::Float(x) if x.is_finite() => json!(x),
        Value::Float(x) if x.is_nan() => json!("nan"),
        Value::Float(x) => json!(if *x > 0.0 { "inf" } else { "-inf" }),
        Value::Str(s) => json!(s),
        Value::Bytes(b) => json!({ "$bytes": hex::encode(b) }),
        Value::List(items) => Json::Array(items.iter().map(render).collect()),
        Value::Map(m) if m.iter().all(|(k, _)| k.as_str().is_some()) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().unwrap().to_owned(), render(v)))
                .collect(),
        ),
        Value::Map(m) => {
            json!({ "$map": m.iter().map(|(k, v)| json!([render(k), render(v)])).collect::<Vec<_>>() })
        }
        Value::Ext(e) => render_ext(v, e),
    }
}

fn render_ext(v: &Value, e: &Ext) -> Json {
    if let Ext::DeltaSnapshot(inner) = e {
        return json!({ "$delta_snapshot": render(inner) });
    }
    if let Some(items) = v.as_set() {
        return json!({ "$set": items.iter().map(render).collect::<Vec<_>>() });
    }
    if let Some((node, arg)) = v.as_send() {
        return json!({ "$type": "langgraph.types.Send", "node": node, "arg": render(arg) });
    }
    if let Some(u) = v.as_uuid() {
        return json!({ "$uuid": u.hyphenated().to_string() });
    }
    if let Some(iso) = v.as_datetime_iso() {
        return json!({ "$datetime": iso });
    }
    let o = e
        .as_object()
        .unwrap_or_else(|| panic!("no golden rendering for {e:?}"));
    let fields = match o.code {
        ObjectCode::ConstructorKwArgs | ObjectCode::PydanticV2 => o.data.as_map(),
        _ => None,
    };
    let fields = fields.unwrap_or_else(|| panic!("no golden rendering for {o:?}"));
    let mut out = serde_json::Map::new();
    out.insert("$type".into(), json!(format!("{}.{}", o.module, o.class)));
    for (k, v) in fields.iter() {
        out.insert(k.as_str().expect("field name").to_owned(), render(v));
    }
    Json::Object(out)
}

/// True if the value holds an extension anywhere.
fn has_ext(v: &Value) -> bool {
    match v {
        Value::Ext(_) => true,
        Value::List(items) => items.iter().any(has_ext),
        Value::Map(m) => m.iter().any(|(k, v)| has_ext(k) || has_ext(v)),
        _ => false,
    }
}

/// Equality of renderings where `{"$set": [...]}` compares as a multiset (the golden JSON
/// is sorted, the bytes hold Python's iteration order).
fn same(expected: &Json, actual: &Json) -> bool {
    match (expected, actual) {
        (Json::Object(a), Json::Object(b)) if a.len() == 1 && a.contains_key("$set") => {
            let (Some(Json::Array(a)), Some(Json::Array(b))) = (a.get("$set"), b.get("$set"))
            else {
                return false;
            };
            let mut unused: Vec<&Json> = b.iter().collect();
            a.len() == b.len()
                && a.iter()
                    .all(|x| match unused.iter().position(|y| same(x, y)) {
                        Some(i) => {
                            unused.swap_remove(i);
                            true
                        }
                        None => false,
                    })
        }
        (Json::Object(a), Json::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        (Json::Array(a), Json::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        _ => expected == actual,
    }
}

#[test]
fn every_golden_blob_decodes_to_its_rendering_and_reencodes_to_the_same_bytes() {
    let serde = JsonPlusSerializer;
    let mut fields = Vec::new();
    for (name, json) in golden_files() {
        collect(&name, &json, &mut fields);
    }
    let mut checked = 0;
    let mut with_rendering = 0;
    let mut with_ext = 0;
    for f in &fields {
        let bytes = hex::decode(&f.hex).unwrap_or_else(|e| panic!("{}: bad hex: {e}", f.place));
        if f.tag == "empty" {
            assert!(bytes.is_empty(), "{}: empty sentinel with bytes", f.place);
            assert_eq!(f.decoded, Some(Json::Null), "{}", f.place);
            checked += 1;
            continue;
        }
        let value = serde
            .loads_typed(&f.tag, &bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", f.place));
        if let Some(expected) = &f.decoded {
            let actual = render(&value);
            assert!(
                same(expected, &actual),
                "{}: rendering differs\nexpected {expected}\nactual   {actual}",
                f.place
            );
            with_rendering += 1;
        }
        if has_ext(&value) {
            with_ext += 1;
        }
        let typed = serde.dumps_typed(&value).unwrap();
        assert_eq!(typed.tag, f.tag.as_str(), "{}: tag", f.place);
        assert_eq!(hex::encode(&typed.bytes), f.hex, "{}: bytes", f.place);
        checked += 1;
    }
    eprintln!(
        "golden: {checked} blobs checked, {with_rendering} against their rendering, \
         {with_ext} holding extensions"
    );
    assert!(checked > 0);
    assert_eq!(checked, fields.len());
    assert!(with_rendering > 0);
    assert!(with_ext > 0);
}

#[test]
fn golden_walk_finds_the_known_fields() {
    // Guards the walker itself: every kind of hex field of the traces is seen.
    let mut fields = Vec::new();
    for (name, json) in golden_files() {
        collect(&name, &json, &mut fields);
    }
    for suffix in ["/hex", "/checkpoint_hex", "/value_hex", "/blob_hex"] {
        assert!(
            fields.iter().any(|f| f.place.ends_with(suffix)),
            "no {suffix} field"
        );
    }
    for tag in ["msgpack", "null", "empty"] {
        assert!(fields.iter().any(|f| f.tag == tag), "no {tag} field");
    }
    assert!(fields
        .iter()
        .any(|f| f.place.contains("checkpoint_hex") && f.decoded.is_some()));
}

// ---------------------------------------------------------------------------------------
// docs/format.md#value-encoding and boundary examples (bytes produced by the pinned venv)
// ---------------------------------------------------------------------------------------

fn hx(s: &str) -> Vec<u8> {
    hex::decode(s.replace([' ', '\n'], "")).unwrap()
}

fn fixstr(s: &str) -> String {
    format!("{:02x}{}", 0xa0 | s.len(), hex::encode(s))
}

fn assert_bytes(value: &Value, expected: &str) {
    let expected = hx(expected);
    assert_eq!(
        hex::encode(encode(value).unwrap()),
        hex::encode(&expected),
        "encoding of {value:?}"
    );
    assert_eq!(
        &decode(&expected).unwrap(),
        value,
        "decoding of {}",
        hex::encode(&expected)
    );
}

#[test]
fn spec_byte_examples() {
    assert_bytes(&"hi".into(), "a26869");
    assert_bytes(&5.into(), "05");
    assert_bytes(&(-3).into(), "fd");
    assert_bytes(&(1u64 << 40).into(), "cf0000010000000000");
    assert_bytes(&1.5.into(), "cb3ff8000000000000");
    assert_bytes(&stategraph_checkpoint::list![1, "a"], "9201a161");
    assert_bytes(&map! { "a" => 1 }, "81a16101");
    assert_bytes(
        &Value::Map(Map::from_pairs(vec![(1.into(), "x".into())])),
        "8101a178",
    );
    let b = |s: &str| fixstr(s);
    assert_bytes(
        &Value::set(vec![1.into()]),
        &format!("d800 93 {} {} 91 01", b("builtins"), b("set")),
    );
    assert_bytes(
        &Value::frozenset(vec![2.into()]),
        &format!("c71600 93 {} {} 91 02", b("builtins"), b("frozenset")),
    );
    let u = uuid::Uuid::parse_str("12345678-1234-5678-1234-567812345678").unwrap();
    assert_bytes(
        &Value::uuid(&u),
        &format!(
            "c72d00 93 {} {} d920 {}",
            b("uuid"),
            b("UUID"),
            hex::encode("12345678123456781234567812345678")
        ),
    );
    assert_bytes(
        &Value::datetime_iso("2024-01-02T03:04:05.000006+00:00"),
        &format!(
            "c74303 94 {} {} d920 {} {}",
            b("datetime"),
            b("datetime"),
            hex::encode("2024-01-02T03:04:05.000006+00:00"),
            b("fromisoformat")
        ),
    );
    assert_bytes(
        &Value::date(2024, 1, 2),
        &format!("c71501 93 {} {} 93 cd07e8 01 02", b("datetime"), b("date")),
    );
    assert_bytes(
        &Value::timedelta(1, 2, 3),
        &format!("c71801 93 {} {} 93 01 02 03", b("datetime"), b("timedelta")),
    );
    assert_bytes(
        &Value::enum_member("__main__", "Color", "red".into()),
        &format!("c71400 93 {} {} {}", b("__main__"), b("Color"), b("red")),
    );
    let mut dc = Map::new();
    dc.insert("a", 1);
    dc.insert("b", "x");
    assert_bytes(
        &Value::dataclass("__main__", "DC", dc),
        &format!(
            "c71502 93 {} {} 82 {} 01 {} {}",
            b("__main__"),
            b("DC"),
            b("a"),
            b("b"),
            b("x")
        ),
    );
    assert_bytes(
        &Value::send("node", map! { "k" => 1 }),
        &format!(
            "c72001 93 {} {} 92 {} 81 {} 01",
            b("langgraph.types"),
            b("Send"),
            b("node"),
            b("k")
        ),
    );
    assert_bytes(
        &Value::interrupt("q?".into(), "abc"),
        &format!(
            "c73d02 93 {} {} 83 {} {} {} {} {} c0",
            b("langgraph.types"),
            b("Interrupt"),
            b("value"),
            b("q?"),
            b("id"),
            b("abc"),
            b("response_schema")
        ),
    );
    let human = Value::message(
        "HumanMessage",
        [("content", "hello"), ("id", "msg-1")]
            .into_iter()
            .collect(),
    )
    .unwrap();
    assert_bytes(
        &human,
        "c78f0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616e
         ac48756d616e4d65737361676586a7636f6e74656e74a568656c6c6f
         b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180
         a474797065a568756d616ea46e616d65c0a26964a56d73672d31b36d6f64656c5f76616c69646174655f6a736f6e",
    );
    let ai = Value::message(
        "AIMessage",
        [("content", "hi"), ("id", "m2")].into_iter().collect(),
    )
    .unwrap();
    assert_bytes(
        &ai,
        "c7b00594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d65737361676589a7636f6e74656e74
         a26869b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a4
         6e616d65c0a26964a26d32aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f
         6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e",
    );
}

#[test]
fn smallest_encodings_at_every_boundary() {
    let ints: &[(i64, &str)] = &[
        (0, "00"),
        (127, "7f"),
        (128, "cc80"),
        (255, "ccff"),
        (256, "cd0100"),
        (65535, "cdffff"),
        (65536, "ce00010000"),
        (4294967295, "ceffffffff"),
        (4294967296, "cf0000000100000000"),
        (i64::MAX, "cf7fffffffffffffff"),
        (-1, "ff"),
        (-32, "e0"),
        (-33, "d0df"),
        (-128, "d080"),
        (-129, "d1ff7f"),
        (-32768, "d18000"),
        (-32769, "d2ffff7fff"),
        (-2147483648, "d280000000"),
        (-2147483649, "d3ffffffff7fffffff"),
        (i64::MIN, "d38000000000000000"),
    ];
    for (i, hex) in ints {
        assert_bytes(&Value::Int(*i), hex);
    }
    assert_bytes(&Value::UInt(1 << 63), "cf8000000000000000");
    assert_bytes(&Value::UInt(u64::MAX), "cfffffffffffffffff");
    for (n, header) in [
        (31, "bf"),
        (32, "d920"),
        (255, "d9ff"),
        (256, "da0100"),
        (65536, "db00010000"),
    ] {
        assert_bytes(
            &Value::Str("x".repeat(n).into()),
            &format!("{header}{}", "78".repeat(n)),
        );
    }
    for (n, header) in [
        (0, "c400"),
        (255, "c4ff"),
        (256, "c50100"),
        (65536, "c600010000"),
    ] {
        assert_bytes(
            &Value::bytes(vec![7; n]),
            &format!("{header}{}", "07".repeat(n)),
        );
    }
    for (n, header) in [
        (15, "9f"),
        (16, "dc0010"),
        (65535, "dcffff"),
        (65536, "dd00010000"),
    ] {
        assert_bytes(
            &Value::list(vec![Value::Nil; n]),
            &format!("{header}{}", "c0".repeat(n)),
        );
    }
    for (n, header) in [(15, "8f"), (16, "de0010"), (65536, "df00010000")] {
        let pairs = (0..n).map(|i| (Value::from(i), Value::Nil)).collect();
        let v = Value::Map(Map::from_pairs(pairs));
        assert_eq!(
            hex::encode(&encode(&v).unwrap()[..header.len() / 2]),
            header
        );
        assert_eq!(decode(&encode(&v).unwrap()).unwrap(), v);
    }
    assert_bytes(&Value::Bool(true), "c3");
    assert_bytes(&Value::Bool(false), "c2");
    assert_bytes(&Value::Nil, "c0");
}

#[test]
fn extension_headers_are_minimal() {
    // `_DeltaSnapshot(x)` in Python: the payload is the encoding of x.
    let delta = |v: Value| Value::from(Ext::DeltaSnapshot(v));
    assert_bytes(&delta(1.into()), "d40701");
    assert_bytes(&delta(Value::Nil), "d407c0");
    assert_bytes(&delta("a".into()), "d507a161");
    assert_bytes(&delta("abc".into()), "d607a3616263");
    assert_bytes(
        &delta((1..=7).map(Value::from).collect::<Vec<_>>().into()),
        "d7079701020304050607",
    );
    assert_bytes(
        &delta("x".repeat(14).into()),
        &format!("c70f07ae{}", "78".repeat(14)),
    );
    assert_bytes(
        &delta("x".repeat(15).into()),
        &format!("d807af{}", "78".repeat(15)),
    );
    assert_bytes(
        &delta(vec![0u8; 253].into()),
        &format!("c7ff07c4fd{}", "00".repeat(253)),
    );
    assert_bytes(
        &delta(vec![0u8; 254].into()),
        &format!("c8010007c4fe{}", "00".repeat(254)),
    );
    let big = vec![0u8; 65536];
    assert_bytes(
        &delta(big.into()),
        &format!("c90001000507c600010000{}", "00".repeat(65536)),
    );
    let numpy = Value::from(Ext::NumpyArray(stategraph_checkpoint::list![
        "<i8",
        Value::list(vec![1.into()]),
        "C",
        Value::bytes(vec![1, 0, 0, 0, 0, 0, 0, 0])
    ]));
    assert_eq!(decode(&encode(&numpy).unwrap()).unwrap(), numpy);
    assert_eq!(encode(&numpy).unwrap()[..2], [0xc7, 0x13]);
}

#[test]
fn non_minimal_input_decodes_canonically() {
    assert_eq!(decode(&hx("cd0001")).unwrap(), Value::Int(1));
    assert_eq!(decode(&hx("d001")).unwrap(), Value::Int(1));
    assert_eq!(decode(&hx("d3000000000000002a")).unwrap(), Value::Int(42));
    assert_eq!(decode(&hx("cf000000000000002a")).unwrap(), Value::Int(42));
    assert_eq!(decode(&hx("ca3fc00000")).unwrap(), Value::Float(1.5));
    assert_eq!(decode(&hx("d90161")).unwrap(), Value::from("a"));
    assert_eq!(
        decode(&hx("dc000101")).unwrap(),
        stategraph_checkpoint::list![1]
    );
    assert_eq!(
        decode(&hx("c70107c0")).unwrap(),
        Value::from(Ext::DeltaSnapshot(Value::Nil))
    );
    // Duplicate keys are kept as written.
    let dup = decode(&hx("82a16101a16102")).unwrap();
    assert_eq!(dup.as_map().unwrap().len(), 2);
    assert_eq!(encode(&dup).unwrap(), hx("82a16101a16102"));
}

// ---------------------------------------------------------------------------------------
// Round trip over generated values
// ---------------------------------------------------------------------------------------

/// A small deterministic generator (xorshift64*).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A length: mostly small, sometimes past the fix-size limits (16, 32).
    fn len(&mut self) -> usize {
        match self.below(12) {
            0 => self.below(300) as usize,
            1 => 0,
            _ => self.below(5) as usize,
        }
    }

    /// A collection length: long ones only near the root, so values stay small.
    fn count(&mut self, depth: usize) -> usize {
        if depth == 0 {
            self.len()
        } else {
            self.below(5) as usize
        }
    }

    fn string(&mut self) -> String {
        const PIECES: &[&str] = &["a", "é", "日本", "🦀", "\u{0}", "lorem ipsum ", "\"", "x"];
        (0..self.len())
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }

    fn int(&mut self) -> Value {
        let raw = self.next();
        let shift = self.below(64);
        match self.below(3) {
            0 => Value::from_u64(raw >> shift),
            1 => Value::Int(-((raw >> shift) as i64 & i64::MAX) - 1),
            _ => Value::Int(self.below(300) as i64 - 150),
        }
    }

    fn value(&mut self, depth: usize) -> Value {
        let leaf = depth >= 6 || self.below(3) == 0;
        let kind = if leaf {
            self.below(7)
        } else {
            7 + self.below(6)
        };
        match kind {
            0 => Value::Nil,
            1 => Value::Bool(self.below(2) == 1),
            2 | 3 => self.int(),
            4 => loop {
                let x = f64::from_bits(self.next());
                if !x.is_nan() {
                    break Value::Float(x);
                }
            },
            5 => Value::Str(self.string().into()),
            6 => Value::Bytes((0..self.len()).map(|_| self.next() as u8).collect()),
            7 | 8 => Value::List(
                (0..self.count(depth))
                    .map(|_| self.value(depth + 1))
                    .collect(),
            ),
            9 => Value::Map(Map::from_pairs(
                (0..self.count(depth))
                    .map(|_| {
                        let key = if self.below(4) == 0 {
                            self.value(depth + 1)
                        } else {
                            Value::Str(self.string().into())
                        };
                        (key, self.value(depth + 1))
                    })
                    .collect(),
            )),
            10 => {
                let code = ObjectCode::from_code(self.below(6) as i8).unwrap();
                let method = (self.below(2) == 0).then(|| self.string());
                let data = self.value(depth + 1);
                Value::from(Ext::object(
                    code,
                    self.string(),
                    self.string(),
                    data,
                    method.as_deref(),
                ))
            }
            11 => Value::from(Ext::DeltaSnapshot(self.value(depth + 1))),
            _ => Value::from(Ext::NumpyArray(self.value(depth + 1))),
        }
    }
}

#[test]
fn generated_values_round_trip() {
    let mut gen = Gen(0x9e37_79b9_7f4a_7c15);
    let mut total = 0;
    for _ in 0..3000 {
        let v = gen.value(0);
        let bytes = encode(&v).unwrap();
        let back = decode(&bytes).unwrap_or_else(|e| panic!("{e}: {v:?}"));
        assert_eq!(back, v);
        let mut appended = vec![0xaa];
        stategraph_checkpoint::serde::msgpack::encode_into(&v, &mut appended).unwrap();
        assert_eq!(appended[1..], bytes[..]);
        total += bytes.len();
    }
    assert!(total > 100_000, "generator too small: {total} bytes");
}

#[test]
fn nan_keeps_its_bits() {
    for bits in [
        0x7ff8_0000_0000_0000u64,
        0xfff8_0000_0000_0001,
        0x7ff0_0000_0000_0001,
    ] {
        let bytes = encode(&Value::Float(f64::from_bits(bits))).unwrap();
        assert_eq!(bytes[1..], bits.to_be_bytes());
        let Value::Float(x) = decode(&bytes).unwrap() else {
            panic!("not a float")
        };
        assert_eq!(x.to_bits(), bits);
    }
}

// ---------------------------------------------------------------------------------------
// Legacy JSON
// ---------------------------------------------------------------------------------------

/// `loads_typed("json", ..)` then `dumps_typed`, against what the pinned venv gives.
fn json_then_msgpack(json: &str) -> String {
    let serde = JsonPlusSerializer;
    let v = serde.loads_typed("json", json.as_bytes()).unwrap();
    let typed = serde.dumps_typed(&v).unwrap();
    format!("{} {}", typed.tag, hex::encode(typed.bytes))
}

#[test]
fn legacy_json_revives_as_python_then_writes_pythons_bytes() {
    let cases = [
        (
            r#"{"lc":1,"type":"constructor","id":["langchain","schema","messages","HumanMessage"],"kwargs":{"content":"hi"}}"#,
            "msgpack c7870594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676586a7636f6e74656e74a26869b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964c0b36d6f64656c5f76616c69646174655f6a736f6e",
        ),
        (
            r#"{"lc":1,"type":"constructor","id":["langchain_core","messages","ai","AIMessage"],"kwargs":{"content":"yo","id":"a1"}}"#,
            "msgpack c7b00594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d65737361676589a7636f6e74656e74a2796fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a26131aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e",
        ),
        (
            r#"{"lc":2,"type":"constructor","id":["langgraph","types","Send"],"args":["n",{"k":1}]}"#,
            "msgpack c71d0193af6c616e6767726170682e7479706573a453656e6492a16e81a16b01",
        ),
        (
            r#"{"lc":2,"type":"constructor","id":["langgraph","types","Send"],"kwargs":{"node":"n","arg":1}}"#,
            "msgpack c71a0193af6c616e6767726170682e7479706573a453656e6492a16e01",
        ),
        (
            r#"{"lc":2,"type":"constructor","id":["uuid","UUID"],"args":["12345678123456781234567812345678"]}"#,
            "msgpack c72d0093a475756964a455554944d9203132333435363738313233343536373831323334353637383132333435363738",
        ),
        (
            r#"{"lc":2,"type":"constructor","id":["builtins","set"],"args":[[1,2]]}"#,
            "msgpack c7110093a86275696c74696e73a3736574920102",
        ),
        (
            r#"{"lc":2,"type":"constructor","id":["langchain_core","documents","base","Document"],"method":[null,"model_construct"],"kwargs":{"page_content":"p"}}"#,
            "msgpack c7680594bd6c616e67636861696e5f636f72652e646f63756d656e74732e62617365a8446f63756d656e7484a26964c0a86d6574616461746180ac706167655f636f6e74656e74a170a474797065a8446f63756d656e74b36d6f64656c5f76616c69646174655f6a736f6e",
        ),
        (
            r#"{"lc":1,"type":"constructor","id":["langchain","schema","document","Document"],"kwargs":{"page_content":"p"}}"#,
            "msgpack c7680594bd6c616e67636861696e5f636f72652e646f63756d656e74732e62617365a8446f63756d656e7484a26964c0a86d6574616461746180ac706167655f636f6e74656e74a170a474797065a8446f63756d656e74b36d6f64656c5f76616c69646174655f6a736f6e",
        ),
        (
            r#"{"lc":2,"type":"constructor","id":["datetime","datetime"],"method":"fromisoformat","args":["2024-01-02T03:04:05"]}"#,
            "null ",
        ),
        (
            r#"{"lc":2,"type":"constructor","id":["evil","Thing"],"kwargs":{"a":1}}"#,
            "msgpack 84a26c6302a474797065ab636f6e7374727563746f72a2696492a46576696ca55468696e67a66b776172677381a16101",
        ),
        (r#"{"lc":1,"type":"secret","id":["OPENAI_API_KEY"]}"#, "null "),
        (
            r#"{"a":[1,2.5,null,true,"x"],"b":{"lc":3}}"#,
            "msgpack 82a1619501cb4004000000000000c0c3a178a16281a26c6303",
        ),
        ("18446744073709551615", "msgpack cfffffffffffffffff"),
        ("-5", "msgpack fb"),
        ("1e3", "msgpack cb408f400000000000"),
        ("NaN", "msgpack cb7ff8000000000000"),
    ];
    for (json, expected) in cases {
        assert_eq!(json_then_msgpack(json), expected, "{json}");
    }
}

#[test]
fn legacy_json_refuses_what_python_refuses() {
    let serde = JsonPlusSerializer;
    for json in [
        r#"{"lc":1,"type":"not_implemented","id":["foo","Bar"]}"#,
        r#"{"lc":1,"type":"constructor","id":["foo","Bar"],"kwargs":{}}"#,
        "01",
        "[1,",
    ] {
        assert!(
            serde.loads_typed("json", json.as_bytes()).is_err(),
            "{json}"
        );
    }
}
