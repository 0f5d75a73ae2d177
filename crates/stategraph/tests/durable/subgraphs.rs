//! Subgraphs: a `Command` sent to the parent from inside a subgraph, and each namespace's
//! own history.

use stategraph::checkpoint::ListOptions;
use stategraph::pregel::snapshot::StateSnapshot;
use stategraph::{list, Command, DynState, RunConfig, StateGraph, Value, END, START};

use crate::for_each_saver;
use crate::util::{
    all_namespaces, expect, history, log_graph, log_input, log_of, logs, pairs, steps, strings,
    with_saver, writes, Calls,
};

/// Parent `START -> pre -> child -> other -> END` plus `target -> END`; the subgraph
/// `child` runs `first -> escape -> never`, and `escape` sends the parent a command
/// (`goto target`, `log += from-child`).
fn escaping(calls: &Calls) -> StateGraph<DynState> {
    let mut sb = log_graph();
    sb.add_node("first", logs("first", calls));
    let c = calls.clone();
    sb.add_node("escape", move |_s: DynState| {
        c.hit("escape");
        async move {
            Command::update(stategraph::update([("log", list!["from-child"])]))
                .and_goto("target")
                .to_parent()
        }
    });
    sb.add_node("never", logs("never", calls));
    sb.add_edge(START, "first")
        .add_edge("first", "escape")
        .add_edge("escape", "never")
        .add_edge("never", END);
    let child = sb.compile().unwrap();

    let mut g = log_graph();
    g.add_node("pre", logs("pre", calls));
    g.add_subgraph("child", &child);
    g.add_node("target", logs("target", calls));
    g.add_node("other", logs("other", calls));
    g.add_edge(START, "pre")
        .add_edge("pre", "child")
        .add_edge("child", "other")
        .add_edge("target", END)
        .add_edge("other", END);
    g
}

fn step_of(s: &StateSnapshot) -> i64 {
    s.metadata.as_ref().unwrap().step.unwrap()
}

// Python: the parent's `child` task writes `log=[from-child]`, `branch:to:target` and
// (its static edge) `branch:to:other`; `target` and `other` run next; `never` does not.
for_each_saver! {
    async fn a_command_to_the_parent_updates_the_parent_and_routes_it(saver) {
        let calls = Calls::new();
        let graph = with_saver(&escaping(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["pre", "from-child", "other", "target"]);
        assert_eq!(
            calls.counts(["pre", "first", "escape", "never", "target", "other"]),
            expect([
                ("pre", 1),
                ("first", 1),
                ("escape", 1),
                ("never", 0),
                ("target", 1),
                ("other", 1)
            ])
        );
        let root = history(&saver, "t").await;
        assert_eq!(steps(&root), [-1, 0, 1, 2, 3]);
        assert_eq!(
            writes(&root[2]),
            pairs([
                ("log", list!["from-child"]),
                ("branch:to:target", Value::Nil),
                ("branch:to:other", Value::Nil),
            ]),
            "the child task's writes are the command's"
        );
    }
}

// Python: the child's namespace `child:<task id>` keeps its own checkpoints (-1, 0, 1:
// `escape` raised in step 1), each with a `checkpoint_map` naming the root checkpoint of
// the step that ran it.
for_each_saver! {
    async fn each_namespace_has_its_own_history(saver) {
        let calls = Calls::new();
        let graph = with_saver(&escaping(&calls), &saver);
        let cfg = RunConfig::thread("t");
        let _ = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        let mut namespaces: Vec<String> = all_namespaces(&saver, "t")
            .await
            .iter()
            .map(|t| t.config.ns().to_owned())
            .filter(|ns| !ns.is_empty())
            .collect();
        namespaces.dedup();
        assert_eq!(namespaces.len(), 1, "{namespaces:?}");
        let ns = &namespaces[0];
        assert!(ns.starts_with("child:"), "{ns}");

        let in_child = cfg.clone().in_namespace(ns.as_str());
        let sub = graph
            .get_state_history(&in_child, &ListOptions::default())
            .await
            .unwrap();
        let sub_steps: Vec<i64> = sub.iter().map(step_of).collect();
        assert_eq!(sub_steps, [1, 0, -1]);
        let next: Vec<Vec<String>> = sub.iter().map(|s| s.next.clone()).collect();
        let expected: [&[&str]; 3] = [&["escape"], &["first"], &["__start__"]];
        assert_eq!(next, expected);
        assert_eq!(strings(sub[0].values.get("log")), ["pre", "first"]);

        // Python names the root checkpoint of the step that ran `child` (step 1: its id
        // is minted when the step starts).
        let root = history(&saver, "t").await;
        let started_child = root[2].checkpoint.id.clone();
        for s in &sub {
            let config = s.config.as_ref().unwrap();
            assert_eq!(config.ns(), ns);
            let Some(Value::Map(map)) = config.configurable.get("checkpoint_map") else {
                panic!("a nested snapshot's config has a checkpoint_map: {config:?}");
            };
            assert_eq!(map.get(""), Some(&Value::from(started_child.as_str())));
            assert_eq!(
                map.get(ns.as_str()),
                Some(&Value::from(config.checkpoint_id.clone().unwrap()))
            );
        }
        // The root's history does not mix the child's checkpoints in.
        let root_history = graph
            .get_state_history(&cfg, &ListOptions::default())
            .await
            .unwrap();
        let root_steps: Vec<i64> = root_history.iter().map(step_of).collect();
        assert_eq!(root_steps, [3, 2, 1, 0, -1]);
    }
}
