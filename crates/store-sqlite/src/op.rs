//! The rows the store reads (an item's columns as stored, checked on the way to an
//! [`Item`]) and the vector encoding `sqlite_vec.serialize_float32` writes.

use stategraph_store::{Document, Item, Namespace, Result, StoreError, Timestamp};

/// One `store` row as stored ([`crate::sql::ROW_COLUMNS`]).
pub(crate) struct Row {
    /// The namespace as text.
    pub(crate) prefix: String,
    /// The key.
    pub(crate) key: String,
    value: Vec<u8>,
    created_at: String,
    updated_at: String,
    expires_at: Option<String>,
}

impl Row {
    /// Not expired at `now`.
    pub(crate) fn live(&self, now: Timestamp) -> Result<bool> {
        match &self.expires_at {
            None => Ok(true),
            Some(t) => Ok(self.ts(t, "expires_at")? > now),
        }
    }

    fn ts(&self, text: &str, what: &str) -> Result<Timestamp> {
        Timestamp::parse(text).ok_or_else(|| self.corrupt(format!("bad {what} {text:?}")))
    }

    fn corrupt(&self, reason: String) -> StoreError {
        StoreError::Corrupt {
            namespace: self.prefix.clone(),
            key: self.key.clone(),
            reason,
        }
    }

    /// The item, or [`StoreError::Corrupt`] naming what is wrong.
    pub(crate) fn into_item(self) -> Result<Item> {
        let value: Document = match serde_json::from_slice(&self.value) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => return Err(self.corrupt("value is not a JSON object".into())),
            Err(e) => return Err(self.corrupt(format!("value is not JSON: {e}"))),
        };
        Ok(Item {
            created_at: self.ts(&self.created_at, "created_at")?,
            updated_at: self.ts(&self.updated_at, "updated_at")?,
            namespace: Namespace::from_text(&self.prefix),
            key: self.key,
            value,
        })
    }
}

/// Reads a row of [`crate::sql::ROW_COLUMNS`].
pub(crate) fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        prefix: r.get(0)?,
        key: r.get(1)?,
        value: match r.get_ref(2)? {
            // Python binds `orjson.dumps(...)` bytes (a BLOB); text is read too.
            rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b.to_vec(),
            other => {
                return Err(rusqlite::Error::FromSqlConversionFailure(
                    2,
                    other.data_type(),
                    "value is neither JSON text nor bytes".into(),
                ))
            }
        },
        created_at: r.get(3)?,
        updated_at: r.get(4)?,
        expires_at: r.get(5)?,
    })
}

/// The `f32`s of a little-endian blob, or `None` when its length is no multiple of 4.
pub(crate) fn decode_vector(blob: &[u8]) -> Option<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return None;
    }
    Some(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// The little-endian blob of a vector.
pub(crate) fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
