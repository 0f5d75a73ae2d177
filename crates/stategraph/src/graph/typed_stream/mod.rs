//! Typed streaming: [`CompiledGraph::stream_typed`] yields [`StreamPart`]s, one variant per
//! stream mode, with the state, the state's update type, messages and typed task and
//! checkpoint events in place of raw [`Value`]s (Python's `stream(..., version="v2")`).
//!
//! ```
//! # use stategraph::{DynState, StateGraph, START, END, StreamMode, StreamPart, RunConfig, channels::LastValue};
//! # use futures::StreamExt;
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut g = StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)]);
//! g.add_node("inc", |_s: DynState| async move { stategraph::update([("n", 1)]) });
//! g.add_edge(START, "inc").add_edge("inc", END);
//! let app = g.compile().unwrap();
//! let mut parts = app.stream_typed(stategraph::update([("n", 0)]), &RunConfig::default(), [StreamMode::Updates]);
//! while let Some(part) = parts.next().await {
//!     match part.unwrap() {
//!         StreamPart::Updates { node, update, .. } => println!("{node}: {update:?}"),
//!         StreamPart::Interrupt { interrupts, .. } => println!("paused: {interrupts:?}"),
//!         _ => {}
//!     }
//! }
//! # });
//! ```

mod from_writes;
mod payloads;

use std::fmt;

use futures::stream::{BoxStream, StreamExt};
use indexmap::IndexMap;
use stategraph_checkpoint::Value;

pub use from_writes::FromWrites;
pub use payloads::{
    CheckpointEvent, CheckpointTask, DebugEvent, DebugPayload, MessageMetadata, TaskEvent,
    TaskResult, TaskStart,
};

use super::compiled::{CompiledGraph, IntoInput};
use crate::config::AsRunConfig;
use crate::error::{Error, Result};
use crate::messages::Message;
use crate::pregel::stream::{StreamEvent, StreamMode};
use crate::state::State;
use crate::types::Interrupt;
use payloads::{interrupts, string_map, Readable, ReadableMap};

/// What to stream: the modes, and whether subgraphs stream their events too. Built from a
/// mode, an array or a slice of modes; `.subgraphs(true)` is Python's `subgraphs=True`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOptions {
    /// The modes streamed.
    pub modes: Vec<StreamMode>,
    /// Whether events from inside subgraphs are streamed (under the subgraph's
    /// namespace); off by default, as in Python.
    pub subgraphs: bool,
}

impl StreamOptions {
    /// These modes, without subgraphs.
    pub fn new(modes: &[StreamMode]) -> StreamOptions {
        StreamOptions {
            modes: modes.to_vec(),
            subgraphs: false,
        }
    }

    /// Streams subgraphs' events too, or not (builder style).
    #[must_use]
    pub fn subgraphs(mut self, subgraphs: bool) -> StreamOptions {
        self.subgraphs = subgraphs;
        self
    }
}

impl From<StreamMode> for StreamOptions {
    fn from(mode: StreamMode) -> Self {
        StreamOptions::new(&[mode])
    }
}

impl From<&[StreamMode]> for StreamOptions {
    fn from(modes: &[StreamMode]) -> Self {
        StreamOptions::new(modes)
    }
}

impl<const N: usize> From<[StreamMode; N]> for StreamOptions {
    fn from(modes: [StreamMode; N]) -> Self {
        StreamOptions::new(&modes)
    }
}

impl<const N: usize> From<&[StreamMode; N]> for StreamOptions {
    fn from(modes: &[StreamMode; N]) -> Self {
        StreamOptions::new(modes)
    }
}

impl From<Vec<StreamMode>> for StreamOptions {
    fn from(modes: Vec<StreamMode>) -> Self {
        StreamOptions {
            modes,
            subgraphs: false,
        }
    }
}

