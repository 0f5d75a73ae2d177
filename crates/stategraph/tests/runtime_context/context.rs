//! The run's typed context (`RunConfig::context`, Python's `context=` / `runtime.context`):
//! typed reads, the wrong type and a missing context as typed errors, a declared context
//! type checked before the run, and the context reaching subgraphs, `Send` targets and
//! each run of a `batch`, as the pinned Python's `runtime.context` does in one process
//! (langgraph#5700 and #6370 reported it lost in a subgraph, and with `Send` on LangGraph
//! Server). Then the
//! run's config as a node sees it, and `execution_info` under retries against the pinned
//! Python (`execution_info.py` beside this file, its output kept in
//! `execution_info.json`).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value as J};
use stategraph::channels::{BinaryOperatorAggregate, LastValue};
use stategraph::checkpoint::{ListOptions, MemorySaver};
use stategraph::pregel::retry::RetryPolicy;
use stategraph::{
    update, CompileOptions, ContextError, DynState, Error, NodeContext, NodeError, NodeOptions,
    RunConfig, Send, StateGraph, Value, END, START,
};

use crate::support::golden::to_json;
use crate::support::python::python;

/// The context the tests give their runs.
#[derive(Debug, PartialEq)]
struct User {
    name: String,
}

fn user(name: &str) -> User {
    User { name: name.into() }
}

/// A graph over `seen` (a list every node appends to) and `x`.
fn graph() -> StateGraph<DynState> {
    StateGraph::with_channels(vec![
        (
            "seen".into(),
            Box::new(BinaryOperatorAggregate::new(
                stategraph::reducers::add(),
                None,
            )) as _,
        ),
        ("x".into(), Box::new(LastValue::new()) as _),
    ])
}

fn seen(item: impl Into<Value>) -> Vec<(String, Value)> {
    update([("seen", Value::list(vec![item.into()]))])
}

/// A node appending `label:<user name>`.
async fn greet(label: &'static str, ctx: NodeContext) -> Result<Vec<(String, Value)>, NodeError> {
    let user = ctx.context::<User>()?;
    Ok(seen(format!("{label}:{}", user.name)))
}

fn seen_json(values: &indexmap::IndexMap<String, Value>) -> J {
    to_json(values.get("seen").expect("seen"))
}

#[tokio::test]
async fn a_node_reads_the_runs_typed_context() {
    let mut g = graph();
    g.add_node("a", |_: DynState, ctx: NodeContext| greet("a", ctx));
    g.add_edge(START, "a");
    let app = g.compile().unwrap();
    let out = app
        .invoke(seen("in"), &RunConfig::default().context(user("ada")))
        .await
        .unwrap();
    assert_eq!(seen_json(&out.values), json!(["in", "a:ada"]));
    // Shared, not copied: an Arc given is the one the node sees.
    let shared = Arc::new(user("bob"));
    let out = app
        .invoke(
            seen("in"),
            &RunConfig::default().context_arc(shared.clone()),
        )
        .await
        .unwrap();
    assert_eq!(seen_json(&out.values), json!(["in", "a:bob"]));
}

