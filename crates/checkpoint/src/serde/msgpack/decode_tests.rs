//! The tests of the msgpack reader's string sharing.

use crate::serde::msgpack::{decode, encode};
use crate::value::{Map, Str, Value};

fn message(role: &str, content: &str) -> Value {
    let mut m = Map::new();
    m.insert("role", role);
    m.insert("content", content);
    Value::Map(m)
}

fn str_at<'v>(list: &'v Value, i: usize, key: &str) -> &'v Str {
    match list
        .as_list()
        .and_then(|l| l[i].as_map())
        .and_then(|m| m.get(key))
    {
        Some(Value::Str(s)) => s,
        other => panic!("no string at {i}.{key}: {other:?}"),
    }
}

fn key_at(list: &Value, i: usize, k: usize) -> Str {
    match list.as_list().and_then(|l| l[i].as_map()) {
        Some(m) => match &m.as_slice()[k].0 {
            Value::Str(s) => s.clone(),
            other => panic!("key {other:?}"),
        },
        None => panic!("no map at {i}"),
    }
}

#[test]
fn repeated_short_strings_share_one_payload_and_long_ones_do_not() {
    let long = "a message longer than the short-string bound".repeat(2);
    let list = Value::from(vec![
        message("user", &long),
        message("assistant", &long),
        message("user", &long),
    ]);
    let decoded = decode(&encode(&list).unwrap()).unwrap();
    assert_eq!(decoded, list);
    assert!(Str::ptr_eq(
        &key_at(&decoded, 0, 0),
        &key_at(&decoded, 2, 0)
    ));
    assert!(Str::ptr_eq(
        &key_at(&decoded, 1, 1),
        &key_at(&decoded, 2, 1)
    ));
    assert!(Str::ptr_eq(
        str_at(&decoded, 0, "role"),
        str_at(&decoded, 2, "role")
    ));
    assert!(!Str::ptr_eq(
        str_at(&decoded, 0, "content"),
        str_at(&decoded, 1, "content")
    ));
}

#[test]
fn strings_that_share_a_slot_stay_distinct() {
    // Enough distinct short strings that slots are reused: every value reads back.
    let items: Vec<Value> = (0..500).map(|i| Value::from(format!("k{i}"))).collect();
    let list = Value::from(items);
    assert_eq!(decode(&encode(&list).unwrap()).unwrap(), list);
}
