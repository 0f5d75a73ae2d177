//! Semantic search: the [`Embeddings`] trait, the [`IndexConfig`], LangGraph's text paths
//! (`"a.b"`, `"arr[*].x"`, `"arr[-1]"`, `"{a,b}"`, `"*"`, `"$"`), cosine similarity and a
//! deterministic [`HashEmbedder`] for tests and examples.

use crate::error::{Result, StoreError};
use crate::item::Document;
use async_trait::async_trait;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Turns texts into vectors (LangChain's `Embeddings`).
#[async_trait]
pub trait Embeddings: Send + Sync {
    /// One vector per text, in order.
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;

    /// The vector of a search query (by default, as a document).
    async fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = self.embed_documents(&[text.to_owned()]).await?;
        v.pop()
            .ok_or_else(|| StoreError::Embedding("the embedder returned no vector".into()))
    }
}

/// How a store embeds items (LangGraph's `IndexConfig`).
#[derive(Clone)]
pub struct IndexConfig {
    /// Vector size; every vector the embedder returns must have it.
    pub dims: usize,
    /// The embedder.
    pub embed: Arc<dyn Embeddings>,
    /// The paths embedded by default (`["$"]`: the whole value as JSON text).
    pub fields: Vec<String>,
}

impl IndexConfig {
    /// A config embedding the whole value (`fields = ["$"]`).
    pub fn new(dims: usize, embed: Arc<dyn Embeddings>) -> Self {
        IndexConfig {
            dims,
            embed,
            fields: vec!["$".to_owned()],
        }
    }

    /// Sets the default fields.
    pub fn fields<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.fields = fields.into_iter().map(Into::into).collect();
        self
    }

    /// Embeds `texts`, checking count and size.
    pub(crate) async fn embed_checked(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let vectors = self.embed.embed_documents(texts).await?;
        if vectors.len() != texts.len() {
            return Err(StoreError::Embedding(format!(
                "{} texts gave {} vectors",
                texts.len(),
                vectors.len()
            )));
        }
        for v in &vectors {
            self.check_dims(v)?;
        }
        Ok(vectors)
    }

    /// Embeds a query, checking its size.
    pub(crate) async fn embed_query_checked(&self, text: &str) -> Result<Vec<f32>> {
        let v = self.embed.embed_query(text).await?;
        self.check_dims(&v)?;
        Ok(v)
    }

    fn check_dims(&self, v: &[f32]) -> Result<()> {
        if v.len() != self.dims {
            return Err(StoreError::Embedding(format!(
                "a vector has {} dimensions, the index config says {}",
                v.len(),
                self.dims
            )));
        }
        Ok(())
    }
}

impl fmt::Debug for IndexConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexConfig")
            .field("dims", &self.dims)
            .field("fields", &self.fields)
            .finish_non_exhaustive()
    }
}

/// The `(field name, text)` pairs to embed for a value under `paths`, named as LangGraph
/// names them: the path, or `path.i` when a path yields several texts.
pub fn texts_to_embed(value: &Document, paths: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for path in paths {
        let texts = text_at_path(value, path);
        let many = texts.len() > 1;
        for (i, text) in texts.into_iter().enumerate() {
            let name = if many {
                format!("{path}.{i}")
            } else {
                path.clone()
            };
            out.push((name, text));
        }
    }
    out
}

/// The texts at a path of a value (LangGraph's `get_text_at_path`): strings as they are,
/// numbers and booleans as Python's `str()`, lists and objects as Python's
/// `json.dumps(sort_keys=True, ensure_ascii=False)`; `"$"` or `""` is the whole value.
pub fn text_at_path(value: &Document, path: &str) -> Vec<String> {
    let root = Value::Object(value.clone());
    if path.is_empty() || path == "$" {
        return vec![py_dumps(&root)];
    }
    let tokens = tokenize_path(path);
    let mut out = Vec::new();
    extract(&root, &tokens, 0, &mut out);
    out
}

fn extract(obj: &Value, tokens: &[String], pos: usize, out: &mut Vec<String>) {
    let Some(token) = tokens.get(pos) else {
        if let Some(t) = leaf_text(obj) {
            out.push(t);
        }
        return;
    };
    if token.starts_with('[') && token.ends_with(']') {
        let Value::Array(items) = obj else { return };
        let index = &token[1..token.len() - 1];
        if index == "*" {
            for item in items {
                extract(item, tokens, pos + 1, out);
            }
        } else if let Ok(i) = index.trim().parse::<i64>() {
            let i = if i < 0 { items.len() as i64 + i } else { i };
            if let Some(item) = usize::try_from(i).ok().and_then(|i| items.get(i)) {
                extract(item, tokens, pos + 1, out);
            }
        }
    } else if token.starts_with('{') && token.ends_with('}') {
        let Value::Object(_) = obj else { return };
        for field in token[1..token.len() - 1].split(',') {
            let mut cur = Some(obj);
            for t in tokenize_path(field.trim()) {
                cur = cur.and_then(|c| c.as_object()).and_then(|m| m.get(&t));
            }
            if let Some(t) = cur.and_then(leaf_text) {
                out.push(t);
            }
        }
    } else if token == "*" {
        match obj {
            Value::Object(m) => m.values().for_each(|v| extract(v, tokens, pos + 1, out)),
            Value::Array(a) => a.iter().for_each(|v| extract(v, tokens, pos + 1, out)),
            _ => {}
        }
    } else if let Some(v) = obj.as_object().and_then(|m| m.get(token)) {
        extract(v, tokens, pos + 1, out);
    }
}

