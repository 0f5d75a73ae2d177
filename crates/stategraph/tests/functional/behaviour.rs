//! What the functional API does besides storing Python's bytes: resume without rerunning
//! finished tasks after a failure, retry and cache policies per task, the state of a
//! paused thread, and typed errors naming what and where.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use stategraph::checkpoint::{CheckpointSaver, MemorySaver};
use stategraph::functional::{task, Entrypoint};
use stategraph::pregel::cache::{CachePolicy, InMemoryCache};
use stategraph::pregel::retry::RetryPolicy;
use stategraph::{
    channels::LastValue, update, Command, DynState, Error, NoInput, NodeContext, NodeError,
    RunConfig, StateGraph, StreamMode, Value, END, START,
};

use super::apps::{add_all, review, Counts};

fn memory() -> Arc<dyn CheckpointSaver> {
    Arc::new(MemorySaver::new())
}

#[tokio::test]
async fn a_failed_run_resumes_without_rerunning_the_tasks_that_finished() {
    let (ok_runs, flaky_runs) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let o = ok_runs.clone();
    let ok = task("ok", move |x: i64| {
        o.fetch_add(1, Ordering::SeqCst);
        async move { Ok(x + 1) }
    });
    let f = flaky_runs.clone();
    let flaky = task("flaky", move |x: i64| {
        let n = f.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 0 {
                return Err(NodeError::msg("the first call fails"));
            }
            Ok(x * 10)
        }
    });
    let saver = memory();
    let app = Entrypoint::new("wf", move |x: i64, ctx: NodeContext| {
        let (ok, flaky) = (ok.clone(), flaky.clone());
        async move {
            let a: i64 = ctx.call(&ok, x).await?;
            let b: i64 = ctx.call(&flaky, a).await?;
            Ok(a + b)
        }
    })
    .checkpointer(saver.clone())
    .compile()
    .expect("compiles");
    let thread = RunConfig::thread("t");
    let err = app
        .invoke(1, &thread)
        .await
        .expect_err("flaky fails the run");
    assert!(
        matches!(&err, Error::Node { node, message } if node == "wf" && message.contains("the first call fails")),
        "{err:?}"
    );
    // The failed call's error and the finished call's result are stored with their tasks.
    let tuple = saver
        .get_tuple(&stategraph::checkpoint::CheckpointConfig::thread("t"))
        .await
        .expect("read")
        .expect("a checkpoint");
    let channels: Vec<&str> = tuple
        .pending_writes
        .iter()
        .map(|w| w.channel.as_str())
        .collect();
    assert!(
        channels.contains(&"__return__") && channels.contains(&"__error__"),
        "{channels:?}"
    );
    let out = app.invoke(NoInput, &thread).await.expect("resumes");
    assert_eq!(out.done().expect("finished"), 2 + 20);
    assert_eq!(ok_runs.load(Ordering::SeqCst), 1, "ok ran once");
    assert_eq!(flaky_runs.load(Ordering::SeqCst), 2, "flaky ran again");
}

#[tokio::test]
async fn a_retry_policy_retries_a_task_and_a_cache_policy_answers_from_the_cache() {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let flaky = task("flaky", move |x: i64| {
        let n = r.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 0 {
                return Err(NodeError::msg("once"));
            }
            Ok(x * 2)
        }
    })
    .retry(RetryPolicy::attempts(3).initial_interval(Duration::from_millis(1)))
    .cache(CachePolicy::default());
    let app = Entrypoint::new("wf", move |x: i64, ctx: NodeContext| {
        let flaky = flaky.clone();
        async move { ctx.call(&flaky, x).await }
    })
    .checkpointer(memory())
    .cache(Arc::new(InMemoryCache::new()))
    .compile()
    .expect("compiles");
    let first = app.invoke(4, &RunConfig::thread("a")).await.expect("runs");
    assert_eq!(first.done().expect("done"), 8);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "one failed attempt, one retry"
    );
    // Another thread, the same argument: the cached result, streamed as cached.
    let events: Vec<Value> = app
        .stream(4, &RunConfig::thread("b"), &[StreamMode::Updates])
        .map(|e| e.expect("event").data)
        .collect()
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 2, "answered from the cache");
    assert_eq!(
        events[0],
        stategraph::map! {"flaky" => 8, "__metadata__" => stategraph::map! {"cached" => true}}
    );
    assert_eq!(events[1], stategraph::map! {"wf" => 8});
}

#[tokio::test]
async fn a_paused_thread_shows_its_entrypoint_as_next_with_the_interrupt() {
    let counts = Arc::new(Counts::default());
    let app = review(memory(), counts.clone());
    let thread = RunConfig::thread("r");
    let paused = app.invoke("cats".to_owned(), &thread).await.expect("runs");
    assert!(paused.is_interrupted() && paused.value.is_none());
    let state = app.get_state(&thread).await.expect("state");
    assert_eq!(state.next, ["review"]);
    assert!(state.values.is_empty(), "nothing returned yet");
    assert_eq!(state.tasks.len(), 1);
    assert_eq!(state.tasks[0].interrupts, paused.interrupts);
    assert_eq!(state.interrupts, paused.interrupts);
    let done = app
        .invoke(Command::resume("fine"), &thread)
        .await
        .expect("resumes");
    let value = done.done().expect("finished");
    assert_eq!(
        value.get("review").and_then(Value::as_str),
        Some("an essay about cats: fine")
    );
    let state = app.get_state(&thread).await.expect("state");
    assert!(state.next.is_empty());
    assert_eq!(state.values.get("__end__"), Some(&value));
    assert_eq!(
        counts.get(),
        [0, 1, 2],
        "compose once; ask asked, then answered"
    );
}

