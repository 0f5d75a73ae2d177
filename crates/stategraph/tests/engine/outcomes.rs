//! What a run hands back and the typed errors of runs that cannot do what was asked:
//! `Outcome` (finished or paused), resuming with nothing to resume, missing checkpoints,
//! writes to unknown nodes or channels, config errors, `batch` and `with_config`.

use stategraph::{
    Command, CompileOptions, DynState, Error, NodeContext, NodeError, RunConfig, StateGraph, Value,
    END, START,
};

use crate::util::{log_graph, log_input, logs, saver, strings, with_saver};

/// `START -> a -> b -> END`, each logging its name.
fn chain() -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("a", logs("a")).add_node("b", logs("b"));
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", END);
    g
}

/// `START -> ask -> END`; `ask` interrupts with "name?" and logs the answer.
fn asking() -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("ask", |_s: DynState, ctx: NodeContext| async move {
        let answer = ctx.interrupt("name?")?;
        Ok::<_, NodeError>(stategraph::update([("log", Value::list(vec![answer]))]))
    });
    g.add_edge(START, "ask").add_edge("ask", END);
    g
}

#[tokio::test]
async fn a_finished_run_is_not_interrupted_and_done_gives_its_state() {
    let out = chain()
        .compile()
        .unwrap()
        .invoke(log_input(&["in"]), &RunConfig::default())
        .await
        .unwrap();
    assert!(!out.is_interrupted());
    assert!(out.next.is_empty());
    // Deref: the state's methods are reachable on the outcome.
    assert_eq!(strings(out.get("log")), ["in", "a", "b"]);
    let state = out.done().unwrap();
    assert_eq!(strings(state.get("log")), ["in", "a", "b"]);
}

#[tokio::test]
async fn a_run_paused_on_an_interrupt_says_so_and_done_is_an_error() {
    let saver = saver();
    let graph = with_saver(&asking(), &saver);
    let cfg = RunConfig::thread("t");
    let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
    assert!(out.is_interrupted());
    assert_eq!(out.interrupts.len(), 1);
    assert_eq!(out.interrupts[0].value, Value::from("name?"));
    assert_eq!(out.next, ["ask"]);
    match out.clone().done() {
        Err(Error::Interrupted { interrupts, next }) => {
            assert_eq!(interrupts, out.interrupts);
            assert_eq!(next, ["ask"]);
        }
        other => panic!("expected Error::Interrupted, got {other:?}"),
    }
    // The paused state is still there for whoever wants it.
    assert!(strings(out.into_state().get("log")).is_empty());
    // `Command::resume` needs no type annotation.
    let done = graph
        .invoke(Command::resume("Ada"), &cfg)
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(strings(done.get("log")), ["Ada"]);
}

#[tokio::test]
async fn a_run_stopped_by_interrupt_before_is_interrupted_with_the_next_node() {
    let saver = saver();
    let graph = chain()
        .compile_with(
            CompileOptions::new()
                .checkpointer(saver.clone())
                .interrupt_before(["b"]),
        )
        .unwrap();
    let cfg = RunConfig::thread("t");
    let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
    assert!(
        out.interrupts.is_empty(),
        "a breakpoint has no interrupt value"
    );
    assert!(out.is_interrupted());
    assert_eq!(out.next, ["b"]);
    let err = out.done().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the run paused before b; resume the thread to continue"
    );
    let done = graph.invoke(stategraph::NoInput, &cfg).await.unwrap();
    assert!(!done.is_interrupted());
    assert_eq!(strings(done.get("log")), ["a", "b"]);
}

/// The thread id and reason of a [`Error::NothingToResume`].
fn nothing_to_resume<T: std::fmt::Debug>(r: stategraph::Result<T>) -> (String, String) {
    match r {
        Err(Error::NothingToResume { thread_id, reason }) => (thread_id, reason),
        other => panic!("expected NothingToResume, got {other:?}"),
    }
}

