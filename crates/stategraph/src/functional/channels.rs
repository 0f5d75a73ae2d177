//! The channels of an entrypoint's graph, as Python's `@entrypoint` names them.

/// The channel an entrypoint's input is written to.
pub const START: &str = "__start__";
/// The channel holding an entrypoint's return value.
pub const END: &str = "__end__";
/// The channel holding the value the next run sees as `previous`.
pub const PREVIOUS: &str = "__previous__";
