//! Fuzzes the msgpack decoder and `JsonPlusSerializer::loads_typed` under every tag: no
//! input may panic, and whatever decodes must re-encode to bytes that decode to the same
//! value (floats compared by bits, so NaN payloads count as equal).

#![no_main]

use libfuzzer_sys::fuzz_target;
use stategraph_checkpoint::serde::msgpack::{decode, encode};
use stategraph_checkpoint::serde::strict::{check, Allowlist};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{Ext, Value};

const TAGS: &[&str] = &[
    "msgpack",
    "json",
    "null",
    "bytes",
    "bytearray",
    "empty",
    "pickle",
];

fuzz_target!(|data: &[u8]| {
    let serde = JsonPlusSerializer;
    for tag in TAGS {
        if let Ok(value) = serde.loads_typed(tag, data) {
            round_trip(&serde, &value);
        }
    }
    if let Ok(value) = decode(data) {
        // Strict mode's walk never panics; an allowlist never refuses more than none.
        if check(&value, &Allowlist::new()).is_ok() {
            assert!(check(&value, &Allowlist::new().allow("m", "c")).is_ok());
        }
        let bytes = encode(&value).expect("a decoded value re-encodes");
        let again = decode(&bytes).expect("re-encoded bytes decode");
        assert!(same(&value, &again), "{value:?} != {again:?}");
        assert_eq!(encode(&again).expect("re-encodes"), bytes);
    }
});

/// `dumps_typed` then `loads_typed` gives the value back.
fn round_trip(serde: &JsonPlusSerializer, value: &Value) {
    let typed = serde.dumps_typed(value).expect("a loaded value dumps");
    let back = serde
        .loads_typed(&typed.tag, &typed.bytes)
        .expect("dumped bytes load");
    assert!(same(value, &back), "{value:?} != {back:?}");
}

/// Structural equality with floats compared by bits.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((k1, v1), (k2, v2))| same(k1, k2) && same(v1, v2))
        }
        (Value::Ext(x), Value::Ext(y)) => match (&**x, &**y) {
            (Ext::Object(o), Ext::Object(p)) => {
                o.code == p.code
                    && o.module == p.module
                    && o.class == p.class
                    && o.method == p.method
                    && same(&o.data, &p.data)
            }
            (Ext::NumpyArray(v), Ext::NumpyArray(w))
            | (Ext::DeltaSnapshot(v), Ext::DeltaSnapshot(w)) => same(v, w),
            _ => false,
        },
        _ => a == b,
    }
}
