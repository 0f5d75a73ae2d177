//! Compiling a `StateGraph`: validation, then the Pregel form (channels, nodes, writers).

use std::collections::HashSet;
use std::sync::Arc;

use futures::FutureExt;
use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use super::branch::Branch;
use super::builder::{NodeKind, NodeSpec, StateGraph};
pub use super::compile_options::CompileOptions;
use super::compiled::CompiledGraph;
use super::draw::topology::{TopoBranch, TopoNode, Topology};
use super::node::{NodeContext, NodeError, NodeOutput};
use super::virtual_nodes::{END, START};
use crate::channels::{
    Channel, EphemeralValue, LastValueAfterFinish, NamedBarrierValue, NamedBarrierValueAfterFinish,
    Topic,
};
use crate::error::{Error, Result};
use crate::pregel::context::RunScope;
use crate::pregel::graph::{NodeRunner, PregelGraph, PregelNode, Reads, WriterFn};
use crate::pregel::run_loop::{Loop, LoopParams, RunInput};
use crate::pregel::task::TASKS;
use crate::pregel::writes_spec::WritesSpec;
use crate::state::State;

impl<S: State> StateGraph<S> {
    /// Checks the graph and makes it runnable, without a checkpointer.
    pub fn compile(&self) -> Result<CompiledGraph<S>> {
        self.compile_with(CompileOptions::default())
    }

    /// Checks the graph and makes it runnable with these options (checkpointer,
    /// interrupts, strictness).
    pub fn compile_with(&self, options: CompileOptions) -> Result<CompiledGraph<S>> {
        compile(self, options)
    }
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::InvalidGraph(msg.into())
}

fn validate<S: State>(g: &StateGraph<S>, options: &CompileOptions) -> Result<()> {
    if let Some(e) = g.build_errors.first() {
        return Err(invalid(e.clone()));
    }
    for name in g.nodes.keys() {
        if name == START || name == END {
            return Err(invalid(format!("Node `{name}` is reserved.")));
        }
        if name.contains('|') || name.contains(':') {
            return Err(invalid(format!(
                "Node name `{name}` contains a reserved character ('|' or ':')."
            )));
        }
        if g.channels.contains_key(name) {
            return Err(invalid(format!(
                "`{name}` is already being used as a state key"
            )));
        }
    }
    let is_node = |n: &str| g.nodes.contains_key(n);
    let mut sources: Vec<&str> = g.edges.iter().map(|(s, _)| s.as_str()).collect();
    sources.extend(
        g.waiting_edges
            .iter()
            .flat_map(|(s, _)| s.iter().map(String::as_str)),
    );
    sources.extend(g.branches.iter().map(|(s, _)| s.as_str()));
    for s in &sources {
        if *s == END {
            return Err(invalid("END cannot be a start node"));
        }
        if *s != START && !is_node(s) {
            return Err(invalid(format!(
                "Found edge starting at unknown node '{s}'"
            )));
        }
    }
    if !sources.contains(&START) {
        return Err(invalid(
            "Graph must have an entrypoint: add at least one edge from START to another node",
        ));
    }
    let mut targets: Vec<&str> = g.edges.iter().map(|(_, e)| e.as_str()).collect();
    targets.extend(g.waiting_edges.iter().map(|(_, e)| e.as_str()));
    let mut unmapped_branch = false;
    for (_, b) in &g.branches {
        match &b.path_map {
            Some(m) => targets.extend(m.values().map(String::as_str)),
            None => unmapped_branch = true,
        }
    }
    for t in &targets {
        if *t == START {
            return Err(invalid("START cannot be an end node"));
        }
        if *t != END && !is_node(t) {
            return Err(invalid(format!("Found edge ending at unknown node `{t}`")));
        }
    }
    if !unmapped_branch {
        let reached: HashSet<&str> = targets.iter().copied().collect();
        for name in g.nodes.keys() {
            if !reached.contains(name.as_str()) {
                let msg = format!(
                    "Node `{name}` is not reachable: no edge or mapped conditional edge leads to it"
                );
                if options.strict {
                    return Err(invalid(msg));
                }
                tracing::warn!("{msg}");
            }
        }
    }
    Ok(())
}

