//! Metadata JSON: the bytes Python's `json.dumps(..., ensure_ascii=False)` writes (the
//! expected texts below were printed by the pinned Python), and `json.loads` reading.

use stategraph_checkpoint::{list, map, Error, Ext, Map, Object, ObjectCode, Value};
use stategraph_checkpoint_sqlite::json::{from_json, to_json};

#[test]
fn writes_python_separators_and_key_order() {
    let md = map! {"source" => "input", "step" => -1, "parents" => map! {}};
    assert_eq!(
        to_json(&md).unwrap(),
        r#"{"source": "input", "step": -1, "parents": {}}"#
    );
    let nested = map! {
        "parents" => map! {"" => "1ef", "sub:1" => "1eg"},
        "writes" => map! {"node" => map! {"k" => "v"}},
    };
    assert_eq!(
        to_json(&nested).unwrap(),
        r#"{"parents": {"": "1ef", "sub:1": "1eg"}, "writes": {"node": {"k": "v"}}}"#
    );
    let mixed = list![
        1,
        2.5,
        Value::Nil,
        true,
        false,
        map! {"a" => map! {}, "b" => list![]},
        list![list![]]
    ];
    assert_eq!(
        to_json(&mixed).unwrap(),
        "[1, 2.5, null, true, false, {\"a\": {}, \"b\": []}, [[]]]"
    );
    assert_eq!(to_json(&map! {}).unwrap(), "{}");
    assert_eq!(to_json(&list![]).unwrap(), "[]");
}

#[test]
fn escapes_only_what_python_escapes_and_keeps_non_ascii() {
    let s = map! {"s" => "é\n\u{0}\u{1}\u{1f}\u{7f}\u{2028}\"\\\u{8}\u{c}\t\r/😀"};
    let text = to_json(&s).unwrap();
    assert_eq!(
        hex::encode(text.as_bytes()),
        "7b2273223a2022c3a95c6e5c75303030305c75303030315c75303031667fe280a85c225c5c5c625c665c745c722ff09f9880227d"
    );
    assert_eq!(from_json(text.as_bytes()).unwrap(), s);
}

#[test]
fn writes_floats_and_big_integers_as_python() {
    let floats = map! {"f" => Value::List(
        [1e16, 1e-7, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 2.5, 1.0, -0.0, 0.1,
         123456789.123, 1e22, 5e-324]
            .into_iter()
            .map(Value::Float)
            .collect(),
    )};
    assert_eq!(
        to_json(&floats).unwrap(),
        r#"{"f": [1e+16, 1e-07, NaN, Infinity, -Infinity, 2.5, 1.0, -0.0, 0.1, 123456789.123, 1e+22, 5e-324]}"#
    );
    let ints = map! {"big" => u64::MAX, "neg" => i64::MIN};
    let text = to_json(&ints).unwrap();
    assert_eq!(
        text,
        r#"{"big": 18446744073709551615, "neg": -9223372036854775808}"#
    );
    assert_eq!(from_json(text.as_bytes()).unwrap(), ints);
}

#[test]
fn converts_scalar_keys_as_python_and_refuses_the_rest() {
    let mut m = Map::new();
    m.insert(Value::Int(2), "int");
    m.insert(Value::Float(1.5), "float");
    m.insert(Value::Bool(true), "bool");
    m.insert(Value::Nil, "none");
    m.insert(Value::Float(f64::NAN), "nan");
    assert_eq!(
        to_json(&Value::Map(m)).unwrap(),
        r#"{"2": "int", "1.5": "float", "true": "bool", "null": "none", "NaN": "nan"}"#
    );
    let mut m = Map::new();
    m.insert(list![1], "tuple key");
    assert!(matches!(to_json(&Value::Map(m)), Err(Error::Encode(_))));
}

#[test]
fn bytes_and_objects_are_not_json() {
    assert!(matches!(
        to_json(&map! {"b" => Value::bytes(vec![1])}),
        Err(Error::Encode(_))
    ));
    let uuid = Ext::Object(Object {
        code: ObjectCode::ConstructorSingleArg,
        module: "uuid".into(),
        class: "UUID".into(),
        data: Value::from("00000000-0000-0000-0000-000000000000"),
        method: None,
    });
    assert!(matches!(
        to_json(&map! {"u" => Value::ext(uuid)}),
        Err(Error::Encode(_))
    ));
}