#[tokio::test]
async fn the_wrong_type_or_no_context_is_a_typed_error() {
    let got: Arc<Mutex<Vec<ContextError>>> = Arc::default();
    let mut g = graph();
    let sink = got.clone();
    g.add_node("a", move |_: DynState, ctx: NodeContext| {
        let sink = sink.clone();
        async move {
            let err = ctx.context::<User>().expect_err("not a User");
            sink.lock().push(err);
            ctx.context::<User>()?;
            Ok::<_, NodeError>(())
        }
    });
    g.add_edge(START, "a");
    let app = g.compile().unwrap();
    let err = app
        .invoke(seen("in"), &RunConfig::default().context(7_u32))
        .await
        .expect_err("the node fails");
    let Error::Node { node, message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(node, "a");
    assert!(message.starts_with("ContextError("), "{message}");
    assert!(message.contains("runtime_context::context::User") && message.contains("u32"));
    app.invoke(seen("in"), &RunConfig::default())
        .await
        .expect_err("no context");
    let errors = got.lock().clone();
    let want_type = std::any::type_name::<User>();
    assert_eq!(
        errors,
        vec![
            ContextError {
                expected: want_type,
                actual: Some("u32"),
                node: "a".into(),
            },
            ContextError {
                expected: want_type,
                actual: None,
                node: "a".into(),
            },
        ]
    );
    assert!(
        errors[1].to_string().contains("no context"),
        "{}",
        errors[1]
    );
}

#[tokio::test]
async fn a_declared_context_type_refuses_another_before_the_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut g = graph();
    let counter = runs.clone();
    g.context_type::<User>();
    g.add_node("a", move |_: DynState| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move { seen("a") }
    });
    g.add_edge(START, "a");
    let app = g.compile().unwrap();
    let err = app
        .invoke(seen("in"), &RunConfig::default().context("ada".to_owned()))
        .await
        .expect_err("a String is not a User");
    match &err {
        Error::ContextType { expected, actual } => {
            assert_eq!(*expected, std::any::type_name::<User>());
            assert_eq!(*actual, std::any::type_name::<String>());
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("alloc::string::String"), "{err}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the run did not start");
    let _ = app
        .invoke(seen("in"), &RunConfig::default().context(user("ada")))
        .await
        .unwrap();
    // No context: runs, as Python's `runtime.context` is then None.
    let _ = app.invoke(seen("in"), &RunConfig::default()).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_context_reaches_subgraphs_sends_and_batch_runs() {
    let mut sub = graph();
    sub.add_node("inner", |_: DynState, ctx: NodeContext| greet("inner", ctx));
    sub.add_edge(START, "inner").add_edge("inner", END);
    let sub = sub.compile().unwrap();
    let mut g = graph();
    g.add_node("fan", |_: DynState, ctx: NodeContext| greet("fan", ctx));
    g.add_node("worker", |arg: DynState, ctx: NodeContext| async move {
        let user = ctx.context::<User>()?;
        let x = arg.get("x").and_then(Value::as_i64).unwrap_or_default();
        Ok::<_, NodeError>(seen(format!("worker{x}:{}", user.name)))
    });
    g.add_subgraph("sub", &sub);
    g.add_edge(START, "fan");
    g.add_conditional_edges("fan", |_: &DynState| {
        vec![
            Send::new("worker", stategraph::map! {"x" => 1}),
            Send::new("worker", stategraph::map! {"x" => 2}),
        ]
    });
    g.add_edge("worker", "sub");
    let app = g
        .compile_with(CompileOptions::new().checkpointer(Arc::new(MemorySaver::new())))
        .unwrap();
    let configs = [
        RunConfig::thread("one").context(user("ada")),
        RunConfig::thread("two").context(user("bob")),
    ];
    let outs = app.batch([seen("in"), seen("in")], configs).await.unwrap();
    let got: Vec<J> = outs
        .into_iter()
        .map(|o| {
            let mut s: Vec<String> = serde_json::from_value(seen_json(&o.unwrap().values)).unwrap();
            // The subgraph returns its whole `seen`, which the parent's reducer appends.
            s.dedup();
            json!(s)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            json!([
                "in",
                "fan:ada",
                "worker1:ada",
                "worker2:ada",
                "in",
                "fan:ada",
                "worker1:ada",
                "worker2:ada",
                "inner:ada"
            ]),
            json!([
                "in",
                "fan:bob",
                "worker1:bob",
                "worker2:bob",
                "in",
                "fan:bob",
                "worker1:bob",
                "worker2:bob",
                "inner:bob"
            ]),
        ]
    );
}

#[tokio::test]
async fn a_node_sees_the_runs_config() {
    let run_id = uuid::Uuid::parse_str("12345678-1234-5678-1234-567812345678").unwrap();
    let seen_configs: Arc<Mutex<Vec<RunConfig>>> = Arc::default();
    let mut sub = graph();
    let sink = seen_configs.clone();
    sub.add_node("inner", move |_: DynState, ctx: NodeContext| {
        sink.lock().push(ctx.config().clone());
        async move { seen("inner") }
    });
    sub.add_edge(START, "inner");
    let sub = sub.compile().unwrap();
    let mut g = graph();
    let sink = seen_configs.clone();
    g.add_node("a", move |_: DynState, ctx: NodeContext| {
        sink.lock().push(ctx.config().clone());
        async move { seen("a") }
    });
    g.add_subgraph("sub", &sub);
    g.add_edge(START, "a").add_edge("a", "sub");
    let app = g
        .compile_with(CompileOptions::new().checkpointer(Arc::new(MemorySaver::new())))
        .unwrap();
    let cfg = RunConfig::thread("t")
        .recursion_limit(9)
        .with_configurable("user", "ada")
        .with_metadata("who", "me")
        .with_tags(["a", "b"])
        .run_id(run_id);
    let _ = app.invoke(seen("in"), &cfg).await.unwrap();
    let configs = seen_configs.lock().clone();
    assert_eq!(configs.len(), 2);
    for c in &configs {
        assert_eq!(c.thread_id.as_deref(), Some("t"));
        assert_eq!(c.recursion_limit, 9);
        assert_eq!(c.configurable.get("user"), Some(&Value::from("ada")));
        assert_eq!(c.metadata.get("who"), Some(&Value::from("me")));
        assert_eq!(c.tags(), ["a", "b"]);
        assert_eq!(c.run_id, Some(run_id));
    }
}

/// The `execution_info` of each attempt of a node failing twice under a retry policy,
/// and the metadata keys of the thread's checkpoints, in `execution_info.py`'s form.
async fn execution_info_run() -> J {
    let infos: Arc<Mutex<Vec<stategraph::ExecutionInfo>>> = Arc::default();
    let mut g =
        StateGraph::<DynState>::with_channels(vec![("x".into(), Box::new(LastValue::new()) as _)]);
    let sink = infos.clone();
    let policy = RetryPolicy {
        initial_interval: Duration::from_millis(1),
        jitter: false,
        ..RetryPolicy::attempts(3)
    };
    g.add_node_with(
        "flaky",
        move |_: DynState, ctx: NodeContext| {
            let sink = sink.clone();
            async move {
                assert_eq!(ctx.node_attempt(), ctx.execution_info().node_attempt);
                let n = {
                    let mut infos = sink.lock();
                    infos.push(ctx.execution_info());
                    infos.len()
                };
                if n < 3 {
                    return Err(NodeError::named("ConnectionError", "not yet"));
                }
                Ok(update([("x", 1)]))
            }
        },
        NodeOptions::new().retry(policy),
    );
    g.add_edge(START, "flaky");
    let app = g
        .compile_with(CompileOptions::new().checkpointer(Arc::new(MemorySaver::new())))
        .unwrap();
    let run_id = uuid::Uuid::parse_str("12345678-1234-5678-1234-567812345678").unwrap();
    let cfg = RunConfig::thread("t").run_id(run_id).with_tags(["a"]);
    let _ = app.invoke(update([("x", 0)]), &cfg).await.unwrap();
    let history = app
        .get_state_history(&RunConfig::thread("t"), &ListOptions::default())
        .await
        .unwrap();
    let step0 = history
        .iter()
        .find(|s| s.metadata.as_ref().unwrap().step == Some(0))
        .and_then(|s| s.config.as_ref())
        .and_then(|c| c.checkpoint_id.clone())
        .unwrap();
    let infos = infos.lock().clone();
    let attempts: Vec<J> = infos
        .iter()
        .map(|e| {
            json!({
                "node_attempt": e.node_attempt,
                "run_id": e.run_id,
                "thread_id": e.thread_id,
                "ns_is_task": e.checkpoint_ns == format!("flaky:{}", e.task_id),
                "checkpoint_is_step0": e.checkpoint_id == step0,
                "same_first_time": e.node_first_attempt_time.is_some()
                    && e.node_first_attempt_time == infos[0].node_first_attempt_time,
            })
        })
        .collect();
    let metadata: Vec<J> = history
        .iter()
        .map(|s| {
            let meta = s.metadata.as_ref().unwrap().to_value();
            let mut keys: Vec<String> = meta
                .as_map()
                .unwrap()
                .iter()
                .map(|(k, _)| k.as_str().unwrap().to_owned())
                .collect();
            keys.sort();
            json!(keys)
        })
        .collect();
    json!({"attempts": attempts, "metadata": metadata})
}

fn execution_info_expected() -> J {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_context/execution_info.json");
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

#[tokio::test]
async fn execution_info_under_retries_is_pythons() {
    assert_eq!(execution_info_run().await, execution_info_expected());
}

#[test]
fn the_pinned_python_still_has_that_execution_info() {
    let Some(python) = python() else {
        return;
    };
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_context/execution_info.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let python: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(python, execution_info_expected());
}

/// `context_schema::<C>()` (a `JsonSchema` context, Python's name) declares the type too.
#[cfg(feature = "schemars")]
#[tokio::test]
async fn context_schema_declares_the_context_type_too() {
    #[derive(stategraph::schemars::JsonSchema)]
    struct Tenant {
        #[allow(dead_code)]
        id: String,
    }
    let mut g = graph().context_schema::<Tenant>();
    g.add_node("a", |_: DynState| async move { seen("a") });
    g.add_edge(START, "a");
    let app = g.compile().unwrap();
    assert!(app.context_json_schema().is_some());
    let err = app
        .invoke(seen("in"), &RunConfig::default().context(user("ada")))
        .await
        .expect_err("a User is not a Tenant");
    assert!(matches!(err, Error::ContextType { .. }), "{err:?}");
    let tenant = Tenant { id: "t1".into() };
    let _ = app
        .invoke(seen("in"), &RunConfig::default().context(tenant))
        .await
        .unwrap();
}
