//! `Display` and the JSON form of stored values: plain data as Python prints it, Python
//! objects as people write them, and a documented JSON form for tools.

use serde_json::json;
use stategraph_checkpoint::value::{to_json, AsJson};
use stategraph_checkpoint::{Map, Value};

fn fields(pairs: &[(&str, Value)]) -> Map {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(*k, v.clone());
    }
    m
}

fn uuid() -> Value {
    Value::uuid(&uuid::Uuid::from_u128(0x1234))
}

#[test]
fn plain_data_prints_as_python_repr() {
    let mut odd = Map::new();
    odd.insert(Value::Int(1), "one");
    odd.insert(Value::Nil, Value::Float(1.0));
    let v = Value::from(vec![
        Value::Nil,
        Value::Bool(true),
        Value::Int(-3),
        Value::Float(1e-5),
        Value::from("it's"),
        Value::from(vec![0u8, b'a']),
        Value::Map(odd),
        // A tuple is stored as a list, so it prints as one.
        Value::from(vec![Value::from(1), Value::from(2)]),
    ]);
    assert_eq!(
        v.to_string(),
        "[None, True, -3, 1e-05, \"it's\", b'\\x00a', {1: 'one', None: 1.0}, [1, 2]]"
    );
}

#[test]
fn python_objects_print_as_people_write_them() {
    let v = Value::from(vec![
        uuid(),
        Value::datetime_iso("2024-01-02T03:04:05+00:00"),
        Value::date(2024, 5, 6),
        Value::timedelta(1, 5, 0),
        Value::decimal("12.50"),
        Value::set(vec![Value::from("b"), Value::from("a")]),
        Value::set(vec![]),
        Value::frozenset(vec![Value::from(2)]),
        Value::dataclass(
            "__main__",
            "Point",
            fields(&[("x", 1.into()), ("y", 2.into())]),
        ),
        Value::pydantic_v2("app", "User", fields(&[("name", "ann".into())])),
        Value::send("worker", Value::from(3)),
        Value::interrupt(Value::from("ok?"), "abc"),
    ]);
    assert_eq!(
        v.to_string(),
        "[UUID('00000000-0000-0000-0000-000000001234'), \
         datetime('2024-01-02T03:04:05+00:00'), date(2024, 5, 6), \
         timedelta(days=1, seconds=5, microseconds=0), Decimal('12.50'), {'a', 'b'}, set(), \
         frozenset({2}), Point(x=1, y=2), User(name='ann'), Send('worker', 3), \
         Interrupt('ok?', id='abc')]"
    );
}

#[test]
fn messages_print_their_content_and_non_default_fields() {
    let human = Value::message(
        "HumanMessage",
        fields(&[("content", "hi".into()), ("id", "m1".into())]),
    )
    .expect("a message class");
    assert_eq!(human.to_string(), "HumanMessage('hi', id='m1')");
    assert_eq!(human.chat_line().as_deref(), Some("human: hi"));

    let mut call = Map::new();
    call.insert("name", "search");
    call.insert("args", Value::Map(fields(&[("q", "rust".into())])));
    call.insert("id", "c1");
    let ai = Value::message(
        "AIMessage",
        fields(&[("tool_calls", Value::from(vec![Value::Map(call)]))]),
    )
    .expect("a message class");
    assert!(
        ai.to_string().starts_with(
            "AIMessage('', tool_calls=[{'name': 'search', 'args': {'q': 'rust'}, 'id': 'c1'}]"
        ),
        "{ai}"
    );
    assert_eq!(
        ai.chat_line().as_deref(),
        Some("ai:  → search({'q': 'rust'})")
    );

    let tool = Value::message(
        "ToolMessage",
        fields(&[("content", "42".into()), ("tool_call_id", "c1".into())]),
    )
    .expect("a message class");
    assert_eq!(tool.to_string(), "ToolMessage('42', tool_call_id='c1')");
    assert_eq!(tool.chat_line().as_deref(), Some("tool[c1]: 42"));
    assert_eq!(Value::from("hi").chat_line(), None);
}

