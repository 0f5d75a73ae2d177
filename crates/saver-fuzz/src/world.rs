//! The fixed universe scripts draw from (threads, namespaces, channels, values, metadata)
//! and the ids a script has minted: turns the small numbers of [`crate::op`] into the
//! arguments of saver calls.
//!
//! Two preconditions of the trait are kept by construction, because breaking them makes
//! savers differ by design, not by bug:
//! * a channel version names one value: the value (or its absence, for the DeltaChannel
//!   `d` at odd versions) is a function of `(channel, version)` ([`channel_value`]), as the
//!   engine guarantees (MemorySaver and Postgres keep one blob per version, SQLite stores
//!   values inline, so two values under one version would read back differently);
//! * `new_versions` names every channel of the checkpoint, so each saver has stored every
//!   version a checkpoint names whatever was pruned or deleted before (`put`'s doc: a
//!   channel left out of `new_versions` must already be stored).

use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSource, Map, Value, CONFIG_KEY_BRANCH,
};

use crate::op::{At, ListScope, MetaOp, Pick, PutOp, Scope, WritesOp};

/// The threads; the last holds a NUL, which every saver refuses (`validate_key`).
pub const THREADS: [&str; 4] = ["t0", "t1", "t2", "bad\0thread"];
/// The namespaces.
pub const NAMESPACES: [&str; 3] = ["", "sub:1", "sub:1|inner:2"];
/// The channels of checkpoints; `d` plays a DeltaChannel (no stored value at odd versions).
pub const CHANNELS: [&str; 4] = ["a", "b", "c", "d"];
/// The channels of writes: state channels and the reserved ones (negative indexes).
pub const WRITE_CHANNELS: [&str; 9] = [
    "a",
    "b",
    "d",
    "__error__",
    "__interrupt__",
    "__resume__",
    "__scheduled__",
    "__pregel_tasks",
    "branch:to:n",
];
/// The task ids (the last is the null task of client writes).
pub const TASKS: [&str; 3] = [
    "6f1c1e4e-0d4a-5b7e-9d63-1a2b3c4d5e6f",
    "0b5c3a9e-7d21-5f44-8c1e-aa00bb11cc22",
    "00000000-0000-0000-0000-000000000000",
];
/// The task paths (ordering of writes is by path first).
pub const TASK_PATHS: [&str; 3] = ["", "~__pregel_pull, n", "~__pregel_push, 0"];
/// The run ids metadata may carry (`delete_for_runs` keys on them).
pub const RUNS: [&str; 3] = ["run-0", "run-1", "run-2"];
/// The metadata keys a filter asks about.
pub const FILTER_KEYS: [&str; 7] = ["source", "step", "run_id", "k", "user", "parents", "absent"];

/// The thread `i` names.
pub fn thread(i: u8) -> &'static str {
    // The bad thread one time in eight: enough to check refusals, rare enough to leave
    // most scripts working.
    match i % 8 {
        7 => THREADS[3],
        n => THREADS[usize::from(n % 3)],
    }
}

/// The namespace `i` names.
pub fn ns(i: u8) -> &'static str {
    NAMESPACES[usize::from(i) % NAMESPACES.len()]
}

/// A value of every kind the savers store differently: small and big integers, floats
/// (NaN, infinities, -0.0), strings with NUL and over 1 KiB (Postgres puts both in blobs
/// instead of inline), bytes, lists long enough for the encode-once chunks, maps with
/// non-string keys.
pub fn value(k: u64) -> Value {
    match k % 20 {
        0 => Value::Nil,
        1 => Value::Bool(k % 40 == 1),
        2 => Value::Int(k as i64 - 1000),
        3 => Value::Int(i64::MIN),
        4 => Value::UInt(u64::MAX - k),
        5 => Value::Float(1.5),
        6 => Value::Float(2.0),
        7 => Value::Float(f64::NAN),
        8 => Value::Float(f64::NEG_INFINITY),
        9 => Value::Float(-0.0),
        10 => Value::from(format!("s{k}")),
        11 => Value::from("nul\0inside"),
        12 => Value::from("x".repeat(1100 + (k % 7) as usize)),
        13 => Value::from(vec![0u8, 159, 146, 150, (k % 256) as u8]),
        14 => Value::from(Vec::<Value>::new()),
        15 => Value::from(
            (0..20 + k % 5)
                .map(|i| Value::from(format!("m{i}")))
                .collect::<Vec<_>>(),
        ),
        16 => Value::Map(Map::new()),
        17 => Value::Map(Map::from_pairs(vec![
            (Value::from("role"), Value::from("user")),
            (Value::from("content"), Value::from(format!("hi {k}"))),
        ])),
        18 => Value::Map(Map::from_pairs(vec![
            (Value::Int(1), Value::from("int key")),
            (Value::Nil, Value::from(vec![Value::Float(0.25)])),
        ])),
        _ => Value::from(vec![Value::from("nested"), value(k / 20 + 3)]),
    }
}

