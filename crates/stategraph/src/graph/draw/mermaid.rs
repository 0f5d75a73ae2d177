//! Mermaid text of a drawing, character for character what LangChain's `draw_mermaid()`
//! prints for the same nodes and edges.

use indexmap::IndexMap;

use super::drawable::{DrawEdge, DrawGraph, DrawNode};
use super::yaml;

/// How edges curve (Mermaid's `flowchart.curve`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CurveStyle {
    /// `basis`
    Basis,
    /// `bumpX`
    BumpX,
    /// `bumpY`
    BumpY,
    /// `cardinal`
    Cardinal,
    /// `catmullRom`
    CatmullRom,
    /// `linear` (the default)
    #[default]
    Linear,
    /// `monotoneX`
    MonotoneX,
    /// `monotoneY`
    MonotoneY,
    /// `natural`
    Natural,
    /// `step`
    Step,
    /// `stepAfter`
    StepAfter,
    /// `stepBefore`
    StepBefore,
}

impl CurveStyle {
    /// Mermaid's name of the style.
    pub fn as_str(self) -> &'static str {
        match self {
            CurveStyle::Basis => "basis",
            CurveStyle::BumpX => "bumpX",
            CurveStyle::BumpY => "bumpY",
            CurveStyle::Cardinal => "cardinal",
            CurveStyle::CatmullRom => "catmullRom",
            CurveStyle::Linear => "linear",
            CurveStyle::MonotoneX => "monotoneX",
            CurveStyle::MonotoneY => "monotoneY",
            CurveStyle::Natural => "natural",
            CurveStyle::Step => "step",
            CurveStyle::StepAfter => "stepAfter",
            CurveStyle::StepBefore => "stepBefore",
        }
    }
}

/// The `classDef` styles of the three node classes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeStyles {
    /// Every node but the first and the last.
    pub default: String,
    /// The first node (`__start__` usually).
    pub first: String,
    /// The last node (`__end__` usually).
    pub last: String,
}

impl Default for NodeStyles {
    fn default() -> Self {
        NodeStyles {
            default: "fill:#f2f0ff,line-height:1.2".into(),
            first: "fill-opacity:0".into(),
            last: "fill:#bfb6fc".into(),
        }
    }
}

/// Options of [`DrawGraph::draw_mermaid_with`]; the defaults are Python's.
#[derive(Clone, Debug, PartialEq)]
pub struct MermaidOptions {
    /// Frontmatter, node lines and `classDef` lines (`with_styles`).
    pub with_styles: bool,
    /// How edges curve.
    pub curve_style: CurveStyle,
    /// The node classes' styles.
    pub node_styles: NodeStyles,
    /// Edge labels longer than this many words are broken into lines.
    pub wrap_label_n_words: usize,
    /// Mermaid frontmatter (a JSON object, printed as YAML with sorted keys as PyYAML
    /// prints it); `config.flowchart.curve` is set from `curve_style`.
    pub frontmatter_config: Option<serde_json::Value>,
}

impl Default for MermaidOptions {
    fn default() -> Self {
        MermaidOptions {
            with_styles: true,
            curve_style: CurveStyle::Linear,
            node_styles: NodeStyles::default(),
            wrap_label_n_words: 9,
            frontmatter_config: None,
        }
    }
}

/// Characters that make a name render as `<p>name</p>` when it starts and ends with one.
const MARKDOWN_SPECIAL: &[char] = &['*', '_', '`'];

/// A Mermaid-safe id: `[A-Za-z0-9_-]` kept, anything else as `\` and its hex code point.
pub fn to_safe_id(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for ch in label.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' {
            out.push(ch);
        } else {
            out.push_str(&format!("\\{:x}", ch as u32));
        }
    }
    out
}

fn escape_label(text: &str) -> String {
    let mut text = text.replace('#', "#35;");
    for (c, entity) in [
        ("[", "#91;"),
        ("]", "#93;"),
        ("(", "#40;"),
        (")", "#41;"),
        ("{", "#123;"),
        ("}", "#125;"),
        ("\"", "#quot;"),
        ("<", "#60;"),
        (">", "#62;"),
        ("|", "#124;"),
    ] {
        text = text.replace(c, entity);
    }
    text
}