fn leaf_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_owned()),
        Value::Number(n) => Some(py_number(n)),
        Value::Array(_) | Value::Object(_) => Some(py_dumps(v)),
    }
}

/// Splits a path into tokens as LangGraph's `tokenize_path` does (`a.b[0]{c,d}`).
pub fn tokenize_path(path: &str) -> Vec<String> {
    let chars: Vec<char> = path.chars().collect();
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '[' || c == '{' {
            let (open, close) = if c == '[' { ('[', ']') } else { ('{', '}') };
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
            let mut depth = 1;
            let mut tok = String::from(open);
            i += 1;
            while i < chars.len() && depth > 0 {
                if chars[i] == open {
                    depth += 1;
                } else if chars[i] == close {
                    depth -= 1;
                }
                tok.push(chars[i]);
                i += 1;
            }
            tokens.push(tok);
            continue;
        } else if c == '.' {
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
        i += 1;
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// Python's `json.dumps(v, sort_keys=True, ensure_ascii=False)` (separators `", "`, `": "`).
pub fn py_dumps(v: &Value) -> String {
    let mut s = String::new();
    write_py(v, &mut s);
    s
}

fn write_py(v: &Value, s: &mut String) {
    match v {
        Value::Null => s.push_str("null"),
        Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => s.push_str(&py_number(n)),
        Value::String(t) => s.push_str(&Value::String(t.clone()).to_string()),
        Value::Array(a) => {
            s.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_py(x, s);
            }
            s.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            s.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(&Value::String(k.clone()).to_string());
                s.push_str(": ");
                write_py(&m[k], s);
            }
            s.push('}');
        }
    }
}

fn py_number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        let f = n.as_f64().unwrap_or(0.0);
        if f.is_finite() && f == f.trunc() && f.abs() < 1e16 {
            format!("{f:.1}")
        } else {
            format!("{f:?}")
        }
    } else {
        n.to_string()
    }
}

/// Cosine similarity of two vectors (0 when either is all zeros or sizes differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// A deterministic bag-of-words embedder for tests and examples: each lower-cased
/// alphanumeric word adds 1 to bucket `fnv1a64(word) % dims`, then the vector is
/// L2-normalised. Texts sharing words score high; no model, no network. (The interop tests
/// reproduce it in Python in a few lines.)
#[derive(Debug, Clone, Copy)]
pub struct HashEmbedder {
    /// Vector size.
    pub dims: usize,
}

impl HashEmbedder {
    /// The vector of one text.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dims.max(1)];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in word.to_lowercase().bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
            let n = v.len() as u64;
            v[(h % n) as usize] += 1.0;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

#[async_trait]
impl Embeddings for HashEmbedder {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Document {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn paths_extract_like_langgraph() {
        let v =
            doc(json!({"a": {"b": "x"}, "arr": [{"t": "one"}, {"t": "two"}], "n": 2, "f": true}));
        assert_eq!(text_at_path(&v, "a.b"), vec!["x"]);
        assert_eq!(text_at_path(&v, "arr[*].t"), vec!["one", "two"]);
        assert_eq!(text_at_path(&v, "arr[-1].t"), vec!["two"]);
        assert_eq!(text_at_path(&v, "{n,f}"), vec!["2", "True"]);
        assert_eq!(text_at_path(&v, "missing"), Vec::<String>::new());
        assert_eq!(
            text_at_path(&doc(json!({"b": 1.0, "a": [1, "é"]})), "$"),
            vec![r#"{"a": [1, "é"], "b": 1.0}"#]
        );
        assert_eq!(
            tokenize_path("a.b[0]{c,d.e}"),
            vec!["a", "b", "[0]", "{c,d.e}"]
        );
        let named = texts_to_embed(&v, &["arr[*].t".to_owned(), "a.b".to_owned()]);
        assert_eq!(named[0].0, "arr[*].t.0");
        assert_eq!(named[2].0, "a.b");
    }

    #[test]
    fn hash_embedder_ranks_shared_words() {
        let e = HashEmbedder { dims: 64 };
        let q = e.embed("dark theme");
        assert!(cosine(&q, &e.embed("prefers a dark theme")) > cosine(&q, &e.embed("likes cats")));
        assert!((cosine(&q, &q) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&q, &[0.0; 64]), 0.0);
    }
}