// Python 1.2.24 returns the final state again for `Command(resume=..)` on a finished
// thread, and fails with a KeyError on a thread without checkpoints; both are
// `NothingToResume` here.
#[tokio::test]
async fn resuming_with_a_value_when_no_interrupt_waits_is_nothing_to_resume() {
    let saver = saver();
    let graph = with_saver(&asking(), &saver);
    let cfg = RunConfig::thread("t");
    let (thread, reason) = nothing_to_resume(graph.invoke(Command::resume("x"), &cfg).await);
    assert_eq!(thread, "t");
    assert_eq!(reason, "the thread has no checkpoint");
    let _ = graph.invoke(log_input(&[]), &cfg).await.unwrap();
    let done = graph.invoke(Command::resume("Ada"), &cfg).await.unwrap();
    assert!(!done.is_interrupted());
    let (_, reason) = nothing_to_resume(graph.invoke(Command::resume("again"), &cfg).await);
    assert_eq!(
        reason,
        "no interrupt is waiting for an answer and nothing is left to run"
    );
    // Nothing was stored by the refused resumes.
    let state = graph.get_state(&cfg).await.unwrap();
    assert_eq!(strings(state.values.get("log")), ["Ada"]);
}

// Python returns the final state again for `invoke(None)` on a finished thread, and
// raises EmptyInputError on a thread without checkpoints (kept: `Error::EmptyInput`, whose
// text names the thread: issue 21, a mistyped thread id read as "Received no input").
#[tokio::test]
async fn continuing_a_finished_thread_is_nothing_to_resume() {
    let saver = saver();
    let graph = with_saver(&chain(), &saver);
    let cfg = RunConfig::thread("t");
    match graph.invoke(stategraph::NoInput, &cfg).await {
        Err(Error::EmptyInput(text)) => {
            assert!(text.contains(r#"thread "t" has no checkpoint"#), "{text}")
        }
        other => panic!("expected EmptyInput, got {other:?}"),
    }
    let _ = graph.invoke(log_input(&[]), &cfg).await.unwrap();
    let before = crate::util::history(&saver, "t").await.len();
    let (thread, reason) = nothing_to_resume(graph.invoke(stategraph::NoInput, &cfg).await);
    assert_eq!(thread, "t");
    assert!(reason.contains("nothing is left to run"), "{reason}");
    assert_eq!(crate::util::history(&saver, "t").await.len(), before);
}

#[tokio::test]
async fn a_checkpoint_id_the_thread_does_not_have_is_checkpoint_not_found() {
    let saver = saver();
    let graph = with_saver(&chain(), &saver);
    let _ = graph
        .invoke(log_input(&[]), &RunConfig::thread("t"))
        .await
        .unwrap();
    let missing = "1f0000000-0000-6000-8000-000000000000";
    let at = RunConfig::thread("t").at_checkpoint(missing);
    let expect_missing = |e: Error| match e {
        Error::CheckpointNotFound {
            thread_id,
            checkpoint_id,
        } => {
            assert_eq!(thread_id, "t");
            assert_eq!(checkpoint_id, missing);
        }
        other => panic!("expected CheckpointNotFound, got {other:?}"),
    };
    // Python silently starts over (invoke), shows an empty snapshot (get_state) or
    // writes a new root checkpoint (update_state).
    expect_missing(graph.invoke(log_input(&[]), &at).await.unwrap_err());
    expect_missing(graph.invoke(stategraph::NoInput, &at).await.unwrap_err());
    expect_missing(graph.get_state(&at).await.unwrap_err());
    expect_missing(
        graph
            .update_state(&at, log_input(&["x"]), Some("a"))
            .await
            .unwrap_err(),
    );
    // An id of another thread is not found either.
    let head = graph.get_state(&RunConfig::thread("t")).await.unwrap();
    let id = head.config.unwrap().checkpoint_id.unwrap();
    let other = RunConfig::thread("other").at_checkpoint(id);
    assert!(matches!(
        graph.get_state(&other).await,
        Err(Error::CheckpointNotFound { .. })
    ));
}

/// `START -> router`; `router` logs and goes where `target` says; `a` ends.
fn routing_to(target: &'static str) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("router", move |_s: DynState| async move {
        Command::goto(target)
            .with_update(stategraph::update([("log", stategraph::list!["router"])]))
    });
    g.add_node("a", logs("a"));
    g.add_edge(START, "router").add_edge("a", END);
    g
}

