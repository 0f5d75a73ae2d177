//! The saver's connections: the pool, the server's address, and the bounded waits of
//! [`crate::options`] around every call.
//!
//! Each saver call takes a connection with [`Connections::get`] (bounded by the pool's
//! wait and create timeouts), runs its statements through [`Connections::within`]
//! (bounded by the statement timeout) and hands the outcome to [`Connections::finish`],
//! which names the operation and the server in an error and decides the connection's
//! fate: back to the pool after success or a refusal of this crate's own (a fence
//! conflict, a validation error), closed after a driver error or a timeout, since it may
//! be in the middle of a transaction or a reply.
//!
//! **One pool builder** ([`build_pool`]) for every Postgres user of this workspace (the
//! saver, `PostgresStore`, the Agent Server, which shares its saver's pool): the connect
//! timeout, the pool's wait timeout and TCP keepalive of [`PostgresOptions`].
//!
//! **Session settings** the saver makes on its pooled connections before they write:
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
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::{
    Manager, ManagerConfig, Object, ObjectId, Pool, PoolError, RecyclingMethod, Runtime,
    TimeoutType, Timeouts,
};
use stategraph_checkpoint::{Error, Result};
use tokio_postgres::config::Host;
use tokio_postgres::NoTls;

use crate::error::{locate, other, pg};
use crate::options::{PostgresOptions, ToastCompression, KEEPALIVE_INTERVAL, KEEPALIVE_RETRIES};
use crate::sql;

/// A pool with its address and the timeouts of the calls that use it.
pub(crate) struct Connections {
    pub(crate) pool: Pool,
    /// `host:port` of the server, when known.
    pub(crate) address: Option<Arc<str>>,
    /// The resolved time a new connection may take (for messages and the cancel request).
    pub(crate) connect_timeout: Option<Duration>,
    /// The pool's wait for a free connection.
    pub(crate) pool_wait_timeout: Option<Duration>,
    /// The time the statements of one call may take.
    pub(crate) statement_timeout: Option<Duration>,
    /// The session settings a connection gets before its first write.
    pub(crate) session: SessionSetup,
}

impl Connections {
    /// A connection for `operation`, within the pool's timeouts, plus a guard of ours
    /// (the pool may be the caller's, built without timeouts).
    pub(crate) async fn get(&self, operation: &'static str) -> Result<Object> {
        let get = self.pool.get();
        let guard = match (self.pool_wait_timeout, self.connect_timeout) {
            (Some(wait), Some(connect)) => Some(wait + connect),
            _ => None,
        };
        let got = match guard {
            Some(limit) => match tokio::time::timeout(limit, get).await {
                Ok(got) => got,
                Err(_) => {
                    return Err(self.timeout(
                        operation,
                        format!("no connection within {limit:?} (pool wait + connect timeout)"),
                    ))
                }
            },
            None => get.await,
        };
        got.map_err(|e| self.pool_error(operation, e))
    }

    /// A connection for `operation`, a write, with the saver's session settings made
    /// ([`crate::session`]). A setting that could not be made is left to the server's
    /// default, silently.
    pub(crate) async fn get_writer(&self, operation: &'static str) -> Result<Object> {
        let client = self.get(operation).await?;
        if let Some(sql) = self.session.pending(&client) {
            if let Some(Ok(())) = self.within(client.batch_execute(sql)).await {
                self.session.mark(&client);
            }
        }
        Ok(client)
    }

    /// Runs `work` within the statement timeout; `None` when it ran out.
    pub(crate) async fn within<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        match self.statement_timeout {
            Some(limit) => tokio::time::timeout(limit, work).await.ok(),
            None => Some(work.await),
        }
    }

    /// The outcome of `operation` on `client`: names operation and server in a backend
    /// error, and closes the connection after a driver error or a timeout.
    pub(crate) fn finish<T>(
        &self,
        operation: &'static str,
        client: Object,
        done: Option<Result<T>>,
    ) -> Result<T> {
        match done {
            Some(Ok(value)) => Ok(value),
            Some(Err(error)) => {
                if matches!(error, Error::Backend(_)) {
                    drop(Object::take(client));
                }
                Err(locate(error, operation, self.address.as_ref()))
            }
            None => {
                self.abandon(client);
                let limit = self.statement_timeout.unwrap_or_default();
                let reads = ["get_tuple", "list", "schema_version"].contains(&operation);
                let outcome = if reads {
                    ""
                } else {
                    "; whether it was stored is unknown: read before retrying"
                };
                Err(self.timeout(
                    operation,
                    format!(
                        "no reply within {limit:?} (statement timeout); the connection was \
                         closed{outcome}"
                    ),
                ))
            }
        }
    }

    /// Closes a connection whose call timed out, and asks the server (in the background,
    /// within the connect timeout) to cancel what it may still be running.
    fn abandon(&self, client: Object) {
        let token = client.cancel_token();
        drop(Object::take(client));
        let limit = self.connect_timeout.unwrap_or(Duration::from_secs(10));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = tokio::time::timeout(limit, token.cancel_query(NoTls)).await;
            });
        }
    }

    fn timeout(&self, operation: &str, what: String) -> Error {
        let at = self.address.as_deref().unwrap_or("(address unknown)");
        Error::Timeout(format!("postgres {at}, {operation}: {what}"))
    }

    /// A pool failure: timeouts are [`Error::Timeout`], a failed connect keeps the
    /// driver's error (with its SQLSTATE, if the server refused), the rest in words.
    fn pool_error(&self, operation: &'static str, error: PoolError) -> Error {
        let address = self.address.as_ref();
        match error {
            PoolError::Timeout(TimeoutType::Wait) => self.timeout(
                operation,
                format!(
                    "no free connection in the pool within {:?} (pool wait timeout)",
                    self.pool_wait_timeout.unwrap_or_default()
                ),
            ),
            PoolError::Timeout(TimeoutType::Create) => self.timeout(
                operation,
                format!(
                    "could not open a connection within {:?} (connect timeout)",
                    self.connect_timeout.unwrap_or_default()
                ),
            ),
            PoolError::Timeout(TimeoutType::Recycle) => self.timeout(
                operation,
                "checking a pooled connection took too long".to_owned(),
            ),
            PoolError::Backend(e) => locate(pg(e), operation, address),
            PoolError::Closed => other(operation, address, "the connection pool is closed"),
            PoolError::NoRuntimeSpecified => other(
                operation,
                address,
                "the connection pool has timeouts but no runtime to keep them",
            ),
            PoolError::PostCreateHook(hook) => match hook {
                deadpool_postgres::HookError::Backend(e) => locate(pg(e), operation, address),
                deadpool_postgres::HookError::Message(m) => other(
                    operation,
                    address,
                    format!("the pool's post-create hook failed: {m}"),
                ),
            },
        }
    }
}

