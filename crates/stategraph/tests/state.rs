//! Typed state: `#[derive(State)]`, the built-in reducers and LangChain messages.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use indexmap::IndexMap;
use stategraph::channels::ChannelError;
use stategraph::checkpoint::serde::msgpack;
use stategraph::checkpoint::serde::rust::{from_value, to_value};
use stategraph::messages::REMOVE_ALL_MESSAGES;
use stategraph::reducers::{add_message_values, add_values, from_fn, merge_values};
use stategraph::{list, map, IntoUpdate, Message, Role, State, ToolCall, Value};

fn keep_max(a: i64, b: i64) -> i64 {
    a.max(b)
}

#[derive(State, Debug, Clone, PartialEq)]
struct Agent {
    name: String,
    #[state(rename = "addr")]
    address: Option<String>,
    #[state(reducer = add)]
    items: Vec<String>,
    #[state(reducer = "append")]
    count: i64,
    #[state(reducer = merge)]
    meta: BTreeMap<String, i64>,
    #[state(reducer = add_messages)]
    messages: Vec<Message>,
    #[state(reducer = keep_max)]
    best: i64,
    #[state(reducer = add)]
    maybe: Option<Vec<i64>>,
    #[state(skip)]
    cache: u32,
}

fn values(pairs: Vec<(&str, Value)>) -> IndexMap<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

fn python(hex_bytes: &str) -> Vec<u8> {
    hex::decode(hex_bytes).unwrap()
}

fn messages_of(v: &Value) -> Vec<Message> {
    from_value(v.clone()).unwrap()
}

fn ids(v: &Value) -> Vec<String> {
    messages_of(v).into_iter().map(|m| m.id.unwrap()).collect()
}

