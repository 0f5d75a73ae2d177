//! Replays the golden Python traces into a `PostgresSaver` and compares the raw rows of
//! the three tables with the trace's `postgres` section: checkpoint and metadata JSONB as
//! JSON values (and as Postgres prints them), blobs and writes byte for byte.
//!
//! The trace's `inmemory` section drives the replay: each checkpoint, given back its
//! values from the trace's blobs, is put with its parent as config and, as `new_versions`,
//! the versions that differ from its parent's; each task's writes are put in one call
//! with their original indexes.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value as J;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer, Typed};
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, Error, Value,
};

use crate::support::TestDb;

fn load_golden(name: &str) -> J {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
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

fn opt(j: &J) -> Option<String> {
    j.as_str().map(str::to_owned)
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

fn decode(serde: &JsonPlusSerializer, t: &Typed) -> Value {
    serde
        .loads_typed(&t.tag, &t.bytes)
        .expect("golden bytes decode")
}

type Key3 = (String, String, String);

/// One `put_writes` call of the replay: config, task id, task path, writes.
type Batch = (CheckpointConfig, String, String, Vec<(String, Value)>);

/// Writes grouped by (thread, ns, checkpoint, task, path), with their indexes.
type Groups = Vec<(
    (String, String, String, String, String),
    Vec<(i64, String, Value)>,
)>;

/// One put of the replay.
struct Put {
    config: CheckpointConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
}

/// The puts and the write batches of a trace, in its order.
#[allow(clippy::default_constructed_unit_structs)]
fn replay_plan(inmemory: &J) -> (Vec<Put>, Vec<Batch>) {
    let serde = JsonPlusSerializer::default();
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
    let storage = inmemory["storage"].as_array().expect("storage");
    let mut decoded: HashMap<Key3, Checkpoint> = HashMap::new();
    for e in storage {
        let key = (
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["checkpoint_id"]),
        );
        let cp = Checkpoint::from_value(decode(&serde, &typed(&e["checkpoint"]))).expect("cp");
        decoded.insert(key, cp);
    }
    let mut puts = Vec::new();
    for e in storage {
        let (thread, ns, id) = (
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["checkpoint_id"]),
        );
        let parent = opt(&e["parent_checkpoint_id"]);
        let mut checkpoint = decoded[&(thread.clone(), ns.clone(), id)].clone();
        for (channel, v) in &checkpoint.channel_versions {
            let blob = &blobs[&(thread.clone(), ns.clone(), channel.clone(), v.clone())];
            if !blob.is_empty_sentinel() {
                checkpoint
                    .channel_values
                    .insert(channel.clone(), decode(&serde, blob));
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
        let new_versions = checkpoint
            .channel_versions
            .iter()
            .filter(|(c, v)| parent_versions.get(*c) != Some(*v))
            .map(|(c, v)| (c.clone(), v.clone()))
            .collect();
        let metadata =
            CheckpointMetadata::from_value(decode(&serde, &typed(&e["metadata"]))).expect("md");
        let mut config = CheckpointConfig::thread(thread.as_str()).with_ns(ns.as_str());
        config.checkpoint_id = parent;
        puts.push(Put {
            config,
            checkpoint,
            metadata,
            new_versions,
        });
    }
    // Writes grouped per (checkpoint, task, path); a write at index i >= 0 sits at
    // position i, reserved writes fill the other positions.
    let mut groups: Groups = Vec::new();
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
            decode(&serde, &typed(&w["value"])),
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(write),
            None => groups.push((key, vec![write])),
        }
    }
    let mut batches = Vec::new();
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
        batches.push((config, task_id, task_path, batch));
    }
    (puts, batches)
}

