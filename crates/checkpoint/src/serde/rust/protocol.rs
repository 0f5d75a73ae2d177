//! What the serializer, the deserializer and `Value`'s own serde impls agree on: the magic
//! newtype names, the error type of serde's traits, and the map form of an extension value.
//! Below all three, so that none of them reaches up to the facade.

use std::fmt;

use crate::error::Error;
use crate::ext::{Ext, Object, ObjectCode};
use crate::value::{Map, Value};

/// Newtype name by which `Value::deserialize` asks for an exact value.
pub(super) const MAGIC_VALUE: &str = "$stategraph::private::Value";
/// Newtype name (serializing) and variant name (deserializing) of an extension value.
pub(super) const MAGIC_EXT: &str = "$stategraph::private::Ext";

/// [`Error`] as the error of serde's traits: custom serializing errors are
/// [`Error::Encode`], custom deserializing errors [`Error::InvalidData`].
#[derive(Debug)]
pub(super) struct SerdeError(pub(super) Error);

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for SerdeError {}

impl serde::ser::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError(Error::Encode(msg.to_string()))
    }
}

impl serde::de::Error for SerdeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerdeError(Error::InvalidData(msg.to_string()))
    }
}

/// The map form of an extension value (see the module docs).
pub(super) fn ext_rendering(ext: Ext) -> Value {
    let code = Value::Int(ext.code().into());
    let mut pairs = vec![(Value::from("$ext"), code)];
    match ext {
        Ext::Object(o) => {
            pairs.push(("module".into(), Value::Str(o.module.into())));
            pairs.push(("class".into(), Value::Str(o.class.into())));
            pairs.push(("data".into(), o.data));
            if let Some(method) = o.method {
                pairs.push(("method".into(), Value::Str(method.into())));
            }
        }
        Ext::NumpyArray(data) | Ext::DeltaSnapshot(data) => pairs.push(("data".into(), data)),
    }
    Value::Map(Map::from_pairs(pairs))
}

/// Reads back [`ext_rendering`]'s map; `None` for anything else.
pub(super) fn ext_from_rendering(value: Value) -> Option<Ext> {
    let Value::Map(map) = value else { return None };
    let (mut code, mut module, mut class, mut data, mut method) = (None, None, None, None, None);
    for (k, v) in map {
        let slot = match k.as_str()? {
            "$ext" => &mut code,
            "module" => &mut module,
            "class" => &mut class,
            "data" => &mut data,
            "method" => &mut method,
            _ => return None,
        };
        if slot.replace(v).is_some() {
            return None;
        }
    }
    let code = i8::try_from(code?.as_i64()?).ok()?;
    let data = data?;
    let string = |v: Value| match v {
        Value::Str(s) => Some(s),
        _ => None,
    };
    match ObjectCode::from_code(code) {
        Some(code) => Some(Ext::Object(Object {
            code,
            module: string(module?)?.to_string(),
            class: string(class?)?.to_string(),
            data,
            method: match method {
                Some(m) => Some((string(m)?).to_string()),
                None => None,
            },
        })),
        None if module.is_some() || class.is_some() || method.is_some() => None,
        None if code == 6 => Some(Ext::NumpyArray(data)),
        None if code == 7 => Some(Ext::DeltaSnapshot(data)),
        None => None,
    }
}