#[test]
fn reads_what_json_loads_reads() {
    let v = from_json(
        b" {\"a\" :1 ,\n\"b\":\t[1E2, -0, 1.0, NaN, -Infinity, \"\\/\\ud83d\\ude00\\u00e9\"]}\r\n",
    )
    .unwrap();
    let b = v.get("b").and_then(Value::as_list).unwrap();
    assert_eq!(v.get("a"), Some(&Value::Int(1)));
    assert_eq!(b[0], Value::Float(100.0));
    assert_eq!(b[1], Value::Int(0));
    assert_eq!(b[2], Value::Float(1.0));
    assert!(b[3].as_f64().unwrap().is_nan());
    assert_eq!(b[4], Value::Float(f64::NEG_INFINITY));
    assert_eq!(b[5], Value::from("/😀é"));
    // A byte order mark is skipped, as json.loads(bytes) does.
    assert_eq!(from_json(b"\xef\xbb\xbf{}").unwrap(), map! {});
}

#[test]
fn a_repeated_key_keeps_its_first_place_and_last_value() {
    let v = from_json(br#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
    assert_eq!(v, map! {"a" => 3, "b" => 2});
    assert_eq!(v.as_map().unwrap().len(), 2);
}

#[test]
fn a_lone_surrogate_becomes_the_replacement_character() {
    assert_eq!(
        from_json(br#""\ud800x""#).unwrap(),
        Value::from("\u{fffd}x")
    );
    assert_eq!(from_json(br#""\udc00""#).unwrap(), Value::from("\u{fffd}"));
}

#[test]
fn malformed_text_is_a_decode_error() {
    let bad: &[&[u8]] = &[
        b"",
        b"{",
        b"{\"a\" 1}",
        b"[1,]",
        b"01",
        b"{} x",
        b"\"a\nb\"",
        b"\"\\x\"",
        b"\"\\u12\"",
        b"18446744073709551616",
        b"nul",
        b"{1: 2}",
        b"[1 2]",
        b"\xff",
    ];
    for text in bad {
        assert!(
            matches!(from_json(text), Err(Error::Decode(_))),
            "{:?} should not decode",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let deep = "[".repeat(100_000);
    assert!(matches!(from_json(deep.as_bytes()), Err(Error::Decode(_))));
    let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert!(from_json(ok.as_bytes()).is_ok());
}

/// The metadata column holds, byte for byte, what Python's `SqliteSaver.put` writes for the
/// same metadata (printed by the pinned Python): NULs removed from top-level strings only,
/// other control characters escaped, non-ASCII kept, scalar keys turned into strings.
#[tokio::test]
async fn metadata_rows_hold_the_bytes_python_writes() {
    use stategraph_checkpoint::{
        Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
    };

    use super::support::TempSaver;

    let saver = TempSaver::new("metadata");
    let mut k = Map::new();
    k.insert(Value::Int(1), 5);
    k.insert(Value::Float(1.5), 3);
    k.insert(Value::Nil, 4);
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1)
        .with("x", "é\n\u{0}\u{1}\u{7f}\u{2028}")
        .with(
            "n",
            list![
                1,
                2.5,
                Value::Nil,
                true,
                map! {"a" => f64::NAN, "b" => f64::INFINITY}
            ],
        )
        .with("k", Value::Map(k))
        .with("big", u64::MAX)
        .with("e", 1e16)
        .with("f", 1e-7);
    let cp = Checkpoint::empty("1ef", "2025-01-01T00:00:00+00:00");
    let config = CheckpointConfig::thread("t");
    saver
        .put(&config, &cp, &md, &Default::default())
        .await
        .expect("put");
    let stored: Vec<u8> = saver
        .file
        .raw()
        .query_row("SELECT metadata FROM checkpoints", [], |r| r.get(0))
        .expect("metadata blob");
    let python = "{\"source\": \"input\", \"step\": -1, \"parents\": {}, \
        \"x\": \"é\\n\\u0001\u{7f}\u{2028}\", \
        \"n\": [1, 2.5, null, true, {\"a\": NaN, \"b\": Infinity}], \
        \"k\": {\"1\": 5, \"1.5\": 3, \"null\": 4}, \"big\": 18446744073709551615, \
        \"e\": 1e+16, \"f\": 1e-07}";
    assert_eq!(String::from_utf8(stored).expect("utf-8"), python);
    let read = saver
        .get_tuple(&config)
        .await
        .expect("get")
        .expect("stored")
        .metadata;
    assert_eq!(read.get("x"), Some(Value::from("é\n\u{1}\u{7f}\u{2028}")));
    assert_eq!(
        read.get("k"),
        Some(map! {"1" => 5, "1.5" => 3, "null" => 4})
    );
    assert_eq!(read.get("big"), Some(Value::UInt(u64::MAX)));
}
