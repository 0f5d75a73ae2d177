//! Session settings the saver makes on its pooled connections before they write:
//! `default_toast_compression` ([`ToastCompression`]).
//!
//! A setting is made once per connection, the first time the saver writes through it,
//! and remembered by the connection's pool id. It is one statement that sets lz4 only when
//! the server lists it among the setting's values, so a server built without lz4 (or one
//! older than Postgres 14, which has no such setting) keeps its default without an error.
//! A failure of the statement itself is ignored too: the write that follows reports a
//! broken connection as it would have anyway.
//!
//! A pool that resets its sessions on recycle (deadpool's `RecyclingMethod::Clean`, a
//! custom `DISCARD ALL`) loses the setting without the saver knowing: the values are then
//! compressed with the server's default, which is slower but reads the same.

use std::collections::HashSet;
use std::sync::Mutex;

use deadpool_postgres::{Object, ObjectId};

use crate::options::ToastCompression;

/// Sets lz4 for the session when the server supports it; a no-op otherwise.
const PREFER_LZ4: &str = "SELECT set_config('default_toast_compression', 'lz4', false) \
FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)";

/// Connections remembered at most before the memory of them is cleared (the ones still
/// in use are then set once more, which is harmless).
const MAX_REMEMBERED: usize = 1024;

/// What the saver sets on its connections, and which connections have it.
#[derive(Debug, Default)]
pub(crate) struct SessionSetup {
    compression: ToastCompression,
    done: Mutex<HashSet<ObjectId>>,
}

impl SessionSetup {
    /// Settings for `compression`.
    pub(crate) fn new(compression: ToastCompression) -> SessionSetup {
        SessionSetup {
            compression,
            done: Mutex::default(),
        }
    }

    /// The statement `client` still needs before its first write, if any.
    pub(crate) fn pending(&self, client: &Object) -> Option<&'static str> {
        if self.compression != ToastCompression::Lz4 {
            return None;
        }
        let done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        (!done.contains(&Object::id(client))).then_some(PREFER_LZ4)
    }

    /// Records that `client` has its settings.
    pub(crate) fn mark(&self, client: &Object) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        if done.len() >= MAX_REMEMBERED {
            done.clear();
        }
        done.insert(Object::id(client));
    }
}
