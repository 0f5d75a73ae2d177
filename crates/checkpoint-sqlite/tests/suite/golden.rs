//! Replays the golden Python traces into a `SqliteSaver` and compares the raw rows with
//! each trace's `sqlite` section byte for byte.
//!
//! The input is the trace's `inmemory` section, converted as described in
//! docs/format.md#moving-a-thread-between-savers: each
//! stored checkpoint is decoded and given back its `channel_values` from the blobs of its
//! own versions, then put with its parent id and its metadata; each task's writes are put
//! in one call with their original indexes. The tables must then hold exactly the rows
//! Python's `SqliteSaver` wrote: same keys, parent ids, type tags, checkpoint bytes,
//! metadata text, write bytes, task paths and indexes, with the same storage classes.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value as J;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer, Typed};
use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, ListOptions,
    Value,
};

use super::support::TempSaver;

fn load_golden(name: &str) -> J {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/golden")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("golden file is JSON")
}

fn s(j: &J) -> String {
    j.as_str()
        .unwrap_or_else(|| panic!("not a string: {j}"))
        .to_owned()
}

fn typed(j: &J) -> Typed {
    Typed::new(s(&j["type"]), hex::decode(s(&j["hex"])).expect("hex"))
}

fn version(j: &J) -> ChannelVersion {
    match j {
        J::String(v) => ChannelVersion::Str(v.clone()),
        J::Number(n) => ChannelVersion::Int(n.as_i64().expect("integer version")),
        other => panic!("bad version {other}"),
    }
}

fn serde() -> JsonPlusSerializer {
    #[allow(clippy::default_constructed_unit_structs)]
    JsonPlusSerializer::default()
}

fn load(t: &Typed) -> Value {
    serde()
        .loads_typed(&t.tag, &t.bytes)
        .expect("golden value decodes")
}

/// `(thread, ns, checkpoint id, task id, task path)` of one task's writes.
type TaskKey = (String, String, String, String, String);

/// `(idx, channel, value)` of one golden write.
type GoldenWrite = (i64, String, Value);

/// A checkpoints row: key, then every other column rendered for comparison.
type Row = BTreeMap<&'static str, String>;

/// The graph's channel order for a namespace (`channel_values` keys follow it,
/// docs/format.md#checkpoint): the root graph's for `""`, else the subgraph named before the first
/// `:`.
fn channel_order(golden: &J, ns: &str) -> Vec<String> {
    let graph = match ns.split(':').next().filter(|_| !ns.is_empty()) {
        None => &golden["graph"],
        Some(name) => &golden["subgraphs"][name],
    };
    graph["channels"]
        .as_object()
        .unwrap_or_else(|| panic!("no channels for namespace {ns:?}"))
        .keys()
        .cloned()
        .collect()
}

/// Puts the trace's `inmemory` checkpoints and writes into `saver`.
async fn replay(saver: &dyn CheckpointSaver, golden: &J) {
    let inmemory = &golden["inmemory"];
    let mut blobs: HashMap<(String, String, String, ChannelVersion), Typed> = HashMap::new();
    for b in inmemory["blobs"].as_array().expect("blobs") {
        let key = (
            s(&b["thread_id"]),
            s(&b["checkpoint_ns"]),
            s(&b["channel"]),
            version(&b["version"]),
        );
        blobs.insert(key, typed(&b["value"]));
    }
    for e in inmemory["storage"].as_array().expect("storage") {
        let (thread, ns) = (s(&e["thread_id"]), s(&e["checkpoint_ns"]));
        let mut checkpoint =
            Checkpoint::from_value(load(&typed(&e["checkpoint"]))).expect("checkpoint reads");
        for (channel, v) in &checkpoint.channel_versions {
            let key = (thread.clone(), ns.clone(), channel.clone(), v.clone());
            let blob = blobs.get(&key).unwrap_or_else(|| panic!("no blob {key:?}"));
            if !blob.is_empty_sentinel() {
                checkpoint
                    .channel_values
                    .insert(channel.clone(), load(blob));
            }
        }
        let order = channel_order(golden, &ns);
        checkpoint.channel_values.sort_by_cached_key(|channel, _| {
            order
                .iter()
                .position(|c| c == channel)
                .unwrap_or(usize::MAX)
        });
        let metadata =
            CheckpointMetadata::from_value(load(&typed(&e["metadata"]))).expect("metadata");
        let mut config = CheckpointConfig::thread(thread.as_str()).with_ns(ns.as_str());
        config.checkpoint_id = e["parent_checkpoint_id"].as_str().map(str::to_owned);
        let stored = saver
            .put(&config, &checkpoint, &metadata, &Default::default())
            .await
            .expect("put");
        assert_eq!(
            stored.checkpoint_id.as_deref(),
            Some(checkpoint.id.as_str())
        );
    }
    // Each task's writes in one call: a normal write at index i sits at position i,
    // reserved writes fill the other positions.
    let mut groups: Vec<(TaskKey, Vec<GoldenWrite>)> = Vec::new();
    for w in inmemory["writes"].as_array().expect("writes") {
        let key = (
            s(&w["thread_id"]),
            s(&w["checkpoint_ns"]),
            s(&w["checkpoint_id"]),
            s(&w["task_id"]),
            s(&w["task_path"]),
        );
        let write = (
            w["idx"].as_i64().expect("idx"),
            s(&w["channel"]),
            load(&typed(&w["value"])),
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(write),
            None => groups.push((key, vec![write])),
        }
    }
    for ((thread, ns, id, task_id, task_path), list) in groups {
        let normal: Vec<_> = list.iter().filter(|w| w.0 >= 0).collect();
        let mut reserved = list.iter().filter(|w| w.0 < 0);
        let len = normal.iter().map(|w| w.0 as usize + 1).max().unwrap_or(0);
        let mut batch = Vec::new();
        for position in 0..len {
            let write = match normal.iter().find(|w| w.0 as usize == position) {
                Some(w) => *w,
                None => reserved.next().expect("a reserved write fills each gap"),
            };
            batch.push((write.1.clone(), write.2.clone()));
        }
        batch.extend(reserved.map(|w| (w.1.clone(), w.2.clone())));
        let config = CheckpointConfig::for_checkpoint(thread, ns, id);
        saver
            .put_writes(&config, &batch, &task_id, &task_path)
            .await
            .expect("put_writes");
    }
}

