//! Typed constructors and accessors for the Python objects LangGraph stores as msgpack
//! extensions: UUIDs, datetimes, dates, times, timedeltas, decimals, sets, enums,
//! dataclasses, pydantic models (LangChain messages), `Send` and `Interrupt`.
//!
//! Each constructor builds the exact [`Ext`] that LangGraph's `_msgpack_default` writes for
//! the Python object (module, class, code, data layout and key order), so that encoding it
//! gives Python's bytes. Each accessor recognises that shape and returns its parts; it
//! returns `None` for anything else. Nothing here interprets the values further (no
//! calendar or ISO-8601 parsing): this is data only.

use crate::ext::{Ext, Object, ObjectCode};
use crate::value::{Map, Value};

/// The method LangGraph writes as the fourth element of a pydantic v2 payload.
const MODEL_VALIDATE_JSON: &str = "model_validate_json";

/// Modules of the single-argument builtins, which [`Value::as_enum_member`] excludes.
const BUILTIN_SINGLE_ARG_MODULES: &[&str] = &[
    "uuid",
    "decimal",
    "builtins",
    "collections",
    "ipaddress",
    "zoneinfo",
];

/// A LangChain message class: its module and the fields after the six common ones
/// (`content, additional_kwargs, response_metadata, type, name, id`), with defaults.
struct MessageClass {
    class: &'static str,
    module: &'static str,
    type_name: &'static str,
    extra: fn() -> Vec<(&'static str, Value)>,
}

fn no_extra() -> Vec<(&'static str, Value)> {
    Vec::new()
}
fn ai_extra() -> Vec<(&'static str, Value)> {
    vec![
        ("tool_calls", Value::List(Vec::new().into())),
        ("invalid_tool_calls", Value::List(Vec::new().into())),
        ("usage_metadata", Value::Nil),
    ]
}
fn ai_chunk_extra() -> Vec<(&'static str, Value)> {
    let mut fields = ai_extra();
    fields.push(("tool_call_chunks", Value::List(Vec::new().into())));
    fields.push(("chunk_position", Value::Nil));
    fields
}
fn tool_extra() -> Vec<(&'static str, Value)> {
    vec![
        ("tool_call_id", Value::Nil),
        ("artifact", Value::Nil),
        ("status", Value::from("success")),
    ]
}
fn chat_extra() -> Vec<(&'static str, Value)> {
    vec![("role", Value::Nil)]
}

/// The message classes of langchain-core 1.8.3, with pydantic's `model_dump()` order.
const MESSAGE_CLASSES: &[MessageClass] = &[
    msg("HumanMessage", "human", "human", no_extra),
    msg("HumanMessageChunk", "human", "HumanMessageChunk", no_extra),
    msg("AIMessage", "ai", "ai", ai_extra),
    msg("AIMessageChunk", "ai", "AIMessageChunk", ai_chunk_extra),
    msg("SystemMessage", "system", "system", no_extra),
    msg(
        "SystemMessageChunk",
        "system",
        "SystemMessageChunk",
        no_extra,
    ),
    msg("ToolMessage", "tool", "tool", tool_extra),
    msg("ToolMessageChunk", "tool", "ToolMessageChunk", tool_extra),
    msg("FunctionMessage", "function", "function", no_extra),
    msg(
        "FunctionMessageChunk",
        "function",
        "FunctionMessageChunk",
        no_extra,
    ),
    msg("ChatMessage", "chat", "chat", chat_extra),
    msg("ChatMessageChunk", "chat", "ChatMessageChunk", chat_extra),
    msg("RemoveMessage", "modifier", "remove", no_extra),
];

const fn msg(
    class: &'static str,
    module: &'static str,
    type_name: &'static str,
    extra: fn() -> Vec<(&'static str, Value)>,
) -> MessageClass {
    MessageClass {
        class,
        module,
        type_name,
        extra,
    }
}

/// The module prefix of every LangChain message class.
const MESSAGES_MODULE: &str = "langchain_core.messages.";

impl Value {
    /// An extension object value.
    pub fn object(
        code: ObjectCode,
        module: &str,
        class: &str,
        data: Value,
        method: Option<&str>,
    ) -> Value {
        Value::from(Ext::object(code, module, class, data, method))
    }

    /// The object, if this is an extension of code 0 to 5.
    pub fn as_object(&self) -> Option<&Object> {
        self.as_ext().and_then(Ext::as_object)
    }

    /// The object if it has this code, module and class.
    fn as_object_of(&self, code: ObjectCode, module: &str, class: &str) -> Option<&Object> {
        self.as_object()
            .filter(|o| o.code == code && o.module == module && o.class == class)
    }

    /// `uuid.UUID`: code 0, the 32 lowercase hex digits without dashes.
    pub fn uuid(uuid: &uuid::Uuid) -> Value {
        let hex = uuid.simple().to_string();
        Value::object(
            ObjectCode::ConstructorSingleArg,
            "uuid",
            "UUID",
            hex.into(),
            None,
        )
    }

    /// The UUID, if this is a `uuid.UUID` object with a valid hex argument.
    pub fn as_uuid(&self) -> Option<uuid::Uuid> {
        let o = self.as_object_of(ObjectCode::ConstructorSingleArg, "uuid", "UUID")?;
        uuid::Uuid::try_parse(o.data.as_str()?).ok()
    }

    /// `datetime.datetime`: code 3, `[\"datetime\", \"datetime\", isoformat, \"fromisoformat\"]`.
    /// `iso` must be Python's `isoformat()` text (e.g. `2024-01-02T03:04:05.000006+00:00`).
    pub fn datetime_iso(iso: &str) -> Value {
        Value::object(
            ObjectCode::MethodSingleArg,
            "datetime",
            "datetime",
            iso.into(),
            Some("fromisoformat"),
        )
    }

    /// The ISO text, if this is a `datetime.datetime` object.
    pub fn as_datetime_iso(&self) -> Option<&str> {
        let o = self.as_object_of(ObjectCode::MethodSingleArg, "datetime", "datetime")?;
        o.data.as_str()
    }

    /// `datetime.date`: code 1, `[year, month, day]`.
    pub fn date(year: i32, month: u8, day: u8) -> Value {
        let args = vec![year.into(), month.into(), day.into()];
        Value::object(
            ObjectCode::ConstructorPosArgs,
            "datetime",
            "date",
            Value::List(args.into()),
            None,
        )
    }

    /// `(year, month, day)`, if this is a `datetime.date` object.
    pub fn as_date(&self) -> Option<(i32, u8, u8)> {
        let o = self.as_object_of(ObjectCode::ConstructorPosArgs, "datetime", "date")?;
        match o.data.as_list()? {
            [y, m, d] => Some((int(y)?, int(m)?, int(d)?)),
            _ => None,
        }
    }

    /// `datetime.time`: code 2, keyword arguments `hour, minute, second, microsecond,
    /// tzinfo, fold` (fold 0). `tzinfo` is [`Value::Nil`] or a [`Value::timezone`].
    pub fn time(hour: u8, minute: u8, second: u8, microsecond: u32, tzinfo: Value) -> Value {
        let mut kw = Map::with_capacity(6);
        kw.insert("hour", hour);
        kw.insert("minute", minute);
        kw.insert("second", second);
        kw.insert("microsecond", microsecond);
        kw.insert("tzinfo", tzinfo);
        kw.insert("fold", 0);
        Value::object(
            ObjectCode::ConstructorKwArgs,
            "datetime",
            "time",
            Value::Map(kw),
            None,
        )
    }

    /// `(hour, minute, second, microsecond)`, if this is a `datetime.time` object; its
    /// `tzinfo` and `fold` are in the object's data map.
    pub fn as_time(&self) -> Option<(u8, u8, u8, u32)> {
        let o = self.as_object_of(ObjectCode::ConstructorKwArgs, "datetime", "time")?;
        let kw = o.data.as_map()?;
        Some((
            int(kw.get("hour")?)?,
            int(kw.get("minute")?)?,
            int(kw.get("second")?)?,
            int(kw.get("microsecond")?)?,
        ))
    }

    /// `datetime.timedelta`: code 1, `[days, seconds, microseconds]`, given normalised as
    /// Python keeps them (`0 <= seconds < 86400`, `0 <= microseconds < 1_000_000`).
    pub fn timedelta(days: i64, seconds: i64, microseconds: i64) -> Value {
        let args = vec![
            Value::Int(days),
            Value::Int(seconds),
            Value::Int(microseconds),
        ];
        Value::object(
            ObjectCode::ConstructorPosArgs,
            "datetime",
            "timedelta",
            args.into(),
            None,
        )
    }

    /// `(days, seconds, microseconds)`, if this is a `datetime.timedelta` object.
    pub fn as_timedelta(&self) -> Option<(i64, i64, i64)> {
        let o = self.as_object_of(ObjectCode::ConstructorPosArgs, "datetime", "timedelta")?;
        match o.data.as_list()? {
            [d, s, us] => Some((d.as_i64()?, s.as_i64()?, us.as_i64()?)),
            _ => None,
        }
    }

    /// `datetime.timezone(timedelta(seconds=offset_seconds))` (no name): code 1, `[timedelta]`.
    /// `Value::timezone(0)` is `datetime.timezone.utc`.
    pub fn timezone(offset_seconds: i32) -> Value {
        let offset = i64::from(offset_seconds);
        let delta = Value::timedelta(offset.div_euclid(86_400), offset.rem_euclid(86_400), 0);
        Value::object(
            ObjectCode::ConstructorPosArgs,
            "datetime",
            "timezone",
            vec![delta].into(),
            None,
        )
    }

    /// `decimal.Decimal`: code 0, its `str()`.
    pub fn decimal(text: &str) -> Value {
        Value::object(
            ObjectCode::ConstructorSingleArg,
            "decimal",
            "Decimal",
            text.into(),
            None,
        )
    }

    /// The decimal text, if this is a `decimal.Decimal` object.
    pub fn as_decimal(&self) -> Option<&str> {
        let o = self.as_object_of(ObjectCode::ConstructorSingleArg, "decimal", "Decimal")?;
        o.data.as_str()
    }

    /// A Python `set`: code 0, its items in iteration order.
    pub fn set(items: Vec<Value>) -> Value {
        Value::object(
            ObjectCode::ConstructorSingleArg,
            "builtins",
            "set",
            items.into(),
            None,
        )
    }

    /// A Python `frozenset`: code 0, its items in iteration order.
    pub fn frozenset(items: Vec<Value>) -> Value {
        Value::object(
            ObjectCode::ConstructorSingleArg,
            "builtins",
            "frozenset",
            items.into(),
            None,
        )
    }

    /// The items, if this is a `set` or a `frozenset`.
    pub fn as_set(&self) -> Option<&[Value]> {
        let o = self.as_object()?;
        let is_set = o.code == ObjectCode::ConstructorSingleArg
            && o.module == "builtins"
            && (o.class == "set" || o.class == "frozenset");
        if is_set {
            o.data.as_list()
        } else {
            None
        }
    }

    /// An `Enum` member: code 0, `[module, class, member.value]`.
    pub fn enum_member(module: &str, class: &str, value: Value) -> Value {
        Value::object(ObjectCode::ConstructorSingleArg, module, class, value, None)
    }

    /// `(module, class, value)` of a single-argument object that is not one of the
    /// builtins above (UUID, Decimal, sets, deque, ip addresses, ZoneInfo): an `Enum`
    /// member, or any other class rebuilt as `class(value)`.
    pub fn as_enum_member(&self) -> Option<(&str, &str, &Value)> {
        let o = self.as_object()?;
        let builtin = BUILTIN_SINGLE_ARG_MODULES.contains(&o.module.as_str());
        (o.code == ObjectCode::ConstructorSingleArg && !builtin).then_some((
            o.module.as_str(),
            o.class.as_str(),
            &o.data,
        ))
    }

    /// A dataclass (or NamedTuple): code 2, its fields in declaration order.
    pub fn dataclass(module: &str, class: &str, fields: Map) -> Value {
        Value::object(
            ObjectCode::ConstructorKwArgs,
            module,
            class,
            Value::Map(fields),
            None,
        )
    }

    /// `(module, class, fields)` of any keyword-argument object (code 2): dataclasses,
    /// NamedTuples, but also `time` and `Interrupt`.
    pub fn as_dataclass(&self) -> Option<(&str, &str, &Map)> {
        let o = self.as_object()?;
        if o.code != ObjectCode::ConstructorKwArgs {
            return None;
        }
        Some((o.module.as_str(), o.class.as_str(), o.data.as_map()?))
    }

    /// A pydantic v2 model: code 5, `[module, class, model_dump(), "model_validate_json"]`.
    /// The fields must be in `model_dump()` order; see [`Value::message`] for messages.
    pub fn pydantic_v2(module: &str, class: &str, fields: Map) -> Value {
        Value::object(
            ObjectCode::PydanticV2,
            module,
            class,
            Value::Map(fields),
            Some(MODEL_VALIDATE_JSON),
        )
    }

    /// `(module, class, fields)`, if this is a pydantic v2 model.
    pub fn as_pydantic_v2(&self) -> Option<(&str, &str, &Map)> {
        let o = self.as_object()?;
        if o.code != ObjectCode::PydanticV2 {
            return None;
        }
        Some((o.module.as_str(), o.class.as_str(), o.data.as_map()?))
    }

    /// A LangChain message (`HumanMessage`, `AIMessage`, `ToolMessage`, their chunks, ...)
    /// as pydantic v2 writes it: the given fields in `model_dump()` order (`content,
    /// additional_kwargs, response_metadata, type, name, id`, then the class's own fields),
    /// missing ones filled with their defaults, unknown ones kept after them (messages
    /// allow extra fields). `None` for a class that is not a langchain-core message.
    /// Pydantic validators (e.g. `AIMessage` deriving `tool_calls`) are not applied.
    pub fn message(class: &str, mut fields: Map) -> Option<Value> {
        let spec = MESSAGE_CLASSES.iter().find(|m| m.class == class)?;
        let mut common: Vec<(&str, Value)> = vec![
            ("content", Value::from("")),
            ("additional_kwargs", Value::Map(Map::new())),
            ("response_metadata", Value::Map(Map::new())),
            ("type", Value::from(spec.type_name)),
            ("name", Value::Nil),
            ("id", Value::Nil),
        ];
        common.extend((spec.extra)());
        let mut out = Map::with_capacity(common.len() + fields.len());
        for (key, default) in common {
            out.insert(key, fields.remove(key).unwrap_or(default));
        }
        for (k, v) in fields {
            out.insert(k, v);
        }
        let module = format!("{MESSAGES_MODULE}{}", spec.module);
        Some(Value::pydantic_v2(&module, class, out))
    }

    /// `(class, fields)`, if this is a langchain-core message (any pydantic v2 model of a
    /// `langchain_core.messages.*` module).
    pub fn as_message(&self) -> Option<(&str, &Map)> {
        let (module, class, fields) = self.as_pydantic_v2()?;
        module
            .starts_with(MESSAGES_MODULE)
            .then_some((class, fields))
    }

    /// `langgraph.types.Send(node, arg)`: code 1, `[node, arg]`.
    pub fn send(node: &str, arg: Value) -> Value {
        let args = vec![node.into(), arg];
        Value::object(
            ObjectCode::ConstructorPosArgs,
            "langgraph.types",
            "Send",
            args.into(),
            None,
        )
    }

    /// `(node, arg)`, if this is a `Send` (with or without a third `timeout` argument).
    pub fn as_send(&self) -> Option<(&str, &Value)> {
        let o = self.as_object_of(ObjectCode::ConstructorPosArgs, "langgraph.types", "Send")?;
        match o.data.as_list()? {
            [node, arg] | [node, arg, _] => Some((node.as_str()?, arg)),
            _ => None,
        }
    }

    /// `langgraph.types.Interrupt(value, id)`: code 2, `{value, id, response_schema: None}`.
    pub fn interrupt(value: Value, id: &str) -> Value {
        let mut kw = Map::with_capacity(3);
        kw.insert("value", value);
        kw.insert("id", id);
        kw.insert("response_schema", Value::Nil);
        Value::object(
            ObjectCode::ConstructorKwArgs,
            "langgraph.types",
            "Interrupt",
            Value::Map(kw),
            None,
        )
    }

    /// `(value, id)`, if this is an `Interrupt`.
    pub fn as_interrupt(&self) -> Option<(&Value, &str)> {
        let o = self.as_object_of(
            ObjectCode::ConstructorKwArgs,
            "langgraph.types",
            "Interrupt",
        )?;
        let kw = o.data.as_map()?;
        Some((kw.get("value")?, kw.get("id")?.as_str()?))
    }
}

/// An integer value converted to a narrower type.
fn int<T: TryFrom<i64>>(v: &Value) -> Option<T> {
    T::try_from(v.as_i64()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serde::msgpack::encode;

    fn hex(v: &Value) -> String {
        hex::encode(encode(v).unwrap())
    }

    #[test]
    fn constructors_write_pythons_bytes() {
        // Expected bytes produced by the pinned venv (`_msgpack_enc`).
        assert_eq!(
            hex(&Value::time(3, 4, 5, 6, Value::timezone(0))),
            "c7720293a86461746574696d65a474696d6586a4686f757203a66d696e75746504a67365636f6e\
             6405ab6d6963726f7365636f6e6406a6747a696e666fc72f0193a86461746574696d65a874696d\
             657a6f6e6591c7180193a86461746574696d65a974696d6564656c746193000000a4666f6c6400"
        );
        assert_eq!(
            hex(&Value::timezone(-5 * 3600)),
            "c7330193a86461746574696d65a874696d657a6f6e6591c71c0193a86461746574696d65a97469\
             6d6564656c746193ffce00010b3000"
        );
        assert_eq!(
            hex(&Value::decimal("1.10")),
            "c7160093a7646563696d616ca7446563696d616ca4312e3130"
        );
        assert_eq!(
            hex(&Value::set(vec![])),
            "c70f0093a86275696c74696e73a373657490"
        );
        let tool = Value::message(
            "ToolMessage",
            [("content", "r"), ("tool_call_id", "c1")]
                .into_iter()
                .collect(),
        );
        assert_eq!(
            hex(&tool.unwrap()),
            "c7ac0594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d\
             65737361676589a7636f6e74656e74a172b16164646974696f6e616c5f6b776172677380b17265\
             73706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65c0a26964c0ac746f\
             6f6c5f63616c6c5f6964a26331a86172746966616374c0a6737461747573a77375636365737\
             3b36d6f64656c5f76616c69646174655f6a736f6e"
        );
    }

    #[test]
    fn accessors_read_what_constructors_build() {
        let u = uuid::Uuid::from_u128(0x1234_5678_1234_5678_1234_5678_1234_5678);
        assert_eq!(Value::uuid(&u).as_uuid(), Some(u));
        assert_eq!(
            Value::datetime_iso("2024-01-02T03:04:05").as_datetime_iso(),
            Some("2024-01-02T03:04:05")
        );
        assert_eq!(Value::date(2024, 1, 2).as_date(), Some((2024, 1, 2)));
        assert_eq!(
            Value::time(3, 4, 5, 6, Value::Nil).as_time(),
            Some((3, 4, 5, 6))
        );
        assert_eq!(
            Value::timedelta(-1, 86_399, 0).as_timedelta(),
            Some((-1, 86_399, 0))
        );
        assert_eq!(Value::decimal("1.5").as_decimal(), Some("1.5"));
        assert_eq!(
            Value::frozenset(vec![1.into()]).as_set(),
            Some(&[Value::Int(1)][..])
        );
        let color = Value::enum_member("__main__", "Color", "red".into());
        assert_eq!(
            color.as_enum_member(),
            Some(("__main__", "Color", &Value::from("red")))
        );
        assert_eq!(Value::uuid(&u).as_enum_member(), None);
        let send = Value::send("node", 1.into());
        assert_eq!(send.as_send(), Some(("node", &Value::Int(1))));
        assert_eq!(send.as_interrupt(), None);
        let interrupt = Value::interrupt("q?".into(), "abc");
        assert_eq!(interrupt.as_interrupt(), Some((&Value::from("q?"), "abc")));
        assert_eq!(
            interrupt.as_dataclass().map(|(m, c, _)| (m, c)),
            Some(("langgraph.types", "Interrupt"))
        );
        let human = Value::message("HumanMessage", Map::new()).unwrap();
        let (class, fields) = human.as_message().unwrap();
        assert_eq!(class, "HumanMessage");
        assert_eq!(fields.get("type"), Some(&Value::from("human")));
        assert!(Value::message("NotAMessage", Map::new()).is_none());
        assert_eq!(Value::from(1).as_uuid(), None);
    }
}
