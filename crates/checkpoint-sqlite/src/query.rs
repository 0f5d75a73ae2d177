//! The `list` query: a WHERE clause built from the config, `before` and the metadata filter,
//! with every key and value bound as a parameter.
//!
//! A metadata filter key becomes
//!
//! ```sql
//! EXISTS (SELECT 1 FROM json_each(CAST(metadata AS TEXT)) WHERE key = ? AND type = 'text' AND atom = ?)
//! ```
//!
//! The key is compared, as a bound parameter, with the labels of the top-level object, so
//! no text of the key ever reaches the SQL or a JSON path: a key such as `a.b`, `a[0]`,
//! `$.x`, `*` or `'); DROP TABLE checkpoints; --` names exactly that top-level key. (A
//! bound path `$."<escaped key>"` would also keep the key out of the SQL, but SQLite's path
//! lookup ends a label at an escaped NUL, so `$."a"` finds a key `"a\u0000b"`; `json_each`
//! compares whole labels.) The type test keeps `true` apart from `1` and `1.0` where
//! Python's `json_extract(...) = ?` would not. The filter `None` matches a key holding
//! `null` and a missing key (as Python's `IS NULL` does):
//!
//! ```sql
//! COALESCE((SELECT max(type = 'null') FROM json_each(CAST(metadata AS TEXT)) WHERE key = ?), 1)
//! ```
//!
//! The SQL predicate never rejects a row that matches; the caller re-checks every row with
//! [`ListOptions::matches`], which decides the cases SQL cannot (maps and lists compare by
//! equality, in any key order and with numbers by value at any depth, where Python's
//! `json_extract` compares their JSON text; and the first of repeated keys). So `LIMIT` goes into the SQL only when
//! there is no filter; with one, the caller stops reading rows once it has enough.
//!
//! A page of a streamed listing ([`ListPage`]) adds a keyset condition, "after the last
//! row of the previous page" in the order of the query (`checkpoint_id` descending, then
//! thread and namespace ascending), and a `LIMIT` on the rows scanned. The condition has
//! a plain `checkpoint_id <= ?` conjunct so that SQLite bounds its index range with it: a
//! page of one `(thread, namespace)` is a range of the primary key, however deep into the
//! history it starts.

use rusqlite::types::Value as Sql;
use stategraph_checkpoint::list_cursor::RowKey;
use stategraph_checkpoint::{CheckpointConfig, ListOptions, Value};

/// A built query and its parameters.
#[derive(Debug)]
pub(crate) struct ListQuery {
    /// The SQL text, with `?` placeholders only.
    pub(crate) sql: String,
    /// One value per placeholder, in order.
    pub(crate) params: Vec<Sql>,
    /// Whether the caller must re-check the filter and count the limit itself.
    pub(crate) check_in_rust: bool,
}

/// A checkpoint id as LangGraph reads it: an empty string counts as none.
pub(crate) fn some_id(id: Option<&String>) -> Option<&str> {
    id.map(String::as_str).filter(|id| !id.is_empty())
}

/// One page of a listing: the rows after `after` (all when `None`), at most `rows` of them.
#[derive(Clone, Debug)]
pub(crate) struct ListPage<'a> {
    pub(crate) after: Option<&'a RowKey>,
    pub(crate) rows: usize,
}