fn reducer_error(r: Result<Value, ChannelError>) -> String {
    match r {
        Err(ChannelError::Reducer(msg)) => msg,
        other => panic!("expected a reducer error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// #[derive(State)]

#[test]
fn channels_follow_field_order_names_and_reducers() {
    let channels = Agent::channels();
    let described: Vec<(&str, &str)> = channels
        .iter()
        .map(|(n, c)| (n.as_str(), c.kind()))
        .collect();
    assert_eq!(
        described,
        vec![
            ("name", "LastValue"),
            ("addr", "LastValue"),
            ("items", "BinaryOperatorAggregate"),
            ("count", "BinaryOperatorAggregate"),
            ("meta", "BinaryOperatorAggregate"),
            ("messages", "BinaryOperatorAggregate"),
            ("best", "BinaryOperatorAggregate"),
            ("maybe", "BinaryOperatorAggregate"),
        ]
    );
}

#[test]
fn reducer_channels_start_at_the_field_default() {
    let channels = Agent::channels();
    let initial: Vec<Option<Value>> = channels.iter().map(|(_, c)| c.get()).collect();
    assert_eq!(initial[0], None, "a LastValue starts empty");
    assert_eq!(initial[2], Some(list![]));
    assert_eq!(initial[3], Some(Value::Int(0)));
    assert_eq!(initial[4], Some(map! {}));
    assert_eq!(initial[5], Some(list![]));
    assert_eq!(initial[6], Some(Value::Int(0)));
    assert_eq!(
        initial[7], None,
        "an Option field starts empty (Python's MISSING)"
    );
}

#[test]
fn reducer_channels_fold_writes() {
    let mut channels = Agent::channels();
    let (_, items) = &mut channels[2];
    assert!(items.update(vec![list!["a"], list!["b", "c"]]).unwrap());
    assert_eq!(items.get(), Some(list!["a", "b", "c"]));
    let (_, best) = &mut channels[6];
    best.update(vec![Value::Int(3), Value::Int(9), Value::Int(4)])
        .unwrap();
    assert_eq!(best.get(), Some(Value::Int(9)));
    let (_, maybe) = &mut channels[7];
    maybe.update(vec![list![1], list![2]]).unwrap();
    assert_eq!(
        maybe.get(),
        Some(list![1, 2]),
        "the first write of an empty channel is kept"
    );
}

#[test]
fn missing_channels_read_as_defaults() {
    let state = Agent::from_values(&IndexMap::new()).unwrap();
    assert_eq!(
        state,
        Agent {
            name: String::new(),
            address: None,
            items: vec![],
            count: 0,
            meta: BTreeMap::new(),
            messages: vec![],
            best: 0,
            maybe: None,
            cache: 0,
        }
    );
}

#[test]
fn present_channels_are_read_by_channel_name() {
    let state = Agent::from_values(&values(vec![
        ("addr", Value::from("Main St")),
        ("count", Value::Int(7)),
        ("items", list!["x"]),
        (
            "messages",
            list![Message::human("hi").with_id("1").to_value()],
        ),
        ("address", Value::from("ignored: not a channel name")),
        ("cache", Value::Int(5)),
    ]))
    .unwrap();
    assert_eq!(state.address.as_deref(), Some("Main St"));
    assert_eq!(state.count, 7);
    assert_eq!(state.items, vec!["x".to_owned()]);
    assert_eq!(state.messages, vec![Message::human("hi").with_id("1")]);
    assert_eq!(state.cache, 0, "a skipped field is never read");
}

#[test]
fn a_value_of_the_wrong_shape_is_a_state_error() {
    let err = Agent::from_values(&values(vec![("count", Value::from("seven"))])).unwrap_err();
    match err {
        stategraph::Error::State(msg) => assert!(msg.contains("\"count\""), "{msg}"),
        other => panic!("expected a state error, got {other:?}"),
    }
}

#[test]
fn to_values_writes_every_channel_in_order() {
    let state = Agent {
        name: "Ann".into(),
        address: None,
        items: vec!["a".into()],
        count: 2,
        meta: BTreeMap::from([("k".to_owned(), 1)]),
        messages: vec![],
        best: 3,
        maybe: Some(vec![4]),
        cache: 9,
    };
    let written = state.to_values().unwrap();
    assert_eq!(
        written,
        vec![
            ("name".to_owned(), Value::from("Ann")),
            ("addr".to_owned(), Value::Nil),
            ("items".to_owned(), list!["a"]),
            ("count".to_owned(), Value::Int(2)),
            ("meta".to_owned(), map! {"k" => 1}),
            ("messages".to_owned(), list![]),
            ("best".to_owned(), Value::Int(3)),
            ("maybe".to_owned(), list![4]),
        ]
    );
    assert_eq!(
        Agent::from_values(&written.into_iter().collect())
            .unwrap()
            .best,
        3
    );
}

#[test]
fn an_update_writes_only_its_set_fields_in_declaration_order() {
    let update = AgentUpdate::default()
        .count(5)
        .address("Elm St".to_owned())
        .name("Bob");
    assert_eq!(update.items, None);
    let writes = update.into_writes().unwrap();
    assert_eq!(
        writes,
        vec![
            ("name".to_owned(), Value::from("Bob")),
            ("addr".to_owned(), Value::from("Elm St")),
            ("count".to_owned(), Value::Int(5)),
        ]
    );
    assert!(AgentUpdate::default().into_writes().unwrap().is_empty());
}

#[test]
fn an_update_of_messages_stores_the_message_objects() {
    let writes = AgentUpdate::default()
        .messages(vec![Message::ai("done").with_id("a1")])
        .into_writes()
        .unwrap();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].0, "messages");
    assert_eq!(
        writes[0].1,
        list![Message::ai("done").with_id("a1").to_value()]
    );
}

// ---------------------------------------------------------------------------------------
// add

#[test]
fn add_concatenates_lists_strings_and_bytes() {
    assert_eq!(
        add_values(list![1], list!["a", 2]).unwrap(),
        list![1, "a", 2]
    );
    assert_eq!(
        add_values("ab".into(), "cd".into()).unwrap(),
        Value::from("abcd")
    );
    assert_eq!(
        add_values(
            Value::Bytes(b"ab".to_vec().into()),
            Value::Bytes(b"c".to_vec().into())
        )
        .unwrap(),
        Value::Bytes(b"abc".to_vec().into())
    );
}

#[test]
fn add_follows_python_numbers() {
    assert_eq!(add_values(2.into(), 3.into()).unwrap(), Value::Int(5));
    assert_eq!(add_values(2.into(), 0.5.into()).unwrap(), Value::Float(2.5));
    assert_eq!(add_values(0.5.into(), 2.into()).unwrap(), Value::Float(2.5));
    assert_eq!(add_values(true.into(), true.into()).unwrap(), Value::Int(2));
    assert_eq!(
        add_values(i64::MAX.into(), 1.into()).unwrap(),
        Value::UInt(1 << 63)
    );
    assert_eq!(
        add_values(Value::UInt(u64::MAX), (-1).into()).unwrap(),
        Value::UInt(u64::MAX - 1)
    );
    let err = reducer_error(add_values(Value::UInt(u64::MAX), 1.into()));
    assert!(err.contains("64-bit"), "{err}");
}

#[test]
fn add_rejects_mixed_types_with_python_messages() {
    assert_eq!(
        reducer_error(add_values(list![1], 2.into())),
        "can only concatenate list (not \"int\") to list"
    );
    assert_eq!(
        reducer_error(add_values("a".into(), Value::Nil)),
        "can only concatenate str (not \"NoneType\") to str"
    );
    assert_eq!(
        reducer_error(add_values(1.into(), "a".into())),
        "unsupported operand type(s) for +: 'int' and 'str'"
    );
    assert_eq!(
        reducer_error(add_values(map! {"a" => 1}, map! {"b" => 2})),
        "unsupported operand type(s) for +: 'dict' and 'dict'"
    );
}

// ---------------------------------------------------------------------------------------
// merge

#[test]
fn merge_keeps_left_order_right_wins_new_keys_last() {
    let merged = merge_values(map! {"a" => 1, "b" => 2}, map! {"c" => 3, "a" => 10}).unwrap();
    assert_eq!(merged, map! {"a" => 10, "b" => 2, "c" => 3});
    let err = reducer_error(merge_values(map! {}, list![]));
    assert!(err.contains("'dict' and 'list'"), "{err}");
}

// ---------------------------------------------------------------------------------------
// from_fn

#[test]
fn a_typed_reducer_reads_and_writes_its_type() {
    let concat = from_fn(|a: Vec<String>, b: Vec<String>| [a, b].concat());
    assert_eq!(concat(list!["a"], list!["b"]).unwrap(), list!["a", "b"]);
    let max = from_fn(keep_max);
    assert_eq!(max(4.into(), 2.into()).unwrap(), Value::Int(4));
    let err = reducer_error(max(4.into(), "x".into()));
    assert!(err.starts_with("written value"), "{err}");
}

// ---------------------------------------------------------------------------------------
// add_messages

#[test]
fn add_messages_appends_and_gives_missing_ids_a_uuid4() {
    let left = list![Message::human("hi").with_id("1").to_value()];
    let out = add_message_values(left, list![Message::ai("hello").to_value()]).unwrap();
    let msgs = messages_of(&out);
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0], Message::human("hi").with_id("1"));
    assert_eq!(msgs[1].role, Role::Ai);
    let id = msgs[1].id.clone().unwrap();
    let parsed = uuid::Uuid::parse_str(&id).unwrap();
    assert_eq!(parsed.get_version_num(), 4);
    assert_eq!(
        id,
        parsed.hyphenated().to_string(),
        "Python's str(uuid4()) form"
    );
}

