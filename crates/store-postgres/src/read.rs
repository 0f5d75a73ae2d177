//! The ops that read: get, search (by prefix, filter and meaning) and namespace listing,
//! each inside the batch's transaction.

use crate::op::{backend, parse_vector, to_item, VectorBackend};
use crate::query::{like_prefix, prefilter, Param};
use crate::sql::{self, LIVE, REFRESH};
use deadpool_postgres::GenericClient;
use stategraph_store::exec::{best_score, list_namespaces, rank, to_search_items};
use stategraph_store::{
    filter, GetOp, Item, ListNamespacesOp, Namespace, Result, SearchItem, SearchOp,
};
use std::collections::HashMap;

/// A driver error of a query.
fn db(e: tokio_postgres::Error) -> stategraph_store::StoreError {
    backend("query", e)
}

/// One live item; refreshes its expiry first when `refresh` (and the op asks).
pub(crate) async fn get<C: GenericClient + Sync>(
    tx: &C,
    op: &GetOp,
    refresh: bool,
) -> Result<Option<Item>> {
    let prefix = op.namespace.to_text();
    if op.refresh_ttl && refresh {
        tx.execute(sql::REFRESH_LIVE, &[&prefix, &op.key])
            .await
            .map_err(db)?;
    }
    let row = tx
        .query_opt(sql::SELECT_ITEM, &[&prefix, &op.key])
        .await
        .map_err(db)?;
    row.as_ref().map(to_item).transpose()
}

/// The stored vectors of the items under the op's prefix, by (prefix, key).
async fn vectors_under<C: GenericClient + Sync>(
    tx: &C,
    op: &SearchOp,
    kind: VectorBackend,
) -> Result<HashMap<(String, String), Vec<Vec<f32>>>> {
    let mut found: HashMap<(String, String), Vec<Vec<f32>>> = HashMap::new();
    let under = !op.namespace_prefix.is_empty();
    let args: Vec<String> = if under {
        let (exact, like) = like_prefix(&op.namespace_prefix);
        vec![exact, like]
    } else {
        Vec::new()
    };
    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
        .iter()
        .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let stmt = sql::select_vectors(kind, under);
    for r in tx.query(&stmt, &refs).await.map_err(db)? {
        let v = match kind {
            // `real[]` arrives in binary, no text to parse.
            VectorBackend::RealArray => r.get::<_, Option<Vec<f32>>>(2),
            VectorBackend::Pgvector => r.get::<_, Option<&str>>(2).and_then(parse_vector),
        };
        if let Some(v) = v {
            found.entry((r.get(0), r.get(1))).or_default().push(v);
        }
    }
    Ok(found)
}

/// Refreshes the expiry of what a search returns.
async fn refresh_hits<C: GenericClient + Sync>(tx: &C, found: &[SearchItem]) -> Result<()> {
    for hit in found {
        tx.execute(REFRESH, &[&hit.namespace.to_text(), &hit.key])
            .await
            .map_err(db)?;
    }
    Ok(())
}

