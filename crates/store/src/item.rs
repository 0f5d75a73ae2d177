//! What a store returns: [`Item`] and [`SearchItem`].

use crate::namespace::Namespace;
use crate::time::Timestamp;
use serde_json::{Map, Value};

/// A JSON object: the value of an item (LangGraph's `dict[str, Any]`).
pub type Document = Map<String, Value>;

/// A stored value with its address and timestamps (LangGraph's `Item`).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The namespace the item lives in.
    pub namespace: Namespace,
    /// Its key, unique within the namespace.
    pub key: String,
    /// The stored JSON object.
    pub value: Document,
    /// When it was (last) created: every `put` resets it, as in LangGraph's stores.
    pub created_at: Timestamp,
    /// When it was last written.
    pub updated_at: Timestamp,
}

impl Item {
    /// The JSON form of Python's `Item.dict()`: namespace as a list, timestamps as ISO text.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "namespace".into(),
            Value::Array(
                self.namespace
                    .0
                    .iter()
                    .cloned()
                    .map(Value::String)
                    .collect(),
            ),
        );
        m.insert("key".into(), Value::String(self.key.clone()));
        m.insert("value".into(), Value::Object(self.value.clone()));
        m.insert("created_at".into(), Value::String(self.created_at.to_iso()));
        m.insert("updated_at".into(), Value::String(self.updated_at.to_iso()));
        Value::Object(m)
    }
}

/// An item found by a search, with its similarity score when the search had a query and
/// the item had vectors (LangGraph's `SearchItem`).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchItem {
    /// The item.
    pub item: Item,
    /// Cosine similarity to the query (max over the item's embedded fields), if scored.
    pub score: Option<f64>,
}

impl SearchItem {
    /// The JSON form of Python's `SearchItem.dict()` (the item's fields plus `score`).
    pub fn to_json(&self) -> Value {
        let mut v = self.item.to_json();
        if let Value::Object(m) = &mut v {
            m.insert(
                "score".into(),
                self.score
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number),
            );
        }
        v
    }
}

impl std::ops::Deref for SearchItem {
    type Target = Item;
    fn deref(&self) -> &Item {
        &self.item
    }
}
