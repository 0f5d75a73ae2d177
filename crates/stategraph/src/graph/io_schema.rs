//! Input and output schemas: a graph whose input and output types differ from its state
//! (Python's `StateGraph(S, input_schema=I, output_schema=O)`).
//!
//! [`StateGraph::input_schema`] and [`StateGraph::output_schema`] turn a `StateGraph<S>`
//! into an [`IoGraph<S, I, O>`], which is the same builder (it dereferences to the
//! `StateGraph<S>`: nodes, edges and conditional edges are added as before) and whose
//! [`IoGraph::compile`] gives a [`CompiledIoGraph<S, I, O>`]: its `invoke` takes an input
//! of `I`'s keys (`IUpdate`, a map, a [`Command`](crate::Command),
//! [`NoInput`](super::NoInput)) and returns
//! an [`Outcome<O>`]; everything else (`stream`, `get_state`, `update_state`, ...) is the
//! [`CompiledGraph<S>`]'s, which it dereferences to.
//!
//! As LangGraph 1.2:
//! - the input's keys that `I` lacks are dropped (no error), whether state keys or not;
//! - `invoke` returns `O`'s channels only;
//! - a field of `I` or `O` that the state lacks is a channel of the graph (after the
//!   state's, input's first), which nodes may write and read (a node taking `I` reads
//!   it); `get_state` and a `values` stream show the state's channels and these;
//! - a field naming a state channel must be a `LastValue` (any type) or of the state
//!   channel's kind, else compiling fails with `Channel 'k' already exists with a
//!   different type` ([`Error::InvalidGraph`](crate::Error::InvalidGraph));
//! - stricter than Python, which does not compare them: when the state and the schema
//!   both have JSON Schemas ([`crate::graph::json_schema`]), a field whose JSON type
//!   cannot hold the state field's values (an `i64` in the state, a `String` in the
//!   input) fails compiling with `Channel 'k' is integer in the state but string in the
//!   input schema `In``;
//! - checkpoints are those Python stores for the same graph (tests/schemas.rs).

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use super::builder::StateGraph;
use super::compile_options::CompileOptions;
use super::compiled::{CompiledGraph, IntoInput};
use super::io_spec::IoSide;
use super::outcome::Outcome;
use crate::config::{AsRunConfig, RunConfig};
use crate::error::Result;
use crate::state::State;

impl<S: State> StateGraph<S> {
    /// The graph with input schema `I` (Python's `input_schema=`): a run's input holds
    /// `I`'s keys; the others are dropped. See the [module docs](self).
    ///
    /// ```
    /// # use stategraph::{RunConfig, State, StateGraph, START, END};
    /// #[derive(State)]
    /// struct S { question: String, answer: String }
    /// #[derive(State)]
    /// struct In { question: String }
    /// #[derive(State)]
    /// struct Out { answer: String }
    /// let mut g = StateGraph::<S>::new().input_schema::<In>().output_schema::<Out>();
    /// g.add_node("respond", |s: S| async move {
    ///     SUpdate::default().answer(format!("re: {}", s.question))
    /// });
    /// g.add_edge(START, "respond").add_edge("respond", END);
    /// let app = g.compile().unwrap();
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let input = InUpdate::default().question("why");
    /// let out: Out = app.invoke(input, &RunConfig::default()).await?.done()?;
    /// assert_eq!(out.answer, "re: why");
    /// # Ok::<(), stategraph::Error>(()) }).unwrap();
    /// ```
    pub fn input_schema<I: State>(self) -> IoGraph<S, I, S> {
        IoGraph::<S, S, S>::wrap(self).input_schema::<I>()
    }

    /// The graph with output schema `O` (Python's `output_schema=`): a run returns `O`'s
    /// channels. See the [module docs](self).
    pub fn output_schema<O: State>(self) -> IoGraph<S, S, O> {
        IoGraph::<S, S, S>::wrap(self).output_schema::<O>()
    }

    /// Adds the channels of a schema that the graph lacks; checks the others.
    fn add_schema_channels(&mut self, channels: Vec<(String, Box<dyn crate::channels::Channel>)>) {
        for (key, channel) in channels {
            let existing = self
                .channels
                .get(&key)
                .or_else(|| self.private_channels.get(&key));
            match existing {
                None => {
                    self.private_channels.insert(key.clone(), channel);
                    self.io.extra.push(key);
                }
                // As LangGraph: a `LastValue` field reads any channel of its name.
                Some(e) if channel.kind() != "LastValue" && e.kind() != channel.kind() => {
                    self.build_errors.push(format!(
                        "Channel '{key}' already exists with a different type"
                    ));
                }
                Some(_) => {}
            }
        }
    }

    /// The side of schema `T`, its channels added.
    fn schema_side<T: State>(&mut self, side: &str) -> IoSide {
        let channels = T::channels();
        let keys = channels.iter().map(|(k, _)| k.clone()).collect();
        self.add_schema_channels(channels);
        let json = T::state_json_schema();
        if let (Some(state), Some(theirs)) = (S::state_json_schema(), &json) {
            let name = std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or_default();
            for (key, ours, other) in super::json_probe::type_conflicts(&state, theirs) {
                self.build_errors.push(format!(
                    "Channel '{key}' is {ours} in the state but {other} in the {side} schema \
                     `{name}`"
                ));
            }
        }
        IoSide { keys, json }
    }
}

