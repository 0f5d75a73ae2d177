//! Msgpack extension values: Python objects as LangGraph writes them, kept as inert data.
//!
//! `JsonPlusSerializer` writes a Python object that msgpack cannot express natively as an
//! extension whose payload is itself msgpack: `[module, class, data]` or
//! `[module, class, data, method]` for codes 0 to 5, the raw array description for numpy
//! arrays (6), and the wrapped value for delta snapshots (7). Python reconstructs the
//! object by importing `module.class`; stategraph never does: an [`Ext`] is data, and
//! typed accessors (see [`crate::py_objects`]) read the well-known ones (UUIDs, datetimes,
//! sets, messages, `Send`, `Interrupt`).

use crate::value::Value;

/// How Python rebuilds an extension object (the msgpack extension code, 0 to 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum ObjectCode {
    /// 0: `class(arg)`: UUID, Decimal, set, frozenset, deque, Enum members, ip addresses.
    ConstructorSingleArg = 0,
    /// 1: `class(*args)`: timedelta, date, timezone, Path, `Send`.
    ConstructorPosArgs = 1,
    /// 2: `class(**kwargs)`: dataclasses, NamedTuples, time, `Interrupt`, store items.
    ConstructorKwArgs = 2,
    /// 3: `class.method(arg)`: datetime (`fromisoformat`).
    MethodSingleArg = 3,
    /// 4: pydantic v1 models.
    PydanticV1 = 4,
    /// 5: pydantic v2 models, including every LangChain message.
    PydanticV2 = 5,
}

impl ObjectCode {
    /// The code for a msgpack extension type byte, if it is 0 to 5.
    pub fn from_code(code: i8) -> Option<ObjectCode> {
        Some(match code {
            0 => ObjectCode::ConstructorSingleArg,
            1 => ObjectCode::ConstructorPosArgs,
            2 => ObjectCode::ConstructorKwArgs,
            3 => ObjectCode::MethodSingleArg,
            4 => ObjectCode::PydanticV1,
            5 => ObjectCode::PydanticV2,
            _ => return None,
        })
    }
}

/// A Python object described by module, class and constructor data (codes 0 to 5).
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// How the object is rebuilt.
    pub code: ObjectCode,
    /// The Python module, e.g. `"uuid"` or `"langchain_core.messages.human"`.
    pub module: String,
    /// The class name, e.g. `"UUID"` or `"HumanMessage"`.
    pub class: String,
    /// The constructor data: one argument, a list of positional arguments or a map of
    /// keyword arguments, depending on `code`.
    pub data: Value,
    /// The fourth payload element, present for codes 3 and 5 (`"fromisoformat"`,
    /// `"model_validate_json"`).
    pub method: Option<String>,
}

/// A msgpack extension value.
#[derive(Clone, Debug, PartialEq)]
pub enum Ext {
    /// Codes 0 to 5: a Python object by module, class and data.
    Object(Object),
    /// Code 6: a numpy array; the payload `[dtype, shape, order, bytes]` kept as decoded.
    NumpyArray(Value),
    /// Code 7: a DeltaChannel snapshot wrapping a value.
    DeltaSnapshot(Value),
}

impl Ext {
    /// The msgpack extension type byte of this value.
    pub fn code(&self) -> i8 {
        match self {
            Ext::Object(o) => o.code as i8,
            Ext::NumpyArray(_) => 6,
            Ext::DeltaSnapshot(_) => 7,
        }
    }

    /// The object, for codes 0 to 5.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Ext::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Builds an object extension.
    pub fn object(
        code: ObjectCode,
        module: impl Into<String>,
        class: impl Into<String>,
        data: Value,
        method: Option<&str>,
    ) -> Ext {
        Ext::Object(Object {
            code,
            module: module.into(),
            class: class.into(),
            data,
            method: method.map(str::to_owned),
        })
    }
}