/// One typed stream event. `ns` is the namespace of the graph that emitted it (empty at
/// the root; `["node:task_id", ...]` inside subgraphs).
///
/// The root graph's `values` and `updates` are typed by the state `S`; a subgraph's, whose
/// state is another type, come as [`StreamPart::SubgraphValues`] and
/// [`StreamPart::SubgraphUpdates`].
// `Messages` is the largest variant and the most frequent one (a part per token): it
// stays unboxed so that streaming a token costs no extra allocation.
#[allow(clippy::large_enum_variant)]
pub enum StreamPart<S: State> {
    /// `values`: the state after a step (or the input). When the run pauses, the state
    /// is streamed once more with the `interrupts` (Python's v2 `interrupts` field).
    Values {
        /// The graph's namespace (empty: the root).
        ns: Vec<String>,
        /// The state.
        state: S,
        /// The interrupts the run paused on (empty unless it paused).
        interrupts: Vec<Interrupt>,
    },
    /// `updates`: what a node wrote, as the state's update type.
    Updates {
        /// The graph's namespace.
        ns: Vec<String>,
        /// The node.
        node: String,
        /// Its writes as the state's update (`<Name>Update` for a derived state).
        update: S::Update,
        /// True when the writes came from the node cache.
        cached: bool,
    },
    /// `updates`: the run paused on these interrupts (Python's `__interrupt__` update).
    Interrupt {
        /// The namespace of the graph that paused.
        ns: Vec<String>,
        /// The interrupts waiting for an answer.
        interrupts: Vec<Interrupt>,
    },
    /// `messages`: a chat-model chunk, or a message a node returned.
    Messages {
        /// The namespace of the graph whose node sent it.
        ns: Vec<String>,
        /// The message (chunk).
        chunk: Message,
        /// The task that sent it.
        metadata: MessageMetadata,
    },
    /// `custom`: what a node sent with `NodeContext::write_custom`.
    Custom {
        /// The graph's namespace.
        ns: Vec<String>,
        /// The value sent.
        data: Value,
    },
    /// `tasks`: a task started or finished.
    Tasks {
        /// The graph's namespace.
        ns: Vec<String>,
        /// The event.
        event: TaskEvent,
    },
    /// `checkpoints`: a checkpoint was created.
    Checkpoints {
        /// The graph's namespace.
        ns: Vec<String>,
        /// The checkpoint (boxed: it is much larger than the other events).
        checkpoint: Box<CheckpointEvent>,
    },
    /// `debug`: checkpoint and task events with their step and time.
    Debug {
        /// The graph's namespace.
        ns: Vec<String>,
        /// The event.
        event: DebugEvent,
    },
    /// `values` of a subgraph: its output channels (read a typed state with
    /// `State::from_values`).
    SubgraphValues {
        /// The subgraph's namespace.
        ns: Vec<String>,
        /// Its output channels' values.
        values: IndexMap<String, Value>,
        /// The interrupts it paused on.
        interrupts: Vec<Interrupt>,
    },
    /// `updates` of a subgraph's node: its writes.
    SubgraphUpdates {
        /// The subgraph's namespace.
        ns: Vec<String>,
        /// The node.
        node: String,
        /// Its writes, `(channel, value)` in order.
        writes: Vec<(String, Value)>,
        /// True when the writes came from the node cache.
        cached: bool,
    },
}

impl<S: State> StreamPart<S> {
    /// The namespace of the graph that emitted the event (empty at the root).
    pub fn ns(&self) -> &[String] {
        match self {
            StreamPart::Values { ns, .. }
            | StreamPart::Updates { ns, .. }
            | StreamPart::Interrupt { ns, .. }
            | StreamPart::Messages { ns, .. }
            | StreamPart::Custom { ns, .. }
            | StreamPart::Tasks { ns, .. }
            | StreamPart::Checkpoints { ns, .. }
            | StreamPart::Debug { ns, .. }
            | StreamPart::SubgraphValues { ns, .. }
            | StreamPart::SubgraphUpdates { ns, .. } => ns,
        }
    }

