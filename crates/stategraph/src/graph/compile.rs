//! Compiling a `StateGraph`: validation, then the Pregel form (channels, nodes, writers).

use std::collections::HashSet;
use std::sync::Arc;

use futures::FutureExt;
use indexmap::IndexMap;
use stategraph_checkpoint::{CheckpointSaver, Value};

use super::branch::Branch;
use super::builder::{NodeKind, StateGraph, END, START};
use super::compiled::CompiledGraph;
use super::node::{NodeContext, NodeError, NodeOutput};
use crate::channels::{
    Channel, EphemeralValue, LastValueAfterFinish, NamedBarrierValue, NamedBarrierValueAfterFinish,
    Topic,
};
use crate::error::{Error, Result};
use crate::pregel::graph::{NodeRunner, PregelGraph, PregelNode, Reads, WriterFn};
use crate::pregel::run_loop::{Loop, LoopParams, RunInput};
use crate::pregel::task::TASKS;
use crate::pregel::writes_spec::WritesSpec;
use crate::state::State;

/// Options of [`StateGraph::compile_with`].
#[derive(Clone, Default)]
pub struct CompileOptions {
    /// Where checkpoints go; without one a run keeps nothing.
    pub checkpointer: Option<Arc<dyn CheckpointSaver>>,
    /// Stop before these nodes run (`"*"`: every node).
    pub interrupt_before: Vec<String>,
    /// Stop after these nodes ran (`"*"`: every node).
    pub interrupt_after: Vec<String>,
    /// Where cached node writes are kept (an in-memory cache by default).
    pub cache: Option<Arc<dyn crate::pregel::cache::NodeCache>>,
    /// The long-term store every node of every thread reaches through
    /// [`NodeContext::store`] (subgraphs inherit it unless given their own).
    pub store: Option<Arc<dyn stategraph_store::BaseStore>>,
    /// Treat a node that no edge leads to as an error instead of a warning. (Routes taken
    /// only through `Command::goto` or an unmapped conditional edge are invisible here.)
    pub strict: bool,
    /// Drop writes to unknown nodes or channels (a `Command::goto` or conditional edge
    /// naming a node the graph does not have, a `Send` to one, a `Command` update or
    /// `update_state` value for an unknown key) instead of failing with
    /// [`Error::UnknownNode`] / [`Error::UnknownChannel`]: what Python LangGraph does
    /// (it logs a warning, or drops an unknown `update_state` key silently). Off by default.
    pub lenient_writes: bool,
}

impl CompileOptions {
    /// Default options.
    pub fn new() -> CompileOptions {
        CompileOptions::default()
    }

    /// Sets the checkpointer (builder style).
    pub fn checkpointer(mut self, saver: Arc<dyn CheckpointSaver>) -> Self {
        self.checkpointer = Some(saver);
        self
    }

