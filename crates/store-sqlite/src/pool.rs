//! The store's one connection, shared behind a lock and used from blocking tasks (SQLite's
//! calls block; the async runtime's workers must not).

use crate::error::Error;
use parking_lot::Mutex;
use rusqlite::Connection;
use stategraph_store::{Result, StoreError};
use std::sync::Arc;
use std::time::Duration;

/// How long a statement waits for another connection's write lock before failing.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// One connection, shared by every batch of the store (SQLite allows one writer at a time).
#[derive(Clone)]
pub(crate) struct Pool {
    conn: Arc<Mutex<Connection>>,
}

impl Pool {
    /// Takes an open connection and sets its busy timeout.
    pub(crate) fn new(conn: Connection) -> Result<Self> {
        conn.busy_timeout(BUSY_TIMEOUT).map_err(Error::from)?;
        Ok(Pool {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` on the connection now, on this thread (setup: migrations).
    pub(crate) fn now<T>(&self, f: impl FnOnce(&Connection) -> Result<T, Error>) -> Result<T> {
        Ok(f(&self.conn.lock())?)
    }

    /// Runs `f` on the connection in a blocking task.
    pub(crate) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, Error> + Send + 'static,
    ) -> Result<T> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || f(&mut conn.lock()).map_err(StoreError::from))
            .await
            .map_err(|e| StoreError::Backend(format!("the SQLite worker task failed: {e}")))?
    }
}