/// A metadata value (JSON can hold it: SQLite stores metadata as JSON text, Postgres as
/// JSONB): the shapes the filter meaning distinguishes (docs/format.md#metadata-filters).
pub fn meta_value(k: u8) -> Value {
    let map = |pairs: Vec<(&str, Value)>| {
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        )
    };
    match k % 18 {
        0 => Value::Int(1),
        1 => Value::Float(1.0),
        2 => Value::Float(1.5),
        3 => Value::from("1"),
        4 => Value::Bool(true),
        5 => Value::Bool(false),
        6 => Value::Nil,
        7 => Value::from(vec![Value::Int(1)]),
        8 => Value::from(vec![Value::Int(1), Value::Int(2)]),
        9 => Value::from(Vec::<Value>::new()),
        10 => map(vec![]),
        11 => map(vec![("a", Value::Int(1))]),
        12 => map(vec![("a", Value::Float(1.0))]),
        13 => map(vec![("b", Value::Int(2)), ("a", Value::Int(1))]),
        14 => map(vec![("a", map(vec![("c", Value::Int(1))]))]),
        15 => Value::from("top\0nul"),
        16 => Value::Int(-7),
        _ => Value::from("loop"),
    }
}

/// A filter value: the metadata values, the sources and a few steps.
pub fn filter_value(k: u8) -> Value {
    match k % 24 {
        n @ 0..=17 => meta_value(n),
        18 => Value::from("input"),
        19 => Value::from("update"),
        20 => Value::Int(0),
        21 => Value::Int(2),
        22 => Value::from(RUNS[0]),
        _ => Value::from(RUNS[1]),
    }
}

/// The value stored for `channel` at `version`: `None` when the channel has a version and
/// no stored value (the DeltaChannel `d` between snapshots).
pub fn channel_value(channel: usize, version: u8) -> Option<Value> {
    if channel == 3 && version % 2 == 1 {
        return None;
    }
    Some(value(u64::from(version) * 7 + channel as u64 * 3))
}

/// The version `v` of `channel`: integers for `a` and `b`, LangGraph's strings for the rest.
pub fn channel_version(channel: usize, v: u8) -> ChannelVersion {
    if channel < 2 {
        ChannelVersion::Int(i64::from(v))
    } else {
        ChannelVersion::Str(format!("{v:032}.{:016}", u32::from(v) * 7919))
    }
}

/// The ids a script has minted, in minting order, with the scope each was minted in.
#[derive(Default, Debug)]
pub struct World {
    minted: Vec<(&'static str, &'static str, String)>,
}

impl World {
    /// An id greater as text than every id minted before (ids order by creation).
    fn mint(&mut self, thread: &'static str, ns: &'static str) -> String {
        let id = id_at(self.minted.len() as u32);
        self.minted.push((thread, ns, id.clone()));
        id
    }

    /// The id `pick` names in `scope`, if any.
    pub fn resolve(&self, scope: Scope, pick: Pick) -> Option<String> {
        let (thread, ns) = (thread(scope.thread), ns(scope.ns));
        match pick {
            Pick::Latest => None,
            Pick::Newest(n) => {
                let own: Vec<&String> = self
                    .minted
                    .iter()
                    .filter(|(t, s, _)| *t == thread && *s == ns)
                    .map(|(_, _, id)| id)
                    .collect();
                own.iter()
                    .rev()
                    .nth(usize::from(n) % own.len().max(1))
                    .map(|s| (*s).clone())
            }
            Pick::Any(n) if !self.minted.is_empty() => {
                Some(self.minted[usize::from(n) % self.minted.len()].2.clone())
            }
            Pick::Any(_) => None,
            Pick::Unknown => Some(id_at(u32::MAX >> 4)),
        }
    }

    /// The config addressing `at`.
    pub fn config(&self, at: At) -> CheckpointConfig {
        let config = CheckpointConfig::thread(thread(at.scope.thread)).with_ns(ns(at.scope.ns));
        match self.resolve(at.scope, at.id) {
            Some(id) => config.with_checkpoint_id(id),
            None => config,
        }
    }

