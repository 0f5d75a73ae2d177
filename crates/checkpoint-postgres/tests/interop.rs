//! Interop with LangGraph's own `PostgresSaver` (3.2.0, psycopg), run from the pinned venv
//! through `tests/interop/interop.py`: Python reads what Rust wrote, Rust reads what
//! Python wrote, and both readers must see the same tuples (`list` and `get_tuple`).
//!
//! Without the venv the tests print a note and return, unless `STATEGRAPH_INTEROP=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value as J};
use stategraph_checkpoint::{
    list, map, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, CheckpointTuple, ListOptions, Value, NULL_TASK_ID,
};
use stategraph_checkpoint_postgres::{PostgresSaver, SCHEMA_VERSION};

use crate::support::TestDb;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's python, or `None` (after a note) when it is missing and not required.
fn python() -> Option<PathBuf> {
    let python = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest().join("../../target/langgraph-venv/bin/python"));
    if python.exists() {
        return Some(python);
    }
    if std::env::var("STATEGRAPH_INTEROP").is_ok_and(|v| v == "1") {
        panic!("STATEGRAPH_INTEROP=1 but {} is missing", python.display());
    }
    println!(
        "note: {} is missing; interop test not run",
        python.display()
    );
    None
}

/// Runs `interop.py` and parses the tuples it prints.
fn run_python(python: &Path, args: &[&str]) -> J {
    let script = manifest().join("tests/interop/interop.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "interop.py {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("interop.py prints JSON")
}

/// A value in the tagged JSON form `interop.py` uses.
fn tagged(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => json!(b),
        Value::Int(n) => json!(n),
        Value::UInt(n) => json!(n),
        Value::Float(x) if x.is_finite() => json!(x),
        Value::Float(x) => {
            let repr = if x.is_nan() {
                "nan"
            } else if *x > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            json!({ "$float": repr })
        }
        Value::Str(s) => json!(s),
        Value::Bytes(b) => json!({ "$bytes": hex::encode(b) }),
        Value::List(items) => J::Array(items.iter().map(tagged).collect()),
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().expect("string keys").to_owned(), tagged(v)))
                .collect(),
        ),
        Value::Ext(e) => panic!("no tagged form for {e:?}"),
    }
}

/// A tuple as `interop.py` prints one.
fn tuple_json(t: &CheckpointTuple) -> J {
    json!({
        "config": {
            "thread_id": t.config.thread_id,
            "checkpoint_ns": t.config.ns(),
            "checkpoint_id": t.config.checkpoint_id,
        },
        "parent": t.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone()),
        "checkpoint": tagged(&t.checkpoint.to_value(true)),
        "metadata": tagged(&t.metadata.to_value()),
        "pending_writes": t.pending_writes.iter()
            .map(|w| json!([w.task_id, w.channel, tagged(&w.value)]))
            .collect::<Vec<_>>(),
    })
}

/// What Rust reads for a thread, in the same form.
async fn rust_view(saver: &PostgresSaver, thread: &str) -> J {
    let config = CheckpointConfig {
        thread_id: thread.to_owned(),
        ..CheckpointConfig::default()
    };
    let listed = saver
        .list(Some(&config), &ListOptions::default())
        .await
        .expect("list");
    for t in &listed {
        let got = saver
            .get_tuple(&t.config)
            .await
            .expect("get")
            .expect("listed");
        // Compared in the tagged form, where NaN equals NaN.
        assert_eq!(
            tuple_json(&got),
            tuple_json(t),
            "get_tuple agrees with list"
        );
    }
    J::Array(listed.iter().map(tuple_json).collect())
}

/// One operation of a scenario, for either saver.
#[allow(clippy::large_enum_variant)] // a handful per test
enum Op {
    Put(
        CheckpointConfig,
        Checkpoint,
        CheckpointMetadata,
        ChannelVersions,
    ),
    Writes(CheckpointConfig, Vec<(String, Value)>, String, String),
}

fn config_json(c: &CheckpointConfig) -> J {
    let mut j = json!({ "thread_id": c.thread_id, "checkpoint_ns": c.ns() });
    if let Some(id) = &c.checkpoint_id {
        j["checkpoint_id"] = json!(id);
    }
    j
}

