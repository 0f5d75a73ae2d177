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

/// The best cosine similarity of a query to an item's vectors (`None` without vectors).
pub fn best_score<'a>(query: &[f32], vectors: impl IntoIterator<Item = &'a [f32]>) -> Option<f64> {
    vectors
        .into_iter()
        .map(|v| cosine(query, v))
        .fold(None, |best, s| Some(best.map_or(s, |b: f64| b.max(s))))
}

/// Ranks filtered candidates (in the backend's natural order), each with its best score
/// (see [`best_score`]): with `by_score`, the page `[offset, offset+limit)` of the scored
/// candidates by descending score (ties keep the natural order), then unscored candidates
/// filling up to `limit` (as LangGraph's `InMemoryStore`); without, the natural order's
/// page. Generic so a backend can rank references and clone only the page.
pub fn rank<T>(
    candidates: Vec<(T, Option<f64>)>,
    by_score: bool,
    offset: usize,
    limit: usize,
) -> Vec<(T, Option<f64>)> {
    if !by_score {
        return candidates
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|(c, _)| (c, None))
            .collect();
    }
    let mut scored = Vec::new();
    let mut unscored = Vec::new();
    for (c, s) in candidates {
        match s {
            Some(s) => scored.push((c, s)),
            None => unscored.push(c),
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut out: Vec<(T, Option<f64>)> = scored
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(c, s)| (c, Some(s)))
        .collect();
    let room = limit.saturating_sub(out.len());
    out.extend(unscored.into_iter().take(room).map(|c| (c, None)));
    out
}

/// Turns ranked items into search results.
pub fn to_search_items(ranked: Vec<(Item, Option<f64>)>) -> Vec<SearchItem> {
    ranked
        .into_iter()
        .map(|(item, score)| SearchItem { item, score })
        .collect()
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
