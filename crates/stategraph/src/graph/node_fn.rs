//! `add_node_fn`: a node named after its function (Python's `add_node(my_fn)`).

use super::builder::{NodeOptions, StateGraph};
use super::node::NodeHandler;
use crate::state::State;

impl<S: State> StateGraph<S> {
    /// Adds a node named after its function, as Python's `add_node(my_node)` names it
    /// `"my_node"`: `add_node_fn(my_node)` for `async fn my_node(s: S) -> ...` (a method
    /// `Type::my_node` is named `"my_node"` too). A closure has no name: compiling then
    /// fails with [`Error::InvalidGraph`](crate::Error::InvalidGraph) saying to name it
    /// (use [`StateGraph::add_node`]).
    ///
    /// ```
    /// # use stategraph::{State, StateGraph, START, END};
    /// #[derive(State)]
    /// struct S { n: i64 }
    /// async fn bump(s: S) -> SUpdate { SUpdate::default().n(s.n + 1) }
    /// let mut g = StateGraph::<S>::new();
    /// g.add_node_fn(bump).add_edge(START, "bump").add_edge("bump", END);
    /// assert!(g.compile().is_ok());
    /// ```
    pub fn add_node_fn<M, N: NodeHandler<S, M>>(&mut self, node: N) -> &mut Self {
        self.add_node_fn_with(node, NodeOptions::default())
    }

    /// [`StateGraph::add_node_fn`] with node options.
    pub fn add_node_fn_with<M, N: NodeHandler<S, M>>(
        &mut self,
        node: N,
        options: NodeOptions,
    ) -> &mut Self {
        match fn_name(std::any::type_name::<N>()) {
            Ok(name) => self.add_node_with(name, node, options),
            Err(msg) => {
                self.build_errors.push(msg);
                self
            }
        }
    }
}

/// The name of a function item from its type name (`my_crate::nodes::bump` -> `bump`,
/// `my_crate::Agent::call<T>` -> `call`); an error for a closure or another unnamed
/// value.
pub(crate) fn fn_name(type_name: &str) -> Result<String, String> {
    // Drop generic arguments, which may hold `::` themselves.
    let head = match type_name.find('<') {
        Some(i) => &type_name[..i],
        None => type_name,
    };
    let last = head.rsplit("::").next().unwrap_or(head);
    let is_ident = !last.is_empty()
        && last.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !last.starts_with(|c: char| c.is_ascii_digit());
    if head.contains("{{closure}}") || !is_ident {
        return Err(format!(
            "add_node_fn needs a named function, but got `{type_name}` (a closure has no \
             name): name the node with add_node(\"name\", ...)"
        ));
    }
    Ok(last.to_owned())
}

#[cfg(test)]
mod tests {
    use super::fn_name;

    #[test]
    fn names_are_the_last_path_segment() {
        assert_eq!(fn_name("a::b::bump").unwrap(), "bump");
        assert_eq!(fn_name("bump").unwrap(), "bump");
        assert_eq!(fn_name("a::Agent::call<b::C>").unwrap(), "call");
        assert!(fn_name("a::main::{{closure}}").is_err());
    }
}
