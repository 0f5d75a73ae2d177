//! The decoders against hostile bytes: every failure is a typed error, never a panic, a
//! stack overflow or an allocation sized by an attacker's length prefix.
//!
//! A 4 GiB length prefix that the decoder trusted would preallocate 4 Gi `Value`s
//! (128 GiB) and abort the test process; these tests passing shows it does not.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use stategraph_checkpoint::serde::msgpack::{decode, decode_with, encode, DecodeLimits};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{Error, Ext, Value};

fn hx(s: &str) -> Vec<u8> {
    hex::decode(s.replace(' ', "")).unwrap()
}

fn assert_decode_error(bytes: &[u8]) {
    match decode(bytes) {
        Err(Error::Decode(_)) => {}
        other => panic!(
            "{}: expected a decode error, got {other:?}",
            hex::encode(bytes)
        ),
    }
}

/// The longest msgpack blobs of the golden traces, some with extensions.
fn golden_blobs() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let mut blobs = Vec::new();
    for name in ["send_fanout.json", "interrupt_resume.json", "join.json"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        // Hex strings of the form "hex": "…" with a msgpack tag nearby are enough here.
        for piece in text.split("\"hex\": \"").skip(1) {
            let hex = &piece[..piece.find('"').unwrap()];
            if let Ok(bytes) = hex::decode(hex) {
                if decode(&bytes).is_ok() && !bytes.is_empty() {
                    blobs.push(bytes);
                }
            }
        }
    }
    blobs.sort_by_key(|b| std::cmp::Reverse(b.len()));
    let mut chosen: Vec<Vec<u8>> = blobs.iter().take(3).cloned().collect();
    // Plus the longest ones holding extensions (Send: 0xc7 .. 0x01, Interrupt, sets).
    chosen.extend(blobs.iter().filter(|b| b.contains(&0xc7)).take(3).cloned());
    assert!(chosen.len() >= 4, "too few golden blobs");
    chosen
}

#[test]
fn every_truncation_of_golden_blobs_is_a_decode_error() {
    let mut prefixes = 0;
    for blob in golden_blobs() {
        for n in 0..blob.len() {
            assert_decode_error(&blob[..n]);
            prefixes += 1;
        }
    }
    assert!(prefixes > 1000);
}

#[test]
fn trailing_bytes_are_refused() {
    assert_decode_error(&hx("c0 c0"));
    assert_decode_error(&hx("9101 01"));
    for blob in golden_blobs() {
        let mut longer = blob.clone();
        longer.push(0xc0);
        assert_decode_error(&longer);
    }
}

#[test]
fn huge_length_prefixes_fail_without_allocating() {
    for prefix in [
        "dd ffffffff",
        "dc ffff",
        "df ffffffff",
        "de ffff",
        "c6 ffffffff",
        "c5 ffff",
        "c4 ff",
        "db ffffffff",
        "da ffff",
        "d9 ff",
        "c9 ffffffff 00",
        "c9 ffffffff 07",
        "c8 ffff 00",
        "c7 ff 00",
        "9f",
        "8f",
    ] {
        for tail in ["", "c0", "c0c0c0c0", "91 dd ffffffff"] {
            assert_decode_error(&hx(&format!("{prefix}{tail}")));
        }
    }
    // Nested huge prefixes: each level must not preallocate from its prefix.
    let nested = "dd 7fffffff ".repeat(900);
    assert_decode_error(&hx(&nested));
    // An extension whose payload claims 4 GiB.
    assert_decode_error(&hx("c9 ffffffff 00 93 a1 61 a1 62 c0"));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep_lists = vec![0x91u8; 100_000];
    assert_decode_error(&deep_lists);
    let mut deep_lists = deep_lists;
    deep_lists.push(0xc0);
    assert_decode_error(&deep_lists);
    // Maps nested through their values.
    let mut deep_maps = b"\x81\xc0".repeat(100_000);
    deep_maps.push(0xc0);
    assert_decode_error(&deep_maps);
    // Extensions nested in extensions (delta snapshots of delta snapshots).
    let mut payload = vec![0xc0u8];
    for _ in 0..2_000 {
        let mut outer = Vec::with_capacity(payload.len() + 6);
        match u8::try_from(payload.len()) {
            Ok(n) => outer.extend_from_slice(&[0xc7, n]),
            Err(_) => {
                outer.push(0xc8);
                outer.extend_from_slice(&(payload.len() as u16).to_be_bytes());
            }
        }
        outer.push(0x07);
        outer.extend_from_slice(&payload);
        payload = outer;
    }
    assert_decode_error(&payload);
}

#[test]
fn depth_limit_is_exact_and_shared_by_encoder_and_decoder() {
    let max = DecodeLimits::default().max_depth;
    assert_eq!(max, DecodeLimits::DEFAULT_MAX_DEPTH);
    let nest = |n: usize| (0..n).fold(Value::Nil, |v, _| Value::list(vec![v]));
    let ok = nest(max);
    let bytes = encode(&ok).unwrap();
    assert_eq!(decode(&bytes).unwrap(), ok);
    assert!(matches!(encode(&nest(max + 1)), Err(Error::Encode(_))));
    let mut too_deep = vec![0x91u8; max + 1];
    too_deep.push(0xc0);
    assert_decode_error(&too_deep);
    let limits = DecodeLimits { max_depth: 2 };
    assert!(decode_with(&hx("9191c0"), &limits).is_ok());
    assert!(matches!(
        decode_with(&hx("919191c0"), &limits),
        Err(Error::Decode(_))
    ));
    // An extension and the tuple of an object payload count as levels.
    assert!(decode_with(&hx("d40701"), &DecodeLimits { max_depth: 1 }).is_ok());
    assert!(decode_with(&hx("d40701"), &DecodeLimits { max_depth: 0 }).is_err());
    let object = encode(&Value::decimal("1")).unwrap();
    assert!(decode_with(&object, &DecodeLimits { max_depth: 2 }).is_ok());
    assert!(decode_with(&object, &DecodeLimits { max_depth: 1 }).is_err());
    let set = encode(&Value::set(vec![])).unwrap();
    assert!(decode_with(&set, &DecodeLimits { max_depth: 3 }).is_ok());
    assert!(decode_with(&set, &DecodeLimits { max_depth: 2 }).is_err());
    drop(ok);
}