/// A search: the live items under the prefix that match the filter, ranked by `query`
/// (the op's embedded text) when there is one, paged; refreshes what it returns when
/// `refresh`.
pub(crate) async fn search<C: GenericClient + Sync>(
    tx: &C,
    op: &SearchOp,
    query: Option<&[f32]>,
    vectors: Option<VectorBackend>,
    refresh: bool,
) -> Result<Vec<SearchItem>> {
    if let (Some(q), Some(kind), None) = (query, vectors, &op.filter) {
        let found = search_by_vectors(tx, op, q, kind).await?;
        if op.refresh_ttl && refresh {
            refresh_hits(tx, &found).await?;
        }
        return Ok(found);
    }
    let found_vectors = match (query, vectors) {
        (Some(_), Some(kind)) => vectors_under(tx, op, kind).await?,
        _ => HashMap::new(),
    };
    let mut conds = vec![LIVE.to_owned()];
    let mut args: Vec<Param> = Vec::new();
    if !op.namespace_prefix.is_empty() {
        let (exact, like) = like_prefix(&op.namespace_prefix);
        args.push(Box::new(exact));
        args.push(Box::new(like));
        conds.push("(prefix = $1 OR prefix LIKE $2)".into());
    }
    if let Some(f) = &op.filter {
        prefilter(f, &mut conds, &mut args);
    }
    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
        .iter()
        .map(|a| a.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let rows = tx
        .query(&sql::select_items(&conds.join(" AND ")), &refs)
        .await
        .map_err(db)?;
    let mut candidates = Vec::new();
    for row in &rows {
        let item = to_item(row)?;
        if op
            .filter
            .as_ref()
            .is_some_and(|f| !filter::matches(&item.value, f))
        {
            continue;
        }
        let score = query.and_then(|q| {
            let vs = found_vectors
                .get(&(item.namespace.to_text(), item.key.clone()))
                .map(Vec::as_slice)
                .unwrap_or_default();
            best_score(q, vs.iter().map(Vec::as_slice))
        });
        candidates.push((item, score));
    }
    let found = to_search_items(rank(candidates, query.is_some(), op.offset, op.limit));
    if op.refresh_ttl && refresh {
        refresh_hits(tx, &found).await?;
    }
    Ok(found)
}

/// The namespaces that hold a live item, listed as the op asks.
pub(crate) async fn namespaces<C: GenericClient + Sync>(
    tx: &C,
    op: &ListNamespacesOp,
) -> Result<Vec<Namespace>> {
    let rows = tx.query(sql::SELECT_NAMESPACES, &[]).await.map_err(db)?;
    let all = rows
        .iter()
        .map(|r| Namespace::from_text(r.get::<_, &str>(0)));
    Ok(list_namespaces(all, op))
}

/// A search with a query and no filter, without reading every value: the live items'
/// vectors are scored first (rows in the natural order, so ties keep it), then only the
/// page's values are fetched, and unembedded items fill up to `limit` (as
/// `stategraph_store::exec::rank` orders them).
async fn search_by_vectors<C: GenericClient + Sync>(
    tx: &C,
    op: &SearchOp,
    query: &[f32],
    kind: VectorBackend,
) -> Result<Vec<SearchItem>> {
    let mut args: Vec<String> = Vec::new();
    let mut cond = String::new();
    if !op.namespace_prefix.is_empty() {
        let (exact, like) = like_prefix(&op.namespace_prefix);
        args = vec![exact, like];
        cond = " AND (s.prefix = $1 OR s.prefix LIKE $2)".into();
    }
    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
        .iter()
        .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let rows = tx
        .query(&sql::select_live_vectors(kind, &cond), &refs)
        .await
        .map_err(db)?;
    // An item's rows are adjacent (same updated_at, prefix, key): keep its best score.
    let mut scored: Vec<((String, String), Option<f64>)> = Vec::new();
    for r in &rows {
        let id: (String, String) = (r.get(0), r.get(1));
        let v = match kind {
            VectorBackend::RealArray => r.get::<_, Option<Vec<f32>>>(2),
            VectorBackend::Pgvector => r.get::<_, Option<&str>>(2).and_then(parse_vector),
        };
        let score = v.and_then(|v| best_score(query, [v.as_slice()]));
        match scored.last_mut() {
            Some((last, best)) if *last == id => {
                if let Some(s) = score {
                    *best = Some(best.map_or(s, |b: f64| b.max(s)));
                }
            }
            _ => scored.push((id, score)),
        }
    }
    // An item whose only vectors are unreadable counts as unembedded (as in `run`).
    let (scored, broken): (Vec<_>, Vec<_>) = scored.into_iter().partition(|(_, s)| s.is_some());
    let page = rank(scored, true, op.offset, op.limit);
    let (prefixes, keys): (Vec<String>, Vec<String>) = page
        .iter()
        .map(|((p, k), _)| (p.clone(), k.clone()))
        .unzip();
    let mut by_id: HashMap<(String, String), Item> = HashMap::new();
    if !page.is_empty() {
        for r in tx
            .query(&sql::select_listed_items(), &[&prefixes, &keys])
            .await
            .map_err(db)?
        {
            let item = to_item(&r)?;
            by_id.insert((item.namespace.to_text(), item.key.clone()), item);
        }
    }
    let mut out: Vec<(Item, Option<f64>)> = page
        .into_iter()
        .filter_map(|(id, score)| by_id.remove(&id).map(|item| (item, score)))
        .collect();
    let room = op.limit.saturating_sub(out.len());
    if room > 0 {
        for item in unembedded(tx, op, kind, &broken, room).await? {
            out.push((item, None));
        }
    }
    Ok(to_search_items(out))
}

/// Up to `room` live items under the op's prefix with no vectors, or only unreadable ones
/// (`broken`), newest first: what fills a vector search's page after the scored items.
async fn unembedded<C: GenericClient + Sync>(
    tx: &C,
    op: &SearchOp,
    kind: VectorBackend,
    broken: &[((String, String), Option<f64>)],
    room: usize,
) -> Result<Vec<Item>> {
    let broken_prefixes: Vec<String> = broken.iter().map(|((p, _), _)| p.clone()).collect();
    let broken_keys: Vec<String> = broken.iter().map(|((_, k), _)| k.clone()).collect();
    let mut args: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>> = vec![
        Box::new(broken_prefixes),
        Box::new(broken_keys),
        Box::new(room as i64),
    ];
    let mut cond = String::new();
    if !op.namespace_prefix.is_empty() {
        let (exact, like) = like_prefix(&op.namespace_prefix);
        args.push(Box::new(exact));
        args.push(Box::new(like));
        cond = " AND (s.prefix = $4 OR s.prefix LIKE $5)".into();
    }
    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
        .iter()
        .map(|a| a.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let rows = tx
        .query(&sql::select_unembedded(kind, &cond), &refs)
        .await
        .map_err(db)?;
    rows.iter().map(to_item).collect()
}