fn text_or_null(j: &J) -> String {
    match j {
        J::Null => "NULL".to_owned(),
        other => format!("text:{}", s(other)),
    }
}

/// The golden rows, keyed by primary key; values tagged with their storage class.
fn expected(sqlite: &J) -> (BTreeMap<String, Row>, BTreeMap<String, Row>) {
    let mut checkpoints = BTreeMap::new();
    for c in sqlite["checkpoints"].as_array().expect("checkpoints") {
        let key = format!(
            "{}|{}|{}",
            s(&c["thread_id"]),
            s(&c["checkpoint_ns"]),
            s(&c["checkpoint_id"])
        );
        let row = Row::from([
            (
                "parent_checkpoint_id",
                text_or_null(&c["parent_checkpoint_id"]),
            ),
            ("type", text_or_null(&c["type"])),
            ("checkpoint", format!("blob:{}", s(&c["checkpoint_hex"]))),
            (
                "metadata",
                format!("blob:{}", hex::encode(s(&c["metadata_text"]))),
            ),
        ]);
        assert!(checkpoints.insert(key, row).is_none(), "duplicate row");
    }
    let mut writes = BTreeMap::new();
    for w in sqlite["writes"].as_array().expect("writes") {
        let key = format!(
            "{}|{}|{}|{}|{}",
            s(&w["thread_id"]),
            s(&w["checkpoint_ns"]),
            s(&w["checkpoint_id"]),
            s(&w["task_id"]),
            w["idx"].as_i64().expect("idx")
        );
        let row = Row::from([
            ("task_path", text_or_null(&w["task_path"])),
            ("channel", text_or_null(&w["channel"])),
            ("type", text_or_null(&w["type"])),
            ("value", format!("blob:{}", s(&w["value_hex"]))),
        ]);
        assert!(writes.insert(key, row).is_none(), "duplicate row");
    }
    (checkpoints, writes)
}