#[test]
fn unknown_extension_codes_are_refused() {
    for (bytes, code) in [
        ("d4 2a 00", 42),
        ("d4 08 c0", 8),
        ("c7 00 7f", 127),
        ("d4 ff 00", -1),
        ("d6 ff 00000000", -1),
        ("d5 80 0000", -128),
        ("c9 ffffffff 2a", 42),
    ] {
        match decode(&hx(bytes)) {
            Err(Error::UnknownExtension(c)) => assert_eq!(c, code, "{bytes}"),
            other => panic!("{bytes}: {other:?}"),
        }
    }
}

#[test]
fn malformed_extension_payloads_are_refused() {
    for bytes in [
        "d4 00 c0",                         // payload not an array
        "d5 00 81 c0",                      // a map, truncated
        "c7 03 00 92 a1 61",                // truncated inside the payload
        "c7 05 00 92 a1 61 a1 62",          // two items
        "c7 08 00 95 a1 61 a1 62 c0 c0 c0", // five items
        "c7 06 00 93 01 a1 62 c0",          // module not a string
        "c7 06 00 93 a1 61 c0 c0",          // class not a string
        "c7 08 03 94 a1 61 a1 62 c0 c0",    // method not a string
        "c7 07 00 93 a1 61 a1 62 c0 c0",    // trailing byte in the payload
        "c7 00 07",                         // empty delta payload
        "d5 07 c0 c0",                      // trailing byte in a delta payload
        "c7 00 06",                         // empty numpy payload
        "c7 06 00 93 a1 ff a1 62 c0",       // invalid UTF-8 module
        "c7 06 00 90",                      // empty tuple (and truncated)
        "c7 01 00 90",                      // empty tuple
    ] {
        assert_decode_error(&hx(bytes));
    }
}

#[test]
fn invalid_utf8_is_refused() {
    for bytes in [
        "a2 fffe",
        "a3 eda080",   // a UTF-16 surrogate encoded as UTF-8
        "a2 c328",     // broken two-byte sequence
        "d9 01 80",    // continuation byte alone
        "81 a1 ff 01", // in a map key
        "91 a4 f4908080",
    ] {
        assert_decode_error(&hx(bytes));
    }
}

#[test]
fn reserved_marker_is_refused() {
    assert_decode_error(&hx("c1"));
    assert_decode_error(&hx("92 01 c1"));
}

#[test]
fn loads_typed_refuses_unknown_tags_and_bad_payloads() {
    let serde = JsonPlusSerializer;
    for tag in ["pickle", "MSGPACK", "", "msgpack ", "json+aes", "ext"] {
        assert!(
            matches!(serde.loads_typed(tag, b"\xc0"), Err(Error::UnknownTag(t)) if t == tag),
            "{tag:?}"
        );
    }
    assert!(matches!(
        serde.loads_typed("empty", b""),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        serde.loads_typed("msgpack", b""),
        Err(Error::Decode(_))
    ));
    assert!(matches!(
        serde.loads_typed("msgpack", &hx("d42a00")),
        Err(Error::UnknownExtension(42))
    ));
    let deep_json = "[".repeat(100_000);
    assert!(matches!(
        serde.loads_typed("json", deep_json.as_bytes()),
        Err(Error::Decode(_))
    ));
    assert!(matches!(
        serde.loads_typed("json", b"\xff"),
        Err(Error::Decode(_))
    ));
    assert!(serde.loads_typed("json", b"{\"a\":1} x").is_err());
}

/// A small deterministic generator (xorshift64*).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Decodes, and when that succeeds checks that re-encoding gives a value that decodes
/// to itself (byte comparison, so that NaN payloads count as equal).
fn decode_is_total(bytes: &[u8]) -> bool {
    let Ok(v) = decode(bytes) else { return false };
    let again = encode(&v).unwrap();
    assert_eq!(encode(&decode(&again).unwrap()).unwrap(), again);
    true
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut gen = Gen(0x0123_4567_89ab_cdef);
    let mut decoded = 0;
    for _ in 0..50_000 {
        let len = (gen.next() % 24) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| gen.next() as u8).collect();
        decoded += usize::from(decode_is_total(&bytes));
    }
    for blob in golden_blobs() {
        for _ in 0..2_000 {
            let mut b = blob.clone();
            for _ in 0..=(gen.next() % 3) {
                let i = (gen.next() as usize) % b.len();
                b[i] = gen.next() as u8;
            }
            decoded += usize::from(decode_is_total(&b));
        }
    }
    assert!(decoded > 0);
    // Extensions as values survive too.
    assert!(decode_is_total(
        &encode(&Value::from(Ext::DeltaSnapshot(Value::Nil))).unwrap()
    ));
}
