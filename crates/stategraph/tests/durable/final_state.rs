//! `stream_run`'s final state: once a run ended normally it is, field by field, what
//! `get_state` reads from the saver afterwards, for every durability mode; a failed run
//! has none.

use futures::StreamExt;
use stategraph::graph::IntoInput;
use stategraph::pregel::snapshot::{StateSnapshot, TaskState};
use stategraph::{
    list, Command, CompileOptions, CompiledGraph, Durability, DynState, NoInput, NodeContext,
    NodeError, RunConfig, StateGraph, StreamMode, Value, END, START,
};

use crate::for_each_saver;
use crate::util::{log, log_graph, log_input, logs, strings, with_saver, Calls};

const MODES: [Durability; 3] = [Durability::Sync, Durability::Async, Durability::Exit];

/// Streams a run with `stream_run`, drains it, and checks that its final state equals
/// `get_state` of the thread read afterwards; returns that state.
async fn run_and_compare(
    graph: &CompiledGraph<DynState>,
    input: impl IntoInput,
    cfg: &RunConfig,
) -> StateSnapshot {
    let mut run = graph.stream_run(input, cfg, [StreamMode::Values, StreamMode::Updates]);
    while let Some(event) = run.next().await {
        event.unwrap();
    }
    let fin = run
        .final_state()
        .cloned()
        .expect("a run that ended has a final state");
    let thread = RunConfig::thread(cfg.thread_id.clone().unwrap());
    let read = graph.get_state(&thread).await.unwrap();
    let mode = cfg.durability;
    assert_eq!(fin.values, read.values, "values, {mode:?}");
    assert_eq!(fin.next, read.next, "next, {mode:?}");
    assert_eq!(fin.tasks, read.tasks, "tasks, {mode:?}");
    assert_eq!(fin.interrupts, read.interrupts, "interrupts, {mode:?}");
    assert_eq!(fin.config, read.config, "config, {mode:?}");
    assert_eq!(fin.metadata, read.metadata, "metadata, {mode:?}");
    assert_eq!(fin.created_at, read.created_at, "created_at, {mode:?}");
    assert_eq!(
        fin.parent_config, read.parent_config,
        "parent_config, {mode:?}"
    );
    assert_eq!(fin, read);
    fin
}

fn config(thread: &str, mode: Durability) -> RunConfig {
    RunConfig::thread(thread)
        .durability(mode)
        .with_metadata("run_id", format!("run-{thread}"))
}

/// `START -> a -> b -> c -> END`.
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

/// `START -> a -> ask -> END`, `ask` asking `questions` in turn and logging the answers.
fn asking(calls: &Calls, questions: usize) -> StateGraph<DynState> {
    let mut g = log_graph();
    let c = calls.clone();
    g.add_node("a", logs("a", calls))
        .add_node("ask", move |_s: DynState, ctx: NodeContext| {
            c.hit("ask");
            async move {
                let mut answers = Vec::new();
                for i in 0..questions {
                    let a = ctx.interrupt(format!("q{i}?"))?;
                    answers.push(a.as_str().unwrap_or_default().to_owned());
                }
                let line = format!("ask:{}", answers.join("+"));
                Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
            }
        });
    g.add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", END);
    g
}

for_each_saver! {
    async fn a_plain_run_and_a_second_one_end_in_the_state_get_state_reads(saver) {
        for mode in MODES {
            let graph = with_saver(&chain(&Calls::new()), &saver);
            let cfg = config(&format!("plain-{mode:?}"), mode);
            let fin = run_and_compare(&graph, log_input(&["in"]), &cfg).await;
            assert_eq!(strings(fin.values.get("log")), log(&["in", "a", "b", "c"]));
            assert!(fin.next.is_empty() && fin.tasks.is_empty());
            // The second run (another run id) starts from the first one's head.
            let second = cfg.clone().with_metadata("run_id", "second");
            let fin = run_and_compare(&graph, log_input(&["again"]), &second).await;
            assert_eq!(strings(fin.values.get("log")).len(), 8, "{mode:?}");
            assert!(fin.parent_config.is_some(), "{mode:?}");
        }
    }
}