fn frontmatter(options: &MermaidOptions) -> String {
    use serde_json::{Map, Value};
    let original = match &options.frontmatter_config {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let mut config = match original.get("config") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let mut flowchart = match config.get("flowchart") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    flowchart.insert(
        "curve".into(),
        Value::String(options.curve_style.as_str().into()),
    );
    config.insert("flowchart".into(), Value::Object(flowchart));
    let mut top = original;
    top.insert("config".into(), Value::Object(config));
    yaml::dump(&Value::Object(top))
}

/// Renders `graph` (whose first and last nodes are already known) as Python does.
pub(crate) fn render(graph: &DrawGraph, options: &MermaidOptions) -> String {
    let first = graph.first_node().map(|n| n.id.clone());
    let last = graph.last_node().map(|n| n.id.clone());
    let mut out = if options.with_styles {
        format!("---\n{}---\ngraph TD;\n", frontmatter(options))
    } else {
        "graph TD;\n".to_owned()
    };

    let mut subgraph_nodes: IndexMap<String, Vec<&DrawNode>> = IndexMap::new();
    let mut regular: Vec<&DrawNode> = Vec::new();
    for (key, node) in &graph.nodes {
        match key.rfind(':') {
            Some(i) => subgraph_nodes
                .entry(key[..i].to_owned())
                .or_default()
                .push(node),
            None => regular.push(node),
        }
    }
    let render_node =
        |node: &DrawNode| -> String { node_line(node, first.as_deref(), last.as_deref()) };
    if options.with_styles {
        for node in &regular {
            out.push_str(&render_node(node));
        }
    }

    let edge_groups = edge_groups(graph);

    let mut ctx = Ctx {
        out,
        seen: Vec::new(),
        groups: &edge_groups,
        subgraph_nodes: &subgraph_nodes,
        options,
        render_node: &render_node,
    };
    let top: Vec<&DrawEdge> = edge_groups.get("").cloned().unwrap_or_default();
    ctx.add_subgraph(&top, "");
    for (prefix, edges) in &edge_groups {
        if prefix.is_empty() || prefix.contains(':') {
            continue;
        }
        ctx.add_subgraph(edges, prefix);
        ctx.seen.push(prefix.clone());
    }
    let Ctx {
        mut out, mut seen, ..
    } = ctx;
    if options.with_styles {
        for (prefix, nodes) in &subgraph_nodes {
            if !prefix.contains(':') && !seen.contains(prefix) {
                out.push_str(&format!("\tsubgraph {prefix}\n"));
                for node in nodes {
                    out.push_str(&render_node(node));
                }
                out.push_str("\tend\n");
                seen.push(prefix.clone());
            }
        }
        let s = &options.node_styles;
        out.push_str(&format!("\tclassDef default {}\n", s.default));
        out.push_str(&format!("\tclassDef first {}\n", s.first));
        out.push_str(&format!("\tclassDef last {}\n", s.last));
    }
    out
}

/// A node's line: its label (the name's last part, the metadata under it), shaped as the
/// first or last node or a plain one.
fn node_line(node: &DrawNode, first: Option<&str>, last: Option<&str>) -> String {
    let name = node.name.rsplit(':').next().unwrap_or("");
    let special = |c: Option<char>| c.is_some_and(|c| MARKDOWN_SPECIAL.contains(&c));
    let mut label = if special(name.chars().next()) && special(name.chars().last()) {
        format!("<p>{name}</p>")
    } else {
        name.to_owned()
    };
    let lines: Vec<String> = node
        .metadata
        .iter()
        .map(|(k, v)| escape_label(&format!("{k} = {v}")))
        .collect();
    if !lines.is_empty() {
        label = format!("{label}<hr/><small><em>{}</em></small>", lines.join("\n"));
    }
    let id = to_safe_id(&node.id);
    if first == Some(node.id.as_str()) {
        format!("\t{id}([{label}]):::first\n")
    } else if last == Some(node.id.as_str()) {
        format!("\t{id}([{label}]):::last\n")
    } else {
        format!("\t{id}({label})\n")
    }
}

/// The edges grouped by the subgraph prefix their two ends share (`""`: the top level).
fn edge_groups(graph: &DrawGraph) -> IndexMap<String, Vec<&DrawEdge>> {
    let mut edge_groups: IndexMap<String, Vec<&DrawEdge>> = IndexMap::new();
    for edge in &graph.edges {
        let common: Vec<&str> = edge
            .source
            .split(':')
            .zip(edge.target.split(':'))
            .filter(|(s, t)| s == t)
            .map(|(s, _)| s)
            .collect();
        edge_groups.entry(common.join(":")).or_default().push(edge);
    }
    edge_groups
}

struct Ctx<'a> {
    out: String,
    seen: Vec<String>,
    groups: &'a IndexMap<String, Vec<&'a DrawEdge>>,
    subgraph_nodes: &'a IndexMap<String, Vec<&'a DrawNode>>,
    options: &'a MermaidOptions,
    render_node: &'a dyn Fn(&DrawNode) -> String,
}

impl Ctx<'_> {
    fn add_subgraph(&mut self, edges: &[&DrawEdge], prefix: &str) {
        let self_loop = edges.len() == 1 && edges[0].source == edges[0].target;
        let wrapped = !prefix.is_empty() && !self_loop;
        if wrapped {
            let name = prefix.rsplit(':').next().unwrap_or("").to_owned();
            // Python refuses a repeated subgraph name; we draw it again.
            self.seen.push(name.clone());
            self.out.push_str(&format!("\tsubgraph {name}\n"));
            if self.options.with_styles {
                if let Some(nodes) = self.subgraph_nodes.get(prefix) {
                    for node in nodes {
                        let line = (self.render_node)(node);
                        self.out.push_str(&line);
                    }
                }
            }
        }
        for edge in edges {
            let label = match &edge.data {
                Some(data) => {
                    let words: Vec<&str> = data.split_whitespace().collect();
                    let n = self.options.wrap_label_n_words.max(1);
                    let text = if words.len() > n {
                        words
                            .chunks(n)
                            .map(|c| c.join(" "))
                            .collect::<Vec<_>>()
                            .join("&nbsp<br>&nbsp")
                    } else {
                        data.clone()
                    };
                    if edge.conditional {
                        format!(" -. &nbsp;{text}&nbsp; .-> ")
                    } else {
                        format!(" -- &nbsp;{text}&nbsp; --> ")
                    }
                }
                None if edge.conditional => " -.-> ".to_owned(),
                None => " --> ".to_owned(),
            };
            self.out.push_str(&format!(
                "\t{}{label}{};\n",
                to_safe_id(&edge.source),
                to_safe_id(&edge.target)
            ));
        }
        let nested: Vec<(String, Vec<&DrawEdge>)> = self
            .groups
            .iter()
            .filter(|(p, _)| {
                p.starts_with(&format!("{prefix}:"))
                    && p.as_str() != prefix
                    && !p[prefix.len() + 1..].contains(':')
            })
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect();
        for (p, e) in nested {
            self.add_subgraph(&e, &p);
        }
        if wrapped {
            self.out.push_str("\tend\n");
        }
    }
}