#[test]
fn add_messages_replaces_a_message_with_the_same_id_in_place() {
    let left = list![
        Message::human("a").with_id("1").to_value(),
        Message::ai("b").with_id("2").to_value(),
        Message::human("c").with_id("3").to_value()
    ];
    let right = list![
        Message::ai("B").with_id("2").to_value(),
        Message::human("d").with_id("4").to_value()
    ];
    let out = add_message_values(left, right).unwrap();
    let texts: Vec<String> = messages_of(&out).iter().map(Message::text).collect();
    assert_eq!(texts, ["a", "B", "c", "d"]);
    assert_eq!(ids(&out), ["1", "2", "3", "4"]);
}

#[test]
fn add_messages_accepts_a_single_message_on_either_side() {
    let out = add_message_values(
        Message::human("a").with_id("1").to_value(),
        Message::ai("b").with_id("2").to_value(),
    )
    .unwrap();
    assert_eq!(ids(&out), ["1", "2"]);
}

#[test]
fn remove_message_deletes_by_id_and_unknown_ids_fail() {
    let left = list![
        Message::human("a").with_id("1").to_value(),
        Message::ai("b").with_id("2").to_value()
    ];
    let out = add_message_values(left.clone(), list![Message::remove("1").to_value()]).unwrap();
    assert_eq!(ids(&out), ["2"]);

    let err = reducer_error(add_message_values(
        left.clone(),
        list![Message::remove("9").to_value()],
    ));
    assert_eq!(
        err,
        "Attempting to delete a message with an ID that doesn't exist ('9')"
    );

    // A later message with the removed id brings it back (in its old slot).
    let out = add_message_values(
        left,
        list![
            Message::remove("1").to_value(),
            Message::human("again").with_id("1").to_value()
        ],
    )
    .unwrap();
    assert_eq!(ids(&out), ["1", "2"]);
    assert_eq!(messages_of(&out)[0].text(), "again");
}

