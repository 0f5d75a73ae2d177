//! A human-readable dump of a [`MemorySaver`](super::MemorySaver), in LangGraph's notation.
//!
//! The three maps are printed as Python would print LangGraph's `InMemorySaver` dicts,
//! with each `(tag, bytes)` pair shown decoded:
//!
//! ```text
//! storage:
//!   '12345':
//!     '':
//!       '1efc…': (('msgpack', {'v': 4, 'ts': '…', 'id': '1efc…', …}), ('msgpack', {'source': 'input', 'step': -1, 'parents': {}}), None)
//! writes:
//!   ('12345', '', '1efc…'): {('f605…', 0): ('f605…', 'branch:to:get_address', ('null', None), '~__pregel_pull, __start__')}
//! blobs:
//!   ('12345', '', '__start__', '0000…1.0.9085506848193617'): ('msgpack', {})
//! ```
//!
//! Bytes that do not decode are shown raw (`('msgpack', b'…')`), so a dump never fails.

use crate::serde::{Serializer, Typed};
use crate::version::ChannelVersion;

use super::store::Store;
use crate::value::repr::{write_bytes, write_str, write_value};

/// Renders the whole store.
pub(super) fn dump(store: &Store, serde: &dyn Serializer) -> String {
    let mut out = String::new();
    storage(&mut out, store, serde);
    writes(&mut out, store, serde);
    blobs(&mut out, store, serde);
    out
}

fn storage(out: &mut String, store: &Store, serde: &dyn Serializer) {
    let any = store
        .threads
        .values()
        .any(|t| t.namespaces.values().any(|n| !n.checkpoints.is_empty()));
    out.push_str(if any { "storage:\n" } else { "storage: {}\n" });
    for (thread, data) in &store.threads {
        if data.namespaces.values().all(|n| n.checkpoints.is_empty()) {
            continue;
        }
        out.push_str("  ");
        write_str(out, thread);
        out.push_str(":\n");
        for (ns, namespace) in &data.namespaces {
            if namespace.checkpoints.is_empty() {
                continue;
            }
            out.push_str("    ");
            write_str(out, ns);
            out.push_str(":\n");
            for (id, entry) in &namespace.checkpoints {
                out.push_str("      ");
                write_str(out, id);
                out.push_str(": (");
                typed(out, &entry.checkpoint, serde);
                out.push_str(", ");
                typed(out, &entry.metadata, serde);
                out.push_str(", ");
                match &entry.parent {
                    Some(parent) => write_str(out, parent),
                    None => out.push_str("None"),
                }
                out.push_str(")\n");
            }
        }
    }
}

fn writes(out: &mut String, store: &Store, serde: &dyn Serializer) {
    let any = store
        .threads
        .values()
        .any(|t| t.namespaces.values().any(|n| !n.writes.is_empty()));
    out.push_str(if any { "writes:\n" } else { "writes: {}\n" });
    for (thread, data) in &store.threads {
        for (ns, namespace) in &data.namespaces {
            for (id, task_writes) in &namespace.writes {
                out.push_str("  (");
                write_str(out, thread);
                out.push_str(", ");
                write_str(out, ns);
                out.push_str(", ");
                write_str(out, id);
                out.push_str("): {");
                for (i, ((task_id, idx), w)) in task_writes.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push('(');
                    write_str(out, task_id);
                    out.push_str(", ");
                    out.push_str(&idx.to_string());
                    out.push_str("): (");
                    write_str(out, task_id);
                    out.push_str(", ");
                    write_str(out, &w.channel);
                    out.push_str(", ");
                    typed(out, &w.value.to_typed(), serde);
                    out.push_str(", ");
                    write_str(out, &w.task_path);
                    out.push(')');
                }
                out.push_str("}\n");
            }
        }
    }
}

fn blobs(out: &mut String, store: &Store, serde: &dyn Serializer) {
    let any = store
        .threads
        .values()
        .any(|t| t.namespaces.values().any(|n| !n.blobs.is_empty()));
    out.push_str(if any { "blobs:\n" } else { "blobs: {}\n" });
    for (thread, data) in &store.threads {
        for (ns, namespace) in &data.namespaces {
            for ((channel, version), blob) in &namespace.blobs {
                out.push_str("  (");
                write_str(out, thread);
                out.push_str(", ");
                write_str(out, ns);
                out.push_str(", ");
                write_str(out, channel);
                out.push_str(", ");
                match version {
                    ChannelVersion::Str(s) => write_str(out, s),
                    ChannelVersion::Int(n) => out.push_str(&n.to_string()),
                }
                out.push_str("): ");
                typed(out, &blob.to_typed(), serde);
                out.push('\n');
            }
        }
    }
}

/// `('tag', decoded)`; the `empty` sentinel and undecodable bytes are shown raw.
fn typed(out: &mut String, typed: &Typed, serde: &dyn Serializer) {
    out.push('(');
    write_str(out, &typed.tag);
    out.push_str(", ");
    let decoded = if typed.is_empty_sentinel() {
        None
    } else {
        serde.loads_typed(&typed.tag, &typed.bytes).ok()
    };
    match decoded {
        Some(value) => write_value(out, &value),
        None => write_bytes(out, &typed.bytes),
    }
    out.push(')');
}
