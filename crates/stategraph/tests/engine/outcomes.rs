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
