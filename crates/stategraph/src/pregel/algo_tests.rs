//! Unit tests of the step algorithm on small hand-built channel sets and graphs: which
//! tasks run, how writes change channels and versions, what a checkpoint holds.

use std::collections::BTreeSet;
use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::{ChannelVersion, ChannelVersions, Checkpoint, Value};

use super::*;
use crate::channels::{BinaryOperatorAggregate, EphemeralValue, LastValue, Topic};
use crate::pregel::graph::{NodeRunner, PregelNode, WriterFn};
use crate::pregel::task::TaskPath;
use crate::types::Send as SendPacket;

fn next_int(current: Option<&ChannelVersion>) -> ChannelVersion {
    stategraph_checkpoint::version_gen::next_int_version(current)
}

fn list(items: &[&str]) -> Value {
    Value::List(items.iter().map(|s| Value::from(*s)).collect())
}

fn v(n: i64) -> ChannelVersion {
    ChannelVersion::Int(n)
}

/// `log` (a list reducer), `x` (LastValue), `go` (an ephemeral trigger) and the Send topic.
fn channels() -> Channels {
    let mut c = Channels::default();
    c.insert(
        "log".into(),
        Box::new(BinaryOperatorAggregate::new(
            crate::reducers::add(),
            Some(list(&[])),
        )),
    );
    c.insert("x".into(), Box::new(LastValue::new()));
    c.insert("go".into(), Box::new(EphemeralValue::new(false)));
    c.insert(TASKS.into(), Box::new(Topic::new(false)));
    c
}

fn node(name: &str, triggers: &[&str], reads: Reads) -> PregelNode {
    let run: NodeRunner = Arc::new(|_, _| Box::pin(async { Ok(Vec::new()) }));
    let writers: WriterFn = Arc::new(|_, _| Ok(Vec::new()));
    PregelNode {
        name: name.into(),
        triggers: triggers.iter().map(|s| (*s).to_owned()).collect(),
        reads,
        run: Some(run),
        writers,
        subgraph: None,
        retry: None,
        timeout: None,
        cache: None,
        hidden: false,
        writes: None,
    }
}

/// Nodes `a` (triggered by `go`, reads `log` and `x`) and `b` (triggered by `x`, reads `x`).
fn graph() -> PregelGraph {
    let mut g = PregelGraph {
        channels: channels().into_iter().collect(),
        nodes: IndexMap::new(),
        trigger_to_nodes: IndexMap::new(),
        output_channels: vec!["log".into(), "x".into()],
        stream_channels: vec!["log".into(), "x".into()],
    };
    g.nodes.insert(
        "a".into(),
        node("a", &["go"], Reads::Many(vec!["log".into(), "x".into()])),
    );
    g.nodes
        .insert("b".into(), node("b", &["x"], Reads::Single("x".into())));
    g.index_triggers();
    g
}

fn checkpoint(versions: &[(&str, i64)]) -> Checkpoint {
    let mut c = Checkpoint::empty("1f1ec616-f5b8-61ad-bfff-a9ed7329d99e", "2024-01-01");
    c.channel_versions = versions
        .iter()
        .map(|(k, n)| ((*k).to_owned(), v(*n)))
        .collect();
    c
}

fn writes(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(c, v)| ((*c).to_owned(), v.clone()))
        .collect()
}

#[test]
fn apply_writes_applies_tasks_in_path_order_with_one_new_version() {
    let mut cp = checkpoint(&[("go", 3), ("log", 1)]);
    let mut ch = channels();
    ch["go"].update(vec![Value::Nil]).unwrap();
    let (pa, pb) = (TaskPath::pull("a"), TaskPath::pull("b"));
    let trig = vec!["go".to_owned()];
    let (wa, wb) = (
        writes(&[("log", list(&["a"]))]),
        writes(&[("log", list(&["b"]))]),
    );
    // Given b first: the writes are still applied in path order (a before b).
    let tasks = [
        TaskWrites {
            path: &pb,
            name: "b",
            triggers: &trig,
            writes: &wb,
        },
        TaskWrites {
            path: &pa,
            name: "a",
            triggers: &trig,
            writes: &wa,
        },
    ];
    let updated = apply_writes(
        &mut cp,
        &mut ch,
        &tasks,
        &next_int,
        &graph().trigger_to_nodes,
    )
    .unwrap();
    assert_eq!(ch["log"].get(), Some(list(&["a", "b"])));
    // One new version for the step: one past the greatest, for the written and the
    // consumed channels alike.
    assert_eq!(cp.channel_versions["log"], v(4));
    assert_eq!(cp.channel_versions["go"], v(4));
    assert!(!ch["go"].is_available(), "the trigger was consumed");
    // Each task saw the trigger's version before the step.
    assert_eq!(cp.versions_seen["a"]["go"], v(3));
    assert_eq!(cp.versions_seen["b"]["go"], v(3));
    assert_eq!(updated, BTreeSet::from(["log".to_owned()]));
}

