//! Finding a graph's edges as LangGraph's `get_graph()` does: a dry run of the super-step
//! loop over the trigger channels only. Plain edges write their target's trigger channel;
//! conditional edges write every target of their path map once (their declared writes);
//! nothing else runs. An edge goes from each node whose writes triggered a node to it.

use std::collections::{BTreeMap, BTreeSet};

use super::drawable::{DrawEdge, DrawGraph};
use super::sim_chan::Chan;
use super::topology::Topology;
use crate::graph::{END, START};

/// The most super-steps the dry run takes (LangGraph's `limit`).
const LIMIT: usize = 250;

/// A write a node declares: a channel, its value (a join's writes carry the writer's
/// name), and a label when it comes from a conditional edge.
type Write = (String, Option<String>);
/// A declared write: channel (or `END`), value, edge label.
type Declared = (String, Option<String>, Option<String>);

/// A node of the dry run: what triggers it, what it writes each time it runs, and the
/// declared writes of its conditional edges (one group per conditional edge).
struct SimNode {
    name: String,
    triggers: Vec<String>,
    writes: Vec<Write>,
    declared: Vec<Vec<Declared>>,
}

/// `(source, target, conditional, label)`, ordered as Python orders such tuples.
type Edge = (String, String, bool, Option<String>);
/// `(channel or node, conditional, label)`.
type Trigger = (String, bool, Option<String>);

fn sim_nodes(t: &Topology) -> (Vec<SimNode>, BTreeMap<String, Chan>) {
    let mut channels = BTreeMap::new();
    channels.insert(START.to_owned(), Chan::Ephemeral(false));
    let mut nodes = vec![SimNode {
        name: START.to_owned(),
        triggers: vec![START.to_owned()],
        writes: Vec::new(),
        declared: Vec::new(),
    }];
    for n in &t.nodes {
        let chan = format!("branch:to:{}", n.name);
        channels.insert(
            chan.clone(),
            if n.defer {
                Chan::AfterFinish {
                    value: false,
                    finished: false,
                }
            } else {
                Chan::Ephemeral(false)
            },
        );
        nodes.push(SimNode {
            name: n.name.clone(),
            triggers: vec![chan],
            writes: Vec::new(),
            declared: Vec::new(),
        });
    }
    let index = |nodes: &[SimNode], name: &str| nodes.iter().position(|n| n.name == name);
    for (start, end) in &t.edges {
        if end == END {
            continue;
        }
        if let Some(i) = index(&nodes, start) {
            nodes[i].writes.push((format!("branch:to:{end}"), None));
        }
    }
    for (starts, end) in &t.waiting_edges {
        if end == END {
            continue;
        }
        let chan = format!("join:{}:{end}", starts.join("+"));
        let deferred = t.nodes.iter().any(|n| &n.name == end && n.defer);
        channels.insert(
            chan.clone(),
            Chan::Barrier {
                names: starts.iter().cloned().collect(),
                seen: BTreeSet::new(),
                after_finish: deferred,
                finished: false,
            },
        );
        if let Some(i) = index(&nodes, end) {
            nodes[i].triggers.push(chan.clone());
        }
        for s in starts {
            if let Some(i) = index(&nodes, s) {
                nodes[i].writes.push((chan.clone(), Some(s.clone())));
            }
        }
    }
    for n in &t.nodes {
        let Some(dest) = &n.destinations else {
            continue;
        };
        if let Some(i) = index(&nodes, &n.name) {
            let group = dest
                .iter()
                .map(|(target, label)| (to_channel(target), None, label.clone()))
                .collect();
            nodes[i].declared.push(group);
        }
    }
    for b in &t.branches {
        let Some(map) = &b.path_map else { continue };
        if let Some(i) = index(&nodes, &b.source) {
            let group = map
                .iter()
                .map(|(label, target)| (to_channel(target), None, Some(label.clone())))
                .collect();
            nodes[i].declared.push(group);
        }
    }
    for n in &mut nodes {
        n.triggers.sort();
    }
    (nodes, channels)
}