/// A column as `NULL`, `text:…`, `blob:<hex>` or `integer:…`.
fn cell(row: &rusqlite::Row<'_>, i: usize) -> String {
    use rusqlite::types::ValueRef;
    match row.get_ref(i).expect("column") {
        ValueRef::Null => "NULL".to_owned(),
        ValueRef::Text(t) => format!("text:{}", String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => format!("blob:{}", hex::encode(b)),
        ValueRef::Integer(n) => format!("integer:{n}"),
        ValueRef::Real(f) => format!("real:{f}"),
    }
}

/// The rows the saver wrote, in the same shape.
fn actual(conn: &rusqlite::Connection) -> (BTreeMap<String, Row>, BTreeMap<String, Row>) {
    let mut checkpoints = BTreeMap::new();
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
             checkpoint, metadata, typeof(thread_id), typeof(checkpoint_ns), \
             typeof(checkpoint_id) FROM checkpoints",
        )
        .expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    while let Some(r) = rows.next().expect("row") {
        for i in 7..10 {
            assert_eq!(r.get::<_, String>(i).expect("typeof"), "text");
        }
        let key = format!(
            "{}|{}|{}",
            r.get::<_, String>(0).expect("thread"),
            r.get::<_, String>(1).expect("ns"),
            r.get::<_, String>(2).expect("id")
        );
        let row = Row::from([
            ("parent_checkpoint_id", cell(r, 3)),
            ("type", cell(r, 4)),
            ("checkpoint", cell(r, 5)),
            ("metadata", cell(r, 6)),
        ]);
        checkpoints.insert(key, row);
    }
    let mut writes = BTreeMap::new();
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, \
             type, value, typeof(idx) FROM writes",
        )
        .expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    while let Some(r) = rows.next().expect("row") {
        assert_eq!(r.get::<_, String>(9).expect("typeof"), "integer");
        let key = format!(
            "{}|{}|{}|{}|{}",
            r.get::<_, String>(0).expect("thread"),
            r.get::<_, String>(1).expect("ns"),
            r.get::<_, String>(2).expect("id"),
            r.get::<_, String>(3).expect("task"),
            r.get::<_, i64>(4).expect("idx")
        );
        let row = Row::from([
            ("task_path", cell(r, 5)),
            ("channel", cell(r, 6)),
            ("type", cell(r, 7)),
            ("value", cell(r, 8)),
        ]);
        writes.insert(key, row);
    }
    (checkpoints, writes)
}

fn assert_same(
    scenario: &str,
    what: &str,
    want: &BTreeMap<String, Row>,
    got: &BTreeMap<String, Row>,
) {
    let mut problems = Vec::new();
    for (k, v) in want {
        match got.get(k) {
            None => problems.push(format!("missing {k}")),
            Some(g) if g != v => problems.push(format!("differs {k}:\n  want {v:?}\n  got  {g:?}")),
            Some(_) => {}
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        problems.push(format!("extra {k}"));
    }
    assert!(
        problems.is_empty(),
        "{scenario}: {what} differ from the golden rows:\n{}",
        problems.join("\n")
    );
}

async fn check(scenario: &str) {
    let golden = load_golden(scenario);
    // The trace is replayed in its own order (every put, then every write), not in a
    // run's order, so the fence would refuse it: these tests check rows, unfenced.
    let saver = TempSaver::unfenced("golden");
    replay(&*saver, &golden).await;
    let (want_checkpoints, want_writes) = expected(&golden["sqlite"]);
    let (got_checkpoints, got_writes) = actual(&saver.file.raw());
    assert_same(scenario, "checkpoints", &want_checkpoints, &got_checkpoints);
    assert_same(scenario, "writes", &want_writes, &got_writes);
    // And everything reads back: each golden checkpoint, decoded, equals what we return.
    let listed = saver
        .list(None, &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(listed.len(), want_checkpoints.len(), "{scenario}: listed");
    for c in golden["sqlite"]["checkpoints"]
        .as_array()
        .expect("checkpoints")
    {
        let id = s(&c["checkpoint_id"]);
        let tuple = listed
            .iter()
            .find(|t| t.checkpoint.id == id && t.config.ns() == s(&c["checkpoint_ns"]))
            .unwrap_or_else(|| panic!("{scenario}: {id} not listed"));
        let bytes = hex::decode(s(&c["checkpoint_hex"])).expect("hex");
        let want = Checkpoint::from_value(serde().loads_typed("msgpack", &bytes).expect("decodes"))
            .expect("checkpoint");
        assert_eq!(tuple.checkpoint, want, "{scenario}: checkpoint {id}");
    }
}

#[tokio::test]
async fn single_node_rows_match_python_byte_for_byte() {
    check("single_node").await;
}

#[tokio::test]
async fn chain3_rows_match_python_byte_for_byte() {
    check("chain3").await;
}

#[tokio::test]
async fn conditional_rows_match_python_byte_for_byte() {
    check("conditional").await;
}

#[tokio::test]
async fn interrupt_resume_rows_match_python_byte_for_byte() {
    check("interrupt_resume").await;
}

#[tokio::test]
async fn join_rows_match_python_byte_for_byte() {
    check("join").await;
}

#[tokio::test]
async fn send_fanout_rows_match_python_byte_for_byte() {
    check("send_fanout").await;
}

#[tokio::test]
async fn subgraph_rows_match_python_byte_for_byte() {
    check("subgraph").await;
}