#[test]
fn json_form_keeps_data_and_names_objects() {
    let mut odd = Map::new();
    odd.insert(Value::Int(1), "one");
    let v = Value::from(vec![
        Value::Nil,
        Value::Float(f64::NAN),
        Value::Float(f64::NEG_INFINITY),
        Value::from(u64::MAX),
        Value::from(vec![0xffu8, 0x00]),
        Value::Map(odd),
        Value::Map(fields(&[("b", 1.into()), ("a", 2.into())])),
        uuid(),
        Value::datetime_iso("2024-01-02T03:04:05+00:00"),
        Value::set(vec![Value::from("a")]),
        Value::dataclass("__main__", "Point", fields(&[("x", 1.into())])),
    ]);
    let j = to_json(&v);
    assert_eq!(
        j,
        json!([
            null,
            "NaN",
            "-inf",
            u64::MAX,
            {"$bytes": "ff00"},
            {"$map": [[1, "one"]]},
            {"b": 1, "a": 2},
            {"$py": "uuid.UUID", "value": "00000000-0000-0000-0000-000000001234"},
            {"$py": "datetime.datetime", "value": "2024-01-02T03:04:05+00:00"},
            {"$py": "builtins.set", "value": ["a"]},
            {"$py": "__main__.Point", "value": {"x": 1}},
        ])
    );
    assert_eq!(v.to_json(), j);
    // Insertion order of string keys is kept when streamed straight to text.
    let text = serde_json::to_string(&AsJson(&v)).expect("serializes");
    assert!(text.contains(r#"{"b":1,"a":2}"#), "{text}");
}

#[test]
fn json_form_of_a_message_has_its_class_and_fields() {
    let human = Value::message("HumanMessage", fields(&[("content", "hi".into())]))
        .expect("a message class");
    let j = human.to_json();
    assert_eq!(j["$py"], "langchain_core.messages.human.HumanMessage");
    assert_eq!(j["value"]["content"], "hi");
    assert_eq!(j["value"]["type"], "human");
}

/// Issue 21: `println!("{}", interrupt.value)` printed `'approve?'`. At the top `Display` is
/// Python's `str()`; inside containers, and in `repr()`, strings keep their quotes.
#[test]
fn display_at_the_top_is_python_str_and_repr_keeps_the_quotes() {
    let question = Value::from("approve a payment of $5?");
    assert_eq!(question.to_string(), "approve a payment of $5?");
    assert_eq!(question.repr().to_string(), "'approve a payment of $5?'");
    let list = Value::from(vec![Value::from("a"), Value::from(1)]);
    assert_eq!(list.to_string(), "['a', 1]");
    assert_eq!(list.repr().to_string(), "['a', 1]");
    // str() of Python objects whose str is not their repr (checked against Python 3).
    let cases = [
        (uuid(), "00000000-0000-0000-0000-000000001234"),
        (
            Value::datetime_iso("2024-01-02T03:04:05+00:00"),
            "2024-01-02 03:04:05+00:00",
        ),
        (Value::date(2024, 5, 6), "2024-05-06"),
        (Value::timedelta(1, 5, 0), "1 day, 0:00:05"),
        (Value::timedelta(-2, 86399, 250), "-2 days, 23:59:59.000250"),
        (Value::timedelta(0, 3600, 0), "1:00:00"),
        (Value::decimal("12.50"), "12.50"),
    ];
    for (value, text) in cases {
        assert_eq!(value.to_string(), text);
        assert_ne!(value.repr().to_string(), text);
    }
    assert_eq!(
        Value::from(vec![Value::decimal("1.5")]).to_string(),
        "[Decimal('1.5')]"
    );
    // Everything else reads the same both ways.
    for value in [
        Value::Nil,
        Value::Int(3),
        Value::Float(1.0),
        Value::from(vec![0u8]),
    ] {
        assert_eq!(value.to_string(), value.repr().to_string());
    }
}
