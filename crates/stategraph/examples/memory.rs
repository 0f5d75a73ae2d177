//! An agent that remembers a user's preferences across threads: facts learned in one
//! conversation (thread) are kept in the long-term store and used in another.
//!
//! Run it with `cargo run -p stategraph --example memory`.

use std::sync::Arc;

use serde_json::json;
use stategraph::store::{BaseStore, InMemoryStore, Namespace, SearchOp};
use stategraph::{
    CompileOptions, NodeContext, NodeError, RunConfig, State, StateGraph, END, START,
};

#[derive(State, Debug)]
struct Chat {
    user: String,
    message: String,
    reply: String,
}

/// Stores "I like X" as a preference of the user (namespace `("users", user, "prefs")`).
async fn remember(s: Chat, ctx: NodeContext) -> Result<ChatUpdate, NodeError> {
    let store = ctx
        .store()
        .ok_or_else(|| NodeError::msg("compiled without a store"))?;
    if let Some(thing) = s.message.strip_prefix("I like ") {
        let value = json!({"likes": thing})
            .as_object()
            .cloned()
            .unwrap_or_default();
        store
            .put(
                Namespace::from(["users", s.user.as_str(), "prefs"]),
                thing,
                value,
            )
            .await?;
    }
    Ok(ChatUpdate::default())
}

/// Answers with everything the store knows the user likes.
async fn answer(s: Chat, ctx: NodeContext) -> Result<ChatUpdate, NodeError> {
    let store = ctx
        .store()
        .ok_or_else(|| NodeError::msg("compiled without a store"))?;
    let prefs = store
        .search(SearchOp::new(["users", s.user.as_str(), "prefs"]).limit(50))
        .await?;
    let mut likes: Vec<String> = prefs
        .iter()
        .filter_map(|p| {
            p.value
                .get("likes")
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        })
        .collect();
    likes.sort();
    let reply = if likes.is_empty() {
        "I don't know what you like yet.".to_owned()
    } else {
        format!("You like {}.", likes.join(", "))
    };
    Ok(ChatUpdate::default().reply(reply))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut graph = StateGraph::<Chat>::new();
    graph.add_node("remember", remember);
    graph.add_node("answer", answer);
    graph
        .add_edge(START, "remember")
        .add_edge("remember", "answer")
        .add_edge("answer", END);
    let store: Arc<dyn BaseStore> = Arc::new(InMemoryStore::new());
    let app = graph.compile_with(CompileOptions::new().store(store.clone()))?;

    for (thread, message) in [
        ("monday", "I like green tea"),
        ("tuesday", "I like jazz"),
        ("friday", "What do I like?"),
    ] {
        let input = ChatUpdate::default().user("ada").message(message);
        let out = app.invoke(input, &RunConfig::thread(thread)).await?;
        println!("[{thread}] ada: {message}\n[{thread}] bot: {}", out.reply);
    }
    let other = app
        .invoke(
            ChatUpdate::default().user("bob").message("What do I like?"),
            &RunConfig::thread("bob-1"),
        )
        .await?;
    println!("[bob-1] bot: {}", other.reply);
    Ok(())
}
