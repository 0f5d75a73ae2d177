//! Retries and timeouts: a retried node that recovers leaves no error behind, one that
//! does not stores only its last failure, `retry_on` chooses what is retried, and a timed
//! out attempt is a retryable `NodeTimeoutError`.

use std::sync::Arc;
use std::time::Duration;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::graph::NodeOptions;
use stategraph::pregel::retry::RetryPolicy;
use stategraph::{
    list, Command, DynState, NodeContext, NodeError, RunConfig, StateGraph, Value, END, START,
};

use crate::for_each_saver;
use crate::util::{
    history, log_graph, log_input, log_of, node_error, with_saver, writes_to, Calls,
};

/// A policy of `n` attempts with millisecond waits and no jitter.
fn quick(n: usize) -> RetryPolicy {
    RetryPolicy::attempts(n)
        .initial_interval(Duration::from_millis(1))
        .jitter(false)
}

/// `START -> flaky -> END`, where `flaky` fails its first `failures` calls with
/// `error(call)` and then logs `"flaky"`.
fn flaky(
    calls: &Calls,
    failures: usize,
    error: fn(usize) -> NodeError,
    options: NodeOptions,
) -> StateGraph<DynState> {
    let mut g = log_graph();
    let c = calls.clone();
    g.add_node_with(
        "flaky",
        move |_s: DynState| {
            let n = c.hit("flaky");
            async move {
                if n <= failures {
                    return Err(error(n));
                }
                Ok(stategraph::update([("log", list!["flaky"])]))
            }
        },
        options,
    );
    g.add_edge(START, "flaky").add_edge("flaky", END);
    g
}

fn value_error(n: usize) -> NodeError {
    NodeError::named("ValueError", format!("attempt {n}"))
}

fn connection_error(n: usize) -> NodeError {
    NodeError::named("ConnectionError", format!("attempt {n}"))
}

/// Every `__error__` write stored on any checkpoint of the thread.
async fn stored_errors(saver: &Arc<dyn CheckpointSaver>, thread: &str) -> Vec<Value> {
    history(saver, thread)
        .await
        .iter()
        .flat_map(|t| writes_to(t, "__error__"))
        .collect()
}

for_each_saver! {
    async fn a_node_that_recovers_on_its_third_attempt_stores_no_error(saver) {
        let calls = Calls::new();
        let g = flaky(&calls, 2, value_error, NodeOptions::new().retry(quick(3)));
        let out = with_saver(&g, &saver)
            .invoke(log_input(&[]), &RunConfig::thread("t"))
            .await
            .unwrap();
        assert_eq!(log_of(&out), ["flaky"]);
        assert_eq!(calls.of("flaky"), 3);
        assert_eq!(stored_errors(&saver, "t").await, Vec::<Value>::new());
    }
}

for_each_saver! {
    async fn a_node_that_fails_every_attempt_stores_only_its_last_error(saver) {
        let calls = Calls::new();
        let g = flaky(&calls, 5, value_error, NodeOptions::new().retry(quick(2)));
        let err = with_saver(&g, &saver)
            .invoke(log_input(&[]), &RunConfig::thread("t"))
            .await
            .unwrap_err();
        assert_eq!(
            node_error(err),
            ("flaky".to_owned(), "ValueError('attempt 2')".to_owned())
        );
        assert_eq!(calls.of("flaky"), 2, "max_attempts counts the first try");
        assert_eq!(
            stored_errors(&saver, "t").await,
            [Value::from("ValueError('attempt 2')")]
        );
    }
}

