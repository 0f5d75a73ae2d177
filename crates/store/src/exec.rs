//! The pure parts of executing a batch, shared by every backend (public for backend crates
//! such as `stategraph-store-postgres`): embedding what a batch
//! needs (before any lock or transaction is taken), ranking search candidates, and shaping
//! namespace listings. Backends only fetch and write rows.

use crate::embed::{cosine, texts_to_embed, IndexConfig};
use crate::error::Result;
use crate::item::{Item, SearchItem};
use crate::namespace::{pattern_matches, Namespace};
use crate::op::{IndexSpec, ListNamespacesOp, MatchType, Op, PutOp, SearchOp};
use std::collections::HashMap;

/// Vectors computed for a batch, by op position.
#[derive(Debug, Default)]
pub struct Embedded {
    /// For each put with a value: `(field name, vector)` pairs to store.
    pub puts: HashMap<usize, Vec<(String, Vec<f32>)>>,
    /// For each search with a query: the query vector.
    pub queries: HashMap<usize, Vec<f32>>,
}

/// The paths a put embeds, or none.
pub fn put_paths<'a>(op: &'a PutOp, index: &'a IndexConfig) -> Option<&'a [String]> {
    match (&op.value, &op.index) {
        (None, _) | (_, IndexSpec::Disabled) => None,
        (Some(_), IndexSpec::Default) => Some(&index.fields),
        (Some(_), IndexSpec::Paths(p)) => Some(p),
    }
}

/// Embeds every text a batch's puts index and every search query, in one call each.
pub async fn embed_batch(index: Option<&IndexConfig>, ops: &[Op]) -> Result<Embedded> {
    let mut out = Embedded::default();
    let Some(index) = index else {
        return Ok(out);
    };
    let mut texts = Vec::new();
    let mut owners = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Put(put) => {
                let (Some(paths), Some(value)) = (put_paths(put, index), &put.value) else {
                    continue;
                };
                out.puts.insert(i, Vec::new());
                for (field, text) in texts_to_embed(value, paths) {
                    owners.push((i, field));
                    texts.push(text);
                }
            }
            Op::Search(SearchOp { query: Some(q), .. }) => {
                out.queries.insert(i, index.embed_query_checked(q).await?);
            }
            _ => {}
        }
    }
    let vectors = index.embed_checked(&texts).await?;
    for ((i, field), v) in owners.into_iter().zip(vectors) {
        out.puts.entry(i).or_default().push((field, v));
    }
    Ok(out)
}

/// Ranks filtered candidates (in the backend's natural order) for a search: with a query
/// vector, by the best cosine over each item's vectors (ties keep the natural order), the
/// page `[offset, offset+limit)` of the scored items, then unscored items filling up to
/// `limit` (as LangGraph's `InMemoryStore`); without one, the natural order's page.
pub fn rank(
    candidates: Vec<(Item, Vec<Vec<f32>>)>,
    query: Option<&[f32]>,
    offset: usize,
    limit: usize,
) -> Vec<SearchItem> {
    let Some(q) = query else {
        return candidates
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|(item, _)| SearchItem { item, score: None })
            .collect();
    };
    let mut scored = Vec::new();
    let mut unscored = Vec::new();
    for (item, vectors) in candidates {
        if vectors.is_empty() {
            unscored.push(item);
        } else {
            let best = vectors
                .iter()
                .map(|v| cosine(q, v))
                .fold(f64::NEG_INFINITY, f64::max);
            scored.push((best, item));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out: Vec<SearchItem> = scored
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(s, item)| SearchItem {
            item,
            score: Some(s),
        })
        .collect();
    let room = limit.saturating_sub(out.len());
    out.extend(
        unscored
            .into_iter()
            .take(room)
            .map(|item| SearchItem { item, score: None }),
    );
    out
}

/// Applies a listing's conditions, depth, order (label by label), dedup and page to the
/// namespaces that hold items.
pub fn list_namespaces(
    all: impl IntoIterator<Item = Namespace>,
    op: &ListNamespacesOp,
) -> Vec<Namespace> {
    let mut out: Vec<Namespace> = all
        .into_iter()
        .filter(|ns| {
            op.match_conditions
                .iter()
                .all(|c| pattern_matches(ns, &c.path, c.match_type == MatchType::Suffix))
        })
        .map(|mut ns| {
            if let Some(d) = op.max_depth {
                ns.0.truncate(d);
            }
            ns
        })
        .collect();
    out.sort();
    out.dedup();
    out.into_iter().skip(op.offset).take(op.limit).collect()
}

/// Validates every op of a batch (before any runs): namespaces, filters, TTLs.
pub fn validate_all(ops: &[Op]) -> Result<()> {
    ops.iter().try_for_each(Op::validate)
}