#[test]
fn remove_all_keeps_only_what_follows_it() {
    let left = list![Message::human("a").with_id("1").to_value()];
    let right = list![
        Message::human("dropped").with_id("x").to_value(),
        Message::remove_all().to_value(),
        Message::ai("kept").with_id("k").to_value()
    ];
    let out = add_message_values(left, right).unwrap();
    assert_eq!(ids(&out), ["k"]);
    assert_eq!(
        Message::remove_all().id.as_deref(),
        Some(REMOVE_ALL_MESSAGES)
    );
}

#[test]
fn add_messages_coerces_strings_pairs_and_dicts() {
    let right = list![
        "plain text",
        list!["assistant", "a pair"],
        map! {"role" => "system", "content" => "a dict", "id" => "s1"},
        map! {"type" => "human", "content" => Value::Nil, "id" => "h1"}
    ];
    let out = add_message_values(list![], right).unwrap();
    let msgs = messages_of(&out);
    let kinds: Vec<(Role, String)> = msgs.iter().map(|m| (m.role.clone(), m.text())).collect();
    assert_eq!(
        kinds,
        vec![
            (Role::Human, "plain text".to_owned()),
            (Role::Ai, "a pair".to_owned()),
            (Role::System, "a dict".to_owned()),
            (Role::Human, String::new()),
        ]
    );
    assert_eq!(msgs[2].id.as_deref(), Some("s1"));
    assert!(msgs.iter().all(|m| m.id.is_some()));
    // The channel holds message objects, not the written shapes.
    assert!(out
        .as_list()
        .unwrap()
        .iter()
        .all(|v| v.as_message().is_some()));
}

#[test]
fn add_messages_rejects_what_is_not_a_message() {
    let err = reducer_error(add_message_values(list![], list![5]));
    assert_eq!(err, "Unsupported message type: int");
    let err = reducer_error(add_message_values(list![], list![list!["ai", "x", "y"]]));
    assert_eq!(err, "Message as a sequence must be (role string, template)");
    let err = reducer_error(add_message_values(list![], list![list!["bot", "x"]]));
    assert!(err.starts_with("Unexpected message type: 'bot'"), "{err}");
    let err = reducer_error(add_message_values(list![], list![map! {"content" => "x"}]));
    assert!(
        err.starts_with("Message dict must contain 'role' and 'content' keys"),
        "{err}"
    );
}