    /// The config of `list`.
    pub fn list_config(&self, scope: ListScope) -> Option<CheckpointConfig> {
        match scope {
            ListScope::All => None,
            ListScope::Thread(t) => Some(CheckpointConfig {
                checkpoint_ns: None,
                ..CheckpointConfig::thread(thread(t))
            }),
            ListScope::Ns(s) => Some(self.config(At {
                scope: s,
                id: Pick::Latest,
            })),
            ListScope::One(at) => Some(self.config(at)),
        }
    }

    /// The arguments of a `put`: config (the parent), checkpoint, metadata, new versions.
    pub fn put(
        &mut self,
        op: &PutOp,
    ) -> (
        CheckpointConfig,
        Checkpoint,
        CheckpointMetadata,
        ChannelVersions,
    ) {
        let scope = op.parent.scope;
        let mut config = self.config(op.parent);
        if op.branch {
            config = config.with_configurable(CONFIG_KEY_BRANCH, true);
        }
        if let Some(k) = op.meta.config_meta {
            config.metadata.insert("user".into(), meta_value(k));
        }
        let id = match op.reuse {
            Some(n) => self.resolve(scope, Pick::Newest(n)),
            None => None,
        };
        let id = id.unwrap_or_else(|| self.mint(thread(scope.thread), ns(scope.ns)));
        let mut checkpoint = Checkpoint::empty(id, "2026-12-07T14:00:00.000000+00:00");
        let mut new_versions = ChannelVersions::default();
        for (c, v) in op.versions.iter().enumerate() {
            let Some(v) = *v else { continue };
            let version = channel_version(c, v);
            if let Some(value) = channel_value(c, v) {
                checkpoint
                    .channel_values
                    .insert(CHANNELS[c].to_owned(), value);
            }
            checkpoint
                .channel_versions
                .insert(CHANNELS[c].to_owned(), version.clone());
            new_versions.insert(CHANNELS[c].to_owned(), version);
        }
        if op.seen {
            checkpoint
                .versions_seen
                .insert("n".to_owned(), checkpoint.channel_versions.clone());
        }
        if op.updated {
            checkpoint.updated_channels =
                Some(checkpoint.channel_versions.keys().cloned().collect());
        }
        let metadata = self.metadata(&op.meta);
        (config, checkpoint, metadata, new_versions)
    }

    fn metadata(&self, meta: &MetaOp) -> CheckpointMetadata {
        let source = match meta.source % 5 {
            0 => CheckpointSource::Input,
            1 => CheckpointSource::Loop,
            2 => CheckpointSource::Update,
            3 => CheckpointSource::Fork,
            _ => CheckpointSource::Other("other\0source".into()),
        };
        let mut md = CheckpointMetadata::new(source, i64::from(meta.step % 4));
        if meta.parents {
            if let Some((_, _, id)) = self.minted.first() {
                md.parents = Some([(String::new(), id.clone())].into_iter().collect());
            }
        }
        if let Some(run) = RUNS.get(usize::from(meta.run)) {
            md = md.with("run_id", *run);
        }
        if let Some(k) = meta.key {
            md = md.with("k", meta_value(k));
        }
        md
    }

    /// The arguments of a `put_writes`: config, writes, task id, task path.
    pub fn writes(
        &self,
        op: &WritesOp,
    ) -> (CheckpointConfig, Vec<(String, Value)>, String, String) {
        let writes = op
            .writes
            .iter()
            .take(4)
            .map(|(c, v)| {
                let channel = WRITE_CHANNELS[usize::from(*c) % WRITE_CHANNELS.len()];
                (channel.to_owned(), value(u64::from(*v)))
            })
            .collect();
        (
            self.config(op.at),
            writes,
            TASKS[usize::from(op.task) % TASKS.len()].to_owned(),
            TASK_PATHS[usize::from(op.path) % TASK_PATHS.len()].to_owned(),
        )
    }
}

/// The `n`-th id: UUIDv6-shaped, its text order the order of `n`.
fn id_at(n: u32) -> String {
    format!("1f0{n:05x}-0000-6000-8000-{n:012x}")
}

/// The names of the set bits of `bits` among `names`.
pub fn chosen<'a>(bits: u8, names: &[&'a str]) -> Vec<&'a str> {
    names
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}
