//! Replays the golden Python traces into a `MemorySaver` and compares its storage, writes
//! and blobs with the trace's `inmemory` section byte for byte.
//!
//! For every golden file: each stored checkpoint is decoded, given back its
//! `channel_values` (from the trace's blobs at its own versions) and put with its parent
//! as config and, as `new_versions`, the versions that differ from its parent's; each
//! task's writes are put in one call with their original indexes. The saver must then hold
//! exactly the trace's entries, same keys, same tags, same bytes, and nothing else.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value as J;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer, Typed};
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, MemorySaver, Value,
};

const SCENARIOS: [&str; 9] = [
    "chain3",
    "conditional",
    "delta_chat",
    "functional",
    "interrupt_resume",
    "join",
    "send_fanout",
    "single_node",
    "subgraph",
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn load_golden(name: &str) -> J {
    let path = golden_dir().join(format!("{name}.json"));
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

fn show(t: &Typed) -> String {
    format!("({:?}, {})", t.tag, hex::encode(&t.bytes))
}

type StorageKey = (String, String, String);
type WriteKey = (String, String, String, String, i64);
type BlobKey = (String, String, String, ChannelVersion);

/// The three maps as keyed maps with comparable values.
#[derive(Default)]
struct Maps {
    storage: BTreeMap<StorageKey, (String, String, Option<String>)>,
    writes: BTreeMap<WriteKey, (String, String, String)>,
    blobs: BTreeMap<(String, String, String, String), String>,
}

fn version_text(v: &ChannelVersion) -> String {
    match v {
        ChannelVersion::Str(s) => s.clone(),
        ChannelVersion::Int(n) => format!("int:{n}"),
    }
}

fn expected_maps(inmemory: &J) -> Maps {
    let mut maps = Maps::default();
    let storage = inmemory["storage"].as_array().expect("storage");
    for e in storage {
        let key = (
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["checkpoint_id"]),
        );
        let parent = e["parent_checkpoint_id"].as_str().map(str::to_owned);
        let value = (
            show(&typed(&e["checkpoint"])),
            show(&typed(&e["metadata"])),
            parent,
        );
        assert!(
            maps.storage.insert(key, value).is_none(),
            "duplicate storage key"
        );
    }
    let writes = inmemory["writes"].as_array().expect("writes");
    for w in writes {
        let key = (
            s(&w["thread_id"]),
            s(&w["checkpoint_ns"]),
            s(&w["checkpoint_id"]),
            s(&w["task_id"]),
            w["idx"].as_i64().expect("idx"),
        );
        let value = (
            s(&w["channel"]),
            show(&typed(&w["value"])),
            s(&w["task_path"]),
        );
        assert!(
            maps.writes.insert(key, value).is_none(),
            "duplicate write key"
        );
    }
    let blobs = inmemory["blobs"].as_array().expect("blobs");
    for b in blobs {
        let key = (
            s(&b["thread_id"]),
            s(&b["checkpoint_ns"]),
            s(&b["channel"]),
            version_text(&version(&b["version"])),
        );
        assert!(
            maps.blobs.insert(key, show(&typed(&b["value"]))).is_none(),
            "duplicate blob key"
        );
    }
    maps
}

fn actual_maps(saver: &MemorySaver) -> Maps {
    let layout = saver.storage_snapshot();
    let mut maps = Maps::default();
    for e in &layout.storage {
        let key = (
            e.thread_id.clone(),
            e.checkpoint_ns.clone(),
            e.checkpoint_id.clone(),
        );
        let value = (
            show(&e.checkpoint),
            show(&e.metadata),
            e.parent_checkpoint_id.clone(),
        );
        assert!(
            maps.storage.insert(key, value).is_none(),
            "saver repeats a storage key"
        );
    }
    for w in &layout.writes {
        let key = (
            w.thread_id.clone(),
            w.checkpoint_ns.clone(),
            w.checkpoint_id.clone(),
            w.task_id.clone(),
            w.idx,
        );
        let value = (w.channel.clone(), show(&w.value), w.task_path.clone());
        assert!(
            maps.writes.insert(key, value).is_none(),
            "saver repeats a write key"
        );
    }
    for b in &layout.blobs {
        let key = (
            b.thread_id.clone(),
            b.checkpoint_ns.clone(),
            b.channel.clone(),
            version_text(&b.version),
        );
        assert!(
            maps.blobs.insert(key, show(&b.value)).is_none(),
            "saver repeats a blob key"
        );
    }
    maps
}

/// Asserts two keyed maps are equal, naming every missing, extra or different entry.
fn assert_same<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    scenario: &str,
    what: &str,
    expected: &BTreeMap<K, V>,
    actual: &BTreeMap<K, V>,
) {
    let mut problems = Vec::new();
    for (k, v) in expected {
        match actual.get(k) {
            None => problems.push(format!("missing {k:?}")),
            Some(got) if got != v => problems.push(format!(
                "differs {k:?}:\n  expected {v:?}\n  got      {got:?}"
            )),
            Some(_) => {}
        }
    }
    for k in actual.keys().filter(|k| !expected.contains_key(*k)) {
        problems.push(format!("extra {k:?}"));
    }
    assert!(
        problems.is_empty(),
        "{scenario}: {what} differ from the golden file:\n{}",
        problems.join("\n")
    );
}