    /// The mode that produced the event.
    pub fn mode(&self) -> StreamMode {
        match self {
            StreamPart::Values { .. } | StreamPart::SubgraphValues { .. } => StreamMode::Values,
            StreamPart::Updates { .. }
            | StreamPart::Interrupt { .. }
            | StreamPart::SubgraphUpdates { .. } => StreamMode::Updates,
            StreamPart::Messages { .. } => StreamMode::Messages,
            StreamPart::Custom { .. } => StreamMode::Custom,
            StreamPart::Tasks { .. } => StreamMode::Tasks,
            StreamPart::Checkpoints { .. } => StreamMode::Checkpoints,
            StreamPart::Debug { .. } => StreamMode::Debug,
        }
    }

    /// The typed parts of one raw event (an `updates` event names one node; a cached
    /// one may name several).
    pub fn from_event(event: StreamEvent) -> Result<Vec<StreamPart<S>>>
    where
        S::Update: FromWrites,
    {
        let StreamEvent { ns, mode, data } = event;
        let root = ns.is_empty();
        Ok(match mode {
            StreamMode::Values => {
                let mut values = string_map(Some(&data));
                let paused = values
                    .shift_remove("__interrupt__")
                    .map(|v| interrupts(Some(&v)))
                    .unwrap_or_default();
                if root {
                    vec![StreamPart::Values {
                        ns,
                        state: S::from_owned_values(values)?,
                        interrupts: paused,
                    }]
                } else {
                    vec![StreamPart::SubgraphValues {
                        ns,
                        values,
                        interrupts: paused,
                    }]
                }
            }
            StreamMode::Updates => updates(ns, &data)?,
            StreamMode::Messages => {
                let (chunk, meta) = match data.as_list() {
                    Some([chunk, meta]) => (chunk, meta),
                    _ => {
                        return Err(Error::State(format!(
                            "unexpected messages payload: {}",
                            data.repr()
                        )))
                    }
                };
                vec![StreamPart::Messages {
                    ns,
                    chunk: Message::from_value(chunk)?,
                    metadata: MessageMetadata::parse(meta)?,
                }]
            }
            StreamMode::Custom => vec![StreamPart::Custom { ns, data }],
            StreamMode::Tasks => vec![StreamPart::Tasks {
                ns,
                event: TaskEvent::parse(&data)?,
            }],
            StreamMode::Checkpoints => vec![StreamPart::Checkpoints {
                ns,
                checkpoint: Box::new(CheckpointEvent::parse(&data)?),
            }],
            StreamMode::Debug => vec![StreamPart::Debug {
                ns,
                event: DebugEvent::parse(&data)?,
            }],
        })
    }
}

