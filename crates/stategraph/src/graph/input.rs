//! What a node takes as its input ([`NodeInput`]): the graph's state, or another state
//! type whose fields are the channels the node reads (LangGraph's per-node
//! `input_schema`), and how a task's input (channel values, or a `Send`'s payload)
//! becomes one.

use std::any::TypeId;

use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use super::node::NodeError;
use crate::channels::Channel;
use crate::error::Result;
use crate::pregel::managed::Managed;
use crate::state::State;

/// A type a node may take as its input: the graph's state, or any other
/// `#[derive(State)]` struct (or [`crate::DynState`]).
///
/// A node taking the graph's state reads every state channel. A node taking another type
/// reads only that type's fields, each a channel; a field the graph's state lacks becomes
/// a private channel of the graph, as a node's input schema does in LangGraph: any node
/// may write it and checkpoints keep it, but the graph's output leaves it out (so do the
/// `values` stream and `get_state`, where LangGraph shows it). A field naming an existing
/// channel must be a `LastValue` or of that channel's kind, else compiling fails with
/// LangGraph's "Channel 'k' already exists with a different type".
///
/// When a `Send` triggers the node, its payload must be a map of the type's fields: a
/// payload that is not a map, names a key the type does not have, or holds a value of the
/// wrong type fails the task with a `TypeError` naming the node, the type and the
/// payload. A field the payload leaves out takes its default. An input with no declared
/// fields ([`crate::DynState`]) reads every state channel and takes any map.
///
/// Every [`State`] type is a `NodeInput`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the input of a node",
    label = "a node's first argument must be the graph's state or another `#[derive(State)]` type",
    note = "derive `State` for `{Self}`: its fields become the channels the node reads, and a `Send` to the node carries them as a map"
)]
pub trait NodeInput: Send + Sized + 'static {
    /// Builds the input from a task's raw input (a `Send`'s payload of any shape) when
    /// the type reads one itself; `Err(input)` hands the input back to be read as a map
    /// of channel values (every [`State`] type does that).
    fn from_raw_input(input: Value) -> std::result::Result<Result<Self>, Value> {
        Err(input)
    }

    /// The channels the input reads, in order; `None` when it reads every channel of
    /// the graph's state (an input without declared fields, such as `DynState`).
    fn input_channels() -> Option<Vec<(String, Box<dyn Channel>)>>;

    /// Builds the input from channel values (a channel absent from `values` is empty).
    fn from_input_values(values: IndexMap<String, Value>) -> Result<Self>;

    /// The managed values the input holds ([`State::managed`]). Provided: none.
    fn managed_values() -> Vec<(String, Managed)> {
        Vec::new()
    }
}

impl<T: State> NodeInput for T {
    fn input_channels() -> Option<Vec<(String, Box<dyn Channel>)>> {
        let channels = T::channels();
        (!channels.is_empty()).then_some(channels)
    }

    fn from_input_values(values: IndexMap<String, Value>) -> Result<Self> {
        T::from_owned_values(values)
    }

    fn managed_values() -> Vec<(String, Managed)> {
        T::managed()
    }
}

/// Named channels, in order.
type ChannelList = Vec<(String, Box<dyn Channel>)>;

/// How a node of a graph over `S` reads its input `I`, fixed when the node is added.
#[derive(Clone, Debug)]
pub(crate) struct InputSpec {
    /// The channels the node reads; `None`: every state channel.
    pub reads: Option<Vec<String>>,
    /// The keys an input map may hold; `None`: any key.
    pub keys: Option<Vec<String>>,
    /// The input type's name, for errors.
    pub type_name: &'static str,
    /// The managed values the input holds, added to a pull task's input.
    pub managed: Vec<(String, Managed)>,
}

impl InputSpec {
    /// The spec of input `I` in a graph over `S` whose state channels are `state_keys`;
    /// also returns the channels of `I` when it is not `S` (the graph adds those it
    /// lacks).
    pub(crate) fn of<S: State, I: NodeInput>(state_keys: Vec<String>) -> (InputSpec, ChannelList) {
        let type_name = short_type_name(std::any::type_name::<I>());
        let declared = I::input_channels();
        let managed = I::managed_values();
        let names: Option<Vec<String>> = declared.as_ref().map(|c| {
            let channels = c.iter().map(|(k, _)| k.clone());
            channels
                .chain(managed.iter().map(|(k, _)| k.clone()))
                .collect()
        });
        if TypeId::of::<I>() == TypeId::of::<S>() {
            // The graph's state: read every state channel (those given to `with_channels`
            // included, which stay as given), accept a payload of state keys.
            let spec = InputSpec {
                reads: None,
                keys: names.map(|mut n| {
                    n.extend(state_keys);
                    n
                }),
                type_name,
                managed,
            };
            return (spec, Vec::new());
        }
        let spec = InputSpec {
            reads: names.clone(),
            keys: names,
            type_name,
            managed,
        };
        (spec, declared.unwrap_or_default())
    }

    /// Turns a task's input (the map of channel values it read, or a `Send`'s payload)
    /// into the node's input, or the `TypeError` saying why the payload does not fit.
    pub(crate) fn read<I: NodeInput>(&self, node: &str, input: Value) -> Result<I, NodeError> {
        let expected = || match &self.keys {
            Some(keys) => format!("`{}` (a map with keys {})", self.type_name, keys_list(keys)),
            None => format!("`{}` (a map)", self.type_name),
        };
        let input = match I::from_raw_input(input) {
            Ok(read) => {
                return read.map_err(|e| {
                    NodeError::named(
                        "TypeError",
                        format!("node `{node}` takes `{}`: {e}", self.type_name),
                    )
                })
            }
            Err(input) => input,
        };
        let Value::Map(map) = input else {
            return Err(type_error(node, &expected(), &input, "not a map"));
        };
        let mut values = IndexMap::with_capacity(map.len());
        for (k, v) in map.iter() {
            let Some(key) = k.as_str() else {
                let why = format!("key {k:?} is not a string");
                return Err(type_error(
                    node,
                    &expected(),
                    &Value::Map(map.clone()),
                    &why,
                ));
            };
            if let Some(keys) = &self.keys {
                if !keys.iter().any(|x| x == key) {
                    let why = format!("unknown key {key:?}");
                    return Err(type_error(
                        node,
                        &expected(),
                        &Value::Map(map.clone()),
                        &why,
                    ));
                }
            }
            values.insert(key.to_owned(), v.clone());
        }
        I::from_input_values(values)
            .map_err(|e| type_error(node, &expected(), &Value::Map(map.clone()), &e.to_string()))
    }
}

fn type_error(node: &str, expected: &str, got: &Value, why: &str) -> NodeError {
    NodeError::named(
        "TypeError",
        format!("node `{node}` takes {expected}, got {got:?}: {why}"),
    )
}

fn keys_list(keys: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::with_capacity(keys.len());
    for k in keys {
        if !seen.contains(&k.as_str()) {
            seen.push(k);
        }
    }
    seen.iter()
        .map(|k| format!("{k:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `my_crate::Subject` -> `Subject`; generic arguments are kept as written.
fn short_type_name(full: &'static str) -> &'static str {
    let head = full.split('<').next().unwrap_or(full);
    match head.rfind("::") {
        Some(i) => &full[i + 2..],
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn type_names_lose_their_module_path() {
        assert_eq!(short_type_name("a::b::Subject"), "Subject");
        assert_eq!(short_type_name("Subject"), "Subject");
        assert_eq!(short_type_name("a::Wrap<b::C>"), "Wrap<b::C>");
    }
}
