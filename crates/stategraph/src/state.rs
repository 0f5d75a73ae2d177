//! The state schema: how a Rust state type maps onto channels, and partial updates.
//!
//! A graph's state is a set of named channels. A typed state is a struct whose fields are
//! the channels (`#[derive(State)]` writes the impl); each field's type is converted to and
//! from the stored [`Value`] model with serde. A node returns a partial update, the
//! generated `<Name>Update` struct whose fields are all `Option`s: only the fields a node
//! sets become writes, in field order.
//!
//! A field of a shared value type ([`Value`], [`stategraph_checkpoint::List`],
//! [`stategraph_checkpoint::Map`], [`stategraph_checkpoint::Str`],
//! [`stategraph_checkpoint::Bytes`]) is read from its channel as a handle, in O(1); other
//! types are deserialized on every read. Declare a long message history as a `List` (with
//! the `add_messages` or `add` reducer) so that a node does not pay for the whole history.

use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use crate::channels::Channel;
use crate::error::Result;

/// A state schema: its channels, how to read it from channel values, and its updates.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a state type",
    label = "not a state",
    note = "derive it: `#[derive(State)] struct {Self} {{ .. }}` (each field a channel), or use `DynState`"
)]
pub trait State: Send + Sync + Sized + 'static {
    /// A partial update of this state (the fields a node sets).
    type Update: IntoUpdate + Default + Send + 'static;

    /// The channels of the state's fields, in declaration order: `(name, channel)`.
    fn channels() -> Vec<(String, Box<dyn Channel>)>;

    /// Reads the state from the values of the available channels; a field whose channel
    /// is empty takes its default.
    fn from_values(values: &IndexMap<String, Value>) -> Result<Self>;

    /// The state as channel writes, every field (used to read a whole state as input).
    fn to_values(&self) -> Result<Vec<(String, Value)>>;

    /// [`State::from_values`] from a map the caller gives away (the engine's path: a
    /// state that keeps values as they are, like [`DynState`], takes them without a copy).
    /// Provided: reads from the borrowed map.
    fn from_owned_values(values: IndexMap<String, Value>) -> Result<Self> {
        Self::from_values(&values)
    }

    /// The fields that hold managed values (`#[state(managed = ...)]`): `(key, value)`.
    /// They are no channels; the run adds them to what a node or a conditional edge
    /// reads. Provided: none.
    fn managed() -> Vec<(String, crate::pregel::managed::Managed)> {
        Vec::new()
    }
}

/// Something that becomes channel writes: a generated `<Name>Update`, or a map of values.
pub trait IntoUpdate {
    /// The writes, as `(channel, value)` pairs in order.
    fn into_writes(self) -> Result<Vec<(String, Value)>>;
}

impl IntoUpdate for Vec<(String, Value)> {
    fn into_writes(self) -> Result<Vec<(String, Value)>> {
        Ok(self)
    }
}

impl IntoUpdate for IndexMap<String, Value> {
    fn into_writes(self) -> Result<Vec<(String, Value)>> {
        Ok(self.into_iter().collect())
    }
}

impl IntoUpdate for () {
    fn into_writes(self) -> Result<Vec<(String, Value)>> {
        Ok(Vec::new())
    }
}

/// A state without a Rust type: channel name to value, with channels given to
/// [`crate::StateGraph::with_channels`]. It can run any thread, including one that
/// Python wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DynState(pub IndexMap<String, Value>);

impl DynState {
    /// The value of a channel.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
}

impl State for DynState {
    type Update = Vec<(String, Value)>;

    fn channels() -> Vec<(String, Box<dyn Channel>)> {
        Vec::new()
    }

    fn from_values(values: &IndexMap<String, Value>) -> Result<Self> {
        Ok(DynState(values.clone()))
    }

    fn from_owned_values(values: IndexMap<String, Value>) -> Result<Self> {
        Ok(DynState(values))
    }

    fn to_values(&self) -> Result<Vec<(String, Value)>> {
        Ok(self.0.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }
}

/// Builds an update from pairs: `update([("name", "Ada"), ("age", 36)])` for a node of a
/// [`DynState`] graph.
pub fn update<I, K, V>(pairs: I) -> Vec<(String, Value)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<Value>,
{
    pairs
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
}
