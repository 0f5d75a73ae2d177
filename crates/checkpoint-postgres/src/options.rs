//! [`PostgresOptions`]: pool size, timeouts and TCP keepalive of a saver.
//!
//! A server that stops answering (a hung host, a network that drops packets, a stopped
//! process) must not hang the graph that uses it. Every wait of the saver is bounded:
//!
//! | wait | option | default | error |
//! |---|---|---|---|
//! | opening a connection (TCP, TLS, startup, authentication) | [`connect_timeout`](PostgresOptions::connect_timeout), or `connect_timeout` in the URL | [`DEFAULT_CONNECT_TIMEOUT`] | [`Error::Timeout`] |
//! | a free connection in a full pool | [`pool_wait_timeout`](PostgresOptions::pool_wait_timeout) | [`DEFAULT_POOL_WAIT_TIMEOUT`] | [`Error::Timeout`] |
//! | the statements of one saver call (a `put`, a `get_tuple`, ...; not `setup`) | [`statement_timeout`](PostgresOptions::statement_timeout) | [`DEFAULT_STATEMENT_TIMEOUT`] | [`Error::Timeout`] |
//!
//! The statement timeout is kept by the client, so it holds against a server that
//! answers nothing at all. When it fires, the connection is closed (never returned to the
//! pool) and a cancel request is sent to the server in the background; whether a write
//! that timed out was stored is unknown, so read the thread before retrying.
//!
//! TCP keepalive is on, with probes after [`keepalive_idle`](PostgresOptions::keepalive_idle)
//! of silence (default [`DEFAULT_KEEPALIVE_IDLE`]), then every 10 s, 3 at most, so a peer
//! that vanished is noticed on an idle pooled connection too. A URL that sets any
//! `keepalives*` parameter keeps its own settings.
//!
//! Large values: [`toast_compression`](PostgresOptions::toast_compression) asks the server
//! to compress the saver's large values (TOAST) with lz4 instead of its default `pglz`
//! (see [`ToastCompression`]).
//!
//! [`Error::Timeout`]: stategraph_checkpoint::Error::Timeout

use std::time::Duration;

/// Connections a pool made by [`crate::PostgresSaver::connect`] opens at most.
pub const DEFAULT_POOL_SIZE: usize = 16;

/// How long opening a connection may take, when neither the options nor the URL say.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a call may wait for a free connection of a full pool.
pub const DEFAULT_POOL_WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the statements of one saver call may take.
pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// Idle time before the first TCP keepalive probe.
pub const DEFAULT_KEEPALIVE_IDLE: Duration = Duration::from_secs(60);

/// Time between TCP keepalive probes.
pub(crate) const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);

/// Unanswered probes after which the connection is dropped.
pub(crate) const KEEPALIVE_RETRIES: u32 = 3;

/// How the saver's connections compress the large values they write.
///
/// Postgres compresses a value of more than ~2 KB before it moves it out of line
/// ("TOAST"). With its default method, `pglz`, a put of a chat thread's 100 KB message
/// list spends most of its server time in that attempt (and then often stores the value
/// uncompressed, since text of that kind gains less than `pglz` asks for); `lz4` does the
/// same work several times faster and compresses such values a little better.
///
/// The choice is the session setting `default_toast_compression`, not a schema change: it
/// applies to the columns whose compression is the default, which is the case of every
/// column LangGraph's migrations create. Readers (Python's saver included) decompress
/// either method transparently, so rows written with lz4 read everywhere on that server.
/// The setting is made once per pooled connection, before its first write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToastCompression {
    /// `lz4` when the server was built with it (Postgres 14 and later, `--with-lz4`, as
    /// the common distributions are); otherwise, silently, the server's default. The
    /// default.
    #[default]
    Lz4,
    /// Leaves `default_toast_compression` as the server (or the pool's own setup) set it.
    ServerDefault,
}

