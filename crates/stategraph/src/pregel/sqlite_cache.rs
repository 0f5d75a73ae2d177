//! The node cache in a SQLite file, on the table of Python's
//! `langgraph.cache.sqlite.SqliteCache` (feature `sqlite`).
//!
//! One row per entry: `cache(ns TEXT, key TEXT, expiry REAL, encoding TEXT, val BLOB)`,
//! primary key `(ns, key)`. As in Python, for a node's writes:
//!
//! * `ns` is `"__pregel_ns_writes,<identifier>,<node>"`, where Python's identifier is the
//!   `module.qualname` of the node's function (`__dynamic__` when it has none). A Rust node
//!   has no such name: it is `__dynamic__` unless set with [`SqliteCache::identifier`].
//! * `key` is the XXH3-128 of the input key bytes as 32 lowercase hex digits.
//! * `expiry` is the Unix time (seconds, UTC) after which the entry is stale, or NULL; a
//!   stale row is deleted when read.
//! * `encoding, val` are `JsonPlusSerializer.dumps_typed` of the writes: `"msgpack"` and a
//!   `collections.deque` of `[channel, value]` pairs.
//!
//! So an entry written by one side is a hit for the other when both derive the same key
//! bytes from the input. Python's default key is the pickle of the frozen input and ours is
//! its msgpack, which never match: give both sides a key function with the same bytes,
//! e.g. Python's `CachePolicy(key_func=lambda s: str(s["x"]))` and
//!
//! ```no_run
//! use stategraph::graph::CompileOptions;
//! use stategraph::pregel::cache::CachePolicy;
//! use stategraph::pregel::sqlite_cache::SqliteCache;
//! use stategraph::Value;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let policy = CachePolicy::default().key(|s: &Value| {
//!     let x = s.get("x").and_then(Value::as_i64).unwrap_or(0);
//!     x.to_string().into_bytes()
//! });
//! // `square` is `def square(state)` in Python's `app/nodes.py`.
//! let cache = SqliteCache::open("cache.db")?.identifier("square", "app.nodes.square");
//! let options = CompileOptions::new().cache(cache.shared());
//! # let _ = (policy, options);
//! # Ok(())
//! # }
//! ```
//!
//! [`NodeCache`] has no error channel: a row that cannot be read (another encoding, bytes
//! that are not msgpack, not a list of writes) is a miss, and a failed read or write of the
//! file is logged (`tracing`, warn) and also a miss.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use stategraph_checkpoint::serde::msgpack;
use stategraph_checkpoint::{Ext, Object, ObjectCode, Value};
use stategraph_checkpoint_sqlite::rusqlite::{self, params, Connection, OptionalExtension};

use super::cache::{CacheKey, NodeCache};

/// The first part of a node's namespace (LangGraph's `CACHE_NS_WRITES`).
const NS_WRITES: &str = "__pregel_ns_writes";
/// The identifier of a node whose function has no `module.qualname`.
const DYNAMIC: &str = "__dynamic__";

/// Python's table, created if missing.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS cache (
    ns TEXT,
    key TEXT,
    expiry REAL,
    encoding TEXT NOT NULL,
    val BLOB NOT NULL,
    PRIMARY KEY (ns, key)
)";

/// Why a row is not a cache entry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheRowError {
    /// The value is not msgpack (`encoding` is another serializer's).
    #[error("cache entry encoding {0:?} is not msgpack")]
    Encoding(String),
    /// The bytes do not decode.
    #[error("cache entry does not decode: {0}")]
    Decode(#[from] stategraph_checkpoint::Error),
    /// The value is not a list (or deque) of `[channel, value]` pairs.
    #[error("cache entry is not a list of [channel, value] writes")]
    Shape,
}

/// A [`NodeCache`] in a SQLite file shared with Python's `SqliteCache` (see the module docs).
#[derive(Debug)]
pub struct SqliteCache {
    conn: Mutex<Connection>,
    identifiers: HashMap<String, String>,
}

impl SqliteCache {
    /// Opens (or creates) the cache file at `path`, in WAL mode as Python opens it.
    pub fn open(path: impl AsRef<Path>) -> rusqlite::Result<SqliteCache> {
        SqliteCache::with_connection(Connection::open(path)?)
    }

    /// A cache on an open connection (creates the table if missing).
    pub fn with_connection(conn: Connection) -> rusqlite::Result<SqliteCache> {
        // An in-memory database answers "memory": no error for it.
        let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        conn.execute(SCHEMA, [])?;
        Ok(SqliteCache {
            conn: Mutex::new(conn),
            identifiers: HashMap::new(),
        })
    }

    /// Names `node` as Python names its function, `module.qualname` (e.g.
    /// `"__main__.square"`), so its entries share Python's namespace (builder style).
    pub fn identifier(mut self, node: impl Into<String>, identifier: impl Into<String>) -> Self {
        self.identifiers.insert(node.into(), identifier.into());
        self
    }