fn compile<S: State>(g: &StateGraph<S>, mut options: CompileOptions) -> Result<CompiledGraph<S>> {
    validate(g, &options)?;
    if options.cache.is_none() && g.nodes.values().any(|n| n.options.cache.is_some()) {
        options.cache = Some(Arc::new(crate::pregel::cache::InMemoryCache::new()));
    }
    let state_keys: Arc<Vec<String>> = Arc::new(g.channels.keys().cloned().collect());
    let (channels, joins) = graph_channels(g);
    // What nodes may write: the state's channels and the private ones of node inputs
    // (START writes only the state's, as LangGraph's input schema).
    let writable: Arc<Vec<String>> = Arc::new(
        g.channels
            .keys()
            .chain(g.private_channels.keys())
            .cloned()
            .collect(),
    );
    let static_writes = |source: &str| -> Vec<(String, Value)> {
        let mut w: Vec<(String, Value)> = g
            .edges
            .iter()
            .filter(|(s, e)| s == source && e != END)
            .map(|(_, e)| (format!("branch:to:{e}"), Value::Nil))
            .collect();
        if let Some(j) = joins.writes.get(source) {
            w.extend(j.iter().cloned());
        }
        w
    };
    let branches_of = |source: &str| -> Vec<Arc<Branch<S>>> {
        g.branches
            .iter()
            .filter(|(s, _)| s == source)
            .map(|(_, b)| b.clone())
            .collect()
    };

    let mut nodes = IndexMap::new();
    let (start_writers, start_writes) = node_writers::<S>(
        state_keys.clone(),
        state_keys.clone(),
        static_writes(START),
        branches_of(START),
    );
    nodes.insert(
        START.to_owned(),
        PregelNode {
            name: START.into(),
            triggers: vec![START.into()],
            reads: Reads::Single(START.into()),
            run: Some(start_runner(start_writers.clone())),
            writers: start_writers,
            writes: start_writes,
            subgraph: None,
            retry: None,
            timeout: None,
            cache: None,
            hidden: true,
        },
    );
    for (name, spec) in &g.nodes {
        let mut triggers = vec![format!("branch:to:{name}")];
        if let Some(j) = joins.triggers.get(name) {
            triggers.extend(j.iter().cloned());
        }
        let writers = node_writers::<S>(
            state_keys.clone(),
            writable.clone(),
            static_writes(name),
            branches_of(name),
        );
        let node = user_node(name, spec, triggers, writers, (&state_keys, &S::managed()));
        nodes.insert(name.clone(), node);
    }
    let mut graph = PregelGraph {
        channels,
        nodes,
        trigger_to_nodes: IndexMap::new(),
        output_channels: state_keys.to_vec(),
    };
    graph.index_triggers();
    let topology = Arc::new(capture(g, &options));
    Ok(CompiledGraph::new(Arc::new(graph), options, topology))
}

/// The joins of a graph (`add_join`) as channels `join:a+b:end`: the channels each end
/// waits on, and the writes each start makes to them.
#[derive(Default)]
struct Joins {
    triggers: IndexMap<String, Vec<String>>,
    writes: IndexMap<String, Vec<(String, Value)>>,
}

