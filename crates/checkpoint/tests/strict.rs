//! Strict mode on a saver: a stored Python object outside LangGraph's safe types and the
//! allowlist makes the read fail with `Error::Unsafe` naming it; safe and allowlisted
//! objects read as usual; writes are not affected.

use std::sync::Arc;

use stategraph_checkpoint::serde::{Allowlist, JsonPlusSerializer, StrictSerializer};
use stategraph_checkpoint::{
    map, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
    Error, MemorySaver, ObjectCode, Value,
};

fn object(module: &str, class: &str) -> Value {
    Value::object(ObjectCode::PydanticV2, module, class, map! {"a" => 1}, None)
}

async fn read_back(saver: &MemorySaver, value: Value) -> Result<(), Error> {
    let thread = uuid::Uuid::new_v4().to_string();
    let mut cp = Checkpoint::empty(
        stategraph_checkpoint::id::IdGenerator::system().uuid6(0),
        "2025-01-01T00:00:00+00:00",
    );
    cp.channel_values.insert(
        "state".into(),
        map! {"items" => vec![Value::from(1), value]},
    );
    cp.channel_versions
        .insert("state".into(), saver.get_next_version(None));
    let new = cp.channel_versions.clone();
    let config = saver
        .put(
            &CheckpointConfig::thread(&thread),
            &cp,
            &CheckpointMetadata::new(CheckpointSource::Loop, 0),
            &new,
        )
        .await?;
    saver.get_tuple(&config).await.map(|_| ())
}

#[tokio::test]
async fn strict_savers_refuse_unsafe_objects_on_read() {
    let allow = Allowlist::new().allow("my_app.state", "Ticket");
    let strict = MemorySaver::new()
        .with_serializer(Arc::new(StrictSerializer::new(JsonPlusSerializer, allow)));
    let lax = MemorySaver::new();

    let evil = object("langchain_core.callbacks.file", "FileCallbackHandler");
    match read_back(&strict, evil.clone()).await {
        Err(Error::Unsafe(found)) => {
            assert_eq!(found.module, "langchain_core.callbacks.file");
            assert_eq!(found.class, "FileCallbackHandler");
            assert_eq!(found.path, "$.items[1]");
        }
        other => panic!("expected a strict-mode refusal, got {other:?}"),
    }
    // The default (as Python's default) reads it as inert data.
    read_back(&lax, evil).await.expect("not strict");
    // Safe types and the allowlist pass.
    read_back(
        &strict,
        object("langchain_core.messages.human", "HumanMessage"),
    )
    .await
    .expect("a safe type");
    read_back(&strict, object("my_app.state", "Ticket"))
        .await
        .expect("allowlisted");
    // A prefix is not an allowlist entry (as in Python).
    assert!(matches!(
        read_back(&strict, object("my_app.state.sub", "Ticket")).await,
        Err(Error::Unsafe(_))
    ));
}
