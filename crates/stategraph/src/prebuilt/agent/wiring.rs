//! The agent graph's edges, as Python's `create_agent` adds them: `START` to the first
//! hook, each hook chain in the order its hooks run, the loop between the model and the
//! tools, and a conditional edge wherever a hook may jump.

use std::sync::Arc;

use super::edges::{Routes, ToolsEdge};
use super::middleware::{Hook, Middleware};
use super::state::JumpTo;
use crate::graph::{StateGraph, END, START};
use crate::state::DynState;

/// What the edges depend on.
pub(crate) struct Plan<'a> {
    pub middleware: &'a [Arc<dyn Middleware>],
    /// The graph has a `tools` node.
    pub has_tools: bool,
    /// The structured-output tool's name (a `ToolStrategy` response format).
    pub structured: Option<String>,
    /// A response format or a `wrap_model_call` hook: the model may be called again
    /// straight after itself.
    pub model_may_loop: bool,
}

/// A hook's node name and where it may jump.
type HookNode = (String, Vec<JumpTo>);

impl Plan<'_> {
    /// The nodes of `hook`, in the order of the middleware.
    fn nodes(&self, hook: Hook) -> Vec<HookNode> {
        let hooked = self.middleware.iter().filter(|m| m.hooks().contains(&hook));
        hooked
            .map(|m| {
                (
                    format!("{}.{}", m.name(), hook.as_str()),
                    m.can_jump_to(hook),
                )
            })
            .collect()
    }

    /// Adds every edge.
    pub(crate) fn wire(&self, g: &mut StateGraph<DynState>) {
        let before_agent = self.nodes(Hook::BeforeAgent);
        let before_model = self.nodes(Hook::BeforeModel);
        let mut after_model = self.nodes(Hook::AfterModel);
        let mut after_agent = self.nodes(Hook::AfterAgent);
        let first =
            |v: &[HookNode], or: &str| v.first().map_or_else(|| or.to_owned(), |n| n.0.clone());
        let loop_entry = first(&before_model, "model");
        let entry = first(&before_agent, &loop_entry);
        let loop_exit = first(&after_model, "model");
        let exit = after_agent
            .last()
            .map_or_else(|| END.to_owned(), |n| n.0.clone());
        let routes = Routes {
            model: loop_entry.clone(),
            end: exit.clone(),
        };
        g.add_edge(START, &entry);
        self.wire_loop(g, &routes, &loop_exit, after_model.first());
        chain(g, &routes, &before_agent, Some(&loop_entry));
        chain(g, &routes, &before_model, Some("model"));
        if let Some(last) = after_model.last() {
            g.add_edge("model", &last.0);
        }
        after_model.reverse();
        chain(g, &routes, &after_model, None);
        after_agent.reverse();
        chain(g, &routes, &after_agent, Some(END));
    }

    /// The edges out of the loop's exit and out of `tools`.
    fn wire_loop(
        &self,
        g: &mut StateGraph<DynState>,
        routes: &Routes,
        loop_exit: &str,
        after_model: Option<&HookNode>,
    ) {
        let (loop_entry, exit) = (&routes.model, &routes.end);
        if self.has_tools {
            let edge = ToolsEdge {
                routes: routes.clone(),
                structured: self.structured.clone(),
            };
            let mut back = vec![loop_entry.clone()];
            if self.structured.is_some() {
                back.push(exit.clone());
            }
            g.add_conditional_edges_with_map("tools", edge.clone().tools_to_model(), pairs(&back));
            let mut out = vec!["tools".to_owned(), exit.clone()];
            if self.model_may_loop || loop_exit != "model" {
                out.push(loop_entry.clone());
            }
            g.add_conditional_edges_with_map(loop_exit, edge.model_to_tools(), pairs(&out));
        } else if self.structured.is_some() {
            let dests = [loop_entry.clone(), exit.clone()];
            g.add_conditional_edges_with_map(
                loop_exit,
                routes.clone().model_to_model(),
                pairs(&dests),
            );
        } else if let Some((name, jumps)) = after_model {
            jump_edge(g, routes, name, exit, jumps);
        } else {
            g.add_edge(loop_exit, exit);
        }
    }
}

/// The edges along `nodes` (in the order they run), the last one's to `then` (`None`:
/// wired elsewhere).
fn chain(g: &mut StateGraph<DynState>, routes: &Routes, nodes: &[HookNode], then: Option<&str>) {
    for pair in nodes.windows(2) {
        jump_edge(g, routes, &pair[0].0, &pair[1].0, &pair[0].1);
    }
    if let (Some((name, jumps)), Some(then)) = (nodes.last(), then) {
        jump_edge(g, routes, name, then, jumps);
    }
}

/// A path map naming each destination after itself (Python's list of destinations).
fn pairs(dests: &[String]) -> Vec<(String, String)> {
    dests.iter().map(|d| (d.clone(), d.clone())).collect()
}

/// A middleware node's edge: plain to `default`, or conditional when the hook may jump.
fn jump_edge(
    g: &mut StateGraph<DynState>,
    routes: &Routes,
    name: &str,
    default: &str,
    can_jump_to: &[JumpTo],
) {
    if can_jump_to.is_empty() {
        g.add_edge(name, default);
        return;
    }
    let mut dests = vec![default.to_owned()];
    if can_jump_to.contains(&JumpTo::End) {
        dests.push(routes.end.clone());
    }
    if can_jump_to.contains(&JumpTo::Tools) {
        dests.push("tools".to_owned());
    }
    if can_jump_to.contains(&JumpTo::Model) && name != routes.model {
        dests.push(routes.model.clone());
    }
    let path = routes.clone().jump(default.to_owned());
    g.add_conditional_edges_with_map(name, path, pairs(&dests));
}