#[test]
fn coerced_dicts_and_pairs_match_python_bytes() {
    // add_messages([], [...]) in the venv, the pair's random id then set to "fixed".
    let right = list![
        map! {"role" => "user", "content" => "hi", "id" => "u1", "foo" => 1,
        "response_metadata" => map! {"r" => 1}, "additional_kwargs" => map! {"bar" => 2}},
        list!["assistant", "yo"],
        map! {"role" => "tool", "content" => "42", "tool_call_id" => "c1", "id" => "t1", "status" => "error"},
        map! {"role" => "assistant", "content" => Value::Nil, "id" => "a9", "tool_calls" => list![
            map! {"id" => "c", "type" => "function", "function" => map! {"name" => "f", "arguments" => "{\"b\": 1, \"a\": [2]}"}}
        ]},
        map! {"role" => "developer", "content" => "sys", "id" => "d1"},
        map! {"role" => "user", "content" => "ex", "id" => "e1", "example" => true, "name" => "bob"}
    ];
    let out = add_message_values(list![], right).unwrap();
    let mut msgs = messages_of(&out);
    msgs[1].id = Some("fixed".into());
    let expected = "96c7960594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676586a7636f6e74656e74a26869b16164646974696f6e616c5f6b776172677382a3666f6f01a362617202b1726573706f6e73655f6d6574616461746181a17201a474797065a568756d616ea46e616d65c0a26964a27531b36d6f64656c5f76616c69646174655f6a736f6ec7b30594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d65737361676589a7636f6e74656e74a2796fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a56669786564aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7ad0594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74a23432b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65c0a26964a27431ac746f6f6c5f63616c6c5f6964a26331a86172746966616374c0a6737461747573a56572726f72b36d6f64656c5f76616c69646174655f6a736f6ec7d70594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d65737361676589a7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a26139aa746f6f6c5f63616c6c739184a46e616d65a166a46172677382a16201a1619102a26964a163a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7a70594be6c616e67636861696e5f636f72652e6d657373616765732e73797374656dad53797374656d4d65737361676586a7636f6e74656e74a3737973b16164646974696f6e616c5f6b776172677381af5f5f6f70656e61695f726f6c655f5fa9646576656c6f706572b1726573706f6e73655f6d6574616461746180a474797065a673797374656da46e616d65c0a26964a26431b36d6f64656c5f76616c69646174655f6a736f6ec7950594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74a26578b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65a3626f62a26964a26531a76578616d706c65c3b36d6f64656c5f76616c69646174655f6a736f6e";
    assert_eq!(
        hex::encode(msgpack::encode(&to_value(&msgs).unwrap()).unwrap()),
        expected
    );
}

#[test]
fn stored_messages_pass_through_add_messages_untouched() {
    // A stored message with a field this crate does not model keeps it, in place.
    let odd = Value::pydantic_v2(
        "langchain_core.messages.ai",
        "AIMessage",
        stategraph::Map::from_iter([
            ("content", Value::from("x")),
            ("example", Value::Bool(false)),
            ("id", Value::from("o1")),
        ]),
    );
    let out = add_message_values(list![odd.clone()], list![]).unwrap();
    assert_eq!(out, list![odd]);
}

// ---------------------------------------------------------------------------------------
// messages: Python's bytes

const HUMAN: &str = "c78f0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676586a7636f6e74656e74a568656c6c6fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a56d73672d31b36d6f64656c5f76616c69646174655f6a736f6e";
const AI: &str = "c7b90594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d65737361676589a7636f6e74656e74a86869207468657265b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a56d73672d32aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e";
const AI_TOOL_CALLS: &str = "c7de0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d65737361676589a7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a26133aa746f6f6c5f63616c6c739184a46e616d65a6736561726368a46172677381a171a178a26964a663616c6c2d31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e";
const TOOL: &str = "c7b30594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74a23432b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65c0a26964a27431ac746f6f6c5f63616c6c5f6964a663616c6c2d31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6e";
const SYSTEM: &str = "c7910594be6c616e67636861696e5f636f72652e6d657373616765732e73797374656dad53797374656d4d65737361676586a7636f6e74656e74a76265206e696365b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a673797374656da46e616d65c0a26964a27331b36d6f64656c5f76616c69646174655f6a736f6e";
const REMOVE: &str = "c78d0594d9206c616e67636861696e5f636f72652e6d657373616765732e6d6f646966696572ad52656d6f76654d65737361676586a7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a672656d6f7665a46e616d65c0a26964a27231b36d6f64656c5f76616c69646174655f6a736f6e";
const CHAT: &str = "c78e0594bc6c616e67636861696e5f636f72652e6d657373616765732e63686174ab436861744d65737361676587a7636f6e74656e74a178b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a463686174a46e616d65c0a26964a26331a4726f6c65a3626f74b36d6f64656c5f76616c69646174655f6a736f6e";
const BLOCKS: &str = "c79b0594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676586a7636f6e74656e749282a474797065a474657874a474657874a161a162b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a26231b36d6f64656c5f76616c69646174655f6a736f6e";