/// Puts the trace's checkpoints and writes into a fresh saver.
#[allow(clippy::default_constructed_unit_structs)]
/// (thread, ns, checkpoint id, task id, task path) of a group of writes.
type WriteGroupKey = (String, String, String, String, String);
/// The writes of one group: (index, channel, value).
type WriteGroup = Vec<(i64, String, Value)>;

async fn replay(inmemory: &J) -> MemorySaver {
    let serde = JsonPlusSerializer;
    // Replayed in the trace's order (every put, then every write), not a run's: unfenced.
    let saver = MemorySaver::new().with_fencing(false);

    let mut blobs: HashMap<BlobKey, Typed> = HashMap::new();
    for b in inmemory["blobs"].as_array().expect("blobs") {
        let key = (
            s(&b["thread_id"]),
            s(&b["checkpoint_ns"]),
            s(&b["channel"]),
            version(&b["version"]),
        );
        blobs.insert(key, typed(&b["value"]));
    }

    // Decode every checkpoint first: a child's new versions are computed from its parent.
    let storage = inmemory["storage"].as_array().expect("storage");
    let mut decoded: HashMap<StorageKey, Checkpoint> = HashMap::new();
    for e in storage {
        let key = (
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["checkpoint_id"]),
        );
        let stored = typed(&e["checkpoint"]);
        let value = serde
            .loads_typed(&stored.tag, &stored.bytes)
            .expect("checkpoint decodes");
        decoded.insert(
            key,
            Checkpoint::from_value(value).expect("checkpoint reads"),
        );
    }

    for e in storage {
        let (thread, ns, id) = (
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["checkpoint_id"]),
        );
        let parent = e["parent_checkpoint_id"].as_str().map(str::to_owned);
        let mut checkpoint = decoded[&(thread.clone(), ns.clone(), id.clone())].clone();
        for (channel, v) in &checkpoint.channel_versions {
            let key = (thread.clone(), ns.clone(), channel.clone(), v.clone());
            let blob = blobs
                .get(&key)
                .unwrap_or_else(|| panic!("no blob for {key:?}"));
            if !blob.is_empty_sentinel() {
                let value: Value = serde
                    .loads_typed(&blob.tag, &blob.bytes)
                    .expect("blob decodes");
                checkpoint.channel_values.insert(channel.clone(), value);
            }
        }
        let parent_versions = parent
            .as_ref()
            .map(|p| {
                decoded[&(thread.clone(), ns.clone(), p.clone())]
                    .channel_versions
                    .clone()
            })
            .unwrap_or_default();
        let new_versions: ChannelVersions = checkpoint
            .channel_versions
            .iter()
            .filter(|(c, v)| parent_versions.get(*c) != Some(*v))
            .map(|(c, v)| (c.clone(), v.clone()))
            .collect();
        let md_typed = typed(&e["metadata"]);
        let md_value = serde
            .loads_typed(&md_typed.tag, &md_typed.bytes)
            .expect("metadata decodes");
        let metadata = CheckpointMetadata::from_value(md_value).expect("metadata reads");
        let mut config = CheckpointConfig::thread(thread.as_str()).with_ns(ns.as_str());
        config.checkpoint_id = parent;
        let stored = saver
            .put(&config, &checkpoint, &metadata, &new_versions)
            .await
            .expect("put");
        assert_eq!(stored, CheckpointConfig::for_checkpoint(thread, ns, id));
    }

    // Writes grouped per task (and path), each group in one call with its original indexes:
    // a write at index i >= 0 sits at position i, reserved writes fill the other positions.
    let mut groups: Vec<(WriteGroupKey, WriteGroup)> = Vec::new();
    for w in inmemory["writes"].as_array().expect("writes") {
        let key = (
            s(&w["thread_id"]),
            s(&w["checkpoint_ns"]),
            s(&w["checkpoint_id"]),
            s(&w["task_id"]),
            s(&w["task_path"]),
        );
        let value = typed(&w["value"]);
        let value = serde
            .loads_typed(&value.tag, &value.bytes)
            .expect("write decodes");
        let write = (w["idx"].as_i64().expect("idx"), s(&w["channel"]), value);
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
    saver
}

