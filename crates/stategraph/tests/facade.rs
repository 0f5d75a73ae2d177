//! The facade as a README-following user meets it (issue 21): every path the crate's docs,
//! the README and docs/*.md name resolves with the features they name (the default
//! features give the SQLite saver and store, `postgres` the Postgres saver and store;
//! `stategraph::store::SqliteStore` did not compile), and an error returned from `main`
//! with `?` prints a readable report.

#![allow(unused_imports)]

use stategraph::channels::DeltaChannel;
use stategraph::checkpoint::serde::{EncryptedSerializer, StrictSerializer};
use stategraph::checkpoint::{CheckpointSaver, MemorySaver};
use stategraph::functional::{
    task, CallFuture, CompiledEntrypoint, Entrypoint, EntrypointOutcome, Final, Task,
};
use stategraph::prebuilt::{
    create_react_agent, tools_condition, ChatModel, DeltaMessagesState, FakeChatModel,
    MessagesState, Tool, ToolErrorHandling, ToolNode,
};
use stategraph::pregel::cache::CachePolicy;
use stategraph::pregel::retry::RetryPolicy;
use stategraph::store::{BaseStore, Embeddings, InMemoryStore, SearchOp};
use stategraph::{
    reducers, AsRunConfig, Command, CompileOptions, CompiledGraph, DynState, Error, Message,
    MessageMetadata, NoInput, NodeContext, NodeError, NodeOptions, Outcome, RunConfig, Send, State,
    StateGraph, StreamMode, StreamOptions, StreamPart, ThreadHead, ToolCall, Value, END, START,
};

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_default_features_give_the_sqlite_saver_and_store() {
    use stategraph::sqlite::SqliteSaver;
    use stategraph::store::SqliteStore;

    let dir = std::env::temp_dir().join(format!("facade-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let saver = SqliteSaver::open(dir.join("checkpoints.sqlite")).expect("open the saver");
    assert!(saver
        .get_tuple(&stategraph::checkpoint::CheckpointConfig::thread("t"))
        .await
        .is_ok());
    let store = SqliteStore::open(dir.join("store.sqlite")).expect("open the store");
    let doc = serde_json::json!({"theme": "dark"});
    let doc = doc.as_object().cloned().unwrap_or_default();
    store
        .put(["users"].into(), "prefs", doc)
        .await
        .expect("put");
    let item = store.get(["users"].into(), "prefs").await.expect("get");
    assert_eq!(item.map(|i| i.value["theme"].clone()), Some("dark".into()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[test]
fn the_postgres_feature_gives_the_postgres_saver_and_store() {
    use stategraph::postgres::{PostgresOptions, PostgresSaver};
    use stategraph::store::postgres::VectorBackend;
    use stategraph::store::PostgresStore;

    // Naming the types is the point: each path must resolve under the feature.
    let names = [
        std::any::type_name::<PostgresSaver>(),
        std::any::type_name::<PostgresOptions>(),
        std::any::type_name::<PostgresStore>(),
        std::any::type_name::<VectorBackend>(),
    ];
    assert!(
        names.iter().all(|n| n.starts_with("stategraph_")),
        "{names:?}"
    );
}

/// `main() -> Result<(), Box<dyn Error>>` prints the error's `Debug`: for a Postgres failure
/// it reads as the message (the server's reason included), not the driver's `DbError { .. }`.
#[tokio::test]
async fn an_error_returned_from_main_prints_its_message_not_its_fields() {
    let base = std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".to_owned());
    let required =
        std::env::var("STATEGRAPH_REQUIRE_POSTGRES").is_ok_and(|v| !v.is_empty() && v != "0");
    let (server, _) = base.rsplit_once('/').expect("a URL with a database");
    let url = format!("{server}/no_such_db_facade");
    let err = stategraph_checkpoint_postgres::PostgresSaver::connect(&url)
        .await
        .expect_err("no such database");
    let boxed: Box<dyn std::error::Error> = Box::new(Error::from(err));
    let debug = format!("{boxed:?}");
    assert!(
        !debug.contains("DbError") && !debug.contains("Backend("),
        "{debug}"
    );
    assert_eq!(
        debug,
        boxed.to_string(),
        "the message, its causes already in it"
    );
    assert!(debug.starts_with("backend error: postgres "), "{debug}");
    if required || debug.contains("SQLSTATE") {
        assert!(
            debug.contains(r#"database "no_such_db_facade" does not exist"#),
            "{debug}"
        );
    }
}

#[cfg(feature = "models")]
#[test]
fn the_models_feature_gives_the_provider_clients() {
    use stategraph::models::{
        init_chat_client, init_chat_model, parse_structured, ChatAnthropic, ChatClient, ChatOpenAI,
        ModelError, ModelErrorKind, Provider, ToolChoice, ToolSpec,
    };

    // The paths the README and docs/coming-from-python.md name.
    let _ = (
        parse_structured,
        init_chat_client,
        ToolChoice::Required,
        Provider::Ollama,
    );
    let _ = (
        std::any::type_name::<ChatClient>(),
        std::any::type_name::<ToolSpec>(),
    );
    let _ = (
        std::any::type_name::<ModelError>(),
        ModelErrorKind::RateLimited,
    );
    let model = ChatOpenAI::new("qwen2.5")
        .base_url("http://127.0.0.1:8080/v1")
        .temperature(0.0);
    let _agent = create_react_agent(model, vec![])
        .compile()
        .expect("an agent");
    let _ = ChatAnthropic::new("claude-sonnet-4-5");
    assert!(init_chat_model("openai:gpt-4o-mini").is_ok());
    assert!(NodeError::msg("x").retry_after().is_none());
}

#[cfg(feature = "mcp")]
#[test]
fn the_mcp_feature_gives_mcp_tools() {
    use stategraph::mcp::{
        Connection, HttpConnection, McpError, MultiServerMcpClient, StdioConnection,
    };

    let names = [
        std::any::type_name::<MultiServerMcpClient>(),
        std::any::type_name::<Connection>(),
        std::any::type_name::<StdioConnection>(),
        std::any::type_name::<HttpConnection>(),
        std::any::type_name::<McpError>(),
    ];
    assert!(
        names.iter().all(|n| n.starts_with("stategraph::mcp::")),
        "{names:?}"
    );
}

#[cfg(feature = "schemars")]
#[test]
fn the_schemars_feature_gives_typed_tools() {
    #[derive(serde::Deserialize, stategraph::schemars::JsonSchema)]
    #[schemars(crate = "stategraph::schemars")]
    struct Args {
        /// What to echo.
        text: String,
    }
    let tool = Tool::typed("echo", "Echoes.", |a: Args| async move { Ok(a.text) });
    assert_eq!(
        tool.schema()["properties"]["text"]["description"],
        "What to echo."
    );
}
