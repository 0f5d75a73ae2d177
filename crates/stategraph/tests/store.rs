//! The long-term store in a graph: `CompileOptions::store`, `NodeContext::store`, shared by
//! every thread and inherited by subgraphs.

use std::sync::Arc;

use serde_json::json;
use stategraph::store::{BaseStore, InMemoryStore, Namespace};
use stategraph::{
    CompileOptions, NodeContext, NodeError, RunConfig, State, StateGraph, END, START,
};

#[derive(State, Debug)]
struct S {
    text: String,
    seen: String,
}

fn writer_graph() -> StateGraph<S> {
    let mut g = StateGraph::<S>::new();
    g.add_node("write", |s: S, ctx: NodeContext| async move {
        match ctx.store() {
            None => Ok::<_, NodeError>(SUpdate::default().seen("no store")),
            Some(store) => {
                let before = store.get(Namespace::from(["memo"]), "last").await?;
                let value = json!({"text": s.text})
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                store.put(Namespace::from(["memo"]), "last", value).await?;
                let seen = before
                    .and_then(|i| {
                        i.value
                            .get("text")
                            .and_then(|v| v.as_str())
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| "nothing".to_owned());
                Ok(SUpdate::default().seen(seen))
            }
        }
    });
    g.add_edge(START, "write").add_edge("write", END);
    g
}

#[tokio::test]
async fn threads_share_the_graphs_store() {
    let store: Arc<dyn BaseStore> = Arc::new(InMemoryStore::new());
    let app = writer_graph()
        .compile_with(CompileOptions::new().store(store.clone()))
        .expect("compile");
    assert!(app.store().is_some());
    let one = app
        .invoke(SUpdate::default().text("first"), &RunConfig::thread("t1"))
        .await
        .expect("run t1");
    assert_eq!(one.seen, "nothing");
    let two = app
        .invoke(SUpdate::default().text("second"), &RunConfig::thread("t2"))
        .await
        .expect("run t2");
    assert_eq!(
        two.seen, "first",
        "another thread sees what the first stored"
    );
    let item = store
        .get(Namespace::from(["memo"]), "last")
        .await
        .expect("get");
    assert_eq!(item.expect("stored").value["text"], json!("second"));
}

#[tokio::test]
async fn without_a_store_nodes_see_none() {
    let app = writer_graph().compile().expect("compile");
    assert!(app.store().is_none());
    let out = app
        .invoke(SUpdate::default().text("x"), &RunConfig::default())
        .await
        .expect("run");
    assert_eq!(out.seen, "no store");
}

#[tokio::test]
async fn subgraphs_inherit_the_parents_store() {
    let sub = writer_graph()
        .compile()
        .expect("compile the subgraph without a store");
    let mut parent = StateGraph::<S>::new();
    parent.add_subgraph("sub", &sub);
    parent.add_edge(START, "sub").add_edge("sub", END);
    let store: Arc<dyn BaseStore> = Arc::new(InMemoryStore::new());
    store
        .put(
            Namespace::from(["memo"]),
            "last",
            json!({"text": "from the parent"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )
        .await
        .expect("put");
    let app = parent
        .compile_with(CompileOptions::new().store(store))
        .expect("compile");
    let out = app
        .invoke(SUpdate::default().text("child"), &RunConfig::default())
        .await
        .expect("run");
    assert_eq!(out.seen, "from the parent");
}