async fn check(scenario: &str) -> MemorySaver {
    let golden = load_golden(scenario);
    let inmemory = &golden["inmemory"];
    let saver = replay(inmemory).await;
    let expected = expected_maps(inmemory);
    let actual = actual_maps(&saver);
    assert_same(
        scenario,
        "storage entries",
        &expected.storage,
        &actual.storage,
    );
    assert_same(scenario, "writes", &expected.writes, &actual.writes);
    assert_same(scenario, "blobs", &expected.blobs, &actual.blobs);
    saver
}

#[tokio::test]
async fn single_node_is_stored_byte_for_byte() {
    check("single_node").await;
}

#[tokio::test]
async fn functional_is_stored_byte_for_byte() {
    check("functional").await;
}

#[tokio::test]
async fn chain3_is_stored_byte_for_byte() {
    check("chain3").await;
}

#[tokio::test]
async fn conditional_is_stored_byte_for_byte() {
    check("conditional").await;
}

#[tokio::test]
async fn delta_chat_is_stored_byte_for_byte() {
    check("delta_chat").await;
}

#[tokio::test]
async fn interrupt_resume_is_stored_byte_for_byte() {
    check("interrupt_resume").await;
}

#[tokio::test]
async fn join_is_stored_byte_for_byte() {
    check("join").await;
}

#[tokio::test]
async fn send_fanout_is_stored_byte_for_byte() {
    check("send_fanout").await;
}

#[tokio::test]
async fn subgraph_namespaces_are_stored_byte_for_byte() {
    let saver = check("subgraph").await;
    let namespaces: std::collections::BTreeSet<String> = saver
        .storage_snapshot()
        .storage
        .into_iter()
        .map(|e| e.checkpoint_ns)
        .collect();
    assert!(
        namespaces.len() > 1,
        "subgraph namespaces were stored: {namespaces:?}"
    );
}

#[test]
fn every_golden_file_is_replayed() {
    let mut found: Vec<String> = std::fs::read_dir(golden_dir())
        .expect("golden dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".json")
                .map(str::to_owned)
        })
        .collect();
    found.sort();
    assert_eq!(found, SCENARIOS);
    for name in SCENARIOS {
        assert!(
            load_golden(name)["inmemory"].is_object(),
            "{name} has an inmemory section"
        );
    }
}

