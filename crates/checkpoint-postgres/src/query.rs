//! The WHERE clause of `list`, with every key and value a bound parameter.
//!
//! Each key of the metadata filter becomes one condition on the top-level value
//! `c.metadata -> $k`, with the key and the value's JSON text bound as parameters:
//!
//! * a value other than `None` needs the stored value to be equal to it as JSONB:
//!   `c.metadata -> $k = $v::text::jsonb`. JSONB equality is the filter meaning every
//!   stategraph saver shares (docs/format.md#metadata-filters): maps equal maps with the
//!   same keys and equal values whatever their order, lists equal lists element by
//!   element, numbers by value at any depth (`1` matches `1.0`), `true` is not `1`. So
//!   `{"nested": {}}` matches only an empty `nested` map, where Python's `PostgresSaver`
//!   (`metadata @> filter`, containment) matches every `nested` map; Python's in-memory
//!   and SQLite savers agree with equality.
//! * `None` matches a key holding `null` and a missing key, as Python's in-memory and
//!   SQLite savers do (its `PostgresSaver` needs the key).
//!
//! No part of a filter key or value ever becomes SQL text or a JSON path, so a key such as
//! `a') OR 1=1 --` or `$.x` is only ever a key that no metadata has. SQLite's
//! `json_extract` path injection (CVE-2025-8709) has no counterpart here by construction.
//! A filter value JSONB cannot hold (bytes, a Python object, NaN, a string with a NUL
//! character) can equal no stored metadata, so such a filter lists nothing, without a
//! query; a key with a NUL character is never stored, so only `None` matches it.

use stategraph_checkpoint::list_cursor::RowKey;
use stategraph_checkpoint::{CheckpointConfig, ListOptions, Value};
use tokio_postgres::types::ToSql;

use crate::json;

/// One bound parameter of a built query.
pub(crate) type Param = Box<dyn ToSql + Sync + Send>;

/// A query with its parameters in `$n` order.
pub(crate) struct Query {
    pub(crate) sql: String,
    pub(crate) params: Vec<Param>,
}

impl Query {
    /// The parameters as the driver takes them.
    pub(crate) fn param_refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }

    fn bind(&mut self, param: Param) -> String {
        self.params.push(param);
        format!("${}", self.params.len())
    }
}

/// A checkpoint id as LangGraph reads it: an empty string counts as none.
pub(crate) fn some_id(id: Option<&String>) -> Option<&str> {
    id.map(String::as_str).filter(|id| !id.is_empty())
}

/// One key of the metadata filter: the key and, unless the filter value is `None`, the JSON
/// text of the value.
pub(crate) type KeyFilter = (String, Option<String>);

/// The metadata filter key by key; `None` for no filter, `Err` for one nothing matches.
/// A key whose filter value is `None` but that JSONB cannot hold (a NUL character) is
/// missing from every row, so it matches every row and is left out.
pub(crate) fn filter_keys(options: &ListOptions) -> Result<Option<Vec<KeyFilter>>, json::NotJson> {
    let Some(filter) = options.filter.as_ref().filter(|f| !f.is_empty()) else {
        return Ok(None);
    };
    let mut keys = Vec::with_capacity(filter.len());
    for (key, value) in filter {
        let storable = !key.contains('\0');
        match value {
            Value::Nil if storable => keys.push((key.clone(), None)),
            Value::Nil => {}
            _ if storable => keys.push((key.clone(), Some(json::to_text(value)?))),
            _ => return Err(json::NotJson::Nul),
        }
    }
    Ok(Some(keys))
}

/// One page of a streamed listing: the rows after `after` (all when `None`), at most
/// `rows` of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListPage<'a> {
    pub(crate) after: Option<&'a RowKey>,
    pub(crate) rows: usize,
}

