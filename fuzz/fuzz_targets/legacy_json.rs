//! Fuzzes the legacy `json` reader (`loads_typed("json", ..)`): no input may panic;
//! whatever it reads must hold no Python object outside LangGraph's safe types (the
//! reader never widens what Python constructs: strict mode with an empty allowlist
//! accepts it), and must store and read back to the same value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use stategraph_checkpoint::serde::strict::{check, Allowlist};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{Error, Value};

fuzz_target!(|data: &[u8]| {
    let serde = JsonPlusSerializer;
    match serde.loads_typed("json", data) {
        Ok(value) => {
            if let Err(unsafe_object) = check(&value, &Allowlist::new()) {
                panic!("legacy JSON built an unsafe object: {unsafe_object}");
            }
            let typed = serde.dumps_typed(&value).expect("a read value stores");
            let back = serde
                .loads_typed(&typed.tag, &typed.bytes)
                .expect("stored bytes read");
            assert!(same(&value, &back), "{value:?} != {back:?}");
        }
        Err(Error::Refused { path, .. }) => assert!(path.starts_with('$')),
        Err(_) => {}
    }
});

/// Structural equality with floats compared by bits (NaN equals itself).
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
        (Value::Ext(x), Value::Ext(y)) => match (x.as_object(), y.as_object()) {
            (Some(o), Some(p)) => {
                o.code == p.code
                    && o.module == p.module
                    && o.class == p.class
                    && o.method == p.method
                    && same(&o.data, &p.data)
            }
            _ => x == y,
        },
        _ => a == b,
    }
}
