//! The tests of `json_legacy`: what Python revives, refuses and leaves a map.

use super::*;

fn load(text: &str) -> Result<Value> {
    loads(text.as_bytes())
}

fn refused_at(text: &str) -> String {
    match load(text) {
        Err(Error::Refused { path, .. }) => path,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn a_callback_handler_is_refused_with_its_path() {
    let text = r#"{"state": [1, {"lc": 1, "type": "constructor",
        "id": ["langchain_core", "callbacks", "file", "FileCallbackHandler"],
        "kwargs": {"filename": "/tmp/x"}}]}"#;
    assert_eq!(refused_at(text), "$.state[1]");
    let other = r#"{"lc": 1, "type": "constructor", "id": ["os", "system"]}"#;
    assert_eq!(refused_at(other), "$");
    let jinja = r#"{"lc": 1, "type": "constructor",
        "id": ["langchain_core", "messages", "HumanMessage"],
        "kwargs": {"content": "x", "template_format": "jinja2"}}"#;
    assert_eq!(refused_at(jinja), "$");
}

#[test]
fn messages_revive_under_legacy_ids_and_invalid_fields_are_refused() {
    let v = load(
        r#"{"lc": true, "type": "constructor",
        "id": ["langchain", "schema", "messages", "HumanMessage"],
        "kwargs": {"content": "hi"}}"#,
    )
    .unwrap();
    let (class, fields) = v.as_message().unwrap();
    assert_eq!(class, "HumanMessage");
    assert_eq!(fields.get("content"), Some(&Value::from("hi")));
    for bad in [
        r#"{"content": 5}"#,
        r#"{}"#,
        r#"{"content": "a", "type": "ai"}"#,
        r#"{"content": "a", "name": 5}"#,
    ] {
        let text = format!(
            r#"{{"lc": 1, "type": "constructor",
            "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {bad}}}"#
        );
        assert_eq!(refused_at(&text), "$", "{bad}");
    }
}

#[test]
fn lc2_follows_the_safe_list() {
    let uuid = load(
        r#"{"lc": 2, "type": "constructor", "id": ["uuid", "UUID"],
        "args": ["12345678123456781234567812345678"]}"#,
    )
    .unwrap();
    assert!(uuid.as_object().is_some());
    let bad_uuid =
        load(r#"{"lc": 2, "type": "constructor", "id": ["uuid", "UUID"], "args": ["zz"]}"#);
    assert_eq!(bad_uuid.unwrap(), Value::Nil);
    let unsafe_msg = load(
        r#"{"lc": 2, "type": "constructor",
        "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {"content": "x"}}"#,
    )
    .unwrap();
    assert!(unsafe_msg.as_map().is_some(), "not a safe id: stays a map");
    let os = load(r#"{"lc": 2, "type": "constructor", "id": ["os", "system"]}"#).unwrap();
    assert!(os.as_map().is_some());
    assert!(matches!(
        load(r#"{"lc": 2, "type": "constructor", "id": [1, "x"]}"#),
        Err(Error::Refused { .. })
    ));
}

#[test]
fn secrets_read_as_none_and_not_implemented_is_refused() {
    let v = load(r#"[{"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]}]"#).unwrap();
    assert_eq!(v, Value::from(vec![Value::Nil]));
    assert_eq!(
        refused_at(r#"[{"lc": 1, "type": "secret", "id": ["A", "B"]}]"#),
        "$[0]"
    );
    assert_eq!(
        refused_at(r#"{"x": {"lc": 1, "type": "not_implemented", "id": ["a"]}}"#),
        "$.x"
    );
}