/// The `list` query: `select` followed by the WHERE clause, newest first (equal ids by
/// thread, then namespace), limited; only the rows of `page` when given. `None` when the
/// filter can match nothing.
///
/// A page's keyset condition ("after the last row of the previous page") has a plain
/// `checkpoint_id <= $n` conjunct, so that a page of one `(thread, namespace)` is a range
/// of the primary key however deep into the history it starts.
pub(crate) fn list_query(
    select: &str,
    config: Option<&CheckpointConfig>,
    options: &ListOptions,
    page: Option<ListPage<'_>>,
) -> Option<Query> {
    let filter = filter_keys(options).ok()?;
    let mut query = Query {
        sql: String::with_capacity(select.len() + 200),
        params: Vec::new(),
    };
    let mut wheres = Vec::new();
    if let Some(config) = config {
        let p = query.bind(Box::new(config.thread_id.clone()));
        wheres.push(format!("c.thread_id = {p}"));
        if let Some(ns) = &config.checkpoint_ns {
            let p = query.bind(Box::new(ns.clone()));
            wheres.push(format!("c.checkpoint_ns = {p}"));
        }
        if let Some(id) = some_id(config.checkpoint_id.as_ref()) {
            let p = query.bind(Box::new(id.to_owned()));
            wheres.push(format!("c.checkpoint_id = {p}"));
        }
    }
    for (key, value) in filter.into_iter().flatten() {
        let k = query.bind(Box::new(key));
        wheres.push(match value {
            Some(value) => {
                let v = query.bind(Box::new(value));
                format!("c.metadata -> {k} = {v}::text::jsonb")
            }
            None => format!("COALESCE(c.metadata -> {k}, 'null'::jsonb) = 'null'::jsonb"),
        });
    }
    let before = options.before.as_ref();
    if let Some(id) = before.and_then(|b| some_id(b.checkpoint_id.as_ref())) {
        let p = query.bind(Box::new(id.to_owned()));
        wheres.push(format!("c.checkpoint_id < {p}"));
    }
    if let Some(key) = page.and_then(|p| p.after) {
        let id = query.bind(Box::new(key.checkpoint_id.clone()));
        let thread = query.bind(Box::new(key.thread_id.clone()));
        let ns = query.bind(Box::new(key.checkpoint_ns.clone()));
        wheres.push(format!(
            "c.checkpoint_id <= {id} AND (c.checkpoint_id < {id} OR (c.checkpoint_id = {id} \
             AND (c.thread_id > {thread} OR (c.thread_id = {thread} AND c.checkpoint_ns > {ns}))))"
        ));
    }
    query.sql.push_str(select);
    if !wheres.is_empty() {
        query.sql.push_str(" WHERE ");
        query.sql.push_str(&wheres.join(" AND "));
    }
    query
        .sql
        .push_str(" ORDER BY c.checkpoint_id DESC, c.thread_id, c.checkpoint_ns");
    let limit = match (options.limit, page.map(|p| p.rows)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(limit) = limit {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let p = query.bind(Box::new(limit));
        query.sql.push_str(&format!(" LIMIT {p}"));
    }
    Some(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_keys_and_values_stay_out_of_the_sql_text() {
        let hostile = "'); DROP TABLE checkpoints; --";
        let options = ListOptions::default()
            .filter(hostile, hostile)
            .filter("$.source", "x' OR '1'='1")
            .limit(3);
        let config = CheckpointConfig::thread(hostile);
        let query =
            list_query("SELECT 1 FROM checkpoints c", Some(&config), &options, None).unwrap();
        assert_eq!(
            query.sql,
            "SELECT 1 FROM checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 \
             AND c.metadata -> $3 = $4::text::jsonb AND c.metadata -> $5 = $6::text::jsonb \
             ORDER BY c.checkpoint_id DESC, c.thread_id, c.checkpoint_ns LIMIT $7"
        );
        assert_eq!(query.params.len(), 7);
        let keys = filter_keys(&options).unwrap().unwrap();
        let text = |v: &str| json::to_text(&Value::from(v)).unwrap();
        assert_eq!(keys[0], (hostile.to_owned(), Some(text(hostile))));
        assert_eq!(keys[1], ("$.source".to_owned(), Some(text("x' OR '1'='1"))));
    }

    #[test]
    fn unstorable_filter_values_match_nothing_and_empty_filters_nothing_else() {
        let bytes = ListOptions::default().filter("k", vec![1u8]);
        assert!(list_query("S", None, &bytes, None).is_none());
        let nul = ListOptions::default().filter("k\0", 1);
        assert!(list_query("S", None, &nul, None).is_none());
        // No row holds a key with a NUL, so `None` on it matches every row.
        let nul_none = ListOptions::default().filter("k\0", Value::Nil);
        assert!(!list_query("S", None, &nul_none, None)
            .unwrap()
            .sql
            .contains("WHERE"));
        let none = ListOptions::default();
        assert_eq!(
            list_query("S c", None, &none, None).unwrap().sql,
            "S c ORDER BY c.checkpoint_id DESC, c.thread_id, c.checkpoint_ns"
        );
        let before = ListOptions::default().before(CheckpointConfig::thread("t"));
        assert!(!list_query("S", None, &before, None)
            .unwrap()
            .sql
            .contains('<'));
    }
}
