//! The server: graphs registered in code, the Postgres database they share, the workers.

use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use stategraph::checkpoint::CheckpointSaver;
use stategraph_checkpoint_postgres::PostgresSaver;
use tokio::net::TcpListener;
use tokio::sync::watch;
use uuid::Uuid;

use crate::app::AppState;
use crate::cors::Cors;
use crate::durable::{Stored, Watched};
use crate::error::{Result, ServerError};
use crate::graph::ServedGraph;
use crate::hub::Hub;
use crate::idle::Idle;
use crate::registry::{self, RegisteredGraph};
pub use crate::registry::{assistant_id, NAMESPACE_GRAPH};

/// How often idle workers look at the queue without being woken unless
/// [`ServerBuilder::poll`] says otherwise: one second.
pub const DEFAULT_POLL: Duration = Duration::from_secs(1);

/// How long a finished run's stream events are kept unless
/// [`ServerBuilder::event_retention`] says otherwise: one hour.
pub const DEFAULT_EVENT_RETENTION: Duration = Duration::from_secs(3600);

type Factory =
    Box<dyn FnOnce(Arc<dyn CheckpointSaver>) -> stategraph::Result<Arc<dyn ServedGraph>> + Send>;

/// Builds a [`Server`]: `Server::builder().database_url(url).graph("seed", factory)`.
pub struct ServerBuilder {
    graphs: Vec<(String, Factory)>,
    database_url: Option<String>,
    workers: usize,
    lease: Duration,
    event_retention: Option<Duration>,
    poll: Duration,
    head_cache: usize,
    cors: Cors,
}

/// A running API process with its workers: serves LangGraph's HTTP API for the
/// registered graphs, with checkpoints, threads and runs in one Postgres database.
pub struct Server {
    state: Arc<AppState>,
    workers: usize,
}

impl Server {
    /// A builder with no graphs, one worker and no database yet.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            graphs: Vec::new(),
            database_url: None,
            workers: 1,
            lease: Duration::from_secs(10),
            event_retention: Some(DEFAULT_EVENT_RETENTION),
            poll: DEFAULT_POLL,
            head_cache: crate::head_cache::CAPACITY,
            cors: Cors::none(),
        }
    }

    /// The axum router of the API (without the workers: see [`Server::serve`]).
    pub fn router(&self) -> axum::Router {
        crate::routes::router(self.state.clone())
    }

    /// The graphs that processes with workers registered in the database (this one's
    /// included, if it has workers), by graph id.
    pub async fn registered_graphs(&self) -> Result<Vec<RegisteredGraph>> {
        registry::list(&self.state.pool).await
    }

    /// Serves on `listener` with this server's workers until `shutdown` becomes true:
    /// then stops taking requests, hands the runs its workers are running back to the
    /// queue (another process continues them from their last checkpoint), waits for open
    /// responses to end, and returns.
    pub async fn serve(
        self,
        listener: TcpListener,
        mut shutdown: watch::Receiver<bool>,
    ) -> Result<()> {
        let workers = crate::worker::spawn(self.state.clone(), self.workers, shutdown.clone());
        let app = self.router();
        let stop = async move {
            while !*shutdown.borrow() {
                if shutdown.changed().await.is_err() {
                    break;
                }
            }
        };
        axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await
            .map_err(|e| ServerError::Startup(format!("serving failed: {e}")))?;
        for w in workers {
            // A worker that panicked has already logged; the others have stopped.
            let _ = w.await;
        }
        Ok(())
    }
}

impl ServerBuilder {
    /// The Postgres database for checkpoints, threads and runs.
    pub fn database_url(mut self, url: impl Into<String>) -> Self {
        self.database_url = Some(url.into());
        self
    }

