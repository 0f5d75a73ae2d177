//! A text picture of a drawing. Nodes are boxed one under the other, ordered by rank (the
//! longest chain of forward edges leading to them from a node without incoming edges);
//! under each box, one line per edge leaving it: `--> target` for an edge always taken,
//! `-.-> target` for a conditional one, with the label in brackets. Python draws with
//! grandalf's layered layout instead; the two texts are not the same.

use std::collections::HashMap;

use super::drawable::DrawGraph;

/// Each node's rank: 0 for nodes without incoming edges, else one more than the highest
/// rank among the sources of its forward edges (edges closing a cycle are ignored).
fn ranks(g: &DrawGraph) -> HashMap<&str, usize> {
    let ids: Vec<&str> = g.nodes.keys().map(String::as_str).collect();
    let index: HashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut out: Vec<&(usize, usize)> = Vec::new();
    let pairs: Vec<(usize, usize)> = g
        .edges
        .iter()
        .filter_map(|e| {
            Some((
                *index.get(e.source.as_str())?,
                *index.get(e.target.as_str())?,
            ))
        })
        .collect();
    // Back edges: found by a depth-first search from the roots, in node order.
    let mut state = vec![0u8; ids.len()];
    let mut back: Vec<(usize, usize)> = Vec::new();
    fn dfs(n: usize, pairs: &[(usize, usize)], state: &mut [u8], back: &mut Vec<(usize, usize)>) {
        state[n] = 1;
        for &(s, t) in pairs.iter().filter(|(s, _)| *s == n) {
            match state[t] {
                0 => dfs(t, pairs, state, back),
                1 => back.push((s, t)),
                _ => {}
            }
        }
        state[n] = 2;
    }
    let has_incoming = |n: usize| pairs.iter().any(|&(s, t)| t == n && s != n);
    for n in 0..ids.len() {
        if state[n] == 0 && !has_incoming(n) {
            dfs(n, &pairs, &mut state, &mut back);
        }
    }
    for n in 0..ids.len() {
        if state[n] == 0 {
            dfs(n, &pairs, &mut state, &mut back);
        }
    }
    for p in &pairs {
        if !back.contains(p) && p.0 != p.1 {
            out.push(p);
        }
    }
    let mut rank = vec![0usize; ids.len()];
    // Longest path over an acyclic edge set: relax as many times as there are nodes.
    for _ in 0..ids.len() {
        let mut changed = false;
        for &&(s, t) in &out {
            if rank[t] < rank[s] + 1 {
                rank[t] = rank[s] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    ids.iter()
        .enumerate()
        .map(|(i, id)| (*id, rank[i]))
        .collect()
}

pub(crate) fn render(g: &DrawGraph) -> String {
    let ranks = ranks(g);
    let mut order: Vec<(usize, usize, &str)> = g
        .nodes
        .keys()
        .enumerate()
        .map(|(i, id)| (ranks.get(id.as_str()).copied().unwrap_or(0), i, id.as_str()))
        .collect();
    order.sort();
    let mut out = String::new();
    for (_, _, id) in order {
        let node = &g.nodes[id];
        let mut label = node.name.clone();
        if id != node.name {
            label = id.to_owned();
        }
        let notes: Vec<String> = node
            .metadata
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        let mut lines = vec![label];
        lines.extend(notes);
        let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let border = format!("+{}+\n", "-".repeat(width + 2));
        out.push_str(&border);
        for l in &lines {
            let pad = width - l.chars().count();
            out.push_str(&format!("| {l}{} |\n", " ".repeat(pad)));
        }
        out.push_str(&border);
        for e in g.edges.iter().filter(|e| e.source == id) {
            let arrow = if e.conditional { "-.->" } else { "-->" };
            match &e.data {
                Some(d) => out.push_str(&format!("  {arrow} {} [{d}]\n", e.target)),
                None => out.push_str(&format!("  {arrow} {}\n", e.target)),
            }
        }
    }
    out
}