/// The channel a declared write to `target` writes (`END` stays `END`: it becomes an edge).
fn to_channel(target: &str) -> String {
    if target == END {
        END.to_owned()
    } else {
        format!("branch:to:{target}")
    }
}

/// The drawing of `t`'s own nodes and edges (subgraphs not expanded).
pub(crate) fn draw(t: &Topology) -> DrawGraph {
    let (nodes, mut channels) = sim_nodes(t);
    let mut versions: BTreeMap<String, u64> = BTreeMap::new();
    let mut seen: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut found = Found::default();
    let mut step_sources: BTreeMap<String, BTreeSet<Trigger>> = BTreeMap::new();
    let deferred: BTreeSet<String> = t
        .nodes
        .iter()
        .filter(|n| n.defer)
        .map(|n| n.name.clone())
        .collect();

    // The input: START gets a value.
    if let Some(c) = channels.get_mut(START) {
        c.update(&[None]);
    }
    versions.insert(START.to_owned(), 1);
    let mut tasks = next_tasks(&nodes, &channels, &versions, &seen);

    for _ in 0..=LIMIT {
        if tasks.is_empty() {
            break;
        }
        let (conditionals, task_writes) = found.run_writers(&nodes, &tasks);
        step_sources = found.step_sources(&nodes, &task_writes, &conditionals);
        for (k, v) in &step_sources {
            found.sources.insert(k.clone(), v.clone());
        }
        let mut trigger_to_sources: BTreeMap<String, BTreeSet<Trigger>> = BTreeMap::new();
        for (src, triggers) in &found.sources {
            for (trigger, cond, label) in triggers {
                trigger_to_sources
                    .entry(trigger.clone())
                    .or_default()
                    .insert((src.clone(), *cond, label.clone()));
            }
        }
        apply_writes(
            &nodes,
            &tasks,
            &task_writes,
            &mut channels,
            &mut versions,
            &mut seen,
        );
        tasks = next_tasks(&nodes, &channels, &versions, &seen);
        found.edges_into(&nodes, &tasks, &trigger_to_sources, &step_sources);
    }

    assemble(t, &nodes, &found.edges, &step_sources, &deferred)
}

/// The conditional writes of a step, `(node, channel, value)`, with their edge labels.
type Conditionals = BTreeMap<(String, String, Option<String>), Option<String>>;

/// What the simulation has found so far: the edges, and what each node's writes
/// trigger.
#[derive(Default)]
struct Found {
    edges: BTreeSet<Edge>,
    /// By node: the triggers its last run's writes set.
    sources: BTreeMap<String, BTreeSet<Trigger>>,
    /// `(task, group)` of the declared writes already made (each group once).
    declared_seen: BTreeSet<(usize, usize)>,
    /// By node: the triggers of its declared (conditional) writes.
    declared_writes: BTreeMap<String, BTreeSet<Trigger>>,
}

impl Found {
    /// Runs the tasks' writers: their writes, and the conditional ones with labels (a
    /// declared write to END is an edge at once).
    fn run_writers(
        &mut self,
        nodes: &[SimNode],
        tasks: &[usize],
    ) -> (Conditionals, Vec<(usize, Vec<Write>)>) {
        let mut conditionals = Conditionals::new();
        let mut task_writes: Vec<(usize, Vec<Write>)> = Vec::new();
        for &ti in tasks {
            let node = &nodes[ti];
            let mut writes = node.writes.clone();
            for (gi, group) in node.declared.iter().enumerate() {
                if !self.declared_seen.insert((ti, gi)) {
                    continue;
                }
                for (chan, value, label) in group {
                    if chan == END {
                        self.edges
                            .insert((node.name.clone(), END.into(), true, label.clone()));
                        continue;
                    }
                    conditionals.insert(
                        (node.name.clone(), chan.clone(), value.clone()),
                        label.clone(),
                    );
                    self.declared_writes
                        .entry(node.name.clone())
                        .or_default()
                        .insert((chan.clone(), true, label.clone()));
                    writes.push((chan.clone(), value.clone()));
                }
            }
            task_writes.push((ti, writes));
        }
        (conditionals, task_writes)
    }

