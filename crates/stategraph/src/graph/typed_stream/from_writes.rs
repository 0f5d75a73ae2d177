//! Reading a state's partial update back from the writes a node made, for the typed
//! `updates` stream.

use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use crate::error::Result;

/// An update that can be read back from channel writes: what
/// [`CompiledGraph::stream_typed`](crate::CompiledGraph::stream_typed) hands out for
/// each node's writes. `#[derive(State)]` implements it for the generated
/// `<Name>Update` (a channel written twice keeps its last write; writes to channels
/// that are not fields are left out); a [`DynState`](crate::DynState) graph's update,
/// `Vec<(String, Value)>`, keeps every write.
pub trait FromWrites: Sized {
    /// The update made of `writes`, `(channel, value)` pairs in order.
    fn from_writes(writes: &[(String, Value)]) -> Result<Self>;
}

impl FromWrites for Vec<(String, Value)> {
    fn from_writes(writes: &[(String, Value)]) -> Result<Self> {
        Ok(writes.to_vec())
    }
}

impl FromWrites for IndexMap<String, Value> {
    fn from_writes(writes: &[(String, Value)]) -> Result<Self> {
        Ok(writes.iter().cloned().collect())
    }
}

impl FromWrites for () {
    fn from_writes(_writes: &[(String, Value)]) -> Result<Self> {
        Ok(())
    }
}
