//! Time travel: reading a thread's history, replaying from a past checkpoint (a `fork`),
//! and changing the state with `update_state` before carrying on.

use stategraph::checkpoint::{CheckpointSource, ListOptions};
use stategraph::pregel::snapshot::StateSnapshot;
use stategraph::{
    list, Command, CompileOptions, CompiledGraph, DynState, Error, NoInput, NodeContext, NodeError,
    RunConfig, StateGraph, Value, END, START,
};

use crate::for_each_saver;
use crate::util::{
    expect, history, log_graph, log_input, log_of, logs, parent_id, strings, with_saver, Calls,
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

fn step_of(s: &StateSnapshot) -> i64 {
    s.metadata.as_ref().unwrap().step.unwrap()
}

fn id_of(s: &StateSnapshot) -> String {
    s.config.as_ref().unwrap().checkpoint_id.clone().unwrap()
}

/// The steps of the thread's history narrowed by `options`.
async fn steps_with(graph: &CompiledGraph<DynState>, options: ListOptions) -> Vec<i64> {
    let cfg = RunConfig::thread("t");
    let h = graph.get_state_history(&cfg, &options).await.unwrap();
    h.iter().map(step_of).collect()
}

fn update(item: &str) -> Update {
    stategraph::update([("log", list![item])])
}

// Python: steps 3, 2, 1, 0, -1 newest first; `next` of each is the node that ran from it;
// `filter`, `before` and `limit` narrow the list as `saver.list` does.
for_each_saver! {
    async fn the_history_lists_checkpoints_newest_first_and_can_be_narrowed(saver) {
        let graph = with_saver(&chain(&Calls::new()), &saver);
        let cfg = RunConfig::thread("t");
        let _ = graph.invoke(log_input(&["in"]), &cfg).await.unwrap();
        let all = graph
            .get_state_history(&cfg, &ListOptions::default())
            .await
            .unwrap();
        let steps: Vec<i64> = all.iter().map(step_of).collect();
        assert_eq!(steps, [3, 2, 1, 0, -1]);
        let next: Vec<Vec<String>> = all.iter().map(|s| s.next.clone()).collect();
        let expected: [&[&str]; 5] = [&[], &["c"], &["b"], &["a"], &["__start__"]];
        assert_eq!(next, expected);
        assert_eq!(strings(all[2].values.get("log")), ["in", "a"]);
        for pair in all.windows(2) {
            assert_eq!(
                pair[0].parent_config.as_ref().unwrap().checkpoint_id,
                pair[1].config.as_ref().unwrap().checkpoint_id,
                "each checkpoint's parent is the one before it"
            );
        }
        assert!(all[4].parent_config.is_none());

        let by_source = ListOptions::default().filter("source", "loop");
        assert_eq!(steps_with(&graph, by_source).await, [3, 2, 1, 0]);
        let by_step = ListOptions::default().filter("step", 1);
        assert_eq!(steps_with(&graph, by_step).await, [1]);
        let before = all[1].config.clone().unwrap();
        let older = ListOptions::default().before(before.clone());
        assert_eq!(steps_with(&graph, older).await, [1, 0, -1]);
        assert_eq!(
            steps_with(&graph, ListOptions::default().limit(2)).await,
            [3, 2]
        );
        let both = ListOptions::default().before(before).limit(2);
        assert_eq!(steps_with(&graph, both).await, [1, 0]);
    }
}

// Python: invoking with the step-1 checkpoint's id reruns `b` and `c` only; the first new
// checkpoint is a `fork` at step 2 whose parent is the step-1 checkpoint, followed by
// `loop` checkpoints 3 and 4. The original branch is kept.
for_each_saver! {
    async fn a_replay_from_a_past_checkpoint_forks_the_thread_there(saver) {
        let calls = Calls::new();
        let graph = with_saver(&chain(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let _ = graph.invoke(log_input(&["in"]), &cfg).await.unwrap();
        let past = graph
            .get_state_history(&cfg, &ListOptions::default().filter("step", 1))
            .await
            .unwrap()
            .remove(0);
        assert_eq!(past.next, ["b"]);
        let past_id = id_of(&past);
        let before = history(&saver, "t").await.len();

        let replay = cfg.clone().at_checkpoint(&past_id);
        let out = graph.invoke(NoInput, &replay).await.unwrap();
        assert_eq!(log_of(&out), ["in", "a", "b", "c"]);
        assert_eq!(
            calls.counts(["a", "b", "c"]),
            expect([("a", 1), ("b", 2), ("c", 2)]),
            "only the steps after the checkpoint run again"
        );
        let stored = history(&saver, "t").await;
        assert_eq!(stored.len(), before + 3, "the old branch is kept");
        let fork = &stored[before];
        assert_eq!(fork.metadata.source, Some(CheckpointSource::Fork));
        assert_eq!(fork.metadata.step, Some(2));
        assert_eq!(parent_id(fork), Some(past_id));
        let rest: Vec<(Option<CheckpointSource>, Option<i64>)> = stored[before + 1..]
            .iter()
            .map(|t| (t.metadata.source.clone(), t.metadata.step))
            .collect();
        let looped = Some(CheckpointSource::Loop);
        assert_eq!(rest, [(looped.clone(), Some(3)), (looped, Some(4))]);
        let head = graph.get_state(&cfg).await.unwrap();
        assert_eq!(step_of(&head), 4, "the fork is the thread's head now");
    }
}

// Python: at a breakpoint before `b`, `update_state` without `as_node` is attributed to
// `a` (the node that ran last): the update is logged, `next` is still `b`, and the
// resumed run sees it.
for_each_saver! {
    async fn update_state_at_a_breakpoint_is_seen_by_the_resumed_run(saver) {
        let calls = Calls::new();
        let options = CompileOptions::new()
            .checkpointer(saver.clone())
            .interrupt_before(["b"]);
        let graph = chain(&calls).compile_with(options).unwrap();
        let cfg = RunConfig::thread("t");
        let _ = graph.invoke(log_input(&["in"]), &cfg).await.unwrap();
        graph
            .update_state(&cfg, update("edited"), None)
            .await
            .unwrap();
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["b"]);
        assert_eq!(strings(state.values.get("log")), ["in", "a", "edited"]);
        let md = state.metadata.unwrap();
        assert_eq!(
            (md.source, md.step),
            (Some(CheckpointSource::Update), Some(2))
        );

        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["in", "a", "edited", "b", "c"]);
        assert_eq!(
            calls.counts(["a", "b", "c"]),
            expect([("a", 1), ("b", 1), ("c", 1)])
        );
    }
}

// Python: `pre -> ask -> END`, `ask` interrupted. `update_state` is attributed to `pre`,
// so `ask` is scheduled again and no interrupt is pending at the new checkpoint; the
// resume then answers the rerun of `ask`, which sees the update.
for_each_saver! {
    async fn update_state_on_an_interrupted_thread_then_resume(saver) {
        let calls = Calls::new();
        let mut g = log_graph();
        g.add_node("pre", logs("pre", &calls));
        let c = calls.clone();
        g.add_node("ask", move |s: DynState, ctx: NodeContext| {
            c.hit("ask");
            async move {
                let a = ctx.interrupt("name?")?;
                let seen = strings(s.get("log")).len();
                let line = format!("ask:{}:{seen}", a.as_str().unwrap());
                Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
            }
        });
        g.add_edge(START, "pre")
            .add_edge("pre", "ask")
            .add_edge("ask", END);
        let graph = with_saver(&g, &saver);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(out.interrupts.len(), 1);

        graph
            .update_state(&cfg, update("edited"), None)
            .await
            .unwrap();
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["ask"]);
        assert!(
            state.interrupts.is_empty(),
            "the new checkpoint has no pending interrupt"
        );
        assert_eq!(strings(state.values.get("log")), ["pre", "edited"]);

        let resume = Command::resume("Ada");
        let out = graph.invoke(resume, &cfg).await.unwrap();
        assert!(out.interrupts.is_empty());
        assert_eq!(log_of(&out.state), ["pre", "edited", "ask:Ada:2"]);
        assert_eq!(
            calls.counts(["pre", "ask"]),
            expect([("pre", 1), ("ask", 2)])
        );
    }
}