    /// What each task's writes trigger, by node name.
    fn step_sources(
        &self,
        nodes: &[SimNode],
        task_writes: &[(usize, Vec<Write>)],
        conditionals: &Conditionals,
    ) -> BTreeMap<String, BTreeSet<Trigger>> {
        let mut step_sources = BTreeMap::new();
        for (ti, writes) in task_writes {
            let name = &nodes[*ti].name;
            let mut task_edges: BTreeSet<Trigger> = writes
                .iter()
                .map(|(chan, value)| {
                    let key = (name.clone(), chan.clone(), value.clone());
                    let label = conditionals.get(&key).cloned().flatten();
                    (chan.clone(), conditionals.contains_key(&key), label)
                })
                .collect();
            if let Some(d) = self.declared_writes.get(name) {
                task_edges.extend(d.iter().cloned());
            }
            step_sources.insert(name.clone(), task_edges);
        }
        step_sources
    }

    /// The edges into this step's tasks, from the nodes whose writes triggered them (a
    /// task nothing traced triggered gets an edge from each node of the last step).
    fn edges_into(
        &mut self,
        nodes: &[SimNode],
        tasks: &[usize],
        trigger_to_sources: &BTreeMap<String, BTreeSet<Trigger>>,
        step_sources: &BTreeMap<String, BTreeSet<Trigger>>,
    ) {
        for &ti in tasks {
            let node = &nodes[ti];
            let mut added = false;
            for trigger in &node.triggers {
                let from: Vec<Trigger> = trigger_to_sources
                    .get(trigger)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                for (src, cond, label) in from {
                    self.edges
                        .insert((src.clone(), node.name.clone(), cond, label.clone()));
                    let te = (trigger.clone(), cond, label);
                    if step_sources.get(&src).is_some_and(|s| s.contains(&te)) {
                        added = true;
                    } else if let Some(s) = self.sources.get_mut(&src) {
                        s.remove(&te);
                    }
                }
            }
            if !added {
                for src in step_sources.keys() {
                    self.edges
                        .insert((src.clone(), node.name.clone(), true, None));
                }
            }
        }
    }
}

/// Applies a step's writes to the trigger channels (LangGraph's `apply_writes`).
fn apply_writes(
    nodes: &[SimNode],
    tasks: &[usize],
    task_writes: &[(usize, Vec<Write>)],
    channels: &mut BTreeMap<String, Chan>,
    versions: &mut BTreeMap<String, u64>,
    seen: &mut BTreeMap<String, BTreeMap<String, u64>>,
) {
    for &ti in tasks {
        let node = &nodes[ti];
        let entry = seen.entry(node.name.clone()).or_default();
        for chan in &node.triggers {
            if let Some(v) = versions.get(chan) {
                entry.insert(chan.clone(), *v);
            }
        }
    }
    let next = versions.values().copied().max().unwrap_or(0) + 1;
    let read: BTreeSet<&String> = tasks.iter().flat_map(|&ti| &nodes[ti].triggers).collect();
    for chan in read {
        if let Some(c) = channels.get_mut(chan) {
            if c.consume() {
                versions.insert(chan.clone(), next);
            }
        }
    }
    let mut by_channel: BTreeMap<&str, Vec<Option<String>>> = BTreeMap::new();
    for (_, writes) in task_writes {
        for (chan, value) in writes {
            if channels.contains_key(chan) {
                by_channel.entry(chan).or_default().push(value.clone());
            }
        }
    }
    let mut updated: BTreeSet<String> = BTreeSet::new();
    for (chan, values) in by_channel {
        if let Some(c) = channels.get_mut(chan) {
            if c.update(&values) {
                versions.insert(chan.to_owned(), next);
                if c.available() {
                    updated.insert(chan.to_owned());
                }
            }
        }
    }
    for (name, c) in channels.iter_mut() {
        if c.available() && !updated.contains(name) && c.update(&[]) {
            versions.insert(name.clone(), next);
            if c.available() {
                updated.insert(name.clone());
            }
        }
    }
    // Every tracked channel triggers a node, so "no trigger updated" is "nothing updated".
    if updated.is_empty() {
        for (name, c) in channels.iter_mut() {
            if c.finish() {
                versions.insert(name.clone(), next);
            }
        }
    }
}