    /// This cache behind the `Arc` that `CompileOptions::cache` takes.
    pub fn shared(self) -> Arc<dyn NodeCache> {
        Arc::new(self)
    }

    /// The `ns` column of `node`'s entries.
    pub fn namespace(&self, node: &str) -> String {
        let id = self.identifiers.get(node).map_or(DYNAMIC, String::as_str);
        format!("{NS_WRITES},{id},{node}")
    }

    /// The `key` column of an entry: the hash as 32 lowercase hex digits.
    pub fn key_column(key: &CacheKey) -> String {
        format!("{:032x}", key.hash)
    }

    /// The entry under `key`: `Ok(None)` when absent or expired (then deleted).
    fn read(&self, key: &CacheKey) -> rusqlite::Result<Option<(String, Vec<u8>)>> {
        let conn = self.conn.lock();
        let (ns, k) = (self.namespace(&key.node), Self::key_column(key));
        let row: Option<(Option<f64>, String, Vec<u8>)> = conn
            .query_row(
                "SELECT expiry, encoding, val FROM cache WHERE ns = ?1 AND key = ?2",
                params![ns, k],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        match row {
            Some((Some(expiry), _, _)) if unix_now() > expiry => {
                conn.execute(
                    "DELETE FROM cache WHERE ns = ?1 AND key = ?2",
                    params![ns, k],
                )?;
                Ok(None)
            }
            Some((_, encoding, val)) => Ok(Some((encoding, val))),
            None => Ok(None),
        }
    }

    /// Stores `writes` under `key` (encoded before the connection is locked).
    fn write(
        &self,
        key: &CacheKey,
        writes: Vec<(String, Value)>,
        ttl: Option<Duration>,
    ) -> Result<(), String> {
        let val = msgpack::encode(&encode_writes(writes)).map_err(|e| e.to_string())?;
        let expiry = ttl.map(|t| unix_now() + t.as_secs_f64());
        self.conn
            .lock()
            .execute(
                "INSERT OR REPLACE INTO cache (ns, key, expiry, encoding, val) \
                 VALUES (?1, ?2, ?3, 'msgpack', ?4)",
                params![
                    self.namespace(&key.node),
                    Self::key_column(key),
                    expiry,
                    val
                ],
            )
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

impl NodeCache for SqliteCache {
    fn get(&self, key: &CacheKey) -> Option<Vec<(String, Value)>> {
        let (encoding, val) = match self.read(key) {
            Ok(row) => row?,
            Err(e) => {
                tracing::warn!(node = %key.node, error = %e, "node cache read failed");
                return None;
            }
        };
        match decode_writes(&encoding, &val) {
            Ok(writes) => Some(writes),
            Err(e) => {
                tracing::warn!(node = %key.node, error = %e, "node cache entry unreadable");
                None
            }
        }
    }

    fn set(&self, key: CacheKey, writes: Vec<(String, Value)>, ttl: Option<Duration>) {
        if let Err(e) = self.write(&key, writes, ttl) {
            tracing::warn!(node = %key.node, error = %e, "node cache write failed");
        }
    }

    fn clear(&self, node: Option<&str>) {
        let conn = self.conn.lock();
        let done = match node {
            Some(n) => conn.execute("DELETE FROM cache WHERE ns = ?1", [self.namespace(n)]),
            None => conn.execute("DELETE FROM cache", []),
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, "node cache clear failed");
        }
    }
}

/// The seconds since the Unix epoch, as Python's `datetime.now(timezone.utc).timestamp()`.
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Writes as Python stores a task's writes: a `collections.deque` of `[channel, value]`.
pub fn encode_writes(writes: Vec<(String, Value)>) -> Value {
    let pairs: Vec<Value> = writes
        .into_iter()
        .map(|(channel, value)| Value::list(vec![Value::str(channel), value]))
        .collect();
    Value::Ext(Arc::new(Ext::Object(Object {
        code: ObjectCode::ConstructorSingleArg,
        module: "collections".into(),
        class: "deque".into(),
        data: Value::list(pairs),
        method: None,
    })))
}

/// The writes of a row's `encoding` and `val` (a deque or a list of pairs).
pub fn decode_writes(encoding: &str, val: &[u8]) -> Result<Vec<(String, Value)>, CacheRowError> {
    if encoding != "msgpack" {
        return Err(CacheRowError::Encoding(encoding.to_owned()));
    }
    let value = msgpack::decode(val)?;
    let items = match &value {
        Value::Ext(ext) => match &**ext {
            Ext::Object(o) if o.module == "collections" && o.class == "deque" => &o.data,
            _ => return Err(CacheRowError::Shape),
        },
        other => other,
    };
    let Value::List(items) = items else {
        return Err(CacheRowError::Shape);
    };
    items
        .iter()
        .map(|pair| match pair {
            Value::List(p) if p.len() == 2 => match (&p[0], &p[1]) {
                (Value::Str(c), v) => Ok((c.to_string(), v.clone())),
                _ => Err(CacheRowError::Shape),
            },
            _ => Err(CacheRowError::Shape),
        })
        .collect()
}