/// Puts the trace into `saver`; returns the error of the first refused put, if any.
async fn replay(saver: &dyn CheckpointSaver, inmemory: &J) -> Result<(), Error> {
    let (puts, batches) = replay_plan(inmemory);
    // The writes of a checkpoint go in before its child, as in the run (the write fence
    // refuses writes against a checkpoint that already has a child).
    let mut pending: Vec<_> = batches.iter().collect();
    for p in &puts {
        let at = |c: &CheckpointConfig| {
            let id = c.checkpoint_id.clone();
            (c.thread_id.clone(), c.ns().to_owned(), id)
        };
        let parent = at(&p.config);
        let (now, later): (Vec<_>, Vec<_>) =
            pending.into_iter().partition(|(c, ..)| at(c) == parent);
        pending = later;
        for (config, task_id, task_path, batch) in now {
            saver.put_writes(config, batch, task_id, task_path).await?;
        }
        let stored = saver
            .put(&p.config, &p.checkpoint, &p.metadata, &p.new_versions)
            .await?;
        assert_eq!(
            stored.checkpoint_id.as_deref(),
            Some(p.checkpoint.id.as_str())
        );
    }
    for (config, task_id, task_path, batch) in pending {
        saver.put_writes(config, batch, task_id, task_path).await?;
    }
    Ok(())
}

/// Keyed rows with comparable values.
type Rows = BTreeMap<Vec<String>, Vec<String>>;

/// Canonical text of a JSON document (keys sorted), for messages and comparison.
fn json_key(text: &str) -> J {
    serde_json::from_str(text).expect("JSON")
}

fn expected_rows(pg: &J) -> (Rows, Rows, Rows) {
    let mut checkpoints = Rows::new();
    for c in pg["checkpoints"].as_array().expect("checkpoints") {
        checkpoints.insert(
            vec![
                s(&c["thread_id"]),
                s(&c["checkpoint_ns"]),
                s(&c["checkpoint_id"]),
            ],
            vec![
                format!("{:?}", opt(&c["parent_checkpoint_id"])),
                format!("{:?}", opt(&c["type"])),
                s(&c["checkpoint_jsonb_text"]),
                s(&c["metadata_jsonb_text"]),
            ],
        );
    }
    let mut blobs = Rows::new();
    for b in pg["checkpoint_blobs"].as_array().expect("blobs") {
        blobs.insert(
            vec![
                s(&b["thread_id"]),
                s(&b["checkpoint_ns"]),
                s(&b["channel"]),
                s(&b["version"]),
            ],
            vec![s(&b["type"]), s(&b["blob_hex"])],
        );
    }
    let mut writes = Rows::new();
    for w in pg["checkpoint_writes"].as_array().expect("writes") {
        writes.insert(
            vec![
                s(&w["thread_id"]),
                s(&w["checkpoint_ns"]),
                s(&w["checkpoint_id"]),
                s(&w["task_id"]),
                w["idx"].as_i64().expect("idx").to_string(),
            ],
            vec![
                s(&w["channel"]),
                s(&w["type"]),
                s(&w["task_path"]),
                s(&w["blob_hex"]),
            ],
        );
    }
    (checkpoints, blobs, writes)
}

async fn actual_rows(db: &TestDb) -> (Rows, Rows, Rows) {
    let raw = db.raw().await;
    let mut checkpoints = Rows::new();
    let sql = "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
               checkpoint::text, metadata::text FROM checkpoints";
    for r in raw.query(sql, &[]).await.expect("checkpoints") {
        checkpoints.insert(
            vec![r.get(0), r.get(1), r.get(2)],
            vec![
                format!("{:?}", r.get::<_, Option<String>>(3)),
                format!("{:?}", r.get::<_, Option<String>>(4)),
                r.get(5),
                r.get(6),
            ],
        );
    }
    let mut blobs = Rows::new();
    let sql = "SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs";
    for r in raw.query(sql, &[]).await.expect("blobs") {
        let blob: Option<Vec<u8>> = r.get(5);
        blobs.insert(
            vec![r.get(0), r.get(1), r.get(2), r.get(3)],
            vec![r.get(4), hex::encode(blob.expect("a blob"))],
        );
    }
    let mut writes = Rows::new();
    let sql = "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, \
               task_path, blob FROM checkpoint_writes";
    for r in raw.query(sql, &[]).await.expect("writes") {
        writes.insert(
            vec![
                r.get(0),
                r.get(1),
                r.get(2),
                r.get(3),
                r.get::<_, i32>(4).to_string(),
            ],
            vec![
                r.get(5),
                r.get(6),
                r.get(7),
                hex::encode(r.get::<_, Vec<u8>>(8)),
            ],
        );
    }
    (checkpoints, blobs, writes)
}