/// The parts of an `updates` payload: `{node: {channel: value}}` (`None` when the node
/// wrote nothing, a list of maps when it wrote a channel twice), `__metadata__` for
/// cached writes, or `{"__interrupt__": [...]}`.
fn updates<S: State>(ns: Vec<String>, data: &Value) -> Result<Vec<StreamPart<S>>>
where
    S::Update: FromWrites,
{
    let map = data
        .as_map()
        .ok_or_else(|| Error::State(format!("unexpected updates payload: {}", data.repr())))?;
    let cached = map
        .get("__metadata__")
        .and_then(|m| m.get("cached"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut parts = Vec::with_capacity(1);
    for (node, value) in map.iter() {
        let Some(node) = node.as_str() else { continue };
        if node == "__metadata__" {
            continue;
        }
        if node == "__interrupt__" {
            parts.push(StreamPart::Interrupt {
                ns: ns.clone(),
                interrupts: interrupts(Some(value)),
            });
            continue;
        }
        let writes: Vec<(String, Value)> = match value {
            Value::List(items) => items.iter().flat_map(|m| string_map(Some(m))).collect(),
            other => string_map(Some(other)).into_iter().collect(),
        };
        parts.push(if ns.is_empty() {
            StreamPart::Updates {
                ns: ns.clone(),
                node: node.to_owned(),
                update: S::Update::from_writes(&writes)?,
                cached,
            }
        } else {
            StreamPart::SubgraphUpdates {
                ns: ns.clone(),
                node: node.to_owned(),
                writes,
                cached,
            }
        });
    }
    Ok(parts)
}

impl<S: State> CompiledGraph<S> {
    /// [`CompiledGraph::stream`] with options: the modes, and whether subgraphs stream
    /// their events too (`StreamOptions::new(&modes).subgraphs(true)`).
    pub fn stream_with(
        &self,
        input: impl IntoInput,
        config: impl AsRunConfig,
        options: impl Into<StreamOptions>,
    ) -> BoxStream<'static, Result<StreamEvent>> {
        let config = self.resolve(config);
        match input.into_input() {
            Ok(input) => self.spawn_run(input, config, options.into(), false).boxed(),
            Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
        }
    }

    /// Runs the graph, yielding typed events ([`StreamPart`]) of the given modes as they
    /// happen: one `match` decodes them. `options` is a mode, an array or slice of modes,
    /// or [`StreamOptions`] (for subgraphs). A failure of the run is the stream's last
    /// item; an event that does not read as its type is an `Err` item (the stream goes
    /// on). Dropping the stream cancels the run.
    pub fn stream_typed(
        &self,
        input: impl IntoInput,
        config: impl AsRunConfig,
        options: impl Into<StreamOptions>,
    ) -> BoxStream<'static, Result<StreamPart<S>>>
    where
        S::Update: FromWrites,
    {
        self.stream_with(input, config, options)
            .flat_map(|event| {
                let parts: Vec<Result<StreamPart<S>>> = match event.and_then(StreamPart::from_event)
                {
                    Ok(parts) => parts.into_iter().map(Ok).collect(),
                    Err(e) => vec![Err(e)],
                };
                futures::stream::iter(parts)
            })
            .boxed()
    }
}

impl<S> fmt::Debug for StreamPart<S>
where
    S: State + fmt::Debug,
    S::Update: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamPart::Values {
                ns,
                state,
                interrupts,
            } => f
                .debug_struct("Values")
                .field("ns", ns)
                .field("state", state)
                .field("interrupts", interrupts)
                .finish(),
            StreamPart::Updates {
                ns,
                node,
                update,
                cached,
            } => f
                .debug_struct("Updates")
                .field("ns", ns)
                .field("node", node)
                .field("update", update)
                .field("cached", cached)
                .finish(),
            StreamPart::Interrupt { ns, interrupts } => f
                .debug_struct("Interrupt")
                .field("ns", ns)
                .field("interrupts", interrupts)
                .finish(),
            StreamPart::Messages {
                ns,
                chunk,
                metadata,
            } => f
                .debug_struct("Messages")
                .field("ns", ns)
                .field("chunk", &Readable(&chunk.to_value()))
                .field("metadata", metadata)
                .finish(),
            StreamPart::Custom { ns, data } => f
                .debug_struct("Custom")
                .field("ns", ns)
                .field("data", &Readable(data))
                .finish(),
            StreamPart::Tasks { ns, event } => f
                .debug_struct("Tasks")
                .field("ns", ns)
                .field("event", event)
                .finish(),
            StreamPart::Checkpoints { ns, checkpoint } => f
                .debug_struct("Checkpoints")
                .field("ns", ns)
                .field("checkpoint", checkpoint)
                .finish(),
            StreamPart::Debug { ns, event } => f
                .debug_struct("Debug")
                .field("ns", ns)
                .field("event", event)
                .finish(),
            StreamPart::SubgraphValues {
                ns,
                values,
                interrupts,
            } => f
                .debug_struct("SubgraphValues")
                .field("ns", ns)
                .field("values", &ReadableMap(values))
                .field("interrupts", interrupts)
                .finish(),
            StreamPart::SubgraphUpdates {
                ns,
                node,
                writes,
                cached,
            } => f
                .debug_struct("SubgraphUpdates")
                .field("ns", ns)
                .field("node", node)
                .field(
                    "writes",
                    &ReadableMap(&writes.iter().cloned().collect::<IndexMap<_, _>>()),
                )
                .field("cached", cached)
                .finish(),
        }
    }
}