    /// Sets the long-term store (builder style).
    pub fn store(mut self, store: Arc<dyn stategraph_store::BaseStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Sets the nodes to interrupt before (builder style).
    pub fn interrupt_before<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        nodes: I,
    ) -> Self {
        self.interrupt_before = nodes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the nodes to interrupt after (builder style).
    pub fn interrupt_after<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.interrupt_after = nodes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the node cache (builder style).
    pub fn cache(mut self, cache: Arc<dyn crate::pregel::cache::NodeCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Drops writes to unknown nodes or channels as LangGraph does, instead of failing
    /// (builder style; see [`CompileOptions::lenient_writes`](#structfield.lenient_writes)).
    pub fn lenient_writes(mut self, lenient: bool) -> Self {
        self.lenient_writes = lenient;
        self
    }

    /// Makes unreachable nodes an error (builder style).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
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

pub(crate) fn compile<S: State>(
    g: &StateGraph<S>,
    mut options: CompileOptions,
) -> Result<CompiledGraph<S>> {
    validate(g, &options)?;
    if options.cache.is_none() && g.nodes.values().any(|n| n.options.cache.is_some()) {
        options.cache = Some(Arc::new(crate::pregel::cache::InMemoryCache::new()));
    }
    let state_keys: Arc<Vec<String>> = Arc::new(g.channels.keys().cloned().collect());

    let mut channels: IndexMap<String, Box<dyn Channel>> = IndexMap::new();
    for (k, ch) in g.channels.iter().chain(g.private_channels.iter()) {
        channels.insert(k.clone(), ch.clone_box());
    }
    // What nodes may write: the state's channels and the private ones of node inputs
    // (START writes only the state's, as LangGraph's input schema).
    let writable: Arc<Vec<String>> = Arc::new(
        g.channels
            .keys()
            .chain(g.private_channels.keys())
            .cloned()
            .collect(),
    );
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
    let mut join_triggers: IndexMap<String, Vec<String>> = IndexMap::new();
    let mut join_writes: IndexMap<String, Vec<(String, Value)>> = IndexMap::new();
    for (starts, end) in &g.waiting_edges {
        let chan = format!("join:{}:{end}", starts.join("+"));
        let deferred = g.nodes.get(end).is_some_and(|n| n.options.defer);
        let ch: Box<dyn Channel> = if deferred {
            Box::new(NamedBarrierValueAfterFinish::new(starts.clone()))
        } else {
            Box::new(NamedBarrierValue::new(starts.clone()))
        };
        channels.insert(chan.clone(), ch);
        join_triggers
            .entry(end.clone())
            .or_default()
            .push(chan.clone());
        for s in starts {
            join_writes
                .entry(s.clone())
                .or_default()
                .push((chan.clone(), Value::from(s.as_str())));
        }
    }
    let static_writes = |source: &str| -> Vec<(String, Value)> {
        let mut w: Vec<(String, Value)> = g
            .edges
            .iter()
            .filter(|(s, e)| s == source && e != END)
            .map(|(_, e)| (format!("branch:to:{e}"), Value::Nil))
            .collect();
        if let Some(j) = join_writes.get(source) {
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
        if let Some(j) = join_triggers.get(name) {
            triggers.extend(j.iter().cloned());
        }
        let (writers, writes) = node_writers::<S>(
            state_keys.clone(),
            writable.clone(),
            static_writes(name),
            branches_of(name),
        );
        let (run, subgraph) = match &spec.kind {
            NodeKind::Function(handler) => (user_runner(handler.clone(), writers.clone()), None),
            NodeKind::Subgraph(sub, opts, _) => (
                subgraph_runner(sub.clone(), opts.clone(), writers.clone()),
                Some(sub.clone()),
            ),
        };
        let reads = spec.input.as_ref().and_then(|i| i.reads.clone());
        nodes.insert(
            name.clone(),
            PregelNode {
                name: name.clone(),
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
            },
        );
    }
    let mut graph = PregelGraph {
        channels,
        nodes,
        trigger_to_nodes: IndexMap::new(),
        output_channels: state_keys.to_vec(),
    };
    graph.index_triggers();
    let topology = Arc::new(super::draw::topology::capture(g, &options));
    Ok(CompiledGraph::new(Arc::new(graph), options, topology))
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
) -> NodeRunner {
    Arc::new(move |input: Value, ctx: NodeContext| {
        let sub = sub.clone();
        let sub_options = sub_options.clone();
        let writers = writers.clone();
        async move {
            let scope = ctx
                .inner
                .run
                .clone()
                .ok_or_else(|| NodeError::msg("a subgraph can only run inside a graph run"))?;
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
            let params = LoopParams {
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
            };
            let span = crate::spans::run_span(
                &crate::spans::RunName::Named(Arc::from(ctx.inner.name.as_str())),
                &params.config,
                &params.ns,
            );
            let run = async move {
                Loop::start(params, RunInput::Values(input))
                    .await?
                    .run()
                    .await
            };
            // Untraced, the run is awaited as is: wrapping it would move its future.
            let outcome = if span.is_disabled() {
                run.await
            } else {
                crate::spans::in_run(span, run).await
            };
            let outcome = match outcome {
                Ok(o) => o,
                // The subgraph's node addressed this graph: run this node's writers with it.
                Err(crate::Error::ParentCommand(cmd)) => {
                    let output = NodeOutput {
                        writes: cmd.update.unwrap_or_default(),
                        goto: cmd.goto,
                    };
                    let mut writes = std::mem::take(&mut *ctx.inner.body_writes.lock());
                    writes.extend(writers(output, &ctx)?);
                    return Ok(writes);
                }
                Err(crate::Error::Node { message, .. }) => {
                    return Err(NodeError::repr_only(message))
                }
                Err(other) => return Err(NodeError::named("GraphError", other)),
            };
            if !outcome.interrupts.is_empty() {
                return Err(NodeError::interrupt(outcome.interrupts));
            }
            let output = NodeOutput {
                writes: outcome.values.into_iter().collect(),
                goto: Vec::new(),
            };
            let mut writes = std::mem::take(&mut *ctx.inner.body_writes.lock());
            writes.extend(writers(output, &ctx)?);
            Ok(writes)
        }
        .boxed()
    })
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
    let fresh = fresh_values(ctx, state_keys, writes)?;
    let state =
        S::from_owned_values(fresh).map_err(|e| NodeError::named("InvalidUpdateError", e))?;
    for b in branches {
        let targets = (b.path)(&state);
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