/// Options of [`crate::PostgresSaver::connect_with`] (all) and
/// [`crate::PostgresSaver::from_pool_with`] (the timeouts of the saver's calls).
///
/// `None` as a timeout means "wait for ever". Built from [`Default`] and the `with_*`
/// methods:
///
/// ```
/// use std::time::Duration;
/// use stategraph_checkpoint_postgres::PostgresOptions;
/// let options = PostgresOptions::default()
///     .with_statement_timeout(Some(Duration::from_secs(5)))
///     .with_pool_size(4);
/// assert_eq!(options.pool_size, 4);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PostgresOptions {
    /// Connections the pool opens at most ([`DEFAULT_POOL_SIZE`]).
    pub pool_size: usize,
    /// How long opening one connection may take, from the TCP connect to the end of
    /// authentication ([`DEFAULT_CONNECT_TIMEOUT`]). A `connect_timeout` in the URL (in
    /// seconds, as libpq reads it) takes precedence.
    pub connect_timeout: Option<Duration>,
    /// How long a call waits for a free connection when the pool is full
    /// ([`DEFAULT_POOL_WAIT_TIMEOUT`]).
    pub pool_wait_timeout: Option<Duration>,
    /// How long the statements of one saver call may take ([`DEFAULT_STATEMENT_TIMEOUT`]).
    pub statement_timeout: Option<Duration>,
    /// Idle time before TCP keepalive probes start ([`DEFAULT_KEEPALIVE_IDLE`]); `None`
    /// leaves the driver's setting (keepalive on, probes after two hours).
    pub keepalive_idle: Option<Duration>,
    /// How the large values the saver writes are compressed ([`ToastCompression::Lz4`]).
    pub toast_compression: ToastCompression,
    /// Makes every transaction of every connection the pool opens read-only (the server's
    /// `default_transaction_read_only`, sent at connect after any `options` of the URL), so
    /// the server refuses writes: for tools that only read (the CLI's inspecting commands).
    /// Default: false. A saver on such a pool fails its writes (and its `setup`).
    pub read_only: bool,
}

impl Default for PostgresOptions {
    fn default() -> PostgresOptions {
        PostgresOptions {
            pool_size: DEFAULT_POOL_SIZE,
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            pool_wait_timeout: Some(DEFAULT_POOL_WAIT_TIMEOUT),
            statement_timeout: Some(DEFAULT_STATEMENT_TIMEOUT),
            keepalive_idle: Some(DEFAULT_KEEPALIVE_IDLE),
            toast_compression: ToastCompression::default(),
            read_only: false,
        }
    }
}

impl PostgresOptions {
    /// Sets [`PostgresOptions::pool_size`] (builder style; at least 1).
    pub fn with_pool_size(mut self, size: usize) -> PostgresOptions {
        self.pool_size = size.max(1);
        self
    }

    /// Sets [`PostgresOptions::connect_timeout`] (builder style).
    pub fn with_connect_timeout(mut self, timeout: Option<Duration>) -> PostgresOptions {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`PostgresOptions::pool_wait_timeout`] (builder style).
    pub fn with_pool_wait_timeout(mut self, timeout: Option<Duration>) -> PostgresOptions {
        self.pool_wait_timeout = timeout;
        self
    }

    /// Sets [`PostgresOptions::statement_timeout`] (builder style).
    pub fn with_statement_timeout(mut self, timeout: Option<Duration>) -> PostgresOptions {
        self.statement_timeout = timeout;
        self
    }

    /// Sets [`PostgresOptions::read_only`] (builder style).
    pub fn with_read_only(mut self, read_only: bool) -> PostgresOptions {
        self.read_only = read_only;
        self
    }

    /// Sets [`PostgresOptions::keepalive_idle`] (builder style).
    pub fn with_keepalive_idle(mut self, idle: Option<Duration>) -> PostgresOptions {
        self.keepalive_idle = idle;
        self
    }

    /// Sets [`PostgresOptions::toast_compression`] (builder style).
    pub fn with_toast_compression(mut self, compression: ToastCompression) -> PostgresOptions {
        self.toast_compression = compression;
        self
    }
}