/// The query of `list(config, options)`: newest first (ties by thread and namespace);
/// only the rows of `page` when given.
pub(crate) fn list_query(
    config: Option<&CheckpointConfig>,
    options: &ListOptions,
    page: Option<ListPage<'_>>,
) -> ListQuery {
    let mut wheres: Vec<String> = Vec::new();
    let mut params: Vec<Sql> = Vec::new();
    if let Some(config) = config {
        wheres.push("thread_id = ?".into());
        params.push(Sql::Text(config.thread_id.clone()));
        if let Some(ns) = &config.checkpoint_ns {
            wheres.push("checkpoint_ns = ?".into());
            params.push(Sql::Text(ns.clone()));
        }
        if let Some(id) = some_id(config.checkpoint_id.as_ref()) {
            wheres.push("checkpoint_id = ?".into());
            params.push(Sql::Text(id.to_owned()));
        }
    }
    let filter = options.filter.as_ref().filter(|f| !f.is_empty());
    for (key, value) in filter.into_iter().flatten() {
        wheres.push(metadata_predicate(key, value, &mut params));
    }
    let before = options.before.as_ref();
    if let Some(id) = before.and_then(|b| some_id(b.checkpoint_id.as_ref())) {
        wheres.push("checkpoint_id < ?".into());
        params.push(Sql::Text(id.to_owned()));
    }
    if let Some(key) = page.as_ref().and_then(|p| p.after) {
        wheres.push(
            "checkpoint_id <= ? AND (checkpoint_id < ? OR (checkpoint_id = ? AND \
             (thread_id > ? OR (thread_id = ? AND checkpoint_ns > ?))))"
                .into(),
        );
        for text in [
            &key.checkpoint_id,
            &key.checkpoint_id,
            &key.checkpoint_id,
            &key.thread_id,
            &key.thread_id,
            &key.checkpoint_ns,
        ] {
            params.push(Sql::Text(text.clone()));
        }
    }
    let mut sql = crate::sql::LIST.to_owned();
    if !wheres.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&wheres.join(" AND "));
    }
    sql.push_str(" ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns");
    let check_in_rust = filter.is_some();
    let limit = match (options.limit, check_in_rust) {
        (Some(limit), false) => Some(limit),
        _ => None,
    };
    // A page scans at most `rows` rows (matching or not: the next page resumes after them).
    let limit = match (limit, page.map(|p| p.rows)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(limit) = limit {
        sql.push_str(" LIMIT ?");
        params.push(Sql::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
    }
    ListQuery {
        sql,
        params,
        check_in_rust,
    }
}

/// The predicate "the top-level metadata key `key` holds `value`", pushing its parameters.
fn metadata_predicate(key: &str, value: &Value, params: &mut Vec<Sql>) -> String {
    params.push(Sql::Text(key.to_owned()));
    let test = match value {
        // Missing, or null (the first of repeated keys is decided by the re-check).
        Value::Nil => {
            return "COALESCE((SELECT max(type = 'null') FROM json_each(CAST(metadata AS TEXT)) \
                    WHERE key = ?), 1)"
                .to_owned()
        }
        Value::Bool(true) => "type = 'true'",
        Value::Bool(false) => "type = 'false'",
        Value::Int(n) => {
            params.push(Sql::Integer(*n));
            "type IN ('integer', 'real') AND atom = ?"
        }
        Value::UInt(n) => {
            // SQLite reads integers above i64::MAX as reals; the re-check is exact.
            params.push(Sql::Real(*n as f64));
            "type IN ('integer', 'real') AND atom = ?"
        }
        // NaN binds as NULL and matches nothing, as NaN equals nothing.
        Value::Float(f) => {
            params.push(Sql::Real(*f));
            "type IN ('integer', 'real') AND atom = ?"
        }
        Value::Str(s) => {
            params.push(Sql::Text(s.to_string()));
            "type = 'text' AND atom = ?"
        }
        Value::List(_) => "type = 'array'",
        Value::Map(_) => "type = 'object'",
        // JSON metadata cannot hold bytes or extension values.
        Value::Bytes(_) | Value::Ext(_) => "0",
    };
    format!("EXISTS (SELECT 1 FROM json_each(CAST(metadata AS TEXT)) WHERE key = ? AND {test})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_keys_never_reach_the_sql_text() {
        let key = "a') OR 1=1 --\"; DROP TABLE checkpoints; --";
        let q = list_query(None, &ListOptions::default().filter(key, "x"), None);
        assert!(!q.sql.contains("DROP"), "{}", q.sql);
        assert!(!q.sql.contains("OR 1=1"), "{}", q.sql);
        assert_eq!(q.params.first(), Some(&Sql::Text(key.to_owned())));
        assert_eq!(q.sql.matches('?').count(), q.params.len());
    }

    #[test]
    fn limit_goes_into_sql_only_without_a_filter() {
        let q = list_query(None, &ListOptions::default().limit(3), None);
        assert!(q.sql.ends_with("LIMIT ?") && !q.check_in_rust);
        let q = list_query(
            None,
            &ListOptions::default().limit(3).filter("step", 1),
            None,
        );
        assert!(!q.sql.contains("LIMIT") && q.check_in_rust);
    }

    #[test]
    fn config_parts_become_bound_conditions() {
        let config = CheckpointConfig::for_checkpoint("t'", "ns", "id");
        let before = CheckpointConfig::for_checkpoint("t'", "", "z");
        let q = list_query(Some(&config), &ListOptions::default().before(before), None);
        assert_eq!(
            q.sql,
            format!(
                "{} WHERE thread_id = ? AND \
                 checkpoint_ns = ? AND checkpoint_id = ? AND checkpoint_id < ? ORDER BY \
                 checkpoint_id DESC, thread_id, checkpoint_ns",
                crate::sql::LIST
            )
        );
        assert_eq!(q.params.len(), 4);
    }
}
