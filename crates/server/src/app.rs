//! What the handlers and workers share: the state of an API process ([`AppState`]) and
//! the assistants it answers for ([`Assistant`]). Below the server (which builds it and
//! spawns the workers) and the routes and workers (which use it).

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;
use indexmap::IndexMap;
use stategraph_checkpoint_postgres::PostgresSaver;
use uuid::Uuid;

use crate::durable::Stored;
use crate::error::{Result, ServerError};
use crate::graph::ServedGraph;
use crate::hub::Hub;
use crate::idle::Idle;
use crate::registry::{self, assistant_id, RegisteredGraph};

/// What the handlers and workers share.
pub(crate) struct AppState {
    pub(crate) pool: Pool,
    pub(crate) saver: Arc<PostgresSaver>,
    pub(crate) graphs: IndexMap<String, Arc<dyn ServedGraph>>,
    pub(crate) hub: Hub,
    /// This process's idle workers (see [`crate::idle`]).
    pub(crate) idle: Idle,
    /// This process's id: the payload of its runs `NOTIFY`s (see [`crate::db`]).
    pub(crate) process: String,
    /// How often the idle workers, together, look at the queue unwoken.
    pub(crate) poll: Duration,
    pub(crate) database_url: String,
    /// When this process started (the assistants' timestamps).
    pub(crate) started_at: String,
    /// How long a claimed run stays a worker's without a heartbeat.
    pub(crate) lease: Duration,
    /// How long the events of a finished run are kept (`None`: for ever).
    pub(crate) event_retention: Option<Duration>,
    /// The long-term store of the store endpoints (Postgres, same database).
    pub(crate) store: Arc<stategraph_store_postgres::PostgresStore>,
    /// Which task writes the served graphs have stored (see [`crate::durable`]).
    pub(crate) stored: Arc<Stored>,
    /// The heads of the threads this process ran last (see [`crate::head_cache`]).
    pub(crate) heads: crate::head_cache::HeadCache,
    /// Which origins browser pages may call the API from.
    pub(crate) cors: crate::cors::Cors,
}

/// An assistant as the endpoints answer it: a graph compiled into this process, or one
/// that a worker process registered in the database.
pub(crate) struct Assistant {
    pub(crate) graph_id: String,
    pub(crate) assistant_id: Uuid,
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
}

impl AppState {
    fn local(&self, graph_id: &str) -> Assistant {
        Assistant {
            graph_id: graph_id.to_owned(),
            assistant_id: assistant_id(graph_id),
            created_at: self.started_at.clone(),
            updated_at: self.started_at.clone(),
        }
    }

    fn registered(g: RegisteredGraph) -> Assistant {
        Assistant {
            assistant_id: assistant_id(&g.graph_id),
            graph_id: g.graph_id,
            created_at: g.registered_at,
            updated_at: g.updated_at,
        }
    }

    /// The assistant an assistant id (or a graph id) names (404 if none): a graph
    /// compiled into this process, else one that a worker process registered.
    pub(crate) async fn assistant(&self, id: &str) -> Result<Assistant> {
        if let Some(graph_id) = self.local_graph(id) {
            return Ok(self.local(graph_id));
        }
        registry::find(&self.pool, id)
            .await?
            .map(Self::registered)
            .ok_or_else(|| ServerError::NotFound(format!("assistant {id} not found")))
    }

    /// The id of the graph compiled into this process that `id` (a graph id or an
    /// assistant id) names.
    fn local_graph(&self, id: &str) -> Option<&String> {
        self.graphs
            .keys()
            .find(|graph_id| graph_id.as_str() == id || assistant_id(graph_id).to_string() == id)
    }

    /// Every assistant this process answers for: its own graphs (in the order they were
    /// added), then the other graphs registered in the database (by graph id), whose
    /// runs it queues for the processes that have them.
    pub(crate) async fn assistants(&self) -> Result<Vec<Assistant>> {
        let mut all: Vec<Assistant> = self.graphs.keys().map(|g| self.local(g)).collect();
        all.extend(
            registry::list(&self.pool)
                .await?
                .into_iter()
                .filter(|g| !self.graphs.contains_key(&g.graph_id))
                .map(Self::registered),
        );
        Ok(all)
    }

    /// The drawing of the assistant `id` names, as `GET /assistants/{id}/graph` answers.
    pub(crate) async fn drawing(&self, id: &str) -> Result<serde_json::Value> {
        if let Some(graph_id) = self.local_graph(id) {
            return Ok(registry::drawing_json(&self.graphs[graph_id].drawing()));
        }
        registry::find(&self.pool, id)
            .await?
            .map(|g| g.drawing)
            .ok_or_else(|| ServerError::NotFound(format!("assistant {id} not found")))
    }
}