/// The channels of the Pregel form: the state's and the private ones, `__start__`,
/// `__pregel_tasks`, one `branch:to:{node}` per node and one barrier per join.
fn graph_channels<S: State>(g: &StateGraph<S>) -> (IndexMap<String, Box<dyn Channel>>, Joins) {
    let mut channels: IndexMap<String, Box<dyn Channel>> = IndexMap::new();
    for (k, ch) in g.channels.iter().chain(g.private_channels.iter()) {
        channels.insert(k.clone(), ch.clone_box());
    }
    channels.insert(START.into(), Box::new(EphemeralValue::new(true)));
    channels.insert(TASKS.into(), Box::new(Topic::new(false)));
    for (name, spec) in &g.nodes {
        let ch: Box<dyn Channel> = if spec.options.defer {
            Box::new(LastValueAfterFinish::new())
        } else {
            Box::new(EphemeralValue::new(false))
        };
        channels.insert(format!("branch:to:{name}"), ch);
    }
    let mut joins = Joins::default();
    for (starts, end) in &g.waiting_edges {
        let chan = format!("join:{}:{end}", starts.join("+"));
        let deferred = g.nodes.get(end).is_some_and(|n| n.options.defer);
        let ch: Box<dyn Channel> = if deferred {
            Box::new(NamedBarrierValueAfterFinish::new(starts.clone()))
        } else {
            Box::new(NamedBarrierValue::new(starts.clone()))
        };
        channels.insert(chan.clone(), ch);
        joins
            .triggers
            .entry(end.clone())
            .or_default()
            .push(chan.clone());
        for s in starts {
            joins
                .writes
                .entry(s.clone())
                .or_default()
                .push((chan.clone(), Value::from(s.as_str())));
        }
    }
    (channels, joins)
}

/// The Pregel node of a declared node: its runner (the function, or the subgraph run in
/// its own namespace) and writers, what it reads and its options.
fn user_node(
    name: &str,
    spec: &NodeSpec,
    triggers: Vec<String>,
    (writers, writes): (WriterFn, Option<WritesSpec>),
    (state_keys, managed): (&[String], &[(String, crate::pregel::managed::Managed)]),
) -> PregelNode {
    let (run, subgraph) = match &spec.kind {
        NodeKind::Function(handler) => (user_runner(handler.clone(), writers.clone()), None),
        NodeKind::Subgraph(sub, opts, _) => (
            subgraph_runner(sub.clone(), opts.clone(), writers.clone(), managed.to_vec()),
            Some(sub.clone()),
        ),
    };
    let reads = spec.input.as_ref().and_then(|i| i.reads.clone());
    PregelNode {
        name: name.to_owned(),
        triggers,
        reads: Reads::Many(reads.unwrap_or_else(|| state_keys.to_vec())),
        run: Some(run),
        writers,
        writes,
        subgraph,
        retry: spec.options.retry.clone(),
        timeout: spec.options.timeout,
        cache: spec.options.cache.clone(),
        hidden: false,
    }
}

/// Records the declared structure of `g`, compiled with `options`.
fn capture<S: State>(g: &StateGraph<S>, options: &CompileOptions) -> Topology {
    Topology {
        nodes: g
            .nodes
            .iter()
            .map(|(name, spec)| TopoNode {
                name: name.clone(),
                defer: spec.options.defer,
                destinations: spec.options.destinations.clone(),
                subgraph: match &spec.kind {
                    NodeKind::Subgraph(_, _, topology) => Some(topology.clone()),
                    NodeKind::Function(_) => None,
                },
                tools: Vec::new(),
            })
            .collect(),
        edges: g.edges.clone(),
        waiting_edges: g.waiting_edges.clone(),
        branches: g
            .branches
            .iter()
            .map(|(source, b)| TopoBranch {
                source: source.clone(),
                path_map: b
                    .path_map
                    .as_ref()
                    .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            })
            .collect(),
        interrupt_before: options.interrupt_before.clone(),
        interrupt_after: options.interrupt_after.clone(),
    }
}