for_each_saver! {
    async fn an_interrupt_and_its_resume_end_in_the_state_get_state_reads(saver) {
        for mode in MODES {
            let calls = Calls::new();
            let graph = with_saver(&asking(&calls, 1), &saver);
            let cfg = config(&format!("ask-{mode:?}"), mode);
            let fin = run_and_compare(&graph, log_input(&[]), &cfg).await;
            assert_eq!(fin.next, ["ask"]);
            assert_eq!(fin.interrupts.len(), 1);
            assert_eq!(fin.interrupts[0].value, Value::from("q0?"));
            let fin = run_and_compare(&graph, Command::resume("yes"), &cfg).await;
            assert_eq!(strings(fin.values.get("log")), log(&["a", "ask:yes"]));
            assert!(fin.next.is_empty() && fin.interrupts.is_empty());
        }
    }
}

// The resumed node asks again before any checkpoint is made: the head is the loaded one,
// with the answer and the new interrupt written against it.
for_each_saver! {
    async fn a_resume_that_interrupts_again_ends_in_the_state_get_state_reads(saver) {
        for mode in MODES {
            let calls = Calls::new();
            let graph = with_saver(&asking(&calls, 2), &saver);
            let cfg = config(&format!("twice-{mode:?}"), mode);
            let first = run_and_compare(&graph, log_input(&[]), &cfg).await;
            let second = run_and_compare(&graph, Command::resume("x"), &cfg).await;
            assert_eq!(second.config, first.config, "no new checkpoint, {mode:?}");
            assert_eq!(second.interrupts[0].value, Value::from("q1?"));
            let fin = run_and_compare(&graph, Command::resume("y"), &cfg).await;
            assert_eq!(strings(fin.values.get("log")), log(&["a", "ask:x+y"]));
        }
    }
}

for_each_saver! {
    async fn breakpoints_before_and_after_end_in_the_state_get_state_reads(saver) {
        for mode in MODES {
            let calls = Calls::new();
            let options = CompileOptions::new().interrupt_before(["c"]);
            let graph = chain(&calls)
                .compile_with(options.checkpointer(saver.clone()))
                .unwrap();
            let thread = format!("breakpoints-{mode:?}");
            let after_a = config(&thread, mode).interrupt_after(["a"]);
            let fin = run_and_compare(&graph, log_input(&[]), &after_a).await;
            assert_eq!(fin.next, ["b"]);
            let fin = run_and_compare(&graph, NoInput, &config(&thread, mode)).await;
            assert_eq!(fin.next, ["c"]);
            let fin = run_and_compare(&graph, NoInput, &config(&thread, mode)).await;
            assert_eq!(strings(fin.values.get("log")), log(&["a", "b", "c"]));
        }
    }
}

/// `START` sends `worker` three items; with `fail`, the worker for `"two"` fails on its
/// first call.
fn send_fan_out(calls: &Calls, fail: bool) -> StateGraph<DynState> {
    let mut g = log_graph();
    let c = calls.clone();
    g.add_node("worker", move |s: DynState| {
        let item = s.get("item").and_then(Value::as_str).unwrap().to_owned();
        let n = c.hit(&item);
        async move {
            if fail && item == "two" && n == 1 {
                return Err(NodeError::named("ValueError", "two failed"));
            }
            Ok(stategraph::update([("log", list![item])]))
        }
    });
    g.add_conditional_edges(START, |_s: &DynState| {
        ["one", "two", "three"]
            .map(|i| stategraph::Send::new("worker", stategraph::map! { "item" => i }))
            .to_vec()
    });
    g.add_edge("worker", END);
    g
}

for_each_saver! {
    async fn a_send_fan_out_ends_in_the_state_get_state_reads(saver) {
        for mode in MODES {
            let graph = with_saver(&send_fan_out(&Calls::new(), false), &saver);
            let cfg = config(&format!("send-{mode:?}"), mode).max_concurrency(1);
            let fin = run_and_compare(&graph, log_input(&[]), &cfg).await;
            assert_eq!(strings(fin.values.get("log")), log(&["one", "two", "three"]));
        }
    }
}

// A failed run has no final state (the caller reads the thread); the rerun has one.
for_each_saver! {
    async fn a_failed_run_has_no_final_state(saver) {
        for mode in MODES {
            let graph = with_saver(&send_fan_out(&Calls::new(), true), &saver);
            let cfg = config(&format!("fail-{mode:?}"), mode).max_concurrency(1);
            let mut run = graph.stream_run(log_input(&[]), &cfg, [StreamMode::Values]);
            let mut last = None;
            while let Some(event) = run.next().await {
                last = Some(event);
            }
            assert!(matches!(last, Some(Err(stategraph::Error::Node { .. }))), "{mode:?}");
            assert!(run.final_state().is_none(), "{mode:?}");
            let fin = run_and_compare(&graph, NoInput, &cfg).await;
            assert_eq!(strings(fin.values.get("log")), log(&["one", "two", "three"]));
        }
    }
}