fn expect_unknown_node<T: std::fmt::Debug>(r: stategraph::Result<T>, node: &str, by: &str) {
    match r {
        Err(Error::UnknownNode { node: n, by: b }) => {
            assert_eq!((n.as_str(), b.as_str()), (node, by));
        }
        other => panic!("expected UnknownNode {node:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_goto_to_an_unknown_node_fails_the_run_unless_writes_are_lenient() {
    let saver = saver();
    let graph = with_saver(&routing_to("nope"), &saver);
    let cfg = RunConfig::thread("t");
    let err = graph.invoke(log_input(&[]), &cfg).await;
    expect_unknown_node(err, "nope", "router");
    // The failure is stored as the task's error, like any node failure.
    let state = graph.get_state(&cfg).await.unwrap();
    assert_eq!(state.next, ["router"]);
    assert_eq!(
        state.tasks[0].error,
        Some(Value::from("unknown node \"nope\" (addressed by router)"))
    );
    // Lenient: LangGraph's behaviour, the write is dropped and the run ends.
    let lenient = routing_to("nope")
        .compile_with(CompileOptions::new().lenient_writes(true))
        .unwrap();
    let out = lenient
        .invoke(log_input(&[]), &RunConfig::default())
        .await
        .unwrap();
    assert!(!out.is_interrupted());
    assert_eq!(strings(out.get("log")), ["router"]);
}

#[tokio::test]
async fn a_conditional_edge_or_send_to_an_unknown_node_fails_the_run() {
    let mut g = log_graph();
    g.add_node("a", logs("a"));
    g.add_edge(START, "a");
    g.add_conditional_edges("a", |_s: &DynState| "ghost");
    let r = g
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await;
    expect_unknown_node(r, "ghost", "a");

    let mut g = log_graph();
    g.add_node("a", logs("a"));
    g.add_edge(START, "a").add_edge("a", END);
    g.add_conditional_edges(START, |_s: &DynState| {
        vec![stategraph::Send::new("ghost", stategraph::map! {"i" => 1})]
    });
    let r = g
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await;
    expect_unknown_node(r, "ghost", "__start__");
}

#[tokio::test]
async fn unknown_targets_in_an_input_command_or_update_state_are_errors() {
    let saver = saver();
    let graph = with_saver(&chain(), &saver);
    let cfg = RunConfig::thread("t");
    let _ = graph.invoke(log_input(&[]), &cfg).await.unwrap();
    let goto: Command = Command::goto("nope");
    expect_unknown_node(graph.invoke(goto, &cfg).await, "nope", "input");
    let update = Command::update(stategraph::update([("zzz", 1)]));
    match graph.invoke(update, &cfg).await {
        Err(Error::UnknownChannel { channel, by }) => {
            assert_eq!((channel.as_str(), by.as_str()), ("zzz", "input"));
        }
        other => panic!("expected UnknownChannel, got {other:?}"),
    }
    // Python raises InvalidUpdateError("Node nope does not exist") here.
    expect_unknown_node(
        graph
            .update_state(&cfg, log_input(&["x"]), Some("nope"))
            .await,
        "nope",
        "update_state",
    );
    match graph
        .update_state(&cfg, stategraph::update([("zzz", 1)]), Some("a"))
        .await
    {
        Err(Error::UnknownChannel { channel, by }) => {
            assert_eq!((channel.as_str(), by.as_str()), ("zzz", "update_state"));
        }
        other => panic!("expected UnknownChannel, got {other:?}"),
    }
    // None of them stored anything.
    let state = graph.get_state(&cfg).await.unwrap();
    assert_eq!(strings(state.values.get("log")), ["a", "b"]);
    assert_eq!(state.metadata.unwrap().step, Some(2));
}

#[tokio::test]
async fn a_missing_thread_id_and_a_zero_recursion_limit_are_config_errors() {
    let saver = saver();
    let graph = with_saver(&chain(), &saver);
    for r in [
        graph
            .invoke(log_input(&[]), &RunConfig::default())
            .await
            .map(|_| ()),
        graph.get_state(&RunConfig::default()).await.map(|_| ()),
        graph
            .invoke(log_input(&[]), &RunConfig::thread("t").recursion_limit(0))
            .await
            .map(|_| ()),
    ] {
        match r {
            Err(Error::InvalidConfig(msg)) => assert!(!msg.is_empty()),
            other => panic!("expected InvalidConfig, got {other:?}"),
        }
    }
}

// Python passes `snapshot.config`, `snapshot.parent_config` and what `update_state`
// returns straight back to `invoke` / `get_state`; so does stategraph.
#[tokio::test]
async fn snapshot_and_update_state_configs_are_accepted_by_invoke_and_get_state() {
    let saver = saver();
    let graph = chain()
        .compile_with(
            CompileOptions::new()
                .checkpointer(saver.clone())
                .interrupt_before(["b"]),
        )
        .unwrap();
    let _ = graph
        .invoke(log_input(&["in"]), &RunConfig::thread("t"))
        .await
        .unwrap();
    let paused = graph.get_state(&RunConfig::thread("t")).await.unwrap();
    assert_eq!(paused.next, ["b"]);
    let again = graph.get_state(&paused.config).await.unwrap();
    assert_eq!(again.values, paused.values);
    // update_state's config reads back the updated state.
    let updated = graph
        .update_state(&paused.config, log_input(&["human"]), Some("a"))
        .await
        .unwrap();
    let after_update = graph.get_state(&updated).await.unwrap();
    assert_eq!(
        strings(after_update.values.get("log")),
        ["in", "a", "human"]
    );
    // Resuming from the snapshot's config continues the paused run (as of that checkpoint).
    let out = graph
        .invoke(stategraph::NoInput, &paused.config)
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["in", "a", "b"]);
    // And its parent config replays the step before.
    let replay = graph
        .invoke(stategraph::NoInput, &paused.parent_config)
        .await
        .unwrap();
    assert_eq!(
        replay.next,
        ["b"],
        "a replay from before `a` stops ahead of `b` again"
    );
    assert_eq!(strings(replay.get("log")), ["in", "a"]);
    // A run config turns into the checkpoint config it addresses.
    let cfg =
        stategraph::checkpoint::CheckpointConfig::from(RunConfig::thread("t").at_checkpoint("x"));
    assert_eq!(
        (cfg.thread_id.as_str(), cfg.checkpoint_id.as_deref()),
        ("t", Some("x"))
    );
}

#[tokio::test]
async fn batch_runs_every_input_and_keeps_their_order_and_errors() {
    let saver = saver();
    let graph = with_saver(&chain(), &saver);
    let results = graph
        .batch(
            [log_input(&["1"]), log_input(&["2"]), log_input(&["3"])],
            [
                RunConfig::thread("b1"),
                RunConfig::thread("b2").recursion_limit(0),
                RunConfig::thread("b3"),
            ],
        )
        .await
        .unwrap();
    assert_eq!(results.len(), 3);
    let logs: Vec<Vec<String>> = results
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|o| strings(o.get("log")))
        .collect();
    assert_eq!(logs, [["1", "a", "b"], ["3", "a", "b"]]);
    assert!(matches!(results[1], Err(Error::InvalidConfig(_))));
    // One config for every input.
    let plain = chain().compile().unwrap();
    let all = plain
        .batch(
            [log_input(&["x"]), log_input(&["y"])],
            [RunConfig::default()],
        )
        .await
        .unwrap();
    let firsts: Vec<String> = all
        .into_iter()
        .map(|r| strings(r.unwrap().get("log"))[0].clone())
        .collect();
    assert_eq!(firsts, ["x", "y"]);
    // Two inputs and three configs do not pair up.
    let mismatched = plain
        .batch(
            [log_input(&[]), log_input(&[])],
            [
                RunConfig::default(),
                RunConfig::default(),
                RunConfig::default(),
            ],
        )
        .await;
    assert!(matches!(mismatched, Err(Error::InvalidConfig(_))));
}