    /// How many runs this process works on at once (default 1). `0` makes an API-only
    /// process: it queues runs and streams their events, and the workers of other
    /// processes on the same database run them. A process with workers registers its
    /// graphs in the database (see [`crate::registry`]); a process built with no graphs
    /// at all answers for the registered ones (that is `stategraph serve`).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n;
        self
    }

    /// How long a worker holds a run without renewing its lease (default 10 s; renewed
    /// every third of it). A run whose worker died is taken over by another worker once
    /// its lease runs out, and continues from its last checkpoint.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// How long the stream events of a finished run stay in `run_events` (default one
    /// hour; `None` keeps them for ever). Until then `join_stream` replays them; afterwards
    /// it answers with the `metadata` event only. The run rows, their status and output
    /// stay. Every process with workers deletes the expired events now and then.
    pub fn event_retention(mut self, retention: Option<Duration>) -> Self {
        self.event_retention = retention;
        self
    }

    /// How many threads' heads this process keeps for their next run (default
    /// [`crate::head_cache::CAPACITY`]; 0 keeps none and every run reads its thread). A
    /// head holds the thread's values (shared with nothing else once the run is over), so
    /// this bounds the memory a process spends on conversations between their runs.
    pub fn head_cache(mut self, threads: usize) -> Self {
        self.head_cache = threads;
        self
    }

    /// How often this process's idle workers, together, look at the queue without being
    /// woken (default [`DEFAULT_POLL`]): for runs whose worker died (their lease runs out
    /// without a `NOTIFY`) and `NOTIFY`s lost with the listener's connection. Runs queued
    /// in the meantime wake a worker at once.
    pub fn poll(mut self, poll: Duration) -> Self {
        self.poll = poll.max(Duration::from_millis(10));
        self
    }

    /// Which origins a browser page may call the API from (default [`Cors::none`]):
    /// [`Cors::any`] as `langgraph dev`, or [`Cors::origins`] for a list. Preflights are
    /// answered on every route either way.
    pub fn cors(mut self, cors: Cors) -> Self {
        self.cors = cors;
        self
    }

    /// Registers a graph under `graph_id`: `factory` compiles it with the server's saver
    /// as checkpointer (`graph.compile_with(CompileOptions::new().checkpointer(saver))`).
    /// Its assistant is [`assistant_id`]`(graph_id)`.
    pub fn graph<G, F>(mut self, graph_id: impl Into<String>, factory: F) -> Self
    where
        G: ServedGraph,
        F: FnOnce(Arc<dyn CheckpointSaver>) -> stategraph::Result<G> + Send + 'static,
    {
        self.graphs.push((
            graph_id.into(),
            Box::new(move |saver| Ok(Arc::new(factory(saver)?) as Arc<dyn ServedGraph>)),
        ));
        self
    }

    /// Connects to the database, creates the tables, compiles the graphs, and (with
    /// workers) registers them in the database.
    pub async fn build(self) -> Result<Server> {
        let url = self
            .database_url
            .ok_or_else(|| ServerError::Startup("no database_url given".into()))?;
        let saver = PostgresSaver::connect(&url).await?;
        saver.setup().await?;
        let pool = saver.pool().clone();
        crate::db::setup(&pool).await?;
        let started_at: String = pool
            .get()
            .await?
            .query_one("SELECT to_json(now())#>>'{}'", &[])
            .await?
            .get(0);
        let store = stategraph_store_postgres::PostgresStore::from_pool(pool.clone());
        store.setup().await?;
        let saver = Arc::new(saver);
        // The graphs save through one watching decorator (one instance: the engine's
        // per-thread lease is keyed by the saver instance).
        let stored = Arc::new(Stored::default());
        let watched: Arc<dyn CheckpointSaver> = Arc::new(Watched::new(
            saver.clone() as Arc<dyn CheckpointSaver>,
            stored.clone(),
        ));
        let mut graphs = IndexMap::new();
        for (id, factory) in self.graphs {
            if graphs.contains_key(&id) {
                return Err(ServerError::Startup(format!("graph {id} registered twice")));
            }
            let g = factory(watched.clone())?;
            graphs.insert(id, g);
        }
        // A process that runs graphs tells the processes without graphs of their own
        // (`stategraph serve`) which assistants exist.
        registry::setup(&pool).await?;
        if self.workers > 0 {
            for (id, g) in &graphs {
                let topology = match g.spec() {
                    Some(spec) => Some(serde_json::to_value(&spec).map_err(|e| {
                        ServerError::Startup(format!("describing graph {id}: {e}"))
                    })?),
                    None => None,
                };
                let drawing = registry::drawing_json(&g.drawing());
                registry::register(&pool, id, &drawing, topology.as_ref()).await?;
            }
        }
        Ok(Server {
            state: Arc::new(AppState {
                pool,
                saver,
                graphs,
                hub: Hub::default(),
                idle: Idle::default(),
                process: Uuid::new_v4().to_string(),
                poll: self.poll,
                database_url: url,
                started_at,
                lease: self.lease,
                event_retention: self.event_retention,
                store: Arc::new(store),
                stored,
                heads: crate::head_cache::HeadCache::with_capacity(self.head_cache),
                cors: self.cors,
            }),
            workers: self.workers,
        })
    }
}
