//! `tests/golden/functional.json` (made by `tests/golden/gen_functional.py`: parallel
//! calls, interrupts in an entrypoint and in a task, a task calling a task) reproduced: the
//! same calls on a MemorySaver with the trace's id and clock sources store the same bytes,
//! stream the same `updates`, `values`, `checkpoints` and `tasks`, and read back as the
//! same history.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value as J};
use stategraph::checkpoint::ListOptions;
use stategraph::functional::CompiledEntrypoint;
use stategraph::pregel::snapshot::StateSnapshot;
use stategraph::{Command, RunConfig, StreamMode, Value};

use super::apps::{add_all, nested, review, Counts};
use crate::support::golden::{self, normalize, to_json};

async fn updates<I>(
    app: &CompiledEntrypoint<I, Value>,
    input: impl stategraph::functional::EntrypointInput<I>,
    thread: &str,
) -> Vec<J> {
    app.stream(
        input,
        &RunConfig::thread(thread),
        &[
            StreamMode::Updates,
            StreamMode::Values,
            StreamMode::Checkpoints,
            StreamMode::Tasks,
        ],
    )
    .map(|e| {
        let e = e.expect("event");
        json!([e.mode.as_str(), to_json(&e.data)])
    })
    .collect()
    .await
}

fn history_json(history: &[StateSnapshot]) -> Vec<J> {
    history
        .iter()
        .map(|s| {
            let tasks: Vec<J> = s
                .tasks
                .iter()
                .map(|t| {
                    json!({"id": t.id, "name": t.name, "result": t.result.as_ref().map(to_json),
                           "interrupts": t.interrupts.iter().map(|i| to_json(&i.to_value())).collect::<Vec<_>>()})
                })
                .collect();
            json!({
                "checkpoint_id": s.config.as_ref().and_then(|c| c.checkpoint_id.clone()),
                "values": s.values.get("__end__").map(to_json),
                "next": s.next,
                "metadata": s.metadata.as_ref().map(|m| to_json(&m.to_value())),
                "tasks": tasks,
                "interrupts": s.interrupts.iter().map(|i| to_json(&i.to_value())).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The trace's stream with the `response_schema` of the interrupts of `checkpoints` and
/// `tasks` events left out: the engine shapes those as `{value, id}` (what the other golden
/// traces, made by LangGraph 1.2.22, hold); 1.2.24 adds `response_schema`.
fn without_response_schema(mut events: J) -> J {
    fn strip(interrupts: &mut J) {
        for i in interrupts.as_array_mut().into_iter().flatten() {
            if let Some(m) = i.as_object_mut() {
                m.remove("response_schema");
            }
        }
    }
    for event in events.as_array_mut().into_iter().flatten() {
        match event[0].as_str() {
            Some("checkpoints") => {
                for task in event[1]["tasks"].as_array_mut().into_iter().flatten() {
                    strip(&mut task["interrupts"]);
                }
            }
            Some("tasks") => {
                if let Some(list) = event[1].get_mut("interrupts") {
                    strip(list);
                }
            }
            _ => {}
        }
    }
    events
}

/// The tasks an entrypoint calls, whose events may come in any order when they run
/// concurrently (Python runs them on threads).
const CALLED: [&str; 5] = ["add_one", "compose", "ask", "double", "double_then_ask"];

/// `events` with each run of consecutive events of called tasks (their `updates`, their
/// `tasks` starts and results) sorted: the order in which concurrent calls finish is not
/// fixed, what each streams is.
fn canonical(events: J) -> J {
    let called = |e: &J| match e[0].as_str() {
        Some("updates") => e[1]
            .as_object()
            .is_some_and(|m| m.keys().any(|k| CALLED.contains(&k.as_str()))),
        Some("tasks") => e[1]["name"].as_str().is_some_and(|n| CALLED.contains(&n)),
        _ => false,
    };
    let mut out: Vec<J> = Vec::new();
    let mut run: Vec<J> = Vec::new();
    for e in events.as_array().cloned().unwrap_or_default() {
        if called(&e) {
            run.push(e);
            continue;
        }
        run.sort_by_key(|e| e.to_string());
        out.append(&mut run);
        out.push(e);
    }
    run.sort_by_key(|e| e.to_string());
    out.append(&mut run);
    J::Array(out)
}

#[tokio::test]
async fn functional_threads_are_reproduced_byte_for_byte() {
    let trace = golden::load("functional");
    let saver = golden::saver();
    let sources = golden::sources();
    let counts = Arc::new(Counts::default());
    let numbers = add_all(saver.clone(), counts.clone()).with_sources(sources.clone());
    let reviews = review(saver.clone(), counts.clone()).with_sources(sources.clone());
    let doubles = nested(saver.clone(), Arc::new(Counts::default())).with_sources(sources);
    let mut got = Vec::new();
    got.push(updates(&numbers, vec![1, 2], "numbers").await);
    got.push(updates(&numbers, Command::resume("yes"), "numbers").await);
    got.push(updates(&numbers, vec![5], "numbers").await);
    got.push(updates(&numbers, Command::resume("no"), "numbers").await);
    got.push(updates(&reviews, "cats".to_owned(), "review").await);
    got.push(updates(&reviews, Command::resume("great"), "review").await);
    got.push(updates(&doubles, 21, "nested").await);
    got.push(updates(&doubles, Command::resume("sure"), "nested").await);
    let expected: Vec<J> = trace["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| canonical(without_response_schema(normalize(&c["updates"]))))
        .collect();
    assert_eq!(got.len(), expected.len(), "calls");
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(&canonical(J::Array(g.clone())), e, "stream of call {i}");
    }
    golden::assert_storage_matches(&trace, &saver);
    for (thread, app_history) in [
        (
            "numbers",
            numbers
                .get_state_history(&RunConfig::thread("numbers"), &ListOptions::default())
                .await,
        ),
        (
            "review",
            reviews
                .get_state_history(&RunConfig::thread("review"), &ListOptions::default())
                .await,
        ),
        (
            "nested",
            doubles
                .get_state_history(&RunConfig::thread("nested"), &ListOptions::default())
                .await,
        ),
    ] {
        let got = history_json(&app_history.expect("history"));
        let expected: Vec<J> = trace["history"][thread]
            .as_array()
            .expect("history")
            .iter()
            .map(normalize)
            .collect();
        assert_eq!(got, expected, "history of {thread}");
    }
    // Each task ran once per call that was not answered from the checkpoint: add_one three
    // times (1, 2, then 5), compose once, ask twice (its interrupt, then its answer).
    assert_eq!(counts.get(), [3, 1, 2]);
}