/// The scenario as the spec `interop.py write` takes.
fn spec(thread: &str, ops: &[Op]) -> J {
    let ops: Vec<J> = ops
        .iter()
        .map(|op| match op {
            Op::Put(config, cp, md, versions) => json!({
                "op": "put",
                "config": config_json(config),
                "checkpoint": tagged(&cp.to_value(true)),
                "metadata": tagged(&md.to_value()),
                "new_versions": versions.iter().map(|(k, v)| (k.clone(), json!(v.as_text())))
                    .collect::<serde_json::Map<_, _>>(),
            }),
            Op::Writes(config, writes, task, path) => json!({
                "op": "writes",
                "config": config_json(config),
                "writes": writes.iter().map(|(c, v)| json!([c, tagged(v)])).collect::<Vec<_>>(),
                "task_id": task,
                "task_path": path,
            }),
        })
        .collect();
    json!({ "thread_id": thread, "ops": ops })
}

/// A run-like thread: an input checkpoint, a step with many value types, a subgraph
/// namespace and a step that carries a blob, changes a value and drops a channel. With
/// `unstorable_by_python`, also the values only this saver can store (NaN, a NUL string).
fn scenario(
    saver: &PostgresSaver,
    thread: &str,
    unstorable_by_python: bool,
) -> (Vec<Op>, Checkpoint) {
    let ids = stategraph_checkpoint::id::IdGenerator::system();
    let v1 = saver.get_next_version(None);
    let v2 = saver.get_next_version(Some(&v1));
    let v3 = saver.get_next_version(Some(&v2));
    let mut ops = Vec::new();
    let root = CheckpointConfig::thread(thread);

    let mut c1 = Checkpoint::empty(ids.uuid6(-1), "2025-01-01T00:00:00.002001+00:00");
    c1.channel_values
        .insert("__start__".into(), map! { "name" => "x", "n" => 1 });
    c1.channel_versions.insert("__start__".into(), v1.clone());
    c1.versions_seen
        .insert("__input__".into(), ChannelVersions::default());
    c1.updated_channels = Some(vec!["__start__".into()]);
    let md1 = CheckpointMetadata::new(CheckpointSource::Input, -1)
        .with("run_id", "run-1")
        .with("user", "alice");
    ops.push(Op::Put(
        root.clone(),
        c1.clone(),
        md1,
        c1.channel_versions.clone(),
    ));
    let at_c1 = CheckpointConfig::for_checkpoint(thread, "", c1.id.as_str());
    ops.push(Op::Writes(
        at_c1.clone(),
        vec![
            ("branch:to:node".into(), Value::Nil),
            ("name".into(), "x".into()),
        ],
        "task-start".into(),
        "~__pregel_pull, __start__".into(),
    ));

    let mut c2 = Checkpoint::empty(ids.uuid6(0), "2025-01-01T00:00:00.003001+00:00");
    let mut values: Vec<(&str, Value)> = vec![
        ("branch:to:node", Value::Nil),
        ("name", "pavan".into()),
        ("count", 3.into()),
        ("ratio", 0.5.into()),
        ("flag", true.into()),
        ("big", 1e16.into()),
        ("items", list![1, "two", 3.0, Value::Nil, vec![0u8, 255]]),
        ("raw", vec![1u8, 2, 3].into()),
        (
            "nested",
            map! { "a" => list![map! { "b" => true }], "s" => "h\u{e9}" },
        ),
    ];
    if unstorable_by_python {
        values.push(("nan", f64::NAN.into()));
        values.push(("nul", "a\0b".into()));
    }
    c2.channel_versions.insert("__start__".into(), v2.clone());
    for (k, v) in values {
        c2.channel_values.insert(k.into(), v);
        c2.channel_versions.insert(k.into(), v2.clone());
    }
    c2.versions_seen = c1.versions_seen.clone();
    c2.versions_seen.insert(
        "__start__".into(),
        [("__start__".to_owned(), v1.clone())].into_iter().collect(),
    );
    c2.updated_channels = Some(vec!["branch:to:node".into()]);
    let md2 = CheckpointMetadata::new(CheckpointSource::Loop, 0).with("run_id", "run-1");
    ops.push(Op::Put(at_c1, c2.clone(), md2, c2.channel_versions.clone()));
    let at_c2 = CheckpointConfig::for_checkpoint(thread, "", c2.id.as_str());
    ops.push(Op::Writes(
        at_c2.clone(),
        vec![
            ("name".into(), "p2".into()),
            (
                "__interrupt__".into(),
                list![map! { "value" => "q?", "id" => "i1" }],
            ),
        ],
        "task-node".into(),
        "~__pregel_pull, node".into(),
    ));
    ops.push(Op::Writes(
        at_c2.clone(),
        vec![("__error__".into(), "boom".into())],
        "task-other".into(),
        "~__pregel_pull, other".into(),
    ));
    ops.push(Op::Writes(
        at_c2.clone(),
        vec![("__resume__".into(), "yes".into())],
        NULL_TASK_ID.into(),
        String::new(),
    ));

    let mut sub = Checkpoint::empty(ids.uuid6(-1), "2025-01-01T00:00:00.004001+00:00");
    sub.channel_values.insert("x".into(), list![1]);
    sub.channel_versions.insert("x".into(), v1.clone());
    let mut sub_md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    sub_md.parents = Some([(String::new(), c2.id.clone())].into());
    let sub_config = CheckpointConfig::thread(thread).with_ns("sub:abc");
    ops.push(Op::Put(
        sub_config,
        sub.clone(),
        sub_md,
        sub.channel_versions.clone(),
    ));

    let mut c3 = c2.clone();
    c3.id = ids.uuid6(1);
    c3.ts = "2025-01-01T00:00:00.005001+00:00".into();
    c3.channel_values.insert("name".into(), "p2".into());
    c3.channel_versions.insert("name".into(), v3.clone());
    c3.channel_values.shift_remove("count");
    c3.channel_versions.shift_remove("count");
    c3.updated_channels = Some(vec!["name".into()]);
    let new3: ChannelVersions = [("name".to_owned(), v3)].into_iter().collect();
    let md3 = CheckpointMetadata::new(CheckpointSource::Loop, 1).with("run_id", "run-1");
    ops.push(Op::Put(at_c2, c3.clone(), md3, new3));
    (ops, c3)
}

