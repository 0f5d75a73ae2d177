//! The node cache: a node whose input was seen before gets its earlier writes instead of
//! running, until the entry's ttl expires; cached writes are stored like any others.

use std::time::Duration;

use stategraph::channels::Channel;
use stategraph::graph::NodeOptions;
use stategraph::pregel::cache::CachePolicy;
use stategraph::{list, DynState, RunConfig, StateGraph, Value, END, START};

use crate::for_each_saver;
use crate::util::{add_list, history, last_value, log_of, with_saver, writes_to, Calls};

/// `START -> square -> END` over `x` and a `log` reducer; `square` logs `sq:<x*x>`.
fn squaring(calls: &Calls, policy: CachePolicy) -> StateGraph<DynState> {
    let channels: Vec<(String, Box<dyn Channel>)> =
        vec![("x".into(), last_value()), ("log".into(), add_list())];
    let mut g = StateGraph::<DynState>::with_channels(channels);
    let c = calls.clone();
    g.add_node_with(
        "square",
        move |s: DynState| {
            c.hit("square");
            let x = s.get("x").and_then(Value::as_i64).unwrap();
            async move { stategraph::update([("log", list![format!("sq:{}", x * x)])]) }
        },
        NodeOptions::new().cache(policy),
    );
    g.add_edge(START, "square").add_edge("square", END);
    g
}

fn x(n: i64) -> Vec<(String, Value)> {
    stategraph::update([("x", n)])
}

// Python: the second thread with the same input gets the cached writes (the node ran
// once), they are stored on its step-0 checkpoint, and another input runs the node.
for_each_saver! {
    async fn a_cached_node_runs_once_for_the_same_input(saver) {
        let calls = Calls::new();
        let policy = CachePolicy::default().ttl(Duration::from_secs(3600));
        let graph = with_saver(&squaring(&calls, policy), &saver);
        for thread in ["t1", "t2"] {
            let out = graph
                .invoke(x(3), &RunConfig::thread(thread))
                .await
                .unwrap();
            assert_eq!(log_of(&out), ["sq:9"], "{thread}");
        }
        assert_eq!(calls.of("square"), 1);
        let t2 = history(&saver, "t2").await;
        let step0 = t2.iter().find(|t| t.metadata.step == Some(0)).unwrap();
        assert_eq!(
            writes_to(step0, "log"),
            [list!["sq:9"]],
            "cached writes are stored"
        );

        let out = graph.invoke(x(4), &RunConfig::thread("t3")).await.unwrap();
        assert_eq!(log_of(&out), ["sq:16"]);
        assert_eq!(calls.of("square"), 2, "a new input is a miss");
    }
}

#[tokio::test]
async fn a_cache_entry_without_ttl_lives_until_cleared() {
    let calls = Calls::new();
    let graph = squaring(&calls, CachePolicy::default()).compile().unwrap();
    for _ in 0..3 {
        let out = graph.invoke(x(5), &RunConfig::default()).await.unwrap();
        assert_eq!(log_of(&out), ["sq:25"]);
    }
    assert_eq!(calls.of("square"), 1);
}

#[tokio::test]
async fn a_cache_entry_expires_after_its_ttl() {
    let calls = Calls::new();
    let ttl = Duration::from_millis(20);
    let graph = squaring(&calls, CachePolicy::default().ttl(ttl))
        .compile()
        .unwrap();
    let _ = graph.invoke(x(3), &RunConfig::default()).await.unwrap();
    tokio::time::sleep(ttl * 3).await;
    let out = graph.invoke(x(3), &RunConfig::default()).await.unwrap();
    assert_eq!(log_of(&out), ["sq:9"]);
    assert_eq!(calls.of("square"), 2, "the expired entry is not used");
}

// A custom key decides what counts as the same input: here only `x`'s parity.
#[tokio::test]
async fn a_cache_key_function_chooses_what_is_the_same_input() {
    let calls = Calls::new();
    let parity = CachePolicy::default().key(|input: &Value| {
        let x = input.get("x").and_then(Value::as_i64).unwrap_or(0);
        vec![(x % 2) as u8]
    });
    let graph = squaring(&calls, parity).compile().unwrap();
    let first = graph.invoke(x(3), &RunConfig::default()).await.unwrap();
    let second = graph.invoke(x(5), &RunConfig::default()).await.unwrap();
    assert_eq!(log_of(&first), ["sq:9"]);
    assert_eq!(
        log_of(&second),
        ["sq:9"],
        "5 has 3's key, so it gets 3's writes"
    );
    assert_eq!(calls.of("square"), 1);
    let _ = graph.invoke(x(4), &RunConfig::default()).await.unwrap();
    assert_eq!(calls.of("square"), 2);
}