/// `START -> pre -> sub -> END` where `sub` runs `i1 -> ask`, `ask` interrupting.
fn nested(calls: &Calls) -> StateGraph<DynState> {
    let sub = asking(calls, 1).compile().unwrap();
    let mut g = log_graph();
    g.add_node("pre", logs("pre", calls))
        .add_subgraph("sub", &sub);
    g.add_edge(START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", END);
    g
}

for_each_saver! {
    async fn a_subgraph_interrupt_and_its_resume_end_in_the_state_get_state_reads(saver) {
        for mode in MODES {
            let graph = with_saver(&nested(&Calls::new()), &saver);
            let cfg = config(&format!("sub-{mode:?}"), mode);
            let fin = run_and_compare(&graph, log_input(&[]), &cfg).await;
            assert_eq!(fin.next, ["sub"]);
            assert_eq!(fin.interrupts.len(), 1);
            assert!(matches!(fin.tasks[0].state, Some(TaskState::Config(_))));
            let fin = run_and_compare(&graph, Command::resume("ok"), &cfg).await;
            assert!(fin.next.is_empty());
            assert!(strings(fin.values.get("log")).contains(&"ask:ok".to_owned()));
        }
    }
}

// A client command with an update and a goto on a paused thread.
for_each_saver! {
    async fn a_command_update_and_goto_end_in_the_state_get_state_reads(saver) {
        for mode in MODES {
            let graph = with_saver(&asking(&Calls::new(), 1), &saver);
            let cfg = config(&format!("goto-{mode:?}"), mode);
            run_and_compare(&graph, log_input(&[]), &cfg).await;
            let cmd = Command::update(log_input(&["client"])).and_goto("a");
            let fin = run_and_compare(&graph, cmd, &cfg).await;
            assert_eq!(fin.interrupts.len(), 1, "{mode:?}");
        }
    }
}

/// Streams a run to its end: its last error, if any, and its final state.
async fn end_of(
    graph: &CompiledGraph<DynState>,
    input: impl IntoInput,
    cfg: &RunConfig,
) -> (Option<stategraph::Error>, Option<StateSnapshot>) {
    let mut run = graph.stream_run(input, cfg, [StreamMode::Values]);
    let mut error = None;
    while let Some(event) = run.next().await {
        error = event.err();
    }
    (error, run.into_final_state())
}

// Runs addressed at an older checkpoint. A resume there is refused by a fencing saver
// (the thread moved on): no final state; an unfenced saver stores its child, the newest
// checkpoint, and the final state is the thread's. A replay puts a fork: likewise.
for_each_saver! {
    async fn a_run_at_an_older_checkpoint_ends_in_the_state_get_state_reads_or_has_none(saver) {
        for mode in MODES {
            let graph = with_saver(&asking(&Calls::new(), 2), &saver);
            let thread = format!("older-{mode:?}");
            let cfg = config(&thread, mode);
            let paused = run_and_compare(&graph, log_input(&[]), &cfg).await;
            run_and_compare(&graph, Command::resume("x"), &cfg).await;
            run_and_compare(&graph, Command::resume("y"), &cfg).await;
            let older = RunConfig::from(&paused.config).durability(mode);

            let (error, fin) = end_of(&graph, Command::resume("z"), &older).await;
            let read = graph.get_state(&RunConfig::thread(&thread)).await.unwrap();
            match error {
                Some(e) => {
                    assert!(
                        matches!(e, stategraph::Error::Conflict { .. }),
                        "{mode:?}: {e:?}"
                    );
                    assert_eq!(fin, None, "{mode:?}");
                }
                None => assert_eq!(fin, Some(read), "{mode:?}"),
            }

            let replay = older.clone().with_metadata("run_id", "replay");
            let fin = run_and_compare(&graph, NoInput, &replay).await;
            assert_ne!(fin.config, paused.config, "{mode:?}: a fork");
            assert_eq!(fin.interrupts.len(), 1, "{mode:?}: asked again");
        }
    }
}

// Without a checkpointer there is no thread to read: no final state.
#[tokio::test]
async fn a_run_without_a_checkpointer_has_no_final_state() {
    let graph = chain(&Calls::new()).compile().unwrap();
    let mut run = graph.stream_run(log_input(&[]), &RunConfig::default(), [StreamMode::Values]);
    while let Some(event) = run.next().await {
        event.unwrap();
    }
    assert!(run.final_state().is_none());
}