async fn apply(saver: &PostgresSaver, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Put(config, cp, md, versions) => {
                saver.put(config, cp, md, versions).await.expect("put");
            }
            Op::Writes(config, writes, task, path) => {
                saver
                    .put_writes(config, writes, task, path)
                    .await
                    .expect("put_writes");
            }
        }
    }
}

/// The channel values of the head as `interop.py` prints them.
fn head_values(view: &J) -> &J {
    let head = view
        .as_array()
        .and_then(|v| v.iter().find(|t| t["config"]["checkpoint_ns"] == ""))
        .expect("a root checkpoint");
    &head["checkpoint"]["channel_values"]
}

#[tokio::test]
async fn python_reads_what_rust_wrote() {
    let Some(python) = python() else {
        return;
    };
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = uuid::Uuid::new_v4().to_string();
    let (ops, head) = scenario(&db, &thread, true);
    apply(&db, &ops).await;
    let seen_by_python = run_python(&python, &["read", &db.url, &thread]);
    let seen_by_rust = rust_view(&db, &thread).await;
    assert_eq!(seen_by_python, seen_by_rust);
    assert_eq!(seen_by_python.as_array().map(Vec::len), Some(4));
    let want: serde_json::Map<String, J> = head
        .channel_values
        .iter()
        .map(|(k, v)| (k.clone(), tagged(v)))
        .collect();
    assert_eq!(head_values(&seen_by_python), &J::Object(want));
}