/// Asserts keyed rows equal; the JSONB columns (2, 3 of checkpoints) as JSON values first,
/// so a failure names the value that differs, then as printed by Postgres.
fn assert_same(scenario: &str, what: &str, expected: &Rows, actual: &Rows) {
    let mut problems = Vec::new();
    for (k, want) in expected {
        match actual.get(k) {
            None => problems.push(format!("missing {k:?}")),
            Some(got) if what == "checkpoints" => {
                if got[..2] != want[..2] {
                    problems.push(format!("{k:?}: parent/type {:?} != {:?}", got, want));
                }
                for (i, col) in [(2, "checkpoint"), (3, "metadata")] {
                    if json_key(&got[i]) != json_key(&want[i]) {
                        problems.push(format!(
                            "{k:?} {col}:\n  expected {}\n  got      {}",
                            want[i], got[i]
                        ));
                    } else if got[i] != want[i] {
                        problems.push(format!("{k:?} {col} prints differently: {}", got[i]));
                    }
                }
            }
            Some(got) if got != want => {
                problems.push(format!("{k:?}:\n  expected {want:?}\n  got      {got:?}"));
            }
            Some(_) => {}
        }
    }
    for k in actual.keys().filter(|k| !expected.contains_key(*k)) {
        problems.push(format!("extra {k:?}"));
    }
    assert!(
        problems.is_empty(),
        "{scenario}: {what} differ from the golden rows:\n{}",
        problems.join("\n")
    );
}

/// Replays a scenario into a fresh schema and compares every row.
async fn check(scenario: &str, fencing: bool) {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let saver = db.another_saver(fencing).await;
    let golden = load_golden(scenario);
    replay(&saver, &golden["inmemory"]).await.expect("replay");
    let (want_cp, want_blobs, want_writes) = expected_rows(&golden["postgres"]);
    let (got_cp, got_blobs, got_writes) = actual_rows(&db).await;
    assert_same(scenario, "checkpoints", &want_cp, &got_cp);
    assert_same(scenario, "checkpoint_blobs", &want_blobs, &got_blobs);
    assert_same(scenario, "checkpoint_writes", &want_writes, &got_writes);
}

#[tokio::test]
async fn single_node_rows_equal_python_rows() {
    check("single_node", true).await;
}

#[tokio::test]
async fn chain3_rows_equal_python_rows() {
    check("chain3", true).await;
}

#[tokio::test]
async fn interrupt_resume_rows_equal_python_rows() {
    check("interrupt_resume", true).await;
}

#[tokio::test]
async fn join_rows_equal_python_rows() {
    check("join", true).await;
}

#[tokio::test]
async fn send_fanout_rows_equal_python_rows() {
    check("send_fanout", true).await;
}

#[tokio::test]
async fn subgraph_rows_equal_python_rows() {
    check("subgraph", true).await;
}

/// The conditional trace replays from an older checkpoint (a fork): stored unfenced, the
/// rows are Python's.
#[tokio::test]
async fn conditional_rows_equal_python_rows_without_the_fence() {
    check("conditional", false).await;
}

/// The same fork is what the fence refuses: the replay stops at the forking put with a
/// conflict, and the rows stored before it are intact.
#[tokio::test]
async fn the_fence_refuses_the_fork_of_the_conditional_trace() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let golden = load_golden("conditional");
    let err = replay(&db.saver, &golden["inmemory"])
        .await
        .expect_err("a conflict");
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    let (puts, _) = replay_plan(&golden["inmemory"]);
    let fork = puts
        .iter()
        .position(|p| p.metadata.source == Some(stategraph_checkpoint::CheckpointSource::Fork))
        .expect("the trace forks");
    let listed = db
        .list(None, &stategraph_checkpoint::ListOptions::default())
        .await
        .expect("list");
    assert_eq!(
        listed.len(),
        fork,
        "the checkpoints before the fork are stored"
    );
    assert!(listed
        .iter()
        .all(|t| t.checkpoint.id != puts[fork].checkpoint.id));
}