/// A [`StateGraph<S>`] whose input is `I` and output `O` (see the [module docs](self)).
/// It dereferences to the `StateGraph<S>`: add nodes and edges through it.
pub struct IoGraph<S: State, I: State = S, O: State = S> {
    pub(crate) graph: StateGraph<S>,
    _io: PhantomData<fn(I) -> O>,
}

impl<S: State, I: State, O: State> IoGraph<S, I, O> {
    fn wrap(graph: StateGraph<S>) -> Self {
        IoGraph {
            graph,
            _io: PhantomData,
        }
    }

    /// Sets the input schema to `I2`.
    pub fn input_schema<I2: State>(mut self) -> IoGraph<S, I2, O> {
        let side = self.graph.schema_side::<I2>("input");
        self.graph.io.input = Some(side);
        IoGraph::wrap(self.graph)
    }

    /// Sets the output schema to `O2`.
    pub fn output_schema<O2: State>(mut self) -> IoGraph<S, I, O2> {
        let side = self.graph.schema_side::<O2>("output");
        self.graph.io.output = Some(side);
        IoGraph::wrap(self.graph)
    }

    /// Checks the graph and makes it runnable, without a checkpointer.
    pub fn compile(&self) -> Result<CompiledIoGraph<S, I, O>> {
        self.compile_with(CompileOptions::default())
    }

    /// Checks the graph and makes it runnable with these options.
    pub fn compile_with(&self, options: CompileOptions) -> Result<CompiledIoGraph<S, I, O>> {
        Ok(CompiledIoGraph {
            graph: self.graph.compile_with(options)?,
            _io: PhantomData,
        })
    }

    /// The `StateGraph<S>` underneath (its schemas stay set).
    pub fn into_inner(self) -> StateGraph<S> {
        self.graph
    }
}

impl<S: State, I: State, O: State> Deref for IoGraph<S, I, O> {
    type Target = StateGraph<S>;
    fn deref(&self) -> &StateGraph<S> {
        &self.graph
    }
}

impl<S: State, I: State, O: State> DerefMut for IoGraph<S, I, O> {
    fn deref_mut(&mut self) -> &mut StateGraph<S> {
        &mut self.graph
    }
}

/// A compiled [`IoGraph`]: `invoke` takes `I`'s keys and returns `O`; the rest is the
/// [`CompiledGraph<S>`]'s, which it dereferences to (give `&*graph` where a
/// `&CompiledGraph<S>` is wanted, e.g. [`StateGraph::add_subgraph`]).
pub struct CompiledIoGraph<S, I, O> {
    graph: CompiledGraph<S>,
    _io: PhantomData<fn(I) -> O>,
}

impl<S, I, O> Clone for CompiledIoGraph<S, I, O> {
    fn clone(&self) -> Self {
        CompiledIoGraph {
            graph: self.graph.clone(),
            _io: PhantomData,
        }
    }
}

impl<S, I, O> Deref for CompiledIoGraph<S, I, O> {
    type Target = CompiledGraph<S>;
    fn deref(&self) -> &CompiledGraph<S> {
        &self.graph
    }
}

impl<S: State, I: State, O: State> CompiledIoGraph<S, I, O> {
    /// Runs the graph (as [`CompiledGraph::invoke`]) on an input of `I`'s keys (an
    /// `IUpdate`, a map, a `Command`, or [`NoInput`](super::NoInput); keys `I` lacks are
    /// dropped), and
    /// returns the output `O` (its channels' values) with the interrupts and next nodes.
    pub async fn invoke(
        &self,
        input: impl IntoInput,
        config: impl AsRunConfig,
    ) -> Result<Outcome<O>> {
        let config = self.graph.resolve(config);
        let outcome = self.graph.run(input.into_input()?, &config, None).await?;
        Ok(Outcome {
            state: O::from_values(&outcome.values)?,
            interrupts: outcome.interrupts,
            values: outcome.values,
            next: outcome.next,
        })
    }

    /// The [`CompiledGraph<S>`] underneath.
    pub fn into_inner(self) -> CompiledGraph<S> {
        self.graph
    }

    /// [`CompiledGraph::with_config`].
    pub fn with_config(self, defaults: impl Into<RunConfig>) -> Self {
        self.map(|g| g.with_config(defaults))
    }

    /// [`CompiledGraph::with_sources`].
    pub fn with_sources(self, sources: crate::Sources) -> Self {
        self.map(|g| g.with_sources(sources))
    }

    /// [`CompiledGraph::with_name`].
    #[must_use]
    pub fn with_name(self, name: impl Into<String>) -> Self {
        self.map(|g| g.with_name(name))
    }

    fn map(self, f: impl FnOnce(CompiledGraph<S>) -> CompiledGraph<S>) -> Self {
        CompiledIoGraph {
            graph: f(self.graph),
            _io: PhantomData,
        }
    }
}
