//! Interrupts: static breakpoints (compiled and per call), dynamic `interrupt()` calls
//! answered one by one or by id, interrupts inside a subgraph answered from the parent,
//! and what `get_state` shows of a paused thread.

use std::sync::Arc;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::pregel::snapshot::TaskState;
use stategraph::{
    list, Command, CompileOptions, CompiledGraph, DynState, Error, Interrupt, NoInput, NodeContext,
    NodeError, Resume, RunConfig, StateGraph, Value, END, START,
};

use crate::for_each_saver;
use crate::util::{
    expect, history, log_graph, log_input, log_of, logs, strings, with_saver, writes_to, Calls,
};

type Update = Vec<(String, Value)>;

/// `START -> a -> b -> c -> END`, each logging its name.
fn chain(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    for n in ["a", "b", "c"] {
        g.add_node(n, logs(n, calls));
    }
    g.add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    g
}

fn compile_with(
    g: &StateGraph<DynState>,
    saver: &Arc<dyn CheckpointSaver>,
    options: CompileOptions,
) -> CompiledGraph<DynState> {
    g.compile_with(options.checkpointer(saver.clone())).unwrap()
}

for_each_saver! {
    async fn a_compiled_interrupt_before_stops_ahead_of_the_node(saver) {
        let calls = Calls::new();
        let options = CompileOptions::new().interrupt_before(["b"]);
        let graph = compile_with(&chain(&calls), &saver, options);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert!(
            out.interrupts.is_empty(),
            "a breakpoint carries no interrupt value"
        );
        assert_eq!(log_of(&out.state), ["a"]);
        assert_eq!(calls.counts(["a", "b"]), expect([("a", 1), ("b", 0)]));
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["b"]);
        assert!(state.interrupts.is_empty());
        // Nothing is written for a breakpoint: the last checkpoint already has the state.
        let stored = history(&saver, "t").await;
        assert!(stored.last().unwrap().pending_writes.is_empty());

        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b", "c"]);
        assert_eq!(
            calls.counts(["a", "b", "c"]),
            expect([("a", 1), ("b", 1), ("c", 1)])
        );
    }
}

for_each_saver! {
    async fn a_compiled_interrupt_after_stops_once_the_node_ran(saver) {
        let calls = Calls::new();
        let options = CompileOptions::new().interrupt_after(["a"]);
        let graph = compile_with(&chain(&calls), &saver, options);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert!(out.interrupts.is_empty());
        assert_eq!(log_of(&out.state), ["a"]);
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["b"]);
        assert_eq!(
            state.metadata.unwrap().step,
            Some(1),
            "a's step was saved first"
        );

        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b", "c"]);
        assert_eq!(
            calls.counts(["a", "b", "c"]),
            expect([("a", 1), ("b", 1), ("c", 1)])
        );
    }
}

// Python: the call's `interrupt_before` replaces the compiled one; it does not add to it.
// A call that gives only `interrupt_after` keeps the compiled `interrupt_before`.
for_each_saver! {
    async fn interrupts_given_per_call_replace_the_compiled_ones(saver) {
        let calls = Calls::new();
        let options = CompileOptions::new().interrupt_before(["b"]);
        let graph = compile_with(&chain(&calls), &saver, options);
        let cfg = RunConfig::thread("t").interrupt_before(["c"]);
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b"]);
        assert_eq!(graph.get_state(&cfg).await.unwrap().next, ["c"]);
        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b", "c"]);

        let cfg = RunConfig::thread("t2").interrupt_after(["b"]);
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(
            log_of(&out),
            ["a"],
            "the compiled interrupt_before still applies"
        );
        assert_eq!(graph.get_state(&cfg).await.unwrap().next, ["b"]);
        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b"], "then the call's interrupt_after");
        assert_eq!(graph.get_state(&cfg).await.unwrap().next, ["c"]);
        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b", "c"]);
    }
}

// Python reads the call's list with `or`: an empty `interrupt_before=[]` is "not given",
// so the compiled `interrupt_before=["b"]` still stops the run ahead of `b`.
for_each_saver! {
    // Cause: compiled.rs:128 and :132 take a per-call `Some(vec![])` over the compiled list.

    async fn an_empty_per_call_interrupt_list_falls_back_to_the_compiled_one(saver) {
        let calls = Calls::new();
        let options = CompileOptions::new().interrupt_before(["b"]);
        let graph = compile_with(&chain(&calls), &saver, options);
        let cfg = RunConfig::thread("t")
            .interrupt_before(Vec::<String>::new())
            .interrupt_after(["b"]);
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a"]);
        assert_eq!(graph.get_state(&cfg).await.unwrap().next, ["b"]);
    }
}