fn examples() -> Vec<(Message, &'static str)> {
    let mut chat = Message::new(Role::Chat("bot".into()), "x");
    chat.id = Some("c1".into());
    vec![
        (Message::human("hello").with_id("msg-1"), HUMAN),
        (Message::ai("hi there").with_id("msg-2"), AI),
        (
            Message::ai("")
                .with_id("a3")
                .with_tool_calls(vec![ToolCall::new("search", map! {"q" => "x"}, "call-1")]),
            AI_TOOL_CALLS,
        ),
        (Message::tool("42", "call-1").with_id("t1"), TOOL),
        (Message::system("be nice").with_id("s1"), SYSTEM),
        (Message::remove("r1"), REMOVE),
        (chat, CHAT),
        (
            Message::human(list![map! {"type" => "text", "text" => "a"}, "b"]).with_id("b1"),
            BLOCKS,
        ),
    ]
}

#[test]
fn messages_encode_to_pythons_bytes() {
    for (msg, hex_bytes) in examples() {
        let through_serde = to_value(&msg).unwrap();
        assert_eq!(through_serde, msg.to_value(), "{msg:?}");
        assert_eq!(
            hex::encode(msgpack::encode(&through_serde).unwrap()),
            hex_bytes,
            "{msg:?}"
        );
    }
}

#[test]
fn pythons_messages_decode_to_the_same_messages() {
    for (msg, hex_bytes) in examples() {
        let stored = msgpack::decode(&python(hex_bytes)).unwrap();
        assert_eq!(Message::from_value(&stored).unwrap(), msg);
        assert_eq!(from_value::<Message>(stored).unwrap(), msg);
    }
}

#[test]
fn a_message_list_field_stores_pythons_list_bytes() {
    let list_hex = format!("92{HUMAN}{AI}");
    let msgs = vec![
        Message::human("hello").with_id("msg-1"),
        Message::ai("hi there").with_id("msg-2"),
    ];
    let state = Agent::from_values(&values(vec![("messages", to_value(&msgs).unwrap())])).unwrap();
    let written = state.to_values().unwrap();
    let (_, stored) = written.iter().find(|(k, _)| k == "messages").unwrap();
    assert_eq!(hex::encode(msgpack::encode(stored).unwrap()), list_hex);
}

#[test]
fn unknown_fields_of_a_stored_message_survive_a_round_trip() {
    let mut fields = stategraph::Map::new();
    fields.insert("content", "hi");
    fields.insert("type", "human");
    fields.insert("id", "1");
    fields.insert("example", true);
    let stored = Value::pydantic_v2("langchain_core.messages.human", "HumanMessage", fields);
    let msg = Message::from_value(&stored).unwrap();
    assert_eq!(msg.extra.get("example"), Some(&Value::Bool(true)));
    let again = msg.to_value();
    let (_, data) = again.as_message().unwrap();
    let keys: Vec<&str> = data.iter().filter_map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "content",
            "additional_kwargs",
            "response_metadata",
            "type",
            "name",
            "id",
            "example"
        ]
    );
}

#[test]
fn chunks_read_as_their_message_class() {
    let mut fields = stategraph::Map::new();
    fields.insert("content", "partial");
    fields.insert("type", "AIMessageChunk");
    fields.insert("id", "c1");
    fields.insert("tool_call_chunks", list![]);
    fields.insert("chunk_position", Value::Nil);
    let chunk = Value::pydantic_v2("langchain_core.messages.ai", "AIMessageChunk", fields);
    let out = add_message_values(list![], list![chunk]).unwrap();
    assert_eq!(
        messages_of(&out),
        vec![Message::ai("partial").with_id("c1")]
    );
    assert_eq!(
        out.as_list().unwrap()[0].as_message().unwrap().0,
        "AIMessage"
    );
}

#[test]
fn a_tool_message_needs_a_tool_call_id() {
    let err = Message::coerce(&map! {"role" => "tool", "content" => "x"}).unwrap_err();
    assert!(err.to_string().contains("tool_call_id"), "{err}");
}