#[test]
fn apply_writes_refuses_two_values_for_a_last_value() {
    let mut cp = checkpoint(&[("x", 1)]);
    let mut ch = channels();
    let (pa, pb) = (TaskPath::pull("a"), TaskPath::pull("b"));
    let w1 = writes(&[("x", Value::from(1))]);
    let w2 = writes(&[("x", Value::from(2))]);
    let tasks = [
        TaskWrites {
            path: &pa,
            name: "a",
            triggers: &[],
            writes: &w1,
        },
        TaskWrites {
            path: &pb,
            name: "b",
            triggers: &[],
            writes: &w2,
        },
    ];
    let err = apply_writes(&mut cp, &mut ch, &tasks, &next_int, &IndexMap::new()).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidUpdate(m) if m.starts_with("At key 'x'")),
        "{err:?}"
    );
}

#[test]
fn apply_writes_skips_write_tags_and_unknown_channels() {
    let mut cp = checkpoint(&[("x", 1)]);
    let mut ch = channels();
    let p = TaskPath::pull("a");
    let w = writes(&[
        ("__error__", Value::from("boom")),
        ("__no_writes__", Value::Nil),
        ("nowhere", Value::from(1)),
        ("x", Value::from(7)),
    ]);
    let tasks = [TaskWrites {
        path: &p,
        name: "a",
        triggers: &[],
        writes: &w,
    }];
    let updated = apply_writes(&mut cp, &mut ch, &tasks, &next_int, &IndexMap::new()).unwrap();
    assert_eq!(updated, BTreeSet::from(["x".to_owned()]));
    assert_eq!(ch["x"].get(), Some(Value::from(7)));
    assert!(!cp.channel_versions.contains_key("nowhere"));
    assert!(!cp.channel_versions.contains_key("__error__"));
}

#[test]
fn prepare_next_tasks_runs_the_nodes_whose_triggers_are_newer_than_seen() {
    let g = graph();
    let mut ch = channels();
    ch["go"].update(vec![Value::Nil]).unwrap();
    ch["x"].update(vec![Value::from(5)]).unwrap();
    let mut cp = checkpoint(&[("go", 2), ("x", 2), ("log", 1)]);
    // b already saw x at version 2; a never ran.
    cp.versions_seen.insert(
        "b".into(),
        ChannelVersions::from_iter([("x".to_owned(), v(2))]),
    );
    let tasks = prepare_next_tasks(&cp, &g, &ch, 3, "", None).unwrap();
    let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a"]);
    let a = &tasks[0];
    assert_eq!(a.triggers, ["go"]);
    assert_eq!(a.ns, format!("a:{}", a.id));
    // a reads the available channels among `log` and `x`.
    let input = a.input.as_map().unwrap();
    assert_eq!(input.get("log"), Some(&list(&[])));
    assert_eq!(input.get("x"), Some(&Value::from(5)));

    // Once x moves past what b saw, b runs too, in node order.
    cp.channel_versions.insert("x".into(), v(3));
    let tasks = prepare_next_tasks(&cp, &g, &ch, 3, "", None).unwrap();
    let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(tasks[1].input, Value::from(5));
    // `updated_channels` narrows the candidates to the nodes those channels trigger.
    let only_x = BTreeSet::from(["x".to_owned()]);
    let tasks = prepare_next_tasks(&cp, &g, &ch, 3, "", Some(&only_x)).unwrap();
    let names: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["b"]);
}

#[test]
fn task_ids_depend_on_checkpoint_step_and_namespace_only() {
    let g = graph();
    let mut ch = channels();
    ch["go"].update(vec![Value::Nil]).unwrap();
    let cp = checkpoint(&[("go", 1)]);
    let id = |step, ns: &str| prepare_next_tasks(&cp, &g, &ch, step, ns, None).unwrap()[0].clone();
    assert_eq!(id(1, "").id, id(1, "").id);
    assert_ne!(id(1, "").id, id(2, "").id);
    let nested = id(1, "outer:123");
    assert_ne!(nested.id, id(1, "").id);
    assert!(nested.ns.starts_with("outer:123|a:"), "{}", nested.ns);
    // The ids without inputs are the same tasks.
    let bare = prepare_task_ids(&cp, &g, &ch, 1, "", None).unwrap();
    assert_eq!(bare[0].id, id(1, "").id);
    assert_eq!(bare[0].input, Value::Nil);
}

