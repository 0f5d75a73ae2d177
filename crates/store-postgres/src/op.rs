//! The rows the store reads (an item's columns, checked on the way to an [`Item`]), where
//! vectors live ([`VectorBackend`]) and their text form, and the error of a failed call.

use stategraph_store::{Document, Item, Namespace, Result, StoreError, Timestamp};

/// A failed call of `what` as [`StoreError::Backend`].
pub(crate) fn backend(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("postgres {what}: {e}"))
}

/// Where a store keeps its vectors (see the crate docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorBackend {
    /// LangGraph's `store_vectors` with a pgvector `vector(dims)` column.
    Pgvector,
    /// stategraph's `stategraph_store_vectors` with a `real[]` column (no pgvector).
    RealArray,
}

impl VectorBackend {
    pub(crate) fn table(self) -> &'static str {
        match self {
            VectorBackend::Pgvector => "store_vectors",
            VectorBackend::RealArray => "stategraph_store_vectors",
        }
    }

    /// The embedding column as selected: binary `real[]`, or pgvector's text output.
    pub(crate) fn select(self) -> &'static str {
        match self {
            VectorBackend::Pgvector => "embedding::text",
            VectorBackend::RealArray => "embedding",
        }
    }

    pub(crate) fn cast(self) -> &'static str {
        match self {
            VectorBackend::Pgvector => "vector",
            VectorBackend::RealArray => "real[]",
        }
    }

    /// A vector as the column type's text input.
    pub(crate) fn literal(self, v: &[f32]) -> String {
        let body = v.iter().map(f32::to_string).collect::<Vec<_>>().join(",");
        match self {
            VectorBackend::Pgvector => format!("[{body}]"),
            VectorBackend::RealArray => format!("{{{body}}}"),
        }
    }
}

/// Parses a vector's text output (`[1,2]` from pgvector, `{1,2}` from `real[]`).
pub(crate) fn parse_vector(text: &str) -> Option<Vec<f32>> {
    let body = text
        .trim()
        .strip_prefix(['[', '{'])?
        .strip_suffix([']', '}'])?;
    if body.trim().is_empty() {
        return Some(Vec::new());
    }
    body.split(',').map(|x| x.trim().parse().ok()).collect()
}

/// The item of a [`crate::sql::COLUMNS`] row, or [`StoreError::Corrupt`].
pub(crate) fn to_item(row: &tokio_postgres::Row) -> Result<Item> {
    let prefix: String = row.get(0);
    let key: String = row.get(1);
    let text: String = row.get(2);
    let corrupt = |reason: String| StoreError::Corrupt {
        namespace: prefix.clone(),
        key: key.clone(),
        reason,
    };
    let value: Document = match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(m)) => m,
        Ok(_) => return Err(corrupt("value is not a JSON object".into())),
        Err(e) => return Err(corrupt(format!("value is not JSON: {e}"))),
    };
    let created: Option<i64> = row.get(3);
    let updated: Option<i64> = row.get(4);
    Ok(Item {
        namespace: Namespace::from_text(&prefix),
        key,
        value,
        created_at: Timestamp(created.unwrap_or(0)),
        updated_at: Timestamp(updated.unwrap_or(0)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_literals_read_back_exactly() {
        let v = [0.1f32, -2.5, 1e-7, 3.4e38, 0.0];
        for kind in [VectorBackend::Pgvector, VectorBackend::RealArray] {
            assert_eq!(parse_vector(&kind.literal(&v)).as_deref(), Some(&v[..]));
        }
        assert_eq!(parse_vector("{1, 2}"), Some(vec![1.0, 2.0]));
        assert_eq!(parse_vector("[]"), Some(vec![]));
        assert_eq!(parse_vector("1,2"), None, "no brackets");
        assert_eq!(parse_vector("[1,x]"), None, "not a number");
    }
}