#[tokio::test]
async fn with_config_defaults_apply_under_each_calls_config() {
    let saver = saver();
    let graph = with_saver(&chain(), &saver).with_config(
        RunConfig::thread("default-thread")
            .recursion_limit(1)
            .with_metadata("who", "defaults"),
    );
    // The default thread is used when the call gives none; the default recursion limit
    // (1) stops the three-step chain.
    match graph.invoke(log_input(&[]), &RunConfig::default()).await {
        Err(Error::RecursionLimit(1)) => {}
        other => panic!("expected RecursionLimit(1), got {other:?}"),
    }
    let stored = graph.get_state(&RunConfig::default()).await.unwrap();
    assert_eq!(
        stored.config.unwrap().thread_id,
        "default-thread",
        "get_state reads the default thread too"
    );
    // The call's own values win.
    let out = graph
        .invoke(
            log_input(&[]),
            &RunConfig::thread("own").recursion_limit(10),
        )
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["a", "b"]);
    let own = graph.get_state(&RunConfig::thread("own")).await.unwrap();
    assert_eq!(
        own.metadata.unwrap().extra.get("who"),
        Some(&Value::from("defaults")),
        "default metadata reaches the stored checkpoints"
    );
}

#[tokio::test]
async fn an_interrupts_response_schema_reaches_the_caller_and_the_stored_write() {
    let schema = stategraph::map! {"type" => "boolean"};
    let mut g = log_graph();
    let asked = schema.clone();
    g.add_node("ask", move |_s: DynState, ctx: NodeContext| {
        let asked = asked.clone();
        async move {
            let answer = ctx.interrupt_with("approve?", asked)?;
            Ok::<_, NodeError>(stategraph::update([("log", Value::list(vec![answer]))]))
        }
    });
    g.add_edge(START, "ask").add_edge("ask", END);
    let saver = saver();
    let graph = with_saver(&g, &saver);
    let cfg = RunConfig::thread("t");
    let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
    assert_eq!(
        out.interrupts,
        [
            stategraph::Interrupt::new("approve?", out.interrupts[0].id.clone())
                .with_response_schema(schema.clone())
        ]
    );
    let shown = graph.get_state(&cfg).await.unwrap();
    assert_eq!(shown.interrupts, out.interrupts);
    // Stored as Python stores `Interrupt(value, id, response_schema)`.
    let head = crate::util::history(&saver, "t").await.pop().unwrap();
    let write = head
        .pending_writes
        .iter()
        .find(|w| w.channel == "__interrupt__")
        .unwrap();
    let stored = write.value.as_list().unwrap()[0].as_ext().unwrap();
    let fields = &stored.as_object().unwrap().data;
    assert_eq!(fields.get("response_schema"), Some(&schema));
    // A plain `interrupt` stores None, as Python does.
    let plain = with_saver(&asking(), &saver);
    let out = plain
        .invoke(log_input(&[]), &RunConfig::thread("p"))
        .await
        .unwrap();
    assert_eq!(out.interrupts[0].response_schema, None);
    let done = graph.invoke(Command::resume(true), &cfg).await.unwrap();
    assert_eq!(done.get("log"), Some(&stategraph::list![true]));
}