#[test]
fn pending_sends_become_push_tasks_before_pull_tasks() {
    let g = graph();
    let mut ch = channels();
    ch["go"].update(vec![Value::Nil]).unwrap();
    ch[TASKS]
        .update(vec![
            SendPacket::new("b", Value::from(1)).to_value(),
            SendPacket::new("nobody", Value::from(2)).to_value(),
            SendPacket::new("b", Value::from(3)).to_value(),
        ])
        .unwrap();
    let cp = checkpoint(&[("go", 1), (TASKS, 1)]);
    let tasks = prepare_next_tasks(&cp, &g, &ch, 1, "", None).unwrap();
    let summary: Vec<(&str, &Value, &[String])> = tasks
        .iter()
        .map(|t| (t.name.as_str(), &t.input, t.triggers.as_slice()))
        .collect();
    let push = [crate::pregel::task::PUSH.to_owned()];
    let go = ["go".to_owned()];
    // The Send to an unknown node is skipped; each Send keeps its own argument.
    assert_eq!(
        summary,
        [
            ("b", &Value::from(1), &push[..]),
            ("b", &Value::from(3), &push[..]),
            ("a", &tasks[2].input, &go[..]),
        ]
    );
    assert_eq!(tasks[0].path, TaskPath::push(0));
    assert_eq!(tasks[1].path, TaskPath::push(2));
    assert_ne!(tasks[0].id, tasks[1].id);
}

#[test]
fn create_checkpoint_stores_the_versioned_values_and_loads_back() {
    let g = graph();
    let mut ch = channels();
    ch["log"].update(vec![list(&["a"])]).unwrap();
    ch["x"].update(vec![Value::from(9)]).unwrap();
    // `x` has a value but no version yet: it is not stored.
    let previous = checkpoint(&[("log", 2), ("go", 1)]);
    let updated = BTreeSet::from(["log".to_owned()]);
    let next = create_checkpoint(
        previous.clone(),
        &ch,
        "next-id".into(),
        "ts".into(),
        Some(&updated),
    );
    assert_eq!(next.id, "next-id");
    assert_eq!(next.ts, "ts");
    assert_eq!(next.channel_versions, previous.channel_versions);
    assert_eq!(
        next.channel_values.keys().collect::<Vec<_>>(),
        ["log"],
        "only versioned channels with a value"
    );
    assert_eq!(next.updated_channels, Some(vec!["log".to_owned()]));

    let mut loaded = next.clone();
    let back = channels_from_checkpoint(&g, &mut loaded).unwrap();
    assert!(loaded.channel_values.is_empty(), "values moved, not copied");
    assert_eq!(back["log"].get(), Some(list(&["a"])));
    assert!(!back["x"].is_available());
}

#[test]
fn new_versions_lists_the_channels_newer_than_before() {
    let before: ChannelVersions = [("a", 1), ("b", 2)]
        .iter()
        .map(|(k, n)| ((*k).to_owned(), v(*n)))
        .collect();
    let after: ChannelVersions = [("a", 1), ("b", 3), ("c", 1)]
        .iter()
        .map(|(k, n)| ((*k).to_owned(), v(*n)))
        .collect();
    let new = new_versions(&before, &after);
    assert_eq!(
        new.into_iter().collect::<Vec<_>>(),
        [("b".to_owned(), v(3)), ("c".to_owned(), v(1))]
    );
}

#[test]
fn advance_versions_returns_the_new_versions_and_catches_previous_up() {
    let versions = |pairs: &[(&str, i64)]| -> ChannelVersions {
        pairs
            .iter()
            .map(|(k, n)| ((*k).to_owned(), v(*n)))
            .collect()
    };
    let mut previous = versions(&[("a", 1), ("b", 2), ("gone", 4), ("d", 5)]);
    let current = versions(&[("a", 1), ("b", 3), ("c", 1), ("d", 2)]);
    let new = advance_versions(&mut previous, &current);
    assert_eq!(
        new,
        new_versions(
            &versions(&[("a", 1), ("b", 2), ("gone", 4), ("d", 5)]),
            &current
        )
    );
    assert_eq!(
        new.into_iter().collect::<Vec<_>>(),
        [("b".to_owned(), v(3)), ("c".to_owned(), v(1))]
    );
    let mut caught_up: Vec<_> = previous.into_iter().collect();
    caught_up.sort_by(|x, y| x.0.cmp(&y.0));
    let mut expected: Vec<_> = current.into_iter().collect();
    expected.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(caught_up, expected);
}

#[test]
fn should_interrupt_needs_a_change_since_the_last_interrupt() {
    let g = graph();
    let mut ch = channels();
    ch["go"].update(vec![Value::Nil]).unwrap();
    let mut cp = checkpoint(&[("go", 2)]);
    let tasks = prepare_next_tasks(&cp, &g, &ch, 1, "", None).unwrap();
    let hidden = |_: &str| false;
    let names = |ts: Vec<&Task>| ts.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(should_interrupt(&cp, &["a".into()], &tasks, &hidden)),
        ["a"]
    );
    assert_eq!(
        names(should_interrupt(&cp, &["*".into()], &tasks, &hidden)),
        ["a"]
    );
    assert!(should_interrupt(&cp, &["b".into()], &tasks, &hidden).is_empty());
    // Nothing changed since the interrupt bookkeeping saw version 2: no interrupt.
    cp.versions_seen.insert(
        "__interrupt__".into(),
        ChannelVersions::from_iter([("go".to_owned(), v(2))]),
    );
    assert!(should_interrupt(&cp, &["a".into()], &tasks, &hidden).is_empty());
}