/// `START -> two -> END`: `two` asks two questions and logs both answers.
fn two_questions(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    let c = calls.clone();
    g.add_node("two", move |_s: DynState, ctx: NodeContext| {
        c.hit("two");
        async move {
            let x = ctx.interrupt("first?")?;
            let y = ctx.interrupt("second?")?;
            let line = format!("two:{}+{}", x.as_str().unwrap(), y.as_str().unwrap());
            Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
        }
    });
    g.add_edge(START, "two").add_edge("two", END);
    g
}

// Python: `{'two': 1}` stops on "first?", resume "X" reruns `two` (2) and stops on
// "second?", resume "Y" reruns it (3) and logs `two:X+Y`.
for_each_saver! {
    async fn a_node_asking_twice_is_answered_in_order_and_reruns_from_the_top(saver) {
        let calls = Calls::new();
        let graph = with_saver(&two_questions(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(out.interrupts.len(), 1);
        assert_eq!(out.interrupts[0].value, Value::from("first?"));
        let first_id = out.interrupts[0].id.clone();
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["two"]);
        assert_eq!(state.interrupts, out.interrupts);
        assert_eq!(calls.of("two"), 1);

        let resume = Command::resume("X");
        let out = graph.invoke(resume, &cfg).await.unwrap();
        assert_eq!(calls.of("two"), 2);
        assert_eq!(out.interrupts.len(), 1);
        assert_eq!(out.interrupts[0].value, Value::from("second?"));
        assert_ne!(
            out.interrupts[0].id, first_id,
            "the second interrupt has its own id"
        );
        assert_eq!(
            graph.get_state(&cfg).await.unwrap().interrupts,
            out.interrupts
        );

        let resume = Command::resume("Y");
        let out = graph.invoke(resume, &cfg).await.unwrap();
        assert!(out.interrupts.is_empty());
        assert_eq!(log_of(&out.state), ["two:X+Y"]);
        assert_eq!(calls.of("two"), 3);
        let state = graph.get_state(&cfg).await.unwrap();
        assert!(state.next.is_empty() && state.interrupts.is_empty());
        // The answers accumulated, in order, in the task's `__resume__` write (the SQL
        // savers keep the first stored list, docs/format.md#pending-writes).
        let step0 = history(&saver, "t")
            .await
            .into_iter()
            .find(|t| t.metadata.step == Some(0))
            .unwrap();
        let answered = writes_to(&step0, "__resume__");
        assert!(
            answered.contains(&list!["X"]) || answered.contains(&list!["X", "Y"]),
            "{answered:?}"
        );
    }
}

/// `START -> {p, q, r} -> END`: `p` and `q` ask, `r` just logs.
fn two_askers(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    for n in ["p", "q"] {
        let c = calls.clone();
        g.add_node(n, move |_s: DynState, ctx: NodeContext| {
            c.hit(n);
            async move {
                let a = ctx.interrupt(format!("{n}?"))?;
                let line = format!("{n}:{}", a.as_str().unwrap());
                Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
            }
        });
    }
    g.add_node("r", logs("r", calls));
    for n in ["p", "q", "r"] {
        g.add_edge(START, n).add_edge(n, END);
    }
    g
}

/// The id of the interrupt whose value is `value`.
fn id_of(interrupts: &[Interrupt], value: &str) -> String {
    interrupts
        .iter()
        .find(|i| i.value == Value::from(value))
        .unwrap_or_else(|| panic!("no interrupt {value:?} in {interrupts:?}"))
        .id
        .clone()
}

/// A command answering interrupts by id.
fn by_id(answers: Vec<(String, &str)>) -> Command<Update> {
    Command {
        resume: Some(Resume::ById(
            answers
                .into_iter()
                .map(|(id, v)| (id, Value::from(v)))
                .collect(),
        )),
        ..Default::default()
    }
}

// Python: both interrupts pending, `next == ('p', 'q')`; a plain resume is refused;
// a map answering `p` only runs `p` (and reruns `q`, which asks again with the same id);
// answering `q` then finishes. `r` ran once.
for_each_saver! {
    async fn interrupts_of_parallel_tasks_are_resumed_by_id(saver) {
        let calls = Calls::new();
        let graph = with_saver(&two_askers(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(out.interrupts.len(), 2);
        let (p_id, q_id) = (id_of(&out.interrupts, "p?"), id_of(&out.interrupts, "q?"));
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["p", "q"]);
        assert_eq!(state.interrupts.len(), 2);
        assert_eq!(strings(state.values.get("log")), ["r"]);

        let err = graph
            .invoke(Command::resume("plain"), &cfg)
            .await
            .unwrap_err();
        let multiple = "When there are multiple pending interrupts";
        assert!(
            matches!(&err, Error::InvalidUpdate(m) if m.starts_with(multiple)),
            "{err:?}"
        );

        let out = graph
            .invoke(by_id(vec![(p_id, "P")]), &cfg)
            .await
            .unwrap();
        assert_eq!(out.interrupts.len(), 1, "q is still waiting");
        assert_eq!(out.interrupts[0].id, q_id, "q asks again under the same id");
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["q"]);
        assert_eq!(strings(state.values.get("log")), ["p:P", "r"]);

        let out = graph
            .invoke(by_id(vec![(q_id, "Q")]), &cfg)
            .await
            .unwrap();
        assert!(out.interrupts.is_empty());
        assert_eq!(log_of(&out.state), ["p:P", "q:Q", "r"]);
        assert_eq!(
            calls.counts(["p", "q", "r"]),
            expect([("p", 2), ("q", 3), ("r", 1)])
        );
    }
}

for_each_saver! {
    async fn a_map_answering_every_interrupt_resumes_them_all_at_once(saver) {
        let calls = Calls::new();
        let graph = with_saver(&two_askers(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        let answers = by_id(vec![
            (id_of(&out.interrupts, "q?"), "Q"),
            (id_of(&out.interrupts, "p?"), "P"),
        ]);
        let out = graph.invoke(answers, &cfg).await.unwrap();
        assert!(out.interrupts.is_empty());
        assert_eq!(log_of(&out.state), ["p:P", "q:Q", "r"]);
        assert_eq!(
            calls.counts(["p", "q", "r"]),
            expect([("p", 2), ("q", 2), ("r", 1)])
        );
    }
}

/// A parent `START -> pre -> sub -> post -> END` whose subgraph `inner1 -> inner2` asks
/// in `inner2`; every node logs its name.
fn nested(calls: &Calls) -> StateGraph<DynState> {
    let mut sb = log_graph();
    sb.add_node("inner1", logs("inner1", calls));
    let c = calls.clone();
    sb.add_node("inner2", move |_s: DynState, ctx: NodeContext| {
        c.hit("inner2");
        async move {
            let ok = ctx.interrupt("confirm?")?;
            let line = format!("inner2:{}", ok.as_str().unwrap());
            Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
        }
    });
    sb.add_edge(START, "inner1")
        .add_edge("inner1", "inner2")
        .add_edge("inner2", END);
    let sub = sb.compile().unwrap();
    let mut g = log_graph();
    g.add_node("pre", logs("pre", calls));
    g.add_subgraph("sub", &sub);
    g.add_node("post", logs("post", calls));
    g.add_edge(START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", "post")
        .add_edge("post", END);
    g
}

for_each_saver! {
    async fn an_interrupt_inside_a_subgraph_is_resumed_from_the_parent(saver) {
        let calls = Calls::new();
        let graph = with_saver(&nested(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(out.interrupts.len(), 1);
        assert_eq!(out.interrupts[0].value, Value::from("confirm?"));
        assert_eq!(log_of(&out.state), ["pre"]);
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["sub"]);
        assert_eq!(
            state.interrupts, out.interrupts,
            "the parent task carries the subgraph's interrupt"
        );
        let sub_task = state.tasks.iter().find(|t| t.name == "sub").unwrap();
        let Some(TaskState::Config(sub_cfg)) = &sub_task.state else {
            panic!(
                "the subgraph task points at its namespace: {:?}",
                sub_task.state
            );
        };
        assert!(sub_cfg.ns().starts_with("sub:"), "{:?}", sub_cfg.ns());
        let inner = graph
            .get_state(&RunConfig::thread("t").in_namespace(sub_cfg.ns()))
            .await
            .unwrap();
        assert_eq!(inner.next, ["inner2"]);
        assert_eq!(strings(inner.values.get("log")), ["pre", "inner1"]);
        assert_eq!(inner.interrupts, out.interrupts);

        let resume = Command::resume("yes");
        let out = graph.invoke(resume, &cfg).await.unwrap();
        assert!(out.interrupts.is_empty());
        // The subgraph's final `log` (its input plus its own lines) is the task's write,
        // which the parent's reducer appends: Python shows `pre` twice too.
        assert_eq!(
            log_of(&out.state),
            ["pre", "pre", "inner1", "inner2:yes", "post"]
        );
        assert_eq!(
            calls.counts(["pre", "inner1", "inner2", "post"]),
            expect([("pre", 1), ("inner1", 1), ("inner2", 2), ("post", 1)]),
            "only the interrupted node runs again"
        );
    }
}