#[tokio::test]
async fn single_node_reads_back_its_values_and_writes() {
    let saver = check("single_node").await;
    let tuple = saver
        .get_tuple(&CheckpointConfig::thread("12345"))
        .await
        .expect("get_tuple")
        .expect("a latest checkpoint");
    assert_eq!(tuple.checkpoint.id, "1efc7d35-7fd9-6c40-8001-f149e935b870");
    assert_eq!(
        tuple.checkpoint.channel_values.get("name"),
        Some(&Value::from("pavaneeshwar"))
    );
    assert_eq!(
        tuple.checkpoint.channel_values.get("address"),
        Some(&Value::from("Hyderabad residency"))
    );
    // `__start__` and `branch:to:get_address` are `empty` at their current versions.
    assert_eq!(tuple.checkpoint.channel_values.len(), 2);
    assert!(tuple.pending_writes.is_empty());

    let first = CheckpointConfig::thread("12345")
        .with_checkpoint_id("1efc7d35-7fd4-6e20-bfff-1de970d3da1f");
    let first = saver
        .get_tuple(&first)
        .await
        .expect("get_tuple")
        .expect("first");
    assert_eq!(first.pending_writes.len(), 1);
    assert_eq!(first.pending_writes[0].channel, "branch:to:get_address");
    assert_eq!(first.pending_writes[0].value, Value::Nil);
    assert!(first.parent_config.is_none());
}

#[tokio::test]
async fn single_node_dump_reads_like_langgraph() {
    let saver = check("single_node").await;
    let dump = saver.dump();
    for id in [
        "1efc7d35-7fd4-6e20-bfff-1de970d3da1f",
        "1efc7d35-7fd7-6530-8000-173401eaf614",
        "1efc7d35-7fd9-6c40-8001-f149e935b870",
    ] {
        assert!(dump.contains(id), "dump names checkpoint {id}:\n{dump}");
    }
    let expected_fragments = [
        "storage:\n  '12345':\n    '':\n      '1efc7d35-7fd4-6e20-bfff-1de970d3da1f': \
         (('msgpack', {'v': 4, 'ts': '2025-01-01T00:00:00.002001+00:00', \
         'id': '1efc7d35-7fd4-6e20-bfff-1de970d3da1f', 'channel_versions': \
         {'__start__': '00000000000000000000000000000001.0.9085506848193617'}, \
         'versions_seen': {'__input__': {}}, 'updated_channels': ['__start__']}), \
         ('msgpack', {'source': 'input', 'step': -1, 'parents': {}}), None)\n",
        "      '1efc7d35-7fd7-6530-8000-173401eaf614': (('msgpack', {'v': 4, ",
        "('msgpack', {'source': 'loop', 'step': 0, 'parents': {}}), \
         '1efc7d35-7fd4-6e20-bfff-1de970d3da1f')\n",
        "writes:\n",
        "  ('12345', '', '1efc7d35-7fd4-6e20-bfff-1de970d3da1f'): \
         {('f605a2a3-d60a-eff9-4b13-846d5256135e', 0): \
         ('f605a2a3-d60a-eff9-4b13-846d5256135e', 'branch:to:get_address', ('null', None), \
         '~__pregel_pull, __start__')}\n",
        "('a39c4f95-7eae-50bb-d67e-dc4f7dc1aa15', 1): ('a39c4f95-7eae-50bb-d67e-dc4f7dc1aa15', \
         'address', ('msgpack', 'Hyderabad residency'), '~__pregel_pull, get_address')",
        "blobs:\n",
        "  ('12345', '', '__start__', '00000000000000000000000000000001.0.9085506848193617'): \
         ('msgpack', {})\n",
        "  ('12345', '', '__start__', '00000000000000000000000000000002.0.4247091824969128'): \
         ('empty', b'')\n",
        "  ('12345', '', 'branch:to:get_address', \
         '00000000000000000000000000000002.0.4247091824969128'): ('null', None)\n",
    ];
    for fragment in expected_fragments {
        assert!(dump.contains(fragment), "dump lacks {fragment:?}:\n{dump}");
    }
    let storage_at = dump.find("storage:").expect("storage section");
    let writes_at = dump.find("\nwrites:").expect("writes section");
    let blobs_at = dump.find("\nblobs:").expect("blobs section");
    assert!(storage_at < writes_at && writes_at < blobs_at);
    assert_eq!(
        dump.lines()
            .filter(|l| l.starts_with("      '1efc"))
            .count(),
        3
    );
    assert_eq!(
        dump.lines()
            .filter(|l| l.starts_with("  ('12345', '', '1efc"))
            .count(),
        2
    );
    assert_eq!(
        dump.lines()
            .filter(|l| l.starts_with("  ('12345', '', '"))
            .count(),
        2 + 6
    );
}