/// `host:port` of every host of `config`, comma separated (a socket directory for a
/// Unix-socket host), then `/database`: where a connection goes, without user or
/// password.
pub(crate) fn describe(config: &tokio_postgres::Config) -> Option<Arc<str>> {
    let hosts = config.get_hosts();
    let ports = config.get_ports();
    let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let mut parts: Vec<String> = hosts
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) if name.contains(':') => format!("[{name}]:{}", port(i)),
            Host::Tcp(name) => format!("{name}:{}", port(i)),
            #[cfg(unix)]
            Host::Unix(path) => format!("{}:{}", path.display(), port(i)),
        })
        .collect();
    if parts.is_empty() {
        parts = config
            .get_hostaddrs()
            .iter()
            .enumerate()
            .map(|(i, ip)| format!("{ip}:{}", port(i)))
            .collect();
    }
    if parts.is_empty() {
        return None;
    }
    let mut text = parts.join(",");
    // The database the connection asks for (libpq's default, the user name, when none).
    if let Some(db) = config.get_dbname().or(config.get_user()) {
        text.push('/');
        text.push_str(db);
    }
    Some(Arc::from(text))
}

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
        (!done.contains(&Object::id(client))).then_some(sql::PREFER_LZ4)
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

/// A pool as [`build`] made it, with what the saver needs to know of it.
pub(crate) struct Built {
    /// The pool.
    pub(crate) pool: Pool,
    /// The connect timeout in force (the URL's `connect_timeout`, else the options').
    pub(crate) connect_timeout: Option<Duration>,
    /// The server's address, for errors.
    pub(crate) address: Option<Arc<str>>,
}

/// Builds the pool of `url` (a libpq URL or key=value string, without TLS) with
/// `options`' size, connect and wait timeouts and TCP keepalive; a `connect_timeout` or
/// `keepalives*` parameter of the URL wins over the options. Opens no connection.
pub(crate) fn build(url: &str, options: &PostgresOptions) -> Result<Built> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| Error::InvalidConfig(format!("postgres url: {e}")))?;
    let connect_timeout = config
        .get_connect_timeout()
        .copied()
        .or(options.connect_timeout);
    if let Some(limit) = connect_timeout {
        config.connect_timeout(limit);
    }
    if let (Some(idle), false) = (options.keepalive_idle, url.contains("keepalives")) {
        config
            .keepalives(true)
            .keepalives_idle(idle)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_RETRIES);
    }
    if options.read_only {
        let mut startup = config.get_options().unwrap_or_default().to_owned();
        if !startup.is_empty() {
            startup.push(' ');
        }
        startup.push_str("-c default_transaction_read_only=on");
        config.options(&startup);
    }
    let address = describe(&config);
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(options.pool_size.max(1))
        .runtime(Runtime::Tokio1)
        .timeouts(Timeouts {
            wait: options.pool_wait_timeout,
            create: connect_timeout,
            recycle: connect_timeout,
        })
        .build()
        .map_err(|e| Error::InvalidConfig(format!("postgres pool: {e}")))?;
    Ok(Built {
        pool,
        connect_timeout,
        address,
    })
}

/// The pool the saver builds for `url` with `options` (see [`PostgresOptions`]: size,
/// connect and wait timeouts, TCP keepalive, read-only sessions), for anything else that talks to the same
/// server (`PostgresStore`, the Agent Server) so that every pool of the workspace is
/// bounded alike. Opens no connection; a bad URL is [`Error::InvalidConfig`].
pub fn build_pool(url: &str, options: &PostgresOptions) -> Result<Pool> {
    build(url, options).map(|built| built.pool)
}
