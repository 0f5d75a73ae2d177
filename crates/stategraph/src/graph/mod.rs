//! The graph API: build a [`StateGraph`], compile it, run the [`CompiledGraph`].

pub mod branch;
pub mod builder;
pub mod compile;
pub mod compile_options;
pub mod compiled;
pub mod draw;
pub mod input;
pub mod io_schema;
mod io_spec;
#[doc(hidden)]
pub mod json_probe;
pub mod json_schema;
pub mod node;
mod node_fn;
pub mod outcome;
mod read_state;
pub mod run_stream;
pub mod state_api;
pub mod typed_stream;
mod update_forms;
mod update_special;
mod update_state;
pub mod virtual_nodes;

pub use branch::BranchTargets;
pub use builder::{NodeOptions, StateGraph};
pub use compile_options::CompileOptions;
pub use compiled::{CompiledGraph, IntoInput, NoInput};
pub use draw::{CurveStyle, DrawEdge, DrawGraph, DrawNode, MermaidOptions, NodeStyles};
pub use io_schema::{CompiledIoGraph, IoGraph};
pub use node::{IntoNodeOutput, NodeContext, NodeError, NodeHandler, NodeInput, NodeOutput};
pub use outcome::Outcome;
pub use run_stream::RunStream;
pub use typed_stream::{FromWrites, MessageMetadata, StreamOptions, StreamPart};
pub use update_forms::{COPY, INPUT};
pub use update_state::StateUpdate;
pub use virtual_nodes::{END, START};