// Python (golden `chain3`): `update_state(as_node="b")` on a finished thread schedules
// `c`, and `invoke(None)` runs `c` alone.
for_each_saver! {
    async fn update_state_as_a_node_then_no_input_runs_the_node_it_scheduled(saver) {
        let calls = Calls::new();
        let graph = with_saver(&chain(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let _ = graph.invoke(log_input(&["in"]), &cfg).await.unwrap();
        let stored = graph
            .update_state(&cfg, update("patch"), Some("b"))
            .await
            .unwrap();
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.config.unwrap().checkpoint_id, stored.checkpoint_id);
        assert_eq!(state.next, ["c"]);
        assert_eq!(
            strings(state.values.get("log")),
            ["in", "a", "b", "c", "patch"]
        );

        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["in", "a", "b", "c", "patch", "c"]);
        assert_eq!(
            calls.counts(["a", "b", "c"]),
            expect([("a", 1), ("b", 1), ("c", 2)])
        );
    }
}

// Python: on a new thread the update is the input node's (`next == ('a',)`, step 0); on
// a finished chain it is `c`'s (nothing next); after two parallel nodes it is ambiguous.
for_each_saver! {
    async fn update_state_without_as_node_infers_the_node(saver) {
        let graph = with_saver(&chain(&Calls::new()), &saver);
        let cfg = RunConfig::thread("t");
        graph
            .update_state(&cfg, update("fresh"), None)
            .await
            .unwrap();
        let state = graph.get_state(&cfg).await.unwrap();
        assert_eq!(state.next, ["a"]);
        assert_eq!(strings(state.values.get("log")), ["fresh"]);
        assert_eq!(state.metadata.unwrap().step, Some(0));

        let _ = graph.invoke(log_input(&["in"]), &cfg).await.unwrap();
        graph.update_state(&cfg, update("x"), None).await.unwrap();
        let state = graph.get_state(&cfg).await.unwrap();
        assert!(
            state.next.is_empty(),
            "attributed to c, which leads to END: {:?}",
            state.next
        );
        assert_eq!(
            strings(state.values.get("log")),
            ["fresh", "in", "a", "b", "c", "x"]
        );

        let calls = Calls::new();
        let mut g = log_graph();
        for n in ["p", "q"] {
            g.add_node(n, logs(n, &calls))
                .add_edge(START, n)
                .add_edge(n, END);
        }
        let parallel = with_saver(&g, &saver);
        let cfg = RunConfig::thread("par");
        let _ = parallel.invoke(log_input(&[]), &cfg).await.unwrap();
        let err = parallel
            .update_state(&cfg, update("x"), None)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::InvalidUpdate(m) if m == "Ambiguous update, specify as_node"),
            "{err:?}"
        );
    }
}