/// The nodes triggered now, in name order (LangGraph's `prepare_next_tasks`, pull tasks).
fn next_tasks(
    nodes: &[SimNode],
    channels: &BTreeMap<String, Chan>,
    versions: &BTreeMap<String, u64>,
    seen: &BTreeMap<String, BTreeMap<String, u64>>,
) -> Vec<usize> {
    let mut out: Vec<usize> = (0..nodes.len())
        .filter(|&i| {
            let node = &nodes[i];
            let node_seen = seen.get(&node.name);
            node.triggers.iter().any(|chan| {
                let available = channels.get(chan).is_some_and(Chan::available);
                match node_seen {
                    None => available,
                    Some(s) => {
                        available
                            && versions.get(chan).copied().unwrap_or(0)
                                > s.get(chan).copied().unwrap_or(0)
                    }
                }
            })
        })
        .collect();
    out.sort_by(|a, b| nodes[*a].name.cmp(&nodes[*b].name));
    out
}

/// Builds the drawing from the edges found (LangGraph's assembly, END edges last).
fn assemble(
    t: &Topology,
    nodes: &[SimNode],
    edges: &BTreeSet<Edge>,
    last_step_sources: &BTreeMap<String, BTreeSet<Trigger>>,
    deferred: &BTreeSet<String>,
) -> DrawGraph {
    let mut g = DrawGraph::default();
    for n in nodes {
        let mut metadata = Vec::new();
        if deferred.contains(&n.name) {
            metadata.push(("defer".to_owned(), "True".to_owned()));
        }
        let before = t.interrupt_before.contains(&n.name);
        let after = t.interrupt_after.contains(&n.name);
        let when = match (before, after) {
            (true, true) => Some("before,after"),
            (true, false) => Some("before"),
            (false, true) => Some("after"),
            (false, false) => None,
        };
        if let Some(w) = when {
            metadata.push(("__interrupt".to_owned(), w.to_owned()));
        }
        let tools = t.nodes.iter().find(|d| d.name == n.name).map(|d| &d.tools);
        if let Some(tools) = tools.filter(|t| !t.is_empty()) {
            metadata.push(("__tools".to_owned(), tools.join(", ")));
        }
        g.add_node(&n.name, metadata);
    }
    // `__start__` is always one of the nodes, so its edges come from the search too.
    for (src, dest, cond, label) in edges {
        let data = label.clone().filter(|l| l != dest);
        add_edge(&mut g, src, dest, data, *cond);
    }
    let edge_sources: BTreeSet<&String> = edges.iter().map(|e| &e.0).collect();
    let termini: BTreeSet<&String> = edges
        .iter()
        .map(|e| &e.1)
        .filter(|d| d.as_str() != END && !edge_sources.contains(d))
        .collect();
    let end_edge_exists = edges.iter().any(|e| e.1 == END);
    if !termini.is_empty() {
        for src in termini {
            add_edge(&mut g, src, END, None, false);
        }
    } else if last_step_sources.len() == 1 && !end_edge_exists {
        for src in last_step_sources.keys() {
            add_edge(&mut g, src, END, None, true);
        }
    }
    g
}

/// Adds an edge unless one with the same ends exists; adds `__end__` on first use.
fn add_edge(
    g: &mut DrawGraph,
    source: &str,
    target: &str,
    data: Option<String>,
    conditional: bool,
) {
    if g.edges
        .iter()
        .any(|e| e.source == source && e.target == target)
    {
        return;
    }
    if target == END {
        g.add_node(END, Vec::new());
    }
    g.edges.push(DrawEdge {
        source: source.to_owned(),
        target: target.to_owned(),
        data,
        conditional,
    });
}