#[tokio::test]
async fn rust_reads_what_python_wrote() {
    let Some(python) = python() else {
        return;
    };
    let Some(db) = TestDb::bare().await else {
        return;
    };
    let thread = uuid::Uuid::new_v4().to_string();
    let (ops, head) = scenario(&db, &thread, false);
    let spec_path = std::env::temp_dir().join(format!("{}-spec.json", db.schema));
    std::fs::write(&spec_path, spec(&thread, &ops).to_string()).expect("write spec");
    let spec_arg = spec_path.to_string_lossy().into_owned();
    let seen_by_python = run_python(&python, &["write", &db.url, &spec_arg]);
    let _ = std::fs::remove_file(&spec_path);

    // Python made the schema: Rust's setup accepts it as up to date.
    assert_eq!(db.schema_version().await.expect("version"), SCHEMA_VERSION);
    db.setup().await.expect("setup on a Python-made schema");
    let seen_by_rust = rust_view(&db, &thread).await;
    assert_eq!(seen_by_rust, seen_by_python);
    // The values Python stored are the intended ones, but for what JSONB does to its own
    // floats: 1e16 comes back as an integer from Python's rows (not from ours).
    let mut want: serde_json::Map<String, J> = head
        .channel_values
        .iter()
        .map(|(k, v)| (k.clone(), tagged(v)))
        .collect();
    want.insert("big".into(), json!(10_000_000_000_000_000_i64));
    assert_eq!(head_values(&seen_by_rust), &J::Object(want));
    let tuple = db
        .get_tuple(&CheckpointConfig::thread(thread.as_str()))
        .await
        .expect("get")
        .expect("head");
    assert_eq!(
        tuple.checkpoint.channel_versions.get("name"),
        head.channel_versions.get("name")
    );
    assert!(matches!(
        tuple.checkpoint.channel_versions.get("name"),
        Some(ChannelVersion::Str(_))
    ));
}

/// A 1 MiB string of letters and digits (as the S5 benchmark's), different per `seed`.
fn mib_string(seed: u64) -> String {
    let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..1 << 20)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            char::from(alphabet[((x >> 33) % alphabet.len() as u64) as usize])
        })
        .collect()
}

/// A thread of `steps` checkpoints whose `big` string never changes and whose counter
/// does (the first put has `big` as new).
fn big_chain(saver: &PostgresSaver, thread: &str, big: &str, steps: i64) -> Vec<Op> {
    let ids = stategraph_checkpoint::id::IdGenerator::system();
    let mut version = saver.get_next_version(None);
    let mut c = Checkpoint::empty(ids.uuid6(-1), "2025-01-01T00:00:00.002001+00:00");
    c.channel_values.insert("big".into(), big.into());
    c.channel_values.insert("counter".into(), 0.into());
    c.channel_versions.insert("big".into(), version.clone());
    c.channel_versions.insert("counter".into(), version.clone());
    let mut new = c.channel_versions.clone();
    let mut config = CheckpointConfig::thread(thread);
    let mut ops = Vec::new();
    for step in 0..steps {
        let md = CheckpointMetadata::new(CheckpointSource::Loop, step).with("run_id", "run-1");
        ops.push(Op::Put(config.clone(), c.clone(), md, new));
        config = CheckpointConfig::for_checkpoint(thread, "", c.id.as_str());
        version = saver.get_next_version(Some(&version));
        c.id = ids.uuid6(step);
        c.channel_values.insert("counter".into(), (step + 1).into());
        c.channel_versions.insert("counter".into(), version.clone());
        new = [("counter".to_owned(), version.clone())]
            .into_iter()
            .collect();
    }
    ops
}

/// The `big` value of every checkpoint of a view, in the tagged form.
fn bigs(view: &J) -> Vec<&J> {
    view.as_array()
        .expect("a list")
        .iter()
        .map(|t| &t["checkpoint"]["channel_values"]["big"])
        .collect()
}

