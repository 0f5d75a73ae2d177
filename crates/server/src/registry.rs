//! The graphs registry: every process with workers writes the metadata of the graphs it
//! runs (graph id, drawing, description) to the `registered_graphs` table when it
//! starts, so that a process without a graph's code (`stategraph serve`, an API-only
//! process, or one with other graphs) answers the assistants endpoints from the
//! database, queues runs for those workers, and reads the threads' state with the
//! graph rebuilt from its description (`topology`: [`stategraph::pregel::spec`]).

use deadpool_postgres::Pool;
use serde_json::{json, Value as Json};
use stategraph::graph::draw::DrawGraph;
use uuid::Uuid;

use crate::error::Result;

/// The namespace of assistant ids: an assistant's id is `uuid5(NAMESPACE_GRAPH, graph_id)`,
/// as LangGraph's server derives the id of a graph's default assistant.
pub const NAMESPACE_GRAPH: Uuid = Uuid::from_u128(0x6ba7b821_9dad_11d1_80b4_00c04fd430c8);

/// The id of the default assistant of graph `graph_id`.
pub fn assistant_id(graph_id: &str) -> Uuid {
    Uuid::new_v5(&NAMESPACE_GRAPH, graph_id.as_bytes())
}

/// A graph that a worker process registered in the database.
#[derive(Clone, Debug, PartialEq)]
pub struct RegisteredGraph {
    /// The graph id (its assistant is [`assistant_id`]`(graph_id)`).
    pub graph_id: String,
    /// The drawing, as `GET /assistants/{id}/graph` answers it.
    pub drawing: Json,
    /// When the graph was first registered (ISO 8601).
    pub registered_at: String,
    /// When its drawing or description last changed (ISO 8601).
    pub updated_at: String,
    /// The graph as data ([`stategraph::pregel::spec::GraphSpec`] in JSON): its channels
    /// and nodes, from which a process without its code reads its threads' state. `None`
    /// for a graph registered by an older version, or one with a channel that cannot be
    /// described (a reducer of one's own).
    pub topology: Option<Json>,
}

/// Creates the `registered_graphs` table if it is missing.
pub async fn setup(pool: &Pool) -> Result<()> {
    pool.get()
        .await?
        .batch_execute(
            // Under a lock: processes starting together would otherwise race to create
            // the table's type (a unique violation in `pg_type`).
            "BEGIN;
            SELECT pg_advisory_xact_lock(7315392044);
            CREATE TABLE IF NOT EXISTS registered_graphs (
                graph_id text PRIMARY KEY,
                drawing jsonb NOT NULL,
                registered_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            ALTER TABLE registered_graphs ADD COLUMN IF NOT EXISTS topology jsonb;
            COMMIT;",
        )
        .await?;
    Ok(())
}

/// Records that a process runs `graph_id`, drawn as `drawing` and described as
/// `topology`: a new row, or the new drawing and description of a graph whose code
/// changed (`updated_at` moves only then).
pub async fn register(
    pool: &Pool,
    graph_id: &str,
    drawing: &Json,
    topology: Option<&Json>,
) -> Result<()> {
    pool.get()
        .await?
        .execute(
            "INSERT INTO registered_graphs (graph_id, drawing, topology) VALUES ($1, $2, $3)
             ON CONFLICT (graph_id) DO UPDATE
             SET drawing = EXCLUDED.drawing, topology = EXCLUDED.topology, updated_at = now()
             WHERE (registered_graphs.drawing, registered_graphs.topology)
                   IS DISTINCT FROM (EXCLUDED.drawing, EXCLUDED.topology)",
            &[&graph_id, drawing, &topology],
        )
        .await?;
    Ok(())
}

const COLS: &str =
    "graph_id, drawing, to_json(registered_at)#>>'{}', to_json(updated_at)#>>'{}', topology";

fn from_row(row: &tokio_postgres::Row) -> RegisteredGraph {
    RegisteredGraph {
        graph_id: row.get(0),
        drawing: row.get(1),
        registered_at: row.get(2),
        updated_at: row.get(3),
        topology: row.get(4),
    }
}

/// Every registered graph, by graph id.
pub async fn list(pool: &Pool) -> Result<Vec<RegisteredGraph>> {
    let rows = pool
        .get()
        .await?
        .query(
            &format!("SELECT {COLS} FROM registered_graphs ORDER BY graph_id"),
            &[],
        )
        .await?;
    Ok(rows.iter().map(from_row).collect())
}

/// The registered graph that `id` names: a graph id, or the id of its assistant.
pub async fn find(pool: &Pool, id: &str) -> Result<Option<RegisteredGraph>> {
    if let Ok(uuid) = Uuid::parse_str(id) {
        // Assistant ids are derived from graph ids, so they are not stored.
        return Ok(list(pool)
            .await?
            .into_iter()
            .find(|g| assistant_id(&g.graph_id) == uuid || g.graph_id == id));
    }
    let row = pool
        .get()
        .await?
        .query_opt(
            &format!("SELECT {COLS} FROM registered_graphs WHERE graph_id = $1"),
            &[&id],
        )
        .await?;
    Ok(row.as_ref().map(from_row))
}

/// A drawing as `GET /assistants/{id}/graph` answers it (LangGraph's JSON graph shape).
pub fn drawing_json(drawing: &DrawGraph) -> Json {
    let nodes: Vec<Json> = drawing
        .nodes
        .values()
        .map(|n| {
            json!({
                "id": n.id,
                "type": if n.id.starts_with("__") { "schema" } else { "runnable" },
                "data": { "id": ["stategraph", n.name], "name": n.name },
            })
        })
        .collect();
    let edges: Vec<Json> = drawing
        .edges
        .iter()
        .map(|e| {
            let mut edge = json!({ "source": e.source, "target": e.target });
            if e.conditional {
                edge["conditional"] = json!(true);
            }
            if let Some(d) = &e.data {
                edge["data"] = json!(d);
            }
            edge
        })
        .collect();
    json!({ "nodes": nodes, "edges": edges })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_ids_are_uuid5_of_the_graph_id() {
        assert_eq!(assistant_id("seed"), assistant_id("seed"));
        assert_ne!(assistant_id("seed"), assistant_id("agent"));
        assert_eq!(assistant_id("seed").get_version_num(), 5);
        // The id LangGraph's server gives the assistant of a graph named "agent".
        assert_eq!(
            assistant_id("agent").to_string(),
            "fe096781-5601-53d2-b2f6-0d3403f7e9ca"
        );
    }
}