#[tokio::test]
async fn a_stored_result_the_task_type_cannot_hold_fails_naming_the_task_and_its_id() {
    let saver = memory();
    let counts = Arc::new(Counts::default());
    let paused = add_all(saver.clone(), counts)
        .invoke(vec![1], &RunConfig::thread("t"))
        .await
        .expect("runs");
    assert!(paused.is_interrupted());
    // The same entrypoint, but its task now declared to return text: the stored 2 is not.
    let add_one = task("add_one", |x: i64| async move { Ok(format!("{x}")) });
    let typed = Entrypoint::new("add_all", move |nums: Vec<i64>, ctx: NodeContext| {
        let add_one = add_one.clone();
        async move {
            let s: String = ctx.call(&add_one, nums[0]).await?;
            Ok(s)
        }
    })
    .checkpointer(saver)
    .compile()
    .expect("compiles");
    let err = typed
        .invoke(Command::resume("yes"), &RunConfig::thread("t"))
        .await
        .expect_err("the stored result is a number");
    let Error::Node { node, message } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(node, "add_all");
    assert!(
        message.starts_with("TypeError(")
            && message.contains("task \"add_one\" (task id ")
            && message.contains("returned 2, which is not a alloc::string::String"),
        "{message}"
    );
}

#[tokio::test]
async fn a_resume_with_nothing_pending_is_nothing_to_resume() {
    let app = review(memory(), Arc::new(Counts::default()));
    let err = app
        .invoke(Command::resume("yes"), &RunConfig::thread("new"))
        .await
        .expect_err("no checkpoint");
    assert!(
        matches!(&err, Error::NothingToResume { thread_id, .. } if thread_id == "new"),
        "{err:?}"
    );
    let thread = RunConfig::thread("r");
    let _ = app
        .invoke("cats".to_owned(), &thread)
        .await
        .expect("pauses");
    let _ = app
        .invoke(Command::resume("ok"), &thread)
        .await
        .expect("finishes");
    let err = app
        .invoke(Command::resume("again"), &thread)
        .await
        .expect_err("finished");
    assert!(matches!(&err, Error::NothingToResume { .. }), "{err:?}");
}

#[tokio::test]
async fn a_task_called_from_a_state_graph_node_fails_saying_where_tasks_are_called() {
    let t = task("t", |x: i64| async move { Ok(x) });
    let mut g =
        StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)]);
    g.add_node("node", move |_s: DynState, ctx: NodeContext| {
        let t = t.clone();
        async move {
            let n: i64 = ctx.call(&t, 1).await?;
            Ok::<_, NodeError>(update([("n", n)]))
        }
    });
    g.add_edge(START, "node").add_edge("node", END);
    let err = g
        .compile()
        .expect("compiles")
        .invoke(update([("n", 0)]), &RunConfig::default())
        .await
        .expect_err("no calls here");
    let Error::Node { node, message } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(node, "node");
    assert!(
        message.contains("RuntimeError")
            && message.contains("task \"t\" called from node \"node\""),
        "{message}"
    );
}

#[tokio::test]
async fn calls_run_concurrently_and_a_timeout_fails_the_call_into_its_caller() {
    // Each call waits for the other: they finish only if both run at once.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet = task("meet", move |x: i64| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            Ok(x)
        }
    });
    let slow = task("slow", |_: ()| async move {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(())
    })
    .timeout(Duration::from_millis(5));
    let app = Entrypoint::new("wf", move |timeout: bool, ctx: NodeContext| {
        let (meet, slow) = (meet.clone(), slow.clone());
        async move {
            if timeout {
                let caught = ctx.call(&slow, ()).await.expect_err("times out");
                return Ok(caught.to_string());
            }
            let both = futures::future::try_join(ctx.call(&meet, 1), ctx.call(&meet, 2));
            let (a, b): (i64, i64) = both.await?;
            Ok(format!("{}", a + b))
        }
    })
    .checkpointer(memory())
    .compile()
    .expect("compiles");
    let thread = RunConfig::thread("a");
    let run = app.invoke(false, &thread);
    let out = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the two calls met")
        .expect("runs");
    assert_eq!(out.done().expect("done"), "3");
    let out = app
        .invoke(true, &RunConfig::thread("b"))
        .await
        .expect("runs");
    let caught = out.done().expect("done");
    assert!(
        caught.starts_with("NodeTimeoutError(") && caught.contains("\"slow\""),
        "{caught}"
    );
}
