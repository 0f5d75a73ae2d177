//! `#[derive(State)]`: a struct with named fields becomes a stategraph state schema.
//!
//! The derive writes, for a struct `S`:
//!
//! * `impl ::stategraph::State for S`: one channel per field in declaration order
//!   (`LastValue`, or `BinaryOperatorAggregate` when the field has a reducer), reading the
//!   state from channel values and writing it back;
//! * `SUpdate`, the partial update: every field an `Option`, builder methods named after
//!   the fields, and `impl ::stategraph::IntoUpdate` writing only the fields that are set.
//!
//! Field attributes, inside `#[state(...)]`:
//!
//! * `reducer = add` (`operator.add`), `append` (the same, for lists), `merge` (maps),
//!   `add_messages`, or `reducer = path::to::func` for a typed `fn(T, T) -> T`; a
//!   keyword may also be given as a string (`reducer = "add"`); a function that has the
//!   name of a keyword is reached by a longer path (`self::add`);
//! * `delta(reducer = add_messages, snapshot_frequency = 50)`: the channel is a
//!   `DeltaChannel` (LangGraph's, spec §13): its checkpoints store only the writes, with a
//!   full snapshot every `snapshot_frequency` updates (default 100); the reducer is named
//!   as for `reducer = ...` and applied to each write of a batch in turn;
//! * `rename = "name"`: the channel name (the field name by default);
//! * `skip`: not a channel; the field takes its default when the state is read.
//!
//! Every field type (but a skipped one's, which needs only `Default`) must implement
//! `Serialize`, `DeserializeOwned`, `Default`, `Debug`, `Clone`, `Send` and `Sync`. A
//! reducer channel starts at the type's default converted to a value, or empty (the
//! first write becomes the value, as Python's MISSING) when that default is `None`.
//!
//! The generated code names everything through `::stategraph::` paths, so the user crate
//! needs only a dependency on `stategraph`.

mod attrs;
mod expand;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `stategraph::State` and a partial update struct `<Name>Update`.
///
/// See the crate documentation for the attributes.
#[proc_macro_derive(State, attributes(state))]
pub fn derive_state(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