#[tokio::test]
async fn python_reads_a_long_string_rust_stored_once() {
    let Some(python) = python() else {
        return;
    };
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = uuid::Uuid::new_v4().to_string();
    let big = mib_string(1);
    apply(&db, &big_chain(&db, &thread, &big, 5)).await;
    let raw = db.raw().await;
    let stored: i64 = raw
        .query_one(
            "SELECT count(*) FROM checkpoint_blobs WHERE channel = 'big'",
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(stored, 1, "one blob for five checkpoints");
    let inline: i64 = raw
        .query_one(
            "SELECT count(*) FROM checkpoints WHERE checkpoint -> 'channel_values' ? 'big'",
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(inline, 0);

    let seen_by_python = run_python(&python, &["read", &db.url, &thread]);
    assert_eq!(seen_by_python, rust_view(&db, &thread).await);
    assert_eq!(bigs(&seen_by_python), vec![&json!(big); 5]);
}

#[tokio::test]
async fn a_thread_python_began_with_a_long_string_goes_on_in_rust() {
    let Some(python) = python() else {
        return;
    };
    let Some(db) = TestDb::bare().await else {
        return;
    };
    let thread = uuid::Uuid::new_v4().to_string();
    let big = mib_string(2);
    let mut ops = big_chain(&db, &thread, &big, 4);
    let rust_part = ops.split_off(2);
    let spec_path = std::env::temp_dir().join(format!("{}-spec.json", db.schema));
    std::fs::write(&spec_path, spec(&thread, &ops).to_string()).expect("write spec");
    let spec_arg = spec_path.to_string_lossy().into_owned();
    run_python(&python, &["write", &db.url, &spec_arg]);
    let _ = std::fs::remove_file(&spec_path);
    // Python stored `big` inline twice; the Rust puts carry it into one blob.
    apply(&db, &rust_part).await;
    let raw = db.raw().await;
    let counts: (i64, i64) = {
        let row = raw
            .query_one(
                "SELECT (SELECT count(*) FROM checkpoint_blobs WHERE channel = 'big'), \
                 (SELECT count(*) FROM checkpoints WHERE checkpoint -> 'channel_values' ? 'big')",
                &[],
            )
            .await
            .expect("counts");
        (row.get(0), row.get(1))
    };
    assert_eq!(counts, (1, 2));

    let seen_by_python = run_python(&python, &["read", &db.url, &thread]);
    assert_eq!(seen_by_python, rust_view(&db, &thread).await);
    assert_eq!(bigs(&seen_by_python), vec![&json!(big); 4]);
}

/// A thread of `steps` checkpoints whose `messages` list grows by one compressible
/// message per step (each version a new blob of a few KB, over the TOAST threshold).
fn chat_chain(saver: &PostgresSaver, thread: &str, steps: i64) -> Vec<Op> {
    let ids = stategraph_checkpoint::id::IdGenerator::system();
    let mut version = saver.get_next_version(None);
    let mut messages: Vec<Value> = (0..40)
        .map(|i| map! { "role" => "user", "content" => format!("hello {i} {}", "la ".repeat(40)) })
        .collect();
    let mut c = Checkpoint::empty(ids.uuid6(-1), "2025-01-01T00:00:00.002001+00:00");
    let mut config = CheckpointConfig::thread(thread);
    let mut ops = Vec::new();
    for step in 0..steps {
        c.channel_values
            .insert("messages".into(), Value::List(messages.clone().into()));
        c.channel_versions
            .insert("messages".into(), version.clone());
        let new: ChannelVersions = [("messages".to_owned(), version.clone())]
            .into_iter()
            .collect();
        let md = CheckpointMetadata::new(CheckpointSource::Loop, step);
        ops.push(Op::Put(config.clone(), c.clone(), md, new));
        config = CheckpointConfig::for_checkpoint(thread, "", c.id.as_str());
        version = saver.get_next_version(Some(&version));
        c.id = ids.uuid6(step);
        messages.push(map! { "role" => "ai", "content" => format!("reply {step}") });
    }
    ops
}

#[tokio::test]
async fn python_reads_lz4_blobs_rust_wrote() {
    let Some(python) = python() else {
        return;
    };
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = uuid::Uuid::new_v4().to_string();
    apply(&db, &chat_chain(&db, &thread, 3)).await;
    let raw = db.raw().await;
    let methods: Vec<Option<String>> = raw
        .query(
            "SELECT pg_column_compression(blob) FROM checkpoint_blobs WHERE channel = 'messages'",
            &[],
        )
        .await
        .expect("compression")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let has_lz4: bool = raw
        .query_one(
            "SELECT count(*) > 0 FROM pg_settings \
             WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)",
            &[],
        )
        .await
        .expect("settings")
        .get(0);
    let want = if has_lz4 { "lz4" } else { "pglz" };
    assert_eq!(methods, vec![Some(want.to_owned()); 3]);

    let seen_by_python = run_python(&python, &["read", &db.url, &thread]);
    let cold = db.another_saver(true).await.with_blob_cache(0);
    assert_eq!(seen_by_python, rust_view(&cold, &thread).await);
    assert_eq!(seen_by_python, rust_view(&db, &thread).await);
    assert_eq!(seen_by_python.as_array().map(Vec::len), Some(3));
}
