//! The ops that read: get, search (by prefix, filter and meaning) and namespace listing,
//! each inside the batch's transaction.

use crate::error::Result;
use crate::op::{decode_vector, read_row};
use crate::query::{prefilter, prefix_condition};
use crate::sql;
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, OptionalExtension, Transaction};
use stategraph_store::exec::{best_score, list_namespaces, rank, to_search_items};
use stategraph_store::{
    filter, GetOp, Item, ListNamespacesOp, Namespace, SearchItem, SearchOp, Timestamp,
};
use std::collections::HashMap;

/// One item, if live; refreshes its expiry when `refresh` (and the op asks).
pub(crate) fn get(
    tx: &Transaction<'_>,
    op: &GetOp,
    now: Timestamp,
    refresh: bool,
) -> Result<Option<Item>> {
    let prefix = op.namespace.to_text();
    let row = tx
        .prepare_cached(sql::SELECT_ITEM)?
        .query_row(params![prefix, op.key], read_row)
        .optional()?;
    match row {
        Some(row) if row.live(now)? => {
            if op.refresh_ttl && refresh {
                tx.prepare_cached(sql::REFRESH_TTL)?
                    .execute(params![prefix, op.key])?;
            }
            Ok(Some(row.into_item()?))
        }
        _ => Ok(None),
    }
}

/// The stored vectors of items, by (prefix, key).
type Vectors = HashMap<(String, String), Vec<Vec<f32>>>;

/// Every stored vector of the items under `where_sql` (bound to `args`), by (prefix, key).
fn vectors(tx: &Transaction<'_>, where_sql: &str, args: &[String]) -> Result<Vectors> {
    let mut vectors = Vectors::new();
    let mut stmt = tx.prepare_cached(&sql::select_vectors(where_sql))?;
    let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
    while let Some(r) = rows.next()? {
        let blob: Option<Vec<u8>> = r.get(2)?;
        if let Some(v) = blob.as_deref().and_then(decode_vector) {
            vectors.entry((r.get(0)?, r.get(1)?)).or_default().push(v);
        }
    }
    Ok(vectors)
}

/// A search: the live items under the prefix that match the filter, ranked by `query`
/// (the op's embedded text) when there is one, paged; refreshes what it returns when
/// `refresh`.
pub(crate) fn search(
    tx: &Transaction<'_>,
    op: &SearchOp,
    query: Option<&[f32]>,
    vectors_table: bool,
    now: Timestamp,
    refresh: bool,
) -> Result<Vec<SearchItem>> {
    let cond = prefix_condition(&op.namespace_prefix);
    let where_sql = if cond.is_some() {
        sql::WHERE_PREFIX
    } else {
        ""
    };
    let args: Vec<String> = cond.map(|(a, b)| vec![a, b]).unwrap_or_default();
    let mut vectors = if query.is_some() && vectors_table {
        vectors(tx, where_sql, &args)?
    } else {
        HashMap::new()
    };
    // Without a query the page can stop early; with one every candidate counts.
    let stop = match (query, op.offset.checked_add(op.limit)) {
        (None, Some(n)) => n,
        _ => usize::MAX,
    };
    let mut candidates = Vec::new();
    let mut sql_args: Vec<SqlValue> = args.iter().cloned().map(SqlValue::Text).collect();
    let mut conds: Vec<String> = Vec::new();
    if !where_sql.is_empty() {
        conds.push(sql::PREFIX_CONDITION.into());
    }
    if let Some(f) = &op.filter {
        prefilter(f, &mut conds, &mut sql_args);
    }
    let where_all = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    let mut stmt = tx.prepare_cached(&sql::select_items(&where_all))?;
    let mut rows = stmt.query(rusqlite::params_from_iter(&sql_args))?;
    while let Some(r) = rows.next()? {
        if candidates.len() >= stop {
            break;
        }
        let row = read_row(r)?;
        if !row.live(now)? {
            continue;
        }
        let vs = vectors
            .remove(&(row.prefix.clone(), row.key.clone()))
            .unwrap_or_default();
        let item = row.into_item()?;
        if op
            .filter
            .as_ref()
            .is_some_and(|f| !filter::matches(&item.value, f))
        {
            continue;
        }
        let score = query.and_then(|q| best_score(q, vs.iter().map(Vec::as_slice)));
        candidates.push((item, score));
    }
    drop(rows);
    drop(stmt);
    let found = to_search_items(rank(candidates, query.is_some(), op.offset, op.limit));
    if op.refresh_ttl && refresh {
        let mut stmt = tx.prepare_cached(sql::REFRESH_TTL)?;
        for hit in &found {
            stmt.execute(params![hit.namespace.to_text(), hit.key])?;
        }
    }
    Ok(found)
}

/// The namespaces that hold a live item, listed as the op asks.
pub(crate) fn namespaces(
    tx: &Transaction<'_>,
    op: &ListNamespacesOp,
    now: Timestamp,
) -> Result<Vec<Namespace>> {
    let mut stmt = tx.prepare_cached(sql::SELECT_NAMESPACES)?;
    let mut rows = stmt.query([])?;
    let mut live = Vec::new();
    while let Some(r) = rows.next()? {
        let prefix: String = r.get(0)?;
        let expires: Option<String> = r.get(1)?;
        let alive = expires.is_none_or(|t| Timestamp::parse(&t).is_none_or(|t| t > now));
        if alive {
            live.push(prefix);
        }
    }
    live.sort();
    live.dedup();
    let all = live.iter().map(|p| Namespace::from_text(p));
    Ok(list_namespaces(all, op))
}
