//! Conversion between Rust types and `Value` (`serde::rust`).
#![allow(clippy::unwrap_used, clippy::default_constructed_unit_structs)]

use std::collections::{BTreeMap, HashMap};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use stategraph_checkpoint::serde::rust::{from_value, from_value_ref, to_value};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{list, map, Error, Ext, Map, ObjectCode, Value};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shape {
    Empty,
    Circle(f64),
    Pair(i32, String),
    Rect { w: u32, h: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Inner {
    label: Option<String>,
    scores: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Everything {
    name: String,
    big: u64,
    small: i64,
    ratio: f32,
    flag: bool,
    letter: char,
    nothing: Option<i32>,
    something: Option<Inner>,
    #[serde(with = "serde_bytes")]
    blob: Vec<u8>,
    tuple: (u8, String, bool),
    by_name: HashMap<String, Inner>,
    ordered: IndexMap<String, i32>,
    by_number: BTreeMap<i32, String>,
    shapes: Vec<Shape>,
    unit: (),
}

fn everything() -> Everything {
    Everything {
        name: "graph".into(),
        big: u64::MAX,
        small: i64::MIN,
        ratio: 0.5,
        flag: true,
        letter: 'λ',
        nothing: None,
        something: Some(Inner {
            label: None,
            scores: vec![1, -2, 3],
        }),
        blob: vec![0, 159, 255],
        tuple: (7, "seven".into(), false),
        by_name: HashMap::from([(
            "x".to_owned(),
            Inner {
                label: Some("l".into()),
                scores: vec![],
            },
        )]),
        ordered: IndexMap::from([
            ("z".to_owned(), 1),
            ("a".to_owned(), 2),
            ("m".to_owned(), 3),
        ]),
        by_number: BTreeMap::from([(2, "two".into()), (-1, "minus one".into())]),
        shapes: vec![
            Shape::Empty,
            Shape::Circle(1.5),
            Shape::Pair(-4, "p".into()),
            Shape::Rect { w: 2, h: 3 },
        ],
        unit: (),
    }
}

fn uuid_ext() -> Value {
    Ext::object(
        ObjectCode::ConstructorSingleArg,
        "uuid",
        "UUID",
        "0123456789abcdef0123456789abcdef".into(),
        None,
    )
    .into()
}

fn datetime_ext() -> Value {
    Ext::object(
        ObjectCode::MethodSingleArg,
        "datetime",
        "datetime",
        "2024-07-31T12:00:00+00:00".into(),
        Some("fromisoformat"),
    )
    .into()
}

fn message_ext() -> Value {
    let data = map! {
        "content" => "hello",
        "additional_kwargs" => map! {},
        "response_metadata" => map! {},
        "type" => "human",
        "name" => Value::Nil,
        "id" => "msg-1",
    };
    Ext::object(
        ObjectCode::PydanticV2,
        "langchain_core.messages.human",
        "HumanMessage",
        data,
        Some("model_validate_json"),
    )
    .into()
}

fn set_ext() -> Value {
    Ext::object(
        ObjectCode::ConstructorSingleArg,
        "builtins",
        "set",
        list![1, 2],
        None,
    )
    .into()
}

/// A value using every variant, extensions nested in lists and maps (also as keys).
fn rich_value() -> Value {
    let mut m = Map::new();
    m.insert("messages", list![message_ext(), message_ext()]);
    m.insert(uuid_ext(), "uuid as a key");
    m.insert(7, Value::bytes(vec![1, 2, 3]));
    m.insert("when", datetime_ext());
    m.insert("set", set_ext());
    m.insert(
        "numpy",
        Value::from(Ext::NumpyArray(list!["<f8", list![2], "C", vec![0u8; 16]])),
    );
    m.insert("delta", Value::from(Ext::DeltaSnapshot(list![1, 2])));
    m.insert("big", Value::UInt(u64::MAX));
    m.insert("neg", Value::Int(i64::MIN));
    m.insert("float", Value::Float(-0.25));
    m.insert("nil", Value::Nil);
    m.insert("bool", false);
    Value::Map(m)
}

#[test]
fn struct_round_trips_through_value() {
    let original = everything();
    let value = to_value(&original).unwrap();
    let back: Everything = from_value(value.clone()).unwrap();
    assert_eq!(back, original);
    let borrowed: Everything = from_value_ref(&value).unwrap();
    assert_eq!(borrowed, original);
}

#[test]
fn struct_becomes_map_in_declaration_order() {
    let value = to_value(&everything()).unwrap();
    let keys: Vec<&str> = value
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "big",
            "small",
            "ratio",
            "flag",
            "letter",
            "nothing",
            "something",
            "blob",
            "tuple",
            "by_name",
            "ordered",
            "by_number",
            "shapes",
            "unit"
        ]
    );
    assert_eq!(value.get("big"), Some(&Value::UInt(u64::MAX)));
    assert_eq!(value.get("small"), Some(&Value::Int(i64::MIN)));
    assert_eq!(value.get("ratio"), Some(&Value::Float(0.5)));
    assert_eq!(value.get("letter"), Some(&Value::from("λ")));
    assert_eq!(value.get("nothing"), Some(&Value::Nil));
    assert_eq!(value.get("unit"), Some(&Value::Nil));
    assert_eq!(value.get("blob"), Some(&Value::bytes(vec![0, 159, 255])));
    assert_eq!(value.get("tuple"), Some(&list![7, "seven", false]));
    assert_eq!(
        value.get("something"),
        Some(&map! { "label" => Value::Nil, "scores" => list![1, -2, 3] })
    );
    assert_eq!(
        value.get("ordered"),
        Some(&map! { "z" => 1, "a" => 2, "m" => 3 })
    );
    let by_number = Value::Map(Map::from_pairs(vec![
        (Value::Int(-1), "minus one".into()),
        (Value::Int(2), "two".into()),
    ]));
    assert_eq!(value.get("by_number"), Some(&by_number));
}

#[test]
fn enums_are_externally_tagged() {
    let value = to_value(&everything().shapes).unwrap();
    let expected = list![
        "Empty",
        map! { "Circle" => 1.5 },
        map! { "Pair" => list![-4, "p"] },
        map! { "Rect" => map! { "w" => 2, "h" => 3 } },
    ];
    assert_eq!(value, expected);
    let back: Vec<Shape> = from_value(expected).unwrap();
    assert_eq!(back, everything().shapes);
}

#[test]
fn integers_are_canonical() {
    assert_eq!(to_value(&5u64).unwrap(), Value::Int(5));
    assert_eq!(to_value(&(i64::MAX as u64)).unwrap(), Value::Int(i64::MAX));
    assert_eq!(
        to_value(&(i64::MAX as u64 + 1)).unwrap(),
        Value::UInt(i64::MAX as u64 + 1)
    );
    assert_eq!(
        to_value(&u128::from(u64::MAX)).unwrap(),
        Value::UInt(u64::MAX)
    );
    assert_eq!(to_value(&-3i128).unwrap(), Value::Int(-3));
    assert!(matches!(
        to_value(&(u128::from(u64::MAX) + 1)),
        Err(Error::Encode(_))
    ));
    assert!(matches!(
        to_value(&(i128::from(i64::MIN) - 1)),
        Err(Error::Encode(_))
    ));
    let back: u128 = from_value(Value::UInt(u64::MAX)).unwrap();
    assert_eq!(back, u128::from(u64::MAX));
}

#[test]
fn numbers_convert_only_when_exact() {
    assert_eq!(from_value::<u8>(Value::Float(3.0)).unwrap(), 3);
    assert_eq!(from_value::<i64>(Value::Float(-2.0)).unwrap(), -2);
    assert_eq!(
        from_value::<u64>(Value::Float(2f64.powi(63))).unwrap(),
        1u64 << 63
    );
    assert_eq!(from_value::<f64>(Value::Int(3)).unwrap(), 3.0);
    assert_eq!(
        from_value::<f32>(Value::Int(-16_777_216)).unwrap(),
        -16_777_216.0
    );
    assert_eq!(
        from_value::<f64>(Value::UInt(1 << 63)).unwrap(),
        2f64.powi(63)
    );
    assert!(matches!(
        from_value::<u8>(Value::Float(3.5)),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        from_value::<u8>(Value::Int(256)),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        from_value::<u32>(Value::Int(-1)),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        from_value::<i64>(Value::UInt(u64::MAX)),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        from_value::<f64>(Value::Int((1 << 53) + 1)),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        from_value::<f32>(Value::Int(16_777_217)),
        Err(Error::InvalidData(_))
    ));
    assert!(matches!(
        from_value::<i32>(Value::Float(f64::NAN)),
        Err(Error::InvalidData(_))
    ));
}

#[derive(Debug, PartialEq, Deserialize)]
struct Partial {
    name: String,
    #[serde(default)]
    count: u32,
    #[serde(default)]
    tags: Vec<String>,
    maybe: Option<bool>,
}

#[test]
fn missing_fields_take_their_defaults_and_unknown_ones_are_ignored() {
    let value = map! { "name" => "n", "extra" => list![1, map! { "deep" => true }] };
    let partial: Partial = from_value(value).unwrap();
    assert_eq!(
        partial,
        Partial {
            name: "n".into(),
            count: 0,
            tags: vec![],
            maybe: None
        }
    );
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Holder {
    step: i32,
    state: Value,
    optional: Option<Value>,
    many: Vec<Value>,
}

#[test]
fn value_inside_a_struct_round_trips_exactly() {
    let holder = Holder {
        step: 3,
        state: rich_value(),
        optional: Some(uuid_ext()),
        many: vec![datetime_ext(), Value::Nil, set_ext()],
    };
    let value = to_value(&holder).unwrap();
    assert_eq!(value.get("state"), Some(&rich_value()));
    assert_eq!(value.get("optional"), Some(&uuid_ext()));
    let back: Holder = from_value(value.clone()).unwrap();
    assert_eq!(back, holder);
    let borrowed: Holder = from_value_ref(&value).unwrap();
    assert_eq!(borrowed, holder);
    // Byte-identical once stored, as LangGraph would store it.
    let plain = JsonPlusSerializer::default();
    let stored = |v: &Value| plain.dumps_typed(v).unwrap();
    assert_eq!(stored(&back.state), stored(&rich_value()));
    assert_eq!(stored(&to_value(&back).unwrap()), stored(&value));
}

#[test]
fn value_converts_to_itself() {
    assert_eq!(to_value(&rich_value()).unwrap(), rich_value());
    assert_eq!(from_value::<Value>(rich_value()).unwrap(), rich_value());
    assert_eq!(
        from_value_ref::<Value>(&rich_value()).unwrap(),
        rich_value()
    );
    assert_eq!(to_value(&message_ext()).unwrap(), message_ext());
    assert_eq!(from_value::<Value>(message_ext()).unwrap(), message_ext());
}

#[test]
fn a_map_shaped_like_the_rendering_stays_a_map() {
    let lookalike = map! { "$ext" => 0, "module" => "uuid", "class" => "UUID", "data" => "00" };
    assert_eq!(to_value(&lookalike).unwrap(), lookalike);
    assert_eq!(from_value::<Value>(lookalike.clone()).unwrap(), lookalike);
}

#[derive(Debug, PartialEq, Deserialize)]
struct Message {
    content: String,
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    name: Option<String>,
}

#[test]
fn extension_values_read_as_their_data() {
    let message: Message = from_value(message_ext()).unwrap();
    assert_eq!(
        message,
        Message {
            content: "hello".into(),
            kind: "human".into(),
            id: Some("msg-1".into()),
            name: None
        }
    );
    let id: String = from_value(uuid_ext()).unwrap();
    assert_eq!(id, "0123456789abcdef0123456789abcdef");
    let when: String = from_value(datetime_ext()).unwrap();
    assert_eq!(when, "2024-07-31T12:00:00+00:00");
    let set: Vec<u8> = from_value(set_ext()).unwrap();
    assert_eq!(set, [1, 2]);
    let snapshot: Vec<i32> = from_value(Ext::DeltaSnapshot(list![4, 5]).into()).unwrap();
    assert_eq!(snapshot, [4, 5]);
    let messages: Vec<Message> = from_value(list![message_ext()]).unwrap();
    assert_eq!(messages.len(), 1);
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Unit;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Meters(f64);

#[test]
fn unit_and_newtype_structs() {
    assert_eq!(to_value(&Unit).unwrap(), Value::Nil);
    assert_eq!(from_value::<Unit>(Value::Nil).unwrap(), Unit);
    assert_eq!(to_value(&Meters(2.5)).unwrap(), Value::Float(2.5));
    assert_eq!(
        from_value::<Meters>(Value::Float(2.5)).unwrap(),
        Meters(2.5)
    );
    assert_eq!(from_value::<Option<Meters>>(Value::Nil).unwrap(), None);
}

#[test]
fn map_keys_of_any_kind_round_trip() {
    let mut original: HashMap<(i32, bool), Vec<String>> = HashMap::new();
    original.insert((1, true), vec!["a".into()]);
    original.insert((-2, false), vec![]);
    let value = to_value(&original).unwrap();
    assert!(value.as_map().unwrap().get_value(&list![1, true]).is_some());
    let back: HashMap<(i32, bool), Vec<String>> = from_value(value).unwrap();
    assert_eq!(back, original);
}

#[derive(Debug, Deserialize)]
struct Borrowing<'a> {
    text: &'a str,
    #[serde(with = "serde_bytes")]
    raw: &'a [u8],
}

#[test]
fn borrowed_conversion_borrows_strings_and_bytes() {
    let value = map! { "text" => "borrowed", "raw" => vec![9u8, 8] };
    let b: Borrowing<'_> = from_value_ref(&value).unwrap();
    assert_eq!(b.text, "borrowed");
    assert_eq!(b.raw, [9, 8]);
}

#[test]
fn bytes_also_read_from_a_list_of_integers() {
    let bytes: serde_bytes::ByteBuf = from_value(list![1, 2, 255]).unwrap();
    assert_eq!(bytes.into_vec(), [1, 2, 255]);
}

#[test]
fn mismatched_types_are_typed_errors() {
    let invalid = |r: Result<(), Error>| assert!(matches!(r, Err(Error::InvalidData(_))), "{r:?}");
    invalid(from_value::<i32>("x".into()).map(drop));
    invalid(from_value::<String>(Value::Int(1)).map(drop));
    invalid(from_value::<Vec<i32>>(map! { "a" => 1 }).map(drop));
    invalid(from_value::<Vec<i32>>(list![1, "two"]).map(drop));
    invalid(from_value::<Inner>(map! { "label" => "l" }).map(drop));
    invalid(from_value::<Inner>(Value::bytes(vec![1])).map(drop));
    invalid(from_value::<(i32, i32)>(list![1, 2, 3]).map(drop));
    invalid(from_value::<bool>(Value::Nil).map(drop));
    invalid(from_value::<char>("ab".into()).map(drop));
    invalid(from_value::<Shape>("Hexagon".into()).map(drop));
    invalid(from_value::<Shape>(map! { "Circle" => 1.0, "Empty" => Value::Nil }).map(drop));
    invalid(from_value::<Shape>("Circle".into()).map(drop));
    invalid(from_value::<Shape>(map! { "Empty" => 3 }).map(drop));
    invalid(from_value::<Message>(uuid_ext()).map(drop));
    invalid(
        from_value::<HashMap<String, i32>>(Value::Map(Map::from_pairs(vec![(
            Value::Int(1),
            Value::Int(2),
        )])))
        .map(drop),
    );
}

#[test]
fn other_formats_see_a_readable_rendering() {
    let value = map! {
        "id" => uuid_ext(),
        "when" => datetime_ext(),
        "raw" => vec![1u8, 2],
        "n" => Value::Nil,
        "delta" => Value::from(Ext::DeltaSnapshot(list![1])),
    };
    let json = serde_json::to_string(&value).unwrap();
    assert_eq!(
        json,
        concat!(
            r#"{"id":{"$ext":0,"module":"uuid","class":"UUID","data":"0123456789abcdef0123456789abcdef"},"#,
            r#""when":{"$ext":3,"module":"datetime","class":"datetime","data":"2024-07-31T12:00:00+00:00","method":"fromisoformat"},"#,
            r#""raw":[1,2],"n":null,"delta":{"$ext":7,"data":[1]}}"#
        )
    );
}

#[test]
fn values_read_from_other_formats() {
    let value: Value = serde_json::from_str(
        r#"{"a": [1, -2, 18446744073709551615, 1.5, null, true], "b": {"c": "d"}}"#,
    )
    .unwrap();
    let expected = map! {
        "a" => list![1, -2, Value::UInt(u64::MAX), 1.5, Value::Nil, true],
        "b" => map! { "c" => "d" },
    };
    assert_eq!(value, expected);
    let holder: Holder =
        serde_json::from_str(r#"{"step": 1, "state": {"x": [1]}, "optional": null, "many": []}"#)
            .unwrap();
    assert_eq!(holder.state, map! { "x" => list![1] });
    assert_eq!(holder.optional, None);
}

#[derive(Debug, Serialize, Deserialize)]
struct Flattened {
    step: i32,
    #[serde(flatten)]
    rest: Value,
}

#[test]
fn flattened_values_read_extensions_as_their_data() {
    // The documented exception: serde buffers flattened fields without the magic names.
    let value = map! { "step" => 1, "id" => uuid_ext() };
    let flat: Flattened = from_value(value.clone()).unwrap();
    assert_eq!(
        flat.rest,
        map! { "id" => "0123456789abcdef0123456789abcdef" }
    );
    assert_eq!(
        to_value(&Flattened {
            step: 1,
            rest: map! { "id" => uuid_ext() }
        })
        .unwrap(),
        value
    );
}