/// The input map as `(key, value)` pairs, in order.
fn map_pairs(input: Value) -> Vec<(String, Value)> {
    match input {
        Value::Map(m) => m
            .into_iter()
            .filter_map(|(k, v)| match k {
                Value::Str(k) => Some((k.into_string(), v)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The writers of a node: its writes to `writable` channels (others are dropped, as
/// LangGraph does), its gotos, its edges ([`WritesSpec`]) and its conditional edges
/// (which read the state's channels); with the [`WritesSpec`] alone when it has no
/// conditional edges (its writers are then data, see [`crate::pregel::spec`]).
fn node_writers<S: State>(
    state_keys: Arc<Vec<String>>,
    writable: Arc<Vec<String>>,
    static_writes: Vec<(String, Value)>,
    branches: Vec<Arc<Branch<S>>>,
) -> (WriterFn, Option<WritesSpec>) {
    let spec = WritesSpec {
        writable: writable.to_vec(),
        static_writes,
    };
    let data = branches.is_empty().then(|| spec.clone());
    let writers: WriterFn = Arc::new(move |output: NodeOutput, ctx: &NodeContext| {
        let mut writes = spec.writes(output);
        run_branches(&branches, ctx, &state_keys, &mut writes)?;
        Ok(writes)
    });
    (writers, data)
}

fn start_runner(writers: WriterFn) -> NodeRunner {
    Arc::new(move |input: Value, ctx: NodeContext| {
        let output = match crate::types::Command::from_value(&input) {
            Some(cmd) => NodeOutput {
                writes: cmd.update.unwrap_or_default(),
                goto: cmd.goto,
            },
            None => NodeOutput {
                writes: map_pairs(input),
                goto: Vec::new(),
            },
        };
        let result = writers(output, &ctx);
        async move { result }.boxed()
    })
}

fn subgraph_runner(
    sub: Arc<PregelGraph>,
    sub_options: CompileOptions,
    writers: WriterFn,
    managed: Vec<(String, crate::pregel::managed::Managed)>,
) -> NodeRunner {
    Arc::new(move |input: Value, ctx: NodeContext| {
        // The subgraph reads this graph's state, managed values included (LangGraph
        // stores them in the subgraph's input checkpoint).
        let input = crate::pregel::managed::fill_input(input, &managed, &ctx);
        let sub = sub.clone();
        let sub_options = sub_options.clone();
        let writers = writers.clone();
        async move {
            let scope = ctx
                .inner
                .run
                .clone()
                .ok_or_else(|| NodeError::msg("a subgraph can only run inside a graph run"))?;
            let params = subgraph_params(sub, &sub_options, &scope, &ctx);
            let name = crate::spans::RunName::Named(Arc::from(ctx.inner.name.as_str()));
            // The span reads the thread and run id, which the subgraph's config shares
            // with the parent's.
            let (config, ns) = (&scope.config, ctx.checkpoint_ns());
            let outcome = crate::spans::traced_run(&name, config, ns, || async move {
                Loop::start(params, RunInput::Values(input))
                    .await?
                    .run()
                    .await
            })
            .await;
            let output = match outcome {
                Ok(o) if !o.interrupts.is_empty() => {
                    return Err(NodeError::interrupt(o.interrupts));
                }
                Ok(o) => NodeOutput {
                    writes: o.values.into_iter().collect(),
                    goto: Vec::new(),
                },
                // The subgraph's node addressed this graph: run this node's writers with it.
                Err(crate::Error::ParentCommand(cmd)) => NodeOutput {
                    writes: cmd.update.unwrap_or_default(),
                    goto: cmd.goto,
                },
                Err(crate::Error::Node { message, .. }) => {
                    return Err(NodeError::repr_only(message))
                }
                Err(other) => return Err(NodeError::named("GraphError", other)),
            };
            let mut writes = std::mem::take(&mut *ctx.inner.body_writes.lock());
            writes.extend(writers(output, &ctx)?);
            Ok(writes)
        }
        .boxed()
    })
}

/// The run of a subgraph inside the run `scope` of the task `ctx`: the parent's config
/// (its thread, this task's namespace and `checkpoint_map`, none of the root's own
/// starting points or interrupts), its saver, store, cache and stream unless the
/// subgraph was compiled with its own.
fn subgraph_params(
    sub: Arc<PregelGraph>,
    sub_options: &CompileOptions,
    scope: &RunScope,
    ctx: &NodeContext,
) -> LoopParams {
    let mut config = scope.config.clone();
    config.checkpoint_id = None;
    // The root's knowledge of its own namespace says nothing of the subgraph's.
    config.assume_new_thread = false;
    config.start_from = None;
    config.interrupt_before = None;
    config.interrupt_after = None;
    let map: stategraph_checkpoint::Map = scope
        .checkpoint_map
        .iter()
        .map(|(k, v)| (Value::from(k.as_str()), Value::from(v.as_str())))
        .collect();
    config
        .configurable
        .insert("checkpoint_map".into(), Value::Map(map));
    LoopParams {
        graph: sub,
        saver: sub_options
            .checkpointer
            .clone()
            .or_else(|| scope.saver.clone()),
        sources: scope.sources.clone(),
        config,
        interrupt_before: sub_options.interrupt_before.clone(),
        interrupt_after: sub_options.interrupt_after.clone(),
        sink: ctx
            .inner
            .sink
            .as_ref()
            .and_then(|s| s.for_subgraph(ctx.checkpoint_ns())),
        ns: ctx.checkpoint_ns().to_owned(),
        resuming: Some(scope.resuming),
        null_resume: Some(ctx.inner.null_resume.clone()),
        cache: sub_options.cache.clone(),
        store: sub_options.store.clone().or_else(|| scope.store.clone()),
        lease: scope.lease.clone(),
        lenient_writes: sub_options.lenient_writes,
        keep_head: false,
    }
}

fn user_runner(handler: super::builder::BoxedHandler, writers: WriterFn) -> NodeRunner {
    Arc::new(move |input: Value, ctx: NodeContext| {
        let handler = handler.clone();
        let writers = writers.clone();
        async move {
            let output = handler(input, ctx.clone()).await?;
            let mut writes = std::mem::take(&mut *ctx.inner.body_writes.lock());
            writes.extend(writers(output, &ctx)?);
            Ok(writes)
        }
        .boxed()
    })
}

/// Evaluates conditional edges on the task's fresh view of the state and appends their
/// writes.
fn run_branches<S: State>(
    branches: &[Arc<Branch<S>>],
    ctx: &NodeContext,
    state_keys: &[String],
    writes: &mut Vec<(String, Value)>,
) -> Result<(), NodeError> {
    if branches.is_empty() {
        return Ok(());
    }
    let mut fresh = fresh_values(ctx, state_keys, writes)?;
    crate::pregel::managed::fill(&mut fresh, &S::managed(), ctx);
    let state =
        S::from_owned_values(fresh).map_err(|e| NodeError::named("InvalidUpdateError", e))?;
    for b in branches {
        let targets = (b.path)(&state, ctx)?;
        let w = b
            .writes(targets)
            .map_err(|e| NodeError::named("InvalidUpdateError", e))?;
        writes.extend(w);
    }
    Ok(())
}

/// The state as this task sees it: channel values at the start of the step with the
/// task's own writes applied.
fn fresh_values(
    ctx: &NodeContext,
    state_keys: &[String],
    writes: &[(String, Value)],
) -> Result<IndexMap<String, Value>, NodeError> {
    let mut out = IndexMap::with_capacity(state_keys.len());
    for k in state_keys {
        let Some(ch) = ctx.inner.channels.get(k) else {
            continue;
        };
        let vals: Vec<Value> = writes
            .iter()
            .filter(|(c, _)| c == k)
            .map(|(_, v)| v.clone())
            .collect();
        if vals.is_empty() {
            if ch.is_available() {
                out.insert(k.clone(), ch.get().unwrap_or_default());
            }
        } else {
            let mut local = ch.clone_box();
            local.update(vals).map_err(|e| {
                NodeError::named("InvalidUpdateError", format!("At key '{k}': {e}"))
            })?;
            if local.is_available() {
                out.insert(k.clone(), local.get().unwrap_or_default());
            }
        }
    }
    Ok(out)
}