#[tokio::test]
async fn retry_on_decides_which_failures_are_retried() {
    let only_connection_errors = || {
        quick(3)
            .retry_on(|e: &NodeError| e.repr().is_some_and(|r| r.starts_with("ConnectionError(")))
    };
    let calls = Calls::new();
    let options = NodeOptions::new().retry(only_connection_errors());
    let g = flaky(&calls, 1, value_error, options);
    let err = g
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await
        .unwrap_err();
    assert_eq!(node_error(err).1, "ValueError('attempt 1')");
    assert_eq!(calls.of("flaky"), 1, "a ValueError is not retried");

    let calls = Calls::new();
    let options = NodeOptions::new().retry(only_connection_errors());
    let g = flaky(&calls, 2, connection_error, options);
    let out = g
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(log_of(&out), ["flaky"]);
    assert_eq!(calls.of("flaky"), 3, "a ConnectionError is");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_retry_on_does_not_retry_a_panic() {
    let calls = Calls::new();
    let mut g = log_graph();
    let c = calls.clone();
    g.add_node_with(
        "boom",
        move |_s: DynState| {
            c.hit("boom");
            async move {
                if true {
                    panic!("kaboom");
                }
            }
        },
        NodeOptions::new().retry(quick(3)),
    );
    g.add_edge(START, "boom").add_edge("boom", END);
    let err = g
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await
        .unwrap_err();
    assert_eq!(node_error(err).1, "Panic('kaboom')");
    assert_eq!(calls.of("boom"), 1);
}

#[tokio::test]
async fn the_default_retry_on_does_not_retry_a_type_error() {
    // A wrong input (a `Send` payload that does not fit the node) fails the same way on
    // every attempt; Python's default `retry_on` does not retry a TypeError either.
    let calls = Calls::new();
    let type_error = |n: usize| NodeError::named("TypeError", format!("attempt {n}"));
    let g = flaky(&calls, 2, type_error, NodeOptions::new().retry(quick(3)));
    let err = g
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await
        .unwrap_err();
    assert_eq!(node_error(err).1, "TypeError('attempt 1')");
    assert_eq!(calls.of("flaky"), 1);
}

/// `START -> slow -> END`, where the first `hangs` calls of `slow` never finish in time.
fn slow(calls: &Calls, hangs: usize, options: NodeOptions) -> StateGraph<DynState> {
    let mut g = log_graph();
    let c = calls.clone();
    g.add_node_with(
        "slow",
        move |_s: DynState| {
            let n = c.hit("slow");
            async move {
                if n <= hangs {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                stategraph::update([("log", list!["slow"])])
            }
        },
        options,
    );
    g.add_edge(START, "slow").add_edge("slow", END);
    g
}

for_each_saver! {
    async fn a_timed_out_attempt_fails_with_node_timeout_error(saver) {
        let calls = Calls::new();
        let g = slow(
            &calls,
            1,
            NodeOptions::new().timeout(Duration::from_millis(20)),
        );
        let err = with_saver(&g, &saver)
            .invoke(log_input(&[]), &RunConfig::thread("t"))
            .await
            .unwrap_err();
        let (node, message) = node_error(err);
        assert_eq!(node, "slow");
        assert!(message.starts_with("NodeTimeoutError("), "{message}");
        assert_eq!(stored_errors(&saver, "t").await, [Value::from(message)]);
    }
}

for_each_saver! {
    async fn a_timed_out_attempt_is_retried(saver) {
        let calls = Calls::new();
        let options = NodeOptions::new()
            .timeout(Duration::from_millis(20))
            .retry(quick(2));
        let g = slow(&calls, 1, options);
        let out = with_saver(&g, &saver)
            .invoke(log_input(&[]), &RunConfig::thread("t"))
            .await
            .unwrap();
        assert_eq!(log_of(&out), ["slow"]);
        assert_eq!(calls.of("slow"), 2);
        assert_eq!(stored_errors(&saver, "t").await, Vec::<Value>::new());
    }
}

// Python: an interrupt is not a failure; it bubbles up before any retry policy is asked.
for_each_saver! {
    // Cause: runner.rs:128 asks `retry_on` about every `NodeError`, interrupts and parent
    // commands included; only failures should reach it.

    async fn an_interrupt_is_not_retried_even_if_retry_on_accepts_it(saver) {
        let calls = Calls::new();
        let mut g = log_graph();
        let c = calls.clone();
        g.add_node_with(
            "ask",
            move |_s: DynState, ctx: NodeContext| {
                c.hit("ask");
                async move {
                    let a = ctx.interrupt("ok?")?;
                    let line = format!("ask:{}", a.as_str().unwrap());
                    Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
                }
            },
            NodeOptions::new().retry(quick(3).retry_on(|_| true)),
        );
        g.add_edge(START, "ask").add_edge("ask", END);
        let graph = with_saver(&g, &saver);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(out.interrupts.len(), 1);
        assert_eq!(calls.of("ask"), 1, "the interrupt was not retried");
        let resume = Command::resume("y");
        let out = graph.invoke(resume, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["ask:y"]);
        assert_eq!(calls.of("ask"), 2);
    }
}
